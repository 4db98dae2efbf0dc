"""A small wallet service: named accounts with integer balances in SQLite."""
import sqlite3
from dataclasses import dataclass

MAX_BALANCE = 2**63 - 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    name    TEXT PRIMARY KEY,
    balance INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS transfers (
    id          INTEGER PRIMARY KEY,
    request_id  TEXT NOT NULL,
    src         TEXT NOT NULL,
    dst         TEXT NOT NULL,
    amount      INTEGER NOT NULL,
    src_balance INTEGER NOT NULL,
    dst_balance INTEGER NOT NULL
);
"""


class WalletError(Exception):
    """Base class of every error the wallet raises on purpose."""


class UnknownAccount(WalletError):
    pass


class AccountExists(WalletError):
    pass


class InsufficientFunds(WalletError):
    pass


class InvalidAmount(WalletError, ValueError):
    pass


class BalanceOverflow(WalletError):
    pass


class RequestConflict(WalletError):
    pass


@dataclass(frozen=True)
class Receipt:
    transfer_id: int
    src_balance: int
    dst_balance: int


def _check_amount(amount):
    if amount <= 0:
        raise InvalidAmount(f"amount must be positive, got {amount!r}")


class Wallet:
    def __init__(self, db_path):
        self._conn = sqlite3.connect(db_path)
        self._conn.executescript(SCHEMA)

    def close(self):
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _balance(self, name):
        row = self._conn.execute("SELECT balance FROM accounts WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise UnknownAccount(name)
        return row[0]

    def create_account(self, name):
        try:
            with self._conn:
                self._conn.execute("INSERT INTO accounts (name, balance) VALUES (?, 0)", (name,))
        except sqlite3.IntegrityError:
            raise AccountExists(name) from None

    def balance(self, name):
        return self._balance(name)

    def deposit(self, name, amount):
        _check_amount(amount)
        with self._conn:
            cur = self._conn.execute(
                "UPDATE accounts SET balance = balance + ? WHERE name = ?", (amount, name))
            if cur.rowcount == 0:
                raise UnknownAccount(name)
            return self._balance(name)

    def transfer(self, src, dst, amount, request_id):
        """Move amount from src to dst and return a Receipt."""
        _check_amount(amount)
        src_balance = self._balance(src)
        if src_balance < amount:
            raise InsufficientFunds(f"{src} has {src_balance}, needs {amount}")
        self._conn.execute(
            "UPDATE accounts SET balance = ? WHERE name = ?", (src_balance - amount, src))
        cur = self._conn.execute(
            "UPDATE accounts SET balance = balance + ? WHERE name = ?", (amount, dst))
        if cur.rowcount == 0:
            raise UnknownAccount(dst)
        # TODO: request_id is stored but not used for anything yet.
        cur = self._conn.execute(
            "INSERT INTO transfers (request_id, src, dst, amount, src_balance, dst_balance)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (request_id, src, dst, amount, src_balance - amount, self._balance(dst)))
        receipt = Receipt(cur.lastrowid, src_balance - amount, self._balance(dst))
        self._conn.commit()
        return receipt


def open(db_path):
    """Open (creating if needed) the wallet database at db_path."""
    return Wallet(db_path)
