from cache import TTLCache


class FakeClock:
    def __init__(self, now=0.0):
        self.now = now

    def __call__(self):
        return self.now


def test_set_then_get():
    c = TTLCache(maxsize=3, ttl=10, clock=FakeClock())
    c.set("a", 1)
    assert c.get("a") == 1
    assert c.get("missing", "dflt") == "dflt"


def test_entry_gone_well_after_ttl():
    clock = FakeClock()
    c = TTLCache(maxsize=3, ttl=10, clock=clock)
    c.set("a", 1)
    clock.now = 25
    assert c.get("a") is None


def test_oldest_entry_evicted_when_full():
    c = TTLCache(maxsize=2, ttl=10, clock=FakeClock())
    c.set("a", 1)
    c.set("b", 2)
    c.set("c", 3)
    assert c.get("a") is None
    assert c.get("b") == 2
    assert c.get("c") == 3


def test_get_or_load_calls_loader_once():
    calls = []

    def loader(key):
        calls.append(key)
        return key.upper()

    c = TTLCache(maxsize=2, ttl=10, clock=FakeClock())
    assert c.get_or_load("x", loader) == "X"
    assert c.get_or_load("x", loader) == "X"
    assert calls == ["x"]
