"""Frozen acceptance tests for the wallet contract (CONTRACT.md)."""
import sqlite3
import threading
from decimal import Decimal

import pytest

import wallet

MAX = 2**63 - 1


@pytest.fixture
def db(tmp_path):
    """An empty database file in WAL mode (as CONTRACT.md allows); WAL keeps
    the many small commits of these tests fast."""
    path = str(tmp_path / "wallet.db")
    setup = sqlite3.connect(path)
    assert setup.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    setup.close()
    return path


@pytest.fixture
def w(db):
    with wallet.open(db) as w:
        for name in ("alice", "bob", "carol"):
            w.create_account(name)
        w.deposit("alice", 100)
        yield w


def balances(w, *names):
    return [w.balance(n) for n in names]


def run_threads(n, target):
    """Run target(i) in n threads started together; re-raise the first error."""
    barrier = threading.Barrier(n)
    errors = []
    results = [None] * n

    def body(i):
        try:
            barrier.wait()
            results[i] = target(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "threads still running after 60 s"
    if errors:
        raise errors[0]
    return results


def assert_no_lock_held(db):
    """Another connection can take the write lock at once."""
    other = sqlite3.connect(db, timeout=0.5, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
    finally:
        other.close()


# --- atomicity -------------------------------------------------------------

def test_transfer_to_unknown_account_changes_nothing(w, db):
    with pytest.raises(wallet.UnknownAccount):
        w.transfer("alice", "nobody", 40, request_id="r1")
    assert balances(w, "alice", "bob") == [100, 0]
    with wallet.open(db) as other:
        assert other.balance("alice") == 100


def test_failed_transfer_releases_write_lock(w, db):
    with pytest.raises(wallet.UnknownAccount):
        w.transfer("alice", "nobody", 40, request_id="r1")
    assert_no_lock_held(db)


def test_transfer_overflowing_destination_changes_nothing(w):
    w.deposit("bob", MAX - 10)
    with pytest.raises(wallet.BalanceOverflow):
        w.transfer("alice", "bob", 11, request_id="r1")
    assert balances(w, "alice", "bob") == [100, MAX - 10]
    assert w.transfer("alice", "bob", 10, request_id="r2").dst_balance == MAX


def test_deposit_up_to_max_balance_then_overflow(w):
    assert w.deposit("bob", MAX - 1) == MAX - 1
    assert w.deposit("bob", 1) == MAX
    with pytest.raises(wallet.BalanceOverflow):
        w.deposit("bob", 1)
    assert w.balance("bob") == MAX
    assert type(w.balance("bob")) is int


# --- amounts -------------------------------------------------------------------

BAD_TYPES = [True, False, 5.0, 2.5, "5", None, Decimal(5)]
BAD_TYPE_IDS = ["true", "false", "float_whole", "float", "str", "none", "decimal"]


@pytest.mark.parametrize("amount", BAD_TYPES, ids=BAD_TYPE_IDS)
def test_deposit_rejects_non_int_amount(w, amount):
    with pytest.raises(wallet.InvalidAmount):
        w.deposit("alice", amount)
    assert w.balance("alice") == 100


@pytest.mark.parametrize("amount", BAD_TYPES, ids=BAD_TYPE_IDS)
def test_transfer_rejects_non_int_amount(w, amount):
    with pytest.raises(wallet.InvalidAmount):
        w.transfer("alice", "bob", amount, request_id="r1")
    assert balances(w, "alice", "bob") == [100, 0]


@pytest.mark.parametrize("amount", [0, -1, -100, MAX + 1], ids=["zero", "minus_one", "minus_100", "above_max"])
def test_out_of_range_amount_rejected(w, amount):
    with pytest.raises(wallet.InvalidAmount):
        w.deposit("bob", amount)
    with pytest.raises(wallet.InvalidAmount):
        w.transfer("alice", "bob", amount, request_id="r1")
    assert balances(w, "alice", "bob") == [100, 0]


def test_invalid_amount_is_a_value_error(w):
    with pytest.raises(ValueError):
        w.deposit("alice", -3)


# --- idempotency -----------------------------------------------------------------

def test_retry_returns_original_receipt_and_moves_money_once(w):
    first = w.transfer("alice", "bob", 30, request_id="r1")
    again = w.transfer("alice", "bob", 30, request_id="r1")
    assert again == first
    assert balances(w, "alice", "bob") == [70, 30]


def test_retry_after_balances_changed_returns_original_receipt(w):
    first = w.transfer("alice", "bob", 60, request_id="r1")
    w.transfer("alice", "carol", 40, request_id="r2")  # alice is now at 0
    w.deposit("bob", 5)
    again = w.transfer("alice", "bob", 60, request_id="r1")
    assert again == first
    assert (again.src_balance, again.dst_balance) == (40, 60)
    assert balances(w, "alice", "bob", "carol") == [0, 65, 40]


@pytest.mark.parametrize("src,dst,amount", [
    ("alice", "bob", 31),
    ("alice", "carol", 30),
    ("bob", "alice", 30),
], ids=["amount", "dst", "src"])
def test_retry_with_different_params_conflicts(w, src, dst, amount):
    w.deposit("bob", 100)
    w.transfer("alice", "bob", 30, request_id="r1")
    with pytest.raises(wallet.RequestConflict):
        w.transfer(src, dst, amount, request_id="r1")
    assert balances(w, "alice", "bob", "carol") == [70, 130, 0]


def test_failed_transfer_does_not_use_up_request_id(w):
    with pytest.raises(wallet.InsufficientFunds):
        w.transfer("alice", "bob", 500, request_id="r1")
    w.deposit("alice", 400)
    r = w.transfer("alice", "bob", 500, request_id="r1")
    assert (r.src_balance, r.dst_balance) == (0, 500)


def test_retry_recognised_by_another_wallet_on_same_file(w, db):
    first = w.transfer("alice", "bob", 25, request_id="r1")
    w.close()
    with wallet.open(db) as again:
        assert again.transfer("alice", "bob", 25, request_id="r1") == first
        with pytest.raises(wallet.RequestConflict):
            again.transfer("alice", "bob", 26, request_id="r1")
        assert balances(again, "alice", "bob") == [75, 25]


def test_transfer_ids_are_unique(w):
    ids = {w.transfer("alice", "bob", 1, request_id=f"r{i}").transfer_id for i in range(5)}
    assert len(ids) == 5


# --- concurrency --------------------------------------------------------------------

def test_transfer_waits_for_another_writer(w, db):
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # hold the write lock for a moment
    release = threading.Timer(0.5, holder.execute, ("COMMIT",))
    release.start()
    try:
        r = w.transfer("alice", "bob", 30, request_id="r1")
    finally:
        release.join()
        holder.close()
    assert (r.src_balance, r.dst_balance) == (70, 30)
    assert balances(w, "alice", "bob") == [70, 30]


TRANSFERS_PER_THREAD = 25


def test_concurrent_transfers_conserve_money(db):
    names = [f"acct{i}" for i in range(8)]
    start = 1_000_000
    with wallet.open(db) as setup:
        for name in names:
            setup.create_account(name)
            setup.deposit(name, start)

    expected = {name: start for name in names}
    plan = []
    for i in range(8):
        for j in range(TRANSFERS_PER_THREAD):
            src, dst, amount = names[i], names[(i + 1 + j % 7) % 8], j + 1
            expected[src] -= amount
            expected[dst] += amount
            plan.append((i, src, dst, amount, f"t{i}-{j}"))

    def worker(i):
        with wallet.open(db) as mine:
            for k, src, dst, amount, rid in plan:
                if k == i:
                    mine.transfer(src, dst, amount, request_id=rid)

    run_threads(8, worker)
    with wallet.open(db) as check:
        assert {name: check.balance(name) for name in names} == expected


def test_concurrent_retries_move_money_once(db):
    with wallet.open(db) as setup:
        setup.create_account("alice")
        setup.create_account("bob")
        setup.deposit("alice", 1000)

    def worker(i):
        with wallet.open(db) as mine:
            return mine.transfer("alice", "bob", 10, request_id="same")

    receipts = run_threads(8, worker)
    assert len(set(receipts)) == 1
    with wallet.open(db) as check:
        assert balances(check, "alice", "bob") == [990, 10]
