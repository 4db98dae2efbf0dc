"""Frozen acceptance tests for the eventstream contract (CONTRACT.md)."""
import json

import pytest

from eventstream import Decoder, DecodeError, DecoderClosed


def line(obj):
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


RECORDS = [
    {"id": 1, "text": "plain ascii"},
    {"id": 2, "text": "café – naïve"},
    {"id": 3, "text": "emoji 😀 and 🎉", "tags": ["😀"], "ключ": "значение"},
    {"id": 4, "text": "漢字かな", "nested": {"k": [1, 2.5, {"x": None, "y": False}]}},
    {"id": 5, "text": "after crlf"},
    {"id": 6, "text": "final line without newline ✓"},
]

# (raw bytes of a line including its ending, record or None for a blank line)
LINES = [
    (line(RECORDS[0]) + b"\n", RECORDS[0]),
    (line(RECORDS[1]) + b"\r\n", RECORDS[1]),
    (b"\n", None),
    (b"  \t\r\n", None),
    (line(RECORDS[2]) + b"\n", RECORDS[2]),
    (b"\r\n", None),
    (line(RECORDS[3]) + b"\n", RECORDS[3]),
    (line(RECORDS[4]) + b"\r\n", RECORDS[4]),
    (line(RECORDS[5]), RECORDS[5]),  # no newline: decoded by close()
]
SAMPLE = b"".join(raw for raw, _ in LINES)
assert len(SAMPLE) > len(SAMPLE.decode("utf-8"))  # has multi-byte characters


def records_completed_by(prefix_len):
    """Records whose terminating newline lies within SAMPLE[:prefix_len]."""
    out, pos = [], 0
    for raw, rec in LINES:
        pos += len(raw)
        if raw.endswith(b"\n") and pos <= prefix_len and rec is not None:
            out.append(rec)
    return out


def decode_all(chunks):
    d = Decoder()
    out = []
    for chunk in chunks:
        out.extend(d.feed(chunk))
    return out + d.close()


def error_of(chunks):
    """Feed chunks then close; return the DecodeError raised on the way."""
    d = Decoder()
    with pytest.raises(DecodeError) as info:
        for chunk in chunks:
            d.feed(chunk)
        d.close()
    return info.value


# --- chunking ---------------------------------------------------------------

def test_every_split_point():
    for i in range(len(SAMPLE) + 1):
        d = Decoder()
        first = d.feed(SAMPLE[:i])
        assert first == records_completed_by(i), f"split at byte {i}"
        second = d.feed(SAMPLE[i:])
        assert first + second + d.close() == RECORDS, f"split at byte {i}"


def test_one_byte_at_a_time():
    d = Decoder()
    out = []
    for i in range(len(SAMPLE)):
        got = d.feed(SAMPLE[i:i + 1])
        out.extend(got)
        assert out == records_completed_by(i + 1), f"after byte {i}"
    assert out + d.close() == RECORDS


def test_every_split_into_three_chunks():
    data = b'{"e": "\xf0\x9f\x98\x80\xe2\x82\xac"}\r\n\n{"k": "\xc3\xa9"}'
    expected = [{"e": "😀€"}, {"k": "é"}]
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            assert decode_all([data[:i], data[i:j], data[j:]]) == expected, (i, j)


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_four_byte_character_split_inside(cut):
    emoji = "😀".encode("utf-8")
    head = b'{"e": "'
    data = head + emoji + b'"}\n'
    d = Decoder()
    assert d.feed(data[:len(head) + cut]) == []
    assert d.feed(data[len(head) + cut:]) == [{"e": "😀"}]


def test_crlf_split_between_cr_and_lf():
    d = Decoder()
    assert d.feed(b'{"a": 1}\r') == []
    assert d.feed(b'\n{"b": 2}\r') == [{"a": 1}]
    assert d.feed(b'\n') == [{"b": 2}]
    assert d.close() == []


def test_blank_and_whitespace_lines_skipped():
    d = Decoder()
    assert d.feed(b'\n\r\n \t \r\n{"a": 1}\n\n\t\n') == [{"a": 1}]
    assert d.close() == []


# --- close ---------------------------------------------------------------------

def test_final_line_without_newline_emitted_at_close():
    d = Decoder()
    assert d.feed(b'{"a": 1}\n{"b": 2}') == [{"a": 1}]
    assert d.close() == [{"b": 2}]


