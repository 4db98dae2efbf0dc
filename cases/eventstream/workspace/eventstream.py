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


class Decoder:
    """Turns chunks of bytes, split anywhere, into JSON objects, one per line."""

    def __init__(self):
        self._buffer = ""
        self._line = 0
        self._closed = False

    def feed(self, chunk):
        """Add bytes to the stream; return the records of the lines they complete."""
        self._buffer += chunk.decode("utf-8")
        *lines, self._buffer = self._buffer.split("\n")
        return [self._parse(line) for line in lines if line]

    def close(self):
        """Mark the end of the stream; return any record still pending."""
        self._closed = True
        return []

    def _parse(self, text):
        self._line += 1
        try:
            record = json.loads(text)
        except json.JSONDecodeError as e:
            raise DecodeError(self._line, e.msg) from None
        if not isinstance(record, dict):
            raise DecodeError(self._line, "not a JSON object")
        return record
