import pytest

from tariff import settle


def test_example_code():
    assert settle("EX-000", 12345) == 123


def test_unknown_code():
    with pytest.raises(KeyError):
        settle("NO-SUCH", 100)
