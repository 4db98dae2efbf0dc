"""A small wallet service: named accounts with integer balances in SQLite."""
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass

MAX_BALANCE = 2**63 - 1
BUSY_TIMEOUT_S = 30

SCHEMA = """
BEGIN IMMEDIATE;
CREATE TABLE IF NOT EXISTS accounts (
    name    TEXT PRIMARY KEY,
    balance INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS transfers (
    id          INTEGER PRIMARY KEY,
    request_id  TEXT NOT NULL UNIQUE,
    src         TEXT NOT NULL,
    dst         TEXT NOT NULL,
    amount      INTEGER NOT NULL,
    src_balance INTEGER NOT NULL,
    dst_balance INTEGER NOT NULL
);
COMMIT;
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
    if type(amount) is not int or not 1 <= amount <= MAX_BALANCE:
        raise InvalidAmount(f"amount must be an int in 1..{MAX_BALANCE}, got {amount!r}")


class Wallet:
    def __init__(self, db_path):
        # isolation_level=None: no implicit transactions, we issue BEGIN ourselves.
        self._conn = sqlite3.connect(db_path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        self._conn.executescript(SCHEMA)

    def close(self):
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @contextmanager
    def _write(self):
        """A write transaction that takes the database's write lock up front."""
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def _balance(self, name):
        row = self._conn.execute("SELECT balance FROM accounts WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise UnknownAccount(name)
        return row[0]

    def _set_balance(self, name, balance):
        self._conn.execute("UPDATE accounts SET balance = ? WHERE name = ?", (balance, name))

    def create_account(self, name):
        with self._write():
            try:
                self._conn.execute("INSERT INTO accounts (name, balance) VALUES (?, 0)", (name,))
            except sqlite3.IntegrityError:
                raise AccountExists(name) from None

    def balance(self, name):
        return self._balance(name)

    def deposit(self, name, amount):
        _check_amount(amount)
        with self._write():
            balance = self._balance(name)
            if balance > MAX_BALANCE - amount:
                raise BalanceOverflow(f"{name} would exceed {MAX_BALANCE}")
            self._set_balance(name, balance + amount)
        return balance + amount

    def transfer(self, src, dst, amount, request_id):
        """Move amount from src to dst and return a Receipt; safe to retry."""
        _check_amount(amount)
        with self._write():
            row = self._conn.execute(
                "SELECT src, dst, amount, id, src_balance, dst_balance"
                " FROM transfers WHERE request_id = ?", (request_id,)).fetchone()
            if row is not None:
                if row[:3] != (src, dst, amount):
                    raise RequestConflict(f"request {request_id!r} was used for {row[:3]}")
                return Receipt(*row[3:])
            src_balance = self._balance(src) - amount
            dst_balance = self._balance(dst) + amount
            if src_balance < 0:
                raise InsufficientFunds(f"{src} has {src_balance + amount}, needs {amount}")
            self._set_balance(src, src_balance)
            self._set_balance(dst, dst_balance)
            cur = self._conn.execute(
                "INSERT INTO transfers (request_id, src, dst, amount, src_balance, dst_balance)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (request_id, src, dst, amount, src_balance, dst_balance))
            return Receipt(cur.lastrowid, src_balance, dst_balance)


def open(db_path):
    """Open (creating if needed) the wallet database at db_path."""
    return Wallet(db_path)
