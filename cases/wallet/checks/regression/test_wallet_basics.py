"""Frozen regression tests: behaviour the starter already had."""
import pytest

import wallet


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "wallet.db")


def test_accounts_start_at_zero_and_deposits_add_up(db):
    with wallet.open(db) as w:
        w.create_account("a")
        assert w.balance("a") == 0
        assert w.deposit("a", 7) == 7
        assert w.deposit("a", 8) == 15


def test_transfer_returns_receipt(db):
    with wallet.open(db) as w:
        w.create_account("a")
        w.create_account("b")
        w.deposit("a", 50)
        r = w.transfer("a", "b", 20, request_id="x")
        assert isinstance(r, wallet.Receipt)
        assert isinstance(r.transfer_id, int)
        assert (r.src_balance, r.dst_balance) == (30, 20)


def test_insufficient_funds_changes_nothing(db):
    with wallet.open(db) as w:
        w.create_account("a")
        w.create_account("b")
        w.deposit("a", 5)
        with pytest.raises(wallet.InsufficientFunds):
            w.transfer("a", "b", 6, request_id="x")
        assert (w.balance("a"), w.balance("b")) == (5, 0)


def test_unknown_and_duplicate_accounts(db):
    with wallet.open(db) as w:
        w.create_account("a")
        with pytest.raises(wallet.AccountExists):
            w.create_account("a")
        with pytest.raises(wallet.UnknownAccount):
            w.balance("zed")
        with pytest.raises(wallet.UnknownAccount):
            w.deposit("zed", 1)
        with pytest.raises(wallet.UnknownAccount):
            w.transfer("zed", "a", 1, request_id="x")


def test_errors_share_a_base_class():
    for exc in (wallet.UnknownAccount, wallet.AccountExists, wallet.InsufficientFunds,
                wallet.InvalidAmount, wallet.BalanceOverflow, wallet.RequestConflict):
        assert issubclass(exc, wallet.WalletError)
    assert wallet.MAX_BALANCE == 2**63 - 1


def test_data_persists_across_open(db):
    with wallet.open(db) as w:
        w.create_account("a")
        w.deposit("a", 42)
    with wallet.open(db) as w:
        assert w.balance("a") == 42
