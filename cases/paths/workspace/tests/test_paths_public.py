import pytest

from paths import PathError, get, has

DATA = {
    "user": {"name": "Ada", "roles": ["admin", "dev"]},
    "items": [{"id": 1}, {"id": 2}],
}


def test_nested_key():
    assert get(DATA, "user.name") == "Ada"


def test_list_index_in_dotted_path():
    assert get(DATA, "items.1.id") == 2


def test_list_form_path():
    assert get(DATA, ["user", "roles", 0]) == "admin"


def test_default_for_missing_key():
    assert get(DATA, "user.email", "none") == "none"


def test_missing_key_raises_path_error():
    with pytest.raises(PathError, match=r"missing key 'email' at \$\.user"):
        get(DATA, "user.email")


def test_has():
    assert has(DATA, "user.roles.1")
    assert not has(DATA, "user.email")
