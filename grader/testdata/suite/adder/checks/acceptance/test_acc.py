from adder import add


def test_negative():
    assert add(-5, 2) == -3


def test_both_negative():
    assert add(-1, -1) == -2


def test_zero():
    assert add(0, 0) == 0
