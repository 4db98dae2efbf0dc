import pytest

from eventstream import Decoder, DecodeError


def test_whole_lines_in_one_chunk():
    d = Decoder()
    assert d.feed(b'{"a": 1}\n{"b": [true, null]}\n') == [{"a": 1}, {"b": [True, None]}]
    assert d.close() == []


def test_line_split_across_chunks():
    d = Decoder()
    assert d.feed(b'{"name": "al') == []
    assert d.feed(b'ice"}\n{"n') == [{"name": "alice"}]
    assert d.feed(b'ame": "bob"}\n') == [{"name": "bob"}]


def test_invalid_json_raises_decode_error():
    d = Decoder()
    with pytest.raises(DecodeError) as info:
        d.feed(b'{"a": }\n')
    assert info.value.line == 1
