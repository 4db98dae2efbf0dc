"""Nested lookups in JSON-like data (dicts, lists and scalars).

    >>> get({"a": {"b": [10, 20]}}, "a.b.1")
    20
"""


class PathError(KeyError):
    """Raised when a path does not exist in the data."""


def _split(path):
    if isinstance(path, str):
        return path.split(".")
    return list(path)


def get(data, path, default=None):
    """Return the value at ``path`` inside ``data``.

    ``path`` is a dotted string ("a.b.0.c") or a list of keys and indices.
    When the path is missing, ``default`` is returned if one was given,
    otherwise PathError is raised.
    """
    cur = data
    for seg in _split(path):
        if isinstance(cur, dict):
            cur = cur.get(seg)
        elif isinstance(cur, (list, tuple, str)):
            try:
                cur = cur[int(seg)]
            except (IndexError, ValueError):
                cur = None
        else:
            cur = None
        if not cur:
            if default is not None:
                return default
            raise PathError(f"path {path!r} not found at {seg!r}")
    return cur


def has(data, path):
    """Tell whether ``path`` exists inside ``data``."""
    try:
        return get(data, path) is not None
    except PathError:
        return False
