"""Incremental decoder for newline-delimited JSON (JSON Lines) byte streams."""
import json


class DecodeError(ValueError):
    """A line of the stream is not a valid record."""

    def __init__(self, line, reason):
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


class DecoderClosed(RuntimeError):
    """feed() was called after close()."""


_BLANK = " \t\r"


class Decoder:
    """Turns chunks of bytes, split anywhere, into JSON objects, one per line."""

    def __init__(self):
        # Bytes, not text: a chunk may end inside a multi-byte character, so
        # only whole lines are ever decoded.
        self._buffer = bytearray()
        self._line = 0  # number of the last line taken out of the buffer
        self._closed = False
        self._error = None

    def feed(self, chunk):
        """Add bytes to the stream; return the records of the lines they complete."""
        self._raise_if_broken()
        if self._closed:
            raise DecoderClosed("feed() called after close()")
        if not isinstance(chunk, (bytes, bytearray)):
            raise TypeError(f"chunk must be bytes, not {type(chunk).__name__}")
        self._buffer += chunk
        records = []
        start = 0
        while (end := self._buffer.find(b"\n", start)) != -1:
            self._take_line(self._buffer[start:end], records)
            start = end + 1
        del self._buffer[:start]
        return records

    def close(self):
        """Mark the end of the stream; return the final line's record, if any."""
        self._raise_if_broken()
        self._closed = True
        records = []
        if self._buffer:
            self._take_line(bytearray(self._buffer), records)
        return records

    def _raise_if_broken(self):
        if self._error is not None:
            raise DecodeError(self._error.line, self._error.reason)

    def _fail(self, reason):
        self._error = DecodeError(self._line, reason)
        raise self._error

    def _take_line(self, raw, records):
        self._line += 1
        if raw.endswith(b"\r"):
            del raw[-1:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            self._fail(f"invalid UTF-8 at byte {e.start + 1}")
        if not text.strip(_BLANK):
            return
        try:
            record = json.loads(text)
        except json.JSONDecodeError as e:
            self._fail(e.msg)
        if not isinstance(record, dict):
            self._fail(f"expected a JSON object, got {type(record).__name__}")
        records.append(record)
