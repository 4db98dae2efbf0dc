import math
from decimal import Decimal
from unittest import mock

import pytest

from corpus import (AppError, Countdown, Holder, School, Zipper, append_deep, catch_callback, count, divide, echo_kw,
                    edge_numbers, fail, ident_list, identity, is_nan, notify, protocol_names, same, use_double, use_mock)


def test_keyword_arguments_named_like_the_protocol():
    s = School()
    assert s.add_student(name="A", grade=2)
    assert not s.add_student(name="A", grade=3)
    assert s.add_student(grade=1, name="B")
    assert s.roster() == ["B", "A"]
    assert s.grade(grade_number=2) == ["A"]


def test_any_keyword_name():
    got = protocol_names(op=1, args=2, kw=3, name=4, f=5, o=6, self=7, cls=8, target=9, q=10)
    assert got == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert echo_kw(1, self=2, op=3, args=[4]) == [[1], {"self": 2, "op": 3, "args": [4]}]


def tree():
    leaf = {"value": 3, "left": None, "right": None}
    return {"value": 1, "left": {"value": 2, "left": None, "right": leaf}, "right": {"value": 4, "left": None, "right": None}}


def test_zipper_changes_the_tree_deep_inside():
    t = tree()
    got = Zipper.from_tree(t).left().right().set_value(5).to_tree()
    assert got["left"]["right"]["value"] == 5
    assert got is t


def test_nested_mutation_in_place():
    t = {"children": [{"items": [1]}]}
    inner = t["children"][0]["items"]
    append_deep(t, 2)
    assert t == {"children": [{"items": [1, 2]}]}
    assert inner == [1, 2]


def test_mutation_in_a_later_call():
    xs = [1]
    h = Holder(xs)
    h.add(2)
    assert xs == [1, 2]
    assert h.held() is xs
    xs.append(3)
    assert h.held() == [1, 2, 3]


def test_identity():
    xs = [1, 2]
    assert identity(xs) is xs
    assert same(xs, xs)
    pair = ident_list(xs)
    assert pair[0] is xs and pair[1] is xs
    s = School()
    assert identity(s) is s


def test_callback_with_keywords():
    seen = []
    notify(lambda v, tag, name: seen.append((v, tag, name)), [1, 2])
    assert seen == [(1, "t", 1), (2, "t", 2)]


class FakeSock:
    def __init__(self):
        self.sent = []
        self.closed = False

    def recv(self, n):
        return b"ping"[:n]

    def send(self, data):
        self.sent.append(data)
        return len(data)


def test_test_double_called_back():
    sock = FakeSock()
    assert use_double(sock) is False
    assert sock.sent == [b"PING"]


def test_mock_called_back():
    m = mock.Mock()
    m.status.return_value = "running"
    assert use_mock(m) == "running"
    m.start.assert_called_once_with(speed=3)


def test_generators():
    assert list(count(3)) == [0, 1, 2]
    assert list(Countdown(3)) == [3, 2, 1]
    g = count(2)
    assert next(g) == 0
    assert next(g) == 1
    with pytest.raises(StopIteration):
        next(g)


def test_exception_with_attributes():
    with pytest.raises(AppError) as info:
        fail(7)
    assert info.value.code == 7
    assert str(info.value) == "failed with 7"
    assert isinstance(info.value, Exception)


def test_builtin_exception():
    with pytest.raises(ZeroDivisionError):
        divide(1, 0)


def test_callback_raising():
    def cb():
        raise ValueError("nope")

    assert catch_callback(cb) == "caught: nope"


def test_edge_numbers():
    got = edge_numbers()
    assert got[0] == math.inf and got[1] == -math.inf
    assert math.copysign(1, got[2]) == -1
    assert got[3] == 2 ** 100 and got[4] == -(2 ** 63)
    assert got[5] == 5e-324
    assert got[6] == complex(1, -0.0)
    assert got[7] == Decimal("1.10") and str(got[7]) == "1.10"
    assert is_nan(float("nan"))
    assert divide(7, 2) == 3.5


def test_failing_assertion_stays_failing():
    # An honest wrong expectation: fails both ways.
    assert divide(1, 3) == 0.3
