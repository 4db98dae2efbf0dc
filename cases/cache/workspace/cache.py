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

    def get(self, key, default=None):
        item = self._data.get(key)
        if item is None:
            return default
        value, expires_at = item
        if self._clock() > expires_at:
            del self._data[key]
            return default
        return value

    def set(self, key, value):
        if key not in self._data:
            self._evict_if_full()
        self._data[key] = (value, self._clock() + self.ttl)

    def get_or_load(self, key, loader):
        """Return the cached value for key, calling loader(key) on a miss."""
        value = self.get(key)
        if value:
            return value
        # Make room before the (possibly slow) loader runs.
        if key not in self._data:
            self._evict_if_full()
        value = loader(key)
        self.set(key, value)
        return value

    def delete(self, key):
        self._data.pop(key, None)

    def _evict_if_full(self):
        while len(self._data) >= self.maxsize:
            self._data.popitem(last=False)

    def __contains__(self, key):
        return self.get(key) is not None

    def __len__(self):
        return len(self._data)
