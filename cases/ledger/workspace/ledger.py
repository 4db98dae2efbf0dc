#!/usr/bin/env python3
"""Sum ledger amounts per account.

    python3 ledger.py INPUT.csv [OUTPUT.csv]

Reads a CSV file with a header row that has (at least) the columns
``account`` and ``amount`` and writes one total per account.
"""
import csv
import sys


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: ledger.py INPUT [OUTPUT]", file=sys.stderr)
        return 2
    src = argv[1]
    out = open(argv[2], "w") if len(argv) == 3 else sys.stdout

    totals = {}
    with open(src, newline="") as f:
        for n, row in enumerate(csv.DictReader(f), start=2):
            try:
                amount = float(row["amount"])
            except ValueError:
                print(f"ledger: bad amount on row {n}: {row['amount']}", file=sys.stderr)
                return 2
            totals[row["account"]] = totals.get(row["account"], 0.0) + amount

    out.write("account,total\n")
    for account in sorted(totals):
        out.write(f"{account},{totals[account]:.2f}\n")
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
