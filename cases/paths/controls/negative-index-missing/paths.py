"""Nested lookups in JSON-like data (dicts, lists and scalars).

    >>> get({"a": {"b": [10, 20]}}, "a.b.1")
    20
"""
import re

__all__ = ["MISSING", "PathError", "PathTypeError", "get", "has"]


class _Missing:
    def __repr__(self):
        return "MISSING"


MISSING = _Missing()

_INDEX = re.compile(r"-?[0-9]+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class PathError(KeyError):
    """Raised when a path does not resolve inside the data."""

    def __init__(self, message, segment=None, location="$"):
        super().__init__(message)
        self.segment = segment
        self.location = location

    def __str__(self):
        # KeyError's own __str__ would wrap the message in quotes.
        return self.args[0]


class PathTypeError(PathError, TypeError):
    """Raised when a segment is applied to a value it cannot look into."""


def _segments(path):
    if isinstance(path, str):
        if path == "":
            return []
        parts = path.split(".")
        if any(p == "" for p in parts):
            raise ValueError(f"malformed path {path!r}: empty segment")
        return parts
    return list(path)


def _render(location, seg, is_index):
    if is_index:
        return f"{location}[{seg}]"
    if isinstance(seg, str) and _IDENT.fullmatch(seg):
        return f"{location}.{seg}"
    return f"{location}[{seg!r}]"


def _resolve(data, path):
    """Return the value, or raise PathError (missing) / PathTypeError."""
    cur = data
    location = "$"
    for seg in _segments(path):
        if isinstance(cur, dict):
            if seg not in cur:
                raise PathError(f"missing key {seg!r} at {location}", seg, location)
            cur = cur[seg]
            location = _render(location, seg, False)
        elif isinstance(cur, list):
            index = seg
            if isinstance(seg, str) and _INDEX.fullmatch(seg):
                index = int(seg)
            if not isinstance(index, int):
                raise PathTypeError(
                    f"cannot look up {seg!r} in list at {location}", seg, location)
            if not 0 <= index < len(cur):
                raise PathError(
                    f"index {index} out of range at {location} (length {len(cur)})",
                    index, location)
            cur = cur[index]
            location = _render(location, index, True)
        else:
            raise PathTypeError(
                f"cannot look up {seg!r} in {type(cur).__name__} at {location}",
                seg, location)
    return cur


def get(data, path, default=MISSING):
    """Return the value at ``path`` inside ``data`` (see CONTRACT.md)."""
    try:
        return _resolve(data, path)
    except PathTypeError:
        raise
    except PathError:
        if default is MISSING:
            raise
        return default


def has(data, path):
    """Tell whether ``path`` resolves inside ``data`` (see CONTRACT.md)."""
    try:
        _resolve(data, path)
    except PathTypeError:
        raise
    except PathError:
        return False
    return True
