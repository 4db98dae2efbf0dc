#!/usr/bin/env python3
"""Sum ledger amounts per account.

    python3 ledger.py INPUT.csv [OUTPUT.csv]

See CONTRACT.md. Amounts are handled as integer cents, so any size is exact.
"""
import argparse
import csv
import io
import re
import sys
from decimal import Decimal, InvalidOperation, getcontext

getcontext().prec = 1000

AMOUNT = re.compile(r"(-?)([0-9]+)(?:\.([0-9]{1,2}))?")
REQUIRED = ("account", "amount")


class LedgerError(Exception):
    """An error to report: one stderr line and an exit status."""

    def __init__(self, message, status):
        super().__init__(message)
        self.message = message
        self.status = status


def parse_cents(text):
    """Return the amount in integer cents, or None when text is no amount."""
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def format_cents(amount):
    text = f"{amount:.2f}"
    return "0.00" if text == "-0.00" else text


def read_rows(path):
    """Return the file's lines parsed as CSV rows, or raise LedgerError."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise LedgerError(f"ledger: cannot read {path}: {e.strerror}", 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise LedgerError(f"ledger: cannot read {path}: not valid UTF-8", 1)
    return list(csv.reader(io.StringIO(text, newline="")))


def totals_of(path):
    rows = read_rows(path)
    if not rows or not rows[0]:
        raise LedgerError(f"ledger: {path}:1: missing header", 2)
    header = rows[0]
    for name in REQUIRED:
        if name not in header:
            raise LedgerError(f"ledger: {path}:1: missing column '{name}'", 2)
    acc_i, amt_i = header.index("account"), header.index("amount")
    totals = {}
    for n, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(header):
            raise LedgerError(
                f"ledger: {path}:{n}: expected {len(header)} fields, got {len(row)}", 2)
        account = row[acc_i].strip()
        if not account:
            raise LedgerError(f"ledger: {path}:{n}: empty account", 2)
        cents = parse_cents(row[amt_i].strip())
        if cents is None:
            raise LedgerError(f"ledger: {path}:{n}: invalid amount '{row[amt_i]}'", 2)
        totals[account] = totals.get(account, Decimal(0)) + cents
    return totals


def render(totals):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["account", "total"])
    for account in sorted(totals):
        w.writerow([account, format_cents(totals[account])])
    return buf.getvalue()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="ledger.py", description="Sum amounts per account.")
    parser.add_argument("input", metavar="INPUT")
    parser.add_argument("output", metavar="OUTPUT", nargs="?")
    args = parser.parse_args(argv)
    try:
        text = render(totals_of(args.input))
        if args.output is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            try:
                with open(args.output, "w", encoding="utf-8", newline="") as f:
                    f.write(text)
            except OSError as e:
                raise LedgerError(f"ledger: cannot write {args.output}: {e.strerror}", 1)
    except LedgerError as e:
        sys.stderr.write(e.message + "\n")
        return e.status
    return 0


if __name__ == "__main__":
    sys.exit(main())
