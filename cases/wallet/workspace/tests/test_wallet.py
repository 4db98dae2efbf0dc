import pytest

import wallet


@pytest.fixture
def w(tmp_path):
    with wallet.open(str(tmp_path / "wallet.db")) as w:
        w.create_account("alice")
        w.create_account("bob")
        yield w


def test_deposit_and_balance(w):
    assert w.balance("alice") == 0
    assert w.deposit("alice", 100) == 100
    assert w.deposit("alice", 5) == 105
    assert w.balance("alice") == 105


def test_transfer_moves_money(w):
    w.deposit("alice", 100)
    r = w.transfer("alice", "bob", 30, request_id="req-1")
    assert (r.src_balance, r.dst_balance) == (70, 30)
    assert w.balance("alice") == 70
    assert w.balance("bob") == 30


def test_insufficient_funds(w):
    w.deposit("alice", 10)
    with pytest.raises(wallet.InsufficientFunds):
        w.transfer("alice", "bob", 11, request_id="req-1")
    assert w.balance("alice") == 10


def test_duplicate_account(w):
    with pytest.raises(wallet.AccountExists):
        w.create_account("alice")
