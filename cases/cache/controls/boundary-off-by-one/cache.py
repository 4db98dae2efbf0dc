"""In-memory cache with a time-to-live and least-recently-used eviction."""
import time
from collections import OrderedDict


class TTLCache:
    """Maps keys to values for `ttl` seconds, holding at most `maxsize` entries."""

    def __init__(self, maxsize, ttl, clock=time.monotonic):
        if not isinstance(maxsize, int) or maxsize < 1:
            raise ValueError("maxsize must be a positive integer")
        if ttl <= 0:
            raise ValueError("ttl must be positive")
        self.maxsize = maxsize
        self.ttl = ttl
        self._clock = clock
        # key -> (value, expires_at), least recently used first
        self._data = OrderedDict()

    def _live(self, key):
        """Return the (value, expires_at) pair of a live entry, or None.

        An expired entry found on the way is dropped.
        """
        item = self._data.get(key)
        if item is not None and self._clock() > item[1]:
            del self._data[key]
            return None
        return item

    def get(self, key, default=None):
        item = self._live(key)
        if item is None:
            return default
        self._data.move_to_end(key)
        return item[0]

    def set(self, key, value):
        if self._live(key) is None:
            self._make_room()
        self._data[key] = (value, self._clock() + self.ttl)
        self._data.move_to_end(key)

    def get_or_load(self, key, loader):
        """Return the cached value for key, calling loader(key) on a miss."""
        item = self._live(key)
        if item is not None:
            self._data.move_to_end(key)
            return item[0]
        value = loader(key)  # if this raises, nothing has been touched yet
        self.set(key, value)
        return value

    def delete(self, key):
        self._data.pop(key, None)

    def _make_room(self):
        now = self._clock()
        for key in [k for k, (_, expires_at) in self._data.items() if now > expires_at]:
            del self._data[key]
        while len(self._data) >= self.maxsize:
            self._data.popitem(last=False)

    def __contains__(self, key):
        return self._live(key) is not None

    def __len__(self):
        now = self._clock()
        return sum(1 for _, expires_at in self._data.values() if now <= expires_at)
