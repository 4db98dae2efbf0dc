"""Frozen regression tests: the contract's example and errors."""
import pytest

from tariff import settle


def test_example_code_half_up():
    assert settle("EX-000", 50) == 1  # 0.5 cent goes up
    assert settle("EX-000", 12345) == 123


def test_unknown_code():
    with pytest.raises(KeyError):
        settle("ZZ-999", 100)


@pytest.mark.parametrize("amount", [-1, 1.5, "100", True])
def test_bad_amount(amount):
    with pytest.raises(ValueError):
        settle("EX-000", amount)
