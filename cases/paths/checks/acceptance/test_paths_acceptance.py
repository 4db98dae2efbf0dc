"""Frozen acceptance tests for paths.py: one stated contract edge each."""
import pytest

import paths


def get(*args, **kwargs):
    return paths.get(*args, **kwargs)


def has(*args, **kwargs):
    return paths.has(*args, **kwargs)


DATA = {"a": {"b": [{"x": 1}], "s": "text"}, "a.b": 0}


def raised(fn, *args, **kwargs):
    with pytest.raises(paths.PathError) as info:
        fn(*args, **kwargs)
    return info.value


@pytest.mark.parametrize(
    "value",
    [0, "", None, False, [], {}, 0.0],
    ids=["zero", "empty_str", "none", "false", "empty_list", "empty_dict", "zero_float"],
)
def test_falsey_values_are_values_not_missing(value):
    data = {"k": {"v": value}, "l": [value]}
    assert get(data, "k.v", "DEFAULT") is value
    assert get(data, "l.0") is value
    assert has(data, "k.v") is True


def test_none_is_a_real_default():
    assert get({"a": {}}, "a.b", None) is None
    assert get({"a": [1]}, "a.3", default=None) is None


def test_missing_without_default_raises_path_error_that_is_a_key_error():
    err = raised(get, {"a": {}}, "a.b")
    assert isinstance(err, KeyError)
    assert isinstance(err, LookupError)
    assert not isinstance(err, paths.PathTypeError)


def test_missing_key_message_exact():
    err = raised(get, DATA, "a.b.0.c")
    assert str(err) == "missing key 'c' at $.a.b[0]"
    assert err.segment == "c"
    assert err.location == "$.a.b[0]"


def test_missing_key_at_root_message_exact():
    err = raised(get, DATA, "zz")
    assert str(err) == "missing key 'zz' at $"
    assert err.location == "$"


def test_index_out_of_range_message_exact():
    err = raised(get, {"a": {"b": [{"x": 1}]}}, "a.b.5")
    assert str(err) == "index 5 out of range at $.a.b (length 1)"
    assert err.segment == 5


def test_negative_index_counts_from_end():
    data = {"a": [10, 20, 30]}
    assert get(data, "a.-1") == 30
    assert get(data, ["a", -3]) == 10
    assert get(DATA, "a.b.-1.x") == 1


def test_negative_index_beyond_start_is_missing():
    data = {"a": [10, 20, 30]}
    assert get(data, "a.-4", "dflt") == "dflt"
    assert has(data, "a.-4") is False
    err = raised(get, data, "a.-4")
    assert str(err) == "index -4 out of range at $.a (length 3)"
    assert not isinstance(err, paths.PathTypeError)


def test_negative_index_rendered_as_given_in_location():
    err = raised(get, {"a": [{"p": 1}, {"q": 2}]}, "a.-1.p")
    assert str(err) == "missing key 'p' at $.a[-1]"


def test_dotted_key_reachable_only_through_list_form():
    data = {"a.b": 1, "a": {"b": 2}}
    assert get(data, ["a.b"]) == 1
    assert get(data, ("a.b",)) == 1
    assert get(data, "a.b") == 2


def test_non_identifier_keys_rendered_with_repr():
    err = raised(get, {"a.b": {"0": {}}}, ["a.b", "0", "z"])
    assert str(err) == "missing key 'z' at $['a.b']['0']"


def test_digit_segment_on_dict_is_a_string_key():
    data = {"a": {"0": "zero-str"}}
    assert get(data, "a.0") == "zero-str"
    err = raised(get, data, ["a", 0])
    assert str(err) == "missing key 0 at $.a"
    assert err.segment == 0


def test_string_digit_segment_in_list_form_indexes_list():
    assert get({"a": [5, 6]}, ["a", "1"]) == 6


def test_type_conflict_on_int_names_segment():
    data = {"a": {"b": 5}}
    with pytest.raises(paths.PathTypeError) as info:
        get(data, "a.b.c")
    err = info.value
    assert isinstance(err, TypeError)
    assert isinstance(err, KeyError)
    assert str(err) == "cannot look up 'c' in int at $.a.b"
    assert err.segment == "c"
    assert err.location == "$.a.b"


def test_type_conflict_ignores_default():
    with pytest.raises(paths.PathTypeError):
        get({"a": 5}, "a.b", "dflt")
    with pytest.raises(paths.PathTypeError):
        get({"a": None}, "a.b", None)


def test_strings_are_never_indexed():
    with pytest.raises(paths.PathTypeError) as info:
        get(DATA, "a.s.0", None)
    assert str(info.value) == "cannot look up '0' in str at $.a.s"


def test_non_integer_segment_on_list_is_type_conflict():
    with pytest.raises(paths.PathTypeError) as info:
        get(DATA, "a.b.x", "dflt")
    assert str(info.value) == "cannot look up 'x' in list at $.a.b"


def test_has_true_for_none_false_for_missing():
    data = {"a": None, "l": [1]}
    assert has(data, "a") is True
    assert has(data, "b") is False
    assert has(data, "l.1") is False


def test_has_raises_on_type_conflict():
    with pytest.raises(paths.PathTypeError):
        has({"a": 5}, "a.b")


def test_empty_path_is_the_data_itself():
    assert get(DATA, "") is DATA
    assert get(DATA, []) is DATA
    assert has(5, []) is True


@pytest.mark.parametrize("path", ["a..b", ".a", "a."])
def test_empty_segment_in_dotted_path_is_value_error(path):
    with pytest.raises(ValueError) as info:
        get({"a": {"b": 1}}, path, "dflt")
    assert not isinstance(info.value, paths.PathError)
