"""Frozen acceptance tests for ledger.py --by-month (CONTRACT-phase2.md)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

LEDGER = Path(os.environ.get("EVALCTL_WORKSPACE", "/workspace")) / "ledger.py"


def run(cwd, *args):
    return subprocess.run(
        [sys.executable, str(LEDGER), *args],
        cwd=cwd, capture_output=True, timeout=60,
    )


def put(tmp_path, text, name="in.csv"):
    (tmp_path / name).write_bytes(text.encode("utf-8"))


def assert_ok(proc, stdout):
    assert proc.stderr == b""
    assert proc.returncode == 0
    assert proc.stdout == stdout


def assert_error(proc, stderr, status):
    assert proc.stdout == b""
    assert proc.stderr == stderr
    assert proc.returncode == status


SAMPLE = (
    "date,account,amount,memo\n"
    "2024-02-01,savings,250,transfer\n"
    "2024-01-03,checking,1500.00,salary\n"
    "2024-01-05,groceries,-82.40,market\n"
    "2024-01-09,checking,-82.40,card\n"
    "2023-12-31,checking,0.10,interest\n"
)
SAMPLE_OUT = (
    b"month,account,total\n"
    b"2023-12,checking,0.10\n"
    b"2024-01,checking,1417.60\n"
    b"2024-01,groceries,-82.40\n"
    b"2024-02,savings,250.00\n"
)


def test_groups_by_month_and_account(tmp_path):
    put(tmp_path, SAMPLE)
    assert_ok(run(tmp_path, "--by-month", "in.csv"), SAMPLE_OUT)


def test_sorted_by_month_then_account_code_point(tmp_path):
    put(tmp_path, "account,date,amount\nb,2024-03-01,1\nB,2024-03-02,2\na,2024-01-01,3\nb,2023-11-30,4\n")
    assert_ok(
        run(tmp_path, "--by-month", "in.csv"),
        b"month,account,total\n2023-11,b,4.00\n2024-01,a,3.00\n2024-03,B,2.00\n2024-03,b,1.00\n",
    )


def test_option_after_file_arguments(tmp_path):
    put(tmp_path, SAMPLE)
    assert_ok(run(tmp_path, "in.csv", "out.csv", "--by-month"), b"")
    assert (tmp_path / "out.csv").read_bytes() == SAMPLE_OUT


def test_by_month_totals_are_exact(tmp_path):
    big = "123456789012345678901234567890123456789012.34"
    put(tmp_path, f"date,account,amount\n2024-05-01,x,{big}\n2024-05-31,x,{big}\n2024-06-01,x,-0.01\n")
    assert_ok(
        run(tmp_path, "--by-month", "in.csv"),
        b"month,account,total\n"
        b"2024-05,x,246913578024691357802469135780246913578024.68\n"
        b"2024-06,x,-0.01\n",
    )


def test_leap_day_accepted(tmp_path):
    put(tmp_path, "date,account,amount\n2024-02-29,a,1\n2000-02-29,a,2\n")
    assert_ok(
        run(tmp_path, "--by-month", "in.csv"),
        b"month,account,total\n2000-02,a,2.00\n2024-02,a,1.00\n",
    )


@pytest.mark.parametrize(
    "raw",
    ["2023-02-29", "2024-04-31", "2024-13-01", "2024-00-10", "2024-01-00", "1900-02-29"],
)
def test_impossible_calendar_date_rejected(tmp_path, raw):
    put(tmp_path, f"date,account,amount\n2024-01-01,a,1\n{raw},a,1\n")
    assert_error(run(tmp_path, "--by-month", "in.csv"), f"ledger: in.csv:3: invalid date '{raw}'\n".encode(), 2)


@pytest.mark.parametrize(
    "raw",
    ["2024-1-05", "2024/01/05", "05-01-2024", "", "2024-01-05T10:00", "24-01-05", "2024-01-5"],
    ids=["short_month", "slashes", "day_first", "empty", "with_time", "two_digit_year", "short_day"],
)
def test_malformed_date_rejected(tmp_path, raw):
    put(tmp_path, f"date,account,amount\n{raw},a,1\n")
    assert_error(run(tmp_path, "--by-month", "in.csv"), f"ledger: in.csv:2: invalid date '{raw}'\n".encode(), 2)


def test_date_whitespace_stripped_but_message_shows_raw_field(tmp_path):
    put(tmp_path, "date,account,amount\n 2024-01-05 ,a,1\n")
    assert_ok(run(tmp_path, "--by-month", "in.csv"), b"month,account,total\n2024-01,a,1.00\n")
    put(tmp_path, "date,account,amount\n 2024-02-30 ,a,1\n", name="bad.csv")
    assert_error(run(tmp_path, "--by-month", "bad.csv"), b"ledger: bad.csv:2: invalid date ' 2024-02-30 '\n", 2)


def test_missing_date_column(tmp_path):
    put(tmp_path, "account,amount\na,1\n")
    assert_error(run(tmp_path, "--by-month", "in.csv"), b"ledger: in.csv:1: missing column 'date'\n", 2)


def test_missing_amount_column_reported_before_date(tmp_path):
    put(tmp_path, "account,value\na,1\n")
    assert_error(run(tmp_path, "--by-month", "in.csv"), b"ledger: in.csv:1: missing column 'amount'\n", 2)


def test_amount_checked_before_date(tmp_path):
    put(tmp_path, "date,account,amount\nnot-a-date,a,1e3\n")
    assert_error(run(tmp_path, "--by-month", "in.csv"), b"ledger: in.csv:2: invalid amount '1e3'\n", 2)


def test_bad_date_leaves_existing_output_untouched(tmp_path):
    put(tmp_path, "date,account,amount\n2024-01-01,a,1\n2024-02-30,a,1\n")
    put(tmp_path, "keep me\n", name="out.csv")
    proc = run(tmp_path, "--by-month", "in.csv", "out.csv")
    assert_error(proc, b"ledger: in.csv:3: invalid date '2024-02-30'\n", 2)
    assert (tmp_path / "out.csv").read_bytes() == b"keep me\n"


def test_without_option_dates_are_not_checked(tmp_path):
    put(tmp_path, "date,account,amount\nwhenever,a,1\n2023-02-29,a,2\n")
    assert_ok(run(tmp_path, "in.csv"), b"account,total\na,3.00\n")
