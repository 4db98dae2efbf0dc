"""Frozen regression tests: behaviour the starter already had."""
import pytest

from cache import TTLCache


class FakeClock:
    def __init__(self, now=50.0):
        self.now = now

    def __call__(self):
        return self.now


def test_set_get_and_default():
    c = TTLCache(maxsize=4, ttl=30, clock=FakeClock())
    c.set(("tuple", "key"), {"v": 1})
    assert c.get(("tuple", "key")) == {"v": 1}
    assert c.get("nope") is None
    assert c.get("nope", 7) == 7


def test_entry_gone_long_after_ttl():
    clock = FakeClock()
    c = TTLCache(maxsize=4, ttl=30, clock=clock)
    c.set("a", "x")
    clock.now += 100
    assert c.get("a", "miss") == "miss"


def test_insertion_order_eviction_without_reads():
    c = TTLCache(maxsize=3, ttl=30, clock=FakeClock())
    for i, key in enumerate("abcde"):
        c.set(key, i)
    assert [k for k in "abcde" if c.get(k) is not None] == ["c", "d", "e"]


def test_get_or_load_truthy_value_loaded_once():
    calls = []
    c = TTLCache(maxsize=4, ttl=30, clock=FakeClock())
    for _ in range(3):
        assert c.get_or_load(5, lambda k: calls.append(k) or k * 2) == 10
    assert calls == [5]


def test_delete():
    c = TTLCache(maxsize=4, ttl=30, clock=FakeClock())
    c.set("a", 1)
    c.delete("a")
    c.delete("never-there")
    assert c.get("a") is None


@pytest.mark.parametrize("maxsize,ttl", [(0, 10), (-1, 10), (3, 0), (3, -5)])
def test_invalid_arguments_rejected(maxsize, ttl):
    with pytest.raises(ValueError):
        TTLCache(maxsize=maxsize, ttl=ttl)


def test_default_clock_is_monotonic_time():
    c = TTLCache(maxsize=2, ttl=3600)
    c.set("a", 1)
    assert c.get("a") == 1
