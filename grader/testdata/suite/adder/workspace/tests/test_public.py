from adder import add


def test_small():
    assert add(1, 2) == 3
