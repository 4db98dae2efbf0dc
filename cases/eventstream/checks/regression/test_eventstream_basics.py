"""Frozen regression tests: behaviour the starter already had."""
import pytest

from eventstream import Decoder, DecodeError


def test_records_in_order_from_one_chunk():
    d = Decoder()
    data = b'{"n": 1}\n{"n": 2}\n{"n": 3}\n'
    assert d.feed(data) == [{"n": 1}, {"n": 2}, {"n": 3}]


def test_incomplete_line_waits_for_newline():
    d = Decoder()
    assert d.feed(b'{"n": ') == []
    assert d.feed(b"") == []
    assert d.feed(b"7}") == []
    assert d.feed(b"\n") == [{"n": 7}]


def test_json_values_and_escapes_preserved():
    d = Decoder()
    data = b'{"s": "caf\\u00e9 \\"q\\"", "f": 1.5, "l": [null, true, false], "o": {}}\n'
    assert d.feed(data) == [{"s": 'café "q"', "f": 1.5, "l": [None, True, False], "o": {}}]


def test_bad_first_line_is_decode_error_on_line_1():
    d = Decoder()
    with pytest.raises(DecodeError) as info:
        d.feed(b"not json\n")
    assert info.value.line == 1
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith("line 1: ")


def test_non_object_first_line_is_rejected():
    with pytest.raises(DecodeError):
        Decoder().feed(b"[1, 2, 3]\n")


def test_close_of_finished_stream_returns_nothing():
    d = Decoder()
    d.feed(b'{"a": 1}\n')
    assert d.close() == []