def test_final_line_with_trailing_cr_emitted_at_close():
    d = Decoder()
    assert d.feed(b'{"a": 1}\r') == []
    assert d.close() == [{"a": 1}]


def test_blank_remainder_at_close_ignored():
    d = Decoder()
    assert d.feed(b'{"a": 1}\n \t') == [{"a": 1}]
    assert d.close() == []


def test_close_is_idempotent():
    d = Decoder()
    d.feed(b'{"a": 1}\n{"b": 2}')
    assert d.close() == [{"b": 2}]
    assert d.close() == []
    assert d.close() == []


@pytest.mark.parametrize("data,final", [
    (b'{"a": 1}\n', []),
    (b'{"a": 1}', [{"a": 1}]),
], ids=["after_newline", "after_final_line"])
def test_feed_after_close_raises(data, final):
    d = Decoder()
    d.feed(data)
    assert d.close() == final
    with pytest.raises(DecoderClosed):
        d.feed(b'{"b": 2}\n')
    with pytest.raises(DecoderClosed):
        d.feed(b"")
    assert issubclass(DecoderClosed, RuntimeError)


def test_feed_rejects_str():
    d = Decoder()
    with pytest.raises(TypeError):
        d.feed('{"a": 1}\n')


# --- errors --------------------------------------------------------------------

def test_invalid_json_names_its_line():
    err = error_of([b'{"a": 1}\n{"b": 2}\n{"c": \n{"d": 4}\n'])
    assert err.line == 3
    assert str(err).startswith("line 3: ")


def test_error_line_number_counts_blank_lines():
    err = error_of([b'\n{"a": 1}\r\n\n  \n{oops}\n'])
    assert err.line == 5
    assert str(err).startswith("line 5: ")


def test_invalid_final_line_fails_at_close():
    d = Decoder()
    assert d.feed(b'{"a": 1}\n{"a": 2}\n{"b": ') == [{"a": 1}, {"a": 2}]
    with pytest.raises(DecodeError) as info:
        d.close()
    assert info.value.line == 3


@pytest.mark.parametrize("text", [b"[1, 2]", b"42", b'"str"', b"null", b"true"])
def test_non_object_json_is_an_error(text):
    err = error_of([b'{"ok": 1}\n' + text + b"\n"])
    assert err.line == 2


INVALID_UTF8 = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf0\x9f\x98x", b"\xc0\xaf"]
INVALID_UTF8_IDS = ["lone_ff", "bad_continuation", "surrogate", "truncated_emoji", "overlong"]


@pytest.mark.parametrize("bad", INVALID_UTF8, ids=INVALID_UTF8_IDS)
def test_invalid_utf8_names_its_line(bad):
    err = error_of([b'{"a": 1}\n{"a": 2}\n{"b": "x' + bad + b'y"}\n{"c": 3}\n'])
    assert err.line == 3
    assert str(err).startswith("line 3: ")


def test_invalid_utf8_same_line_for_every_split():
    data = b'{"a": "\xc3\xa9"}\n{"a": 2}\r\n{"b": "\xe2\x82"}\n{"c": 1}\n'
    for i in range(len(data) + 1):
        err = error_of([data[:i], data[i:]])
        assert err.line == 3, f"split at byte {i}"


def test_truncated_character_at_end_of_stream_is_an_error():
    d = Decoder()
    assert d.feed(b'{"a": 1}\n{"e": "\xf0\x9f') == [{"a": 1}]
    with pytest.raises(DecodeError) as info:
        d.close()
    assert info.value.line == 2


def test_error_is_sticky_for_feed_and_close():
    d = Decoder()
    with pytest.raises(DecodeError) as first:
        d.feed(b'{"a": 1}\n{bad}\n')
    for chunk in (b'{"ok": 1}\n', b""):
        with pytest.raises(DecodeError) as again:
            d.feed(chunk)
        assert again.value.line == first.value.line == 2
        assert str(again.value) == str(first.value)
    with pytest.raises(DecodeError) as again:
        d.close()
    assert str(again.value) == str(first.value)


def test_error_from_close_is_sticky():
    d = Decoder()
    d.feed(b'{"a": 1}\n[1]')
    with pytest.raises(DecodeError) as first:
        d.close()
    with pytest.raises(DecodeError) as again:
        d.close()
    assert str(again.value) == str(first.value)
    with pytest.raises(DecodeError) as again:
        d.feed(b'{"b": 2}\n')
    assert again.value.line == 2
