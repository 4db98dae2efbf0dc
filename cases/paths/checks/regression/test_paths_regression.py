"""Frozen regression tests: lookups that already worked in the starter."""
from paths import PathError, get, has

DATA = {
    "server": {"host": "example.org", "ports": [80, 443]},
    "users": [{"name": "ada", "tags": ["x", "y"]}, {"name": "bob"}],
}


def test_dotted_nested_lookup():
    assert get(DATA, "server.host") == "example.org"


def test_dotted_list_index():
    assert get(DATA, "server.ports.1") == 443
    assert get(DATA, "users.0.tags.1") == "y"


def test_list_form_lookup():
    assert get(DATA, ["users", 1, "name"]) == "bob"


def test_default_for_missing_key():
    assert get(DATA, "server.user", "root") == "root"


def test_missing_key_raises_path_error():
    try:
        get(DATA, "users.1.tags")
    except PathError:
        pass
    else:
        raise AssertionError("expected PathError")


def test_has_basic():
    assert has(DATA, "users.0.name")
    assert not has(DATA, "users.0.email")
