"""Frozen acceptance tests for the TTLCache contract (CONTRACT.md)."""
import pytest

from cache import TTLCache


class FakeClock:
    def __init__(self, now=100.0):
        self.now = now

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


def make(maxsize=3, ttl=10):
    clock = FakeClock()
    return TTLCache(maxsize=maxsize, ttl=ttl, clock=clock), clock


def failing_loader(key):
    raise KeyError(f"cannot load {key}")


# --- expiry -----------------------------------------------------------------

def test_entry_expires_exactly_at_ttl():
    c, clock = make(ttl=10)
    c.set("a", 1)
    clock.advance(10)
    assert c.get("a", "miss") == "miss"


def test_entry_alive_just_before_ttl():
    c, clock = make(ttl=10)
    c.set("a", 1)
    clock.advance(9.5)
    assert c.get("a") == 1


def test_overwrite_resets_expiry():
    c, clock = make(ttl=10)
    c.set("a", 1)
    clock.advance(6)
    c.set("a", 2)
    clock.advance(6)  # 12 s after the first set, 6 s after the overwrite
    assert c.get("a") == 2


def test_len_ignores_expired_entries():
    c, clock = make(maxsize=5, ttl=10)
    c.set("a", 1)
    clock.advance(5)
    c.set("b", 2)
    c.set("c", 3)
    assert len(c) == 3
    clock.advance(6)  # "a" expired, "b" and "c" live
    assert len(c) == 2


def test_expired_key_is_reloaded():
    c, clock = make(ttl=10)
    calls = []

    def loader(key):
        calls.append(key)
        return len(calls)

    assert c.get_or_load("k", loader) == 1
    clock.advance(11)
    assert c.get_or_load("k", loader) == 2
    assert calls == ["k", "k"]


def test_loaded_value_expiry_counts_from_after_loader():
    c, clock = make(ttl=10)

    def slow_loader(key):
        clock.advance(3)
        return "v"

    start = clock.now
    assert c.get_or_load("k", slow_loader) == "v"
    clock.now = start + 12  # 9 s after the loader returned
    assert c.get("k") == "v"
    clock.now = start + 14
    assert c.get("k", "miss") == "miss"


# --- falsey values ------------------------------------------------------------

FALSEY = [0, "", None, False, []]
FALSEY_IDS = ["zero", "empty_str", "none", "false", "empty_list"]


@pytest.mark.parametrize("value", FALSEY, ids=FALSEY_IDS)
def test_falsey_value_is_a_hit(value):
    c, _ = make()
    c.set("k", value)

    def loader(key):
        raise AssertionError("loader called for a cached value")

    assert c.get_or_load("k", loader) == value
    assert c.get("k", "miss") == value
    assert "k" in c


def test_get_or_load_caches_loaded_none():
    c, _ = make()
    calls = []

    def loader(key):
        calls.append(key)
        return None

    assert c.get_or_load("k", loader) is None
    assert c.get_or_load("k", loader) is None
    assert calls == ["k"]


# --- LRU order -----------------------------------------------------------------

def test_get_refreshes_recency():
    c, _ = make(maxsize=2)
    c.set("a", 1)
    c.set("b", 2)
    assert c.get("a") == 1
    c.set("c", 3)  # evicts "b", the least recently used
    assert "a" in c
    assert "b" not in c
    assert "c" in c


def test_overwrite_refreshes_recency():
    c, _ = make(maxsize=2)
    c.set("a", 1)
    c.set("b", 2)
    c.set("a", 10)
    c.set("c", 3)  # evicts "b"
    assert c.get("a") == 10
    assert "b" not in c
    assert c.get("c") == 3


def test_overwrite_of_live_key_evicts_nothing():
    c, _ = make(maxsize=2)
    c.set("a", 1)
    c.set("b", 2)
    c.set("b", 20)
    assert c.get("a") == 1
    assert c.get("b") == 20


def test_get_or_load_hit_refreshes_recency():
    c, _ = make(maxsize=2)
    c.set("a", 1)
    c.set("b", 2)
    assert c.get_or_load("a", failing_loader) == 1
    c.set("c", 3)  # evicts "b"
    assert "a" in c
    assert "b" not in c


def test_contains_and_len_do_not_refresh_recency():
    c, _ = make(maxsize=2)
    c.set("a", 1)
    c.set("b", 2)
    assert "a" in c
    assert len(c) == 2
    c.set("c", 3)  # "a" is still the least recently used
    assert "a" not in c
    assert "b" in c


def test_expired_entries_dropped_before_evicting_live_one():
    c, clock = make(maxsize=2, ttl=10)
    c.set("a", 1)
    clock.advance(5)
    c.set("b", 2)
    clock.advance(1)
    assert c.get("a") == 1  # "a" is now the most recently used, "b" the least
    clock.advance(5)  # "a" expired (11 s old), "b" live (6 s old)
    c.set("c", 3)
    assert c.get("b") == 2
    assert c.get("c") == 3
    assert len(c) == 2


# --- failing loaders -------------------------------------------------------------

def test_failed_loader_propagates_same_exception():
    c, _ = make()
    boom = RuntimeError("backend down")

    def loader(key):
        raise boom

    with pytest.raises(RuntimeError) as info:
        c.get_or_load("k", loader)
    assert info.value is boom


def test_failed_loader_leaves_no_entry():
    c, _ = make()
    with pytest.raises(KeyError):
        c.get_or_load("k", failing_loader)
    assert "k" not in c
    assert len(c) == 0
    assert c.get_or_load("k", lambda key: "ok") == "ok"


def test_failed_loader_evicts_nothing():
    c, _ = make(maxsize=2)
    c.set("a", 1)
    c.set("b", 2)
    with pytest.raises(KeyError):
        c.get_or_load("c", failing_loader)
    assert len(c) == 2
    assert c.get("a") == 1
    assert c.get("b") == 2


def test_failed_loader_keeps_recency_order():
    c, _ = make(maxsize=2)
    c.set("a", 1)
    c.set("b", 2)
    with pytest.raises(KeyError):
        c.get_or_load("c", failing_loader)
    c.set("d", 4)  # "a" is still the least recently used
    assert "a" not in c
    assert "b" in c
    assert "d" in c
