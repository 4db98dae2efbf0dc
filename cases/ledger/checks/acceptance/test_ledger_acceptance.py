"""Frozen acceptance tests for ledger.py (phase 1 contract), run as a subprocess.

Phase 2's regression group runs this module again, so everything here must
keep holding once --by-month exists.
"""
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
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    (tmp_path / name).write_bytes(data)


def assert_ok(proc, stdout):
    assert proc.stderr == b""
    assert proc.returncode == 0
    assert proc.stdout == stdout


def assert_error(proc, stderr, status):
    assert proc.stdout == b""
    assert proc.stderr == stderr
    assert proc.returncode == status


# --- exact arithmetic and number format ---------------------------------

def test_sum_beyond_int64_cents_is_exact(tmp_path):
    put(tmp_path, "account,amount\n" + "big,92233720368547758.07\n" * 3 + "big,0.01\n")
    assert_ok(run(tmp_path, "in.csv"), b"account,total\nbig,276701161105643274.22\n")


def test_totals_exact_beyond_28_digits(tmp_path):
    a = "123456789012345678901234567890123456789012.34"
    b = "-23456789012345678901234567890123456789012.35"
    c = "99999999999999999999999999999999999999999999.99"
    put(tmp_path, f"account,amount\nx,{a}\nx,{b}\ny,{c}\ny,0.01\n")
    assert_ok(
        run(tmp_path, "in.csv"),
        b"account,total\n"
        b"x,99999999999999999999999999999999999999999.99\n"
        b"y,100000000000000000000000000000000000000000000.00\n",
    )


def test_two_decimals_and_no_exponent(tmp_path):
    put(tmp_path, "account,amount\na,7\nb,10.1\nc,1000000000000000000000\nc,0.5\nd,-0.07\n")
    assert_ok(
        run(tmp_path, "in.csv"),
        b"account,total\na,7.00\nb,10.10\nc,1000000000000000000000.50\nd,-0.07\n",
    )


def test_zero_total_is_never_negative(tmp_path):
    put(tmp_path, "account,amount\nneg,-0.00\nnet,5.10\nnet,-5.10\nmz,-0\n")
    assert_ok(run(tmp_path, "in.csv"), b"account,total\nmz,0.00\nneg,0.00\nnet,0.00\n")


INVALID_AMOUNTS = {
    "exponent": "1e3",
    "nan": "NaN",
    "infinity": "Infinity",
    "three_decimals": "1.234",
    "plus_sign": "+5",
    "comma_separator": "1,000",
    "underscore_separator": "1_000",
    "trailing_dot": "12.",
    "leading_dot": ".5",
    "hex": "0x10",
}


@pytest.mark.parametrize("raw", list(INVALID_AMOUNTS.values()), ids=list(INVALID_AMOUNTS))
def test_invalid_amount_rejected(tmp_path, raw):
    field = f'"{raw}"' if "," in raw else raw
    put(tmp_path, f"account,amount\nok,1.00\nbad,{field}\n")
    assert_error(run(tmp_path, "in.csv"), f"ledger: in.csv:3: invalid amount '{raw}'\n".encode(), 2)


def test_amount_and_account_whitespace_stripped(tmp_path):
    put(tmp_path, "account,amount\n cash , 5.00 \ncash,1.25\n")
    assert_ok(run(tmp_path, "in.csv"), b"account,total\ncash,6.25\n")


def test_invalid_amount_message_shows_field_before_stripping(tmp_path):
    put(tmp_path, "account,amount\ncash, 1.5e2 \n")
    assert_error(run(tmp_path, "in.csv"), b"ledger: in.csv:2: invalid amount ' 1.5e2 '\n", 2)


# --- row errors ------------------------------------------------------------

def test_first_invalid_row_is_reported(tmp_path):
    put(tmp_path, "account,amount\na,1\nb,2\nc,x\nd,y\n,3\n")
    assert_error(run(tmp_path, "in.csv"), b"ledger: in.csv:4: invalid amount 'x'\n", 2)


def test_blank_lines_skipped_but_counted(tmp_path):
    put(tmp_path, "account,amount\na,1\n\nb,2\n\nc,oops\n")
    assert_error(run(tmp_path, "in.csv"), b"ledger: in.csv:6: invalid amount 'oops'\n", 2)
    put(tmp_path, "account,amount\na,1\n\nb,2\n\n", name="ok.csv")
    assert_ok(run(tmp_path, "ok.csv"), b"account,total\na,1.00\nb,2.00\n")


def test_wrong_field_count(tmp_path):
    put(tmp_path, "date,account,amount\n2024-01-01,a,1\n2024-01-02,b\n")
    assert_error(run(tmp_path, "in.csv"), b"ledger: in.csv:3: expected 3 fields, got 2\n", 2)
    put(tmp_path, "account,amount\na,1,extra\n", name="more.csv")
    assert_error(run(tmp_path, "more.csv"), b"ledger: more.csv:2: expected 2 fields, got 3\n", 2)


def test_empty_account(tmp_path):
    put(tmp_path, "account,amount\na,1\n   ,2\n")
    assert_error(run(tmp_path, "in.csv"), b"ledger: in.csv:3: empty account\n", 2)


def test_account_checked_before_amount(tmp_path):
    put(tmp_path, "account,amount\n,bad\n")
    assert_error(run(tmp_path, "in.csv"), b"ledger: in.csv:2: empty account\n", 2)


def test_missing_column(tmp_path):
    put(tmp_path, "account,value\na,1\n")
    assert_error(run(tmp_path, "in.csv"), b"ledger: in.csv:1: missing column 'amount'\n", 2)
    put(tmp_path, "Account,Amount\na,1\n", name="caps.csv")
    assert_error(run(tmp_path, "caps.csv"), b"ledger: caps.csv:1: missing column 'account'\n", 2)


def test_empty_file_is_missing_header(tmp_path):
    put(tmp_path, "")
    assert_error(run(tmp_path, "in.csv"), b"ledger: in.csv:1: missing header\n", 2)


# --- read and write errors -----------------------------------------------

def test_missing_input_file(tmp_path):
    assert_error(
        run(tmp_path, "nope.csv"),
        b"ledger: cannot read nope.csv: No such file or directory\n", 1,
    )


def test_input_is_a_directory(tmp_path):
    (tmp_path / "data").mkdir()
    assert_error(run(tmp_path, "data"), b"ledger: cannot read data: Is a directory\n", 1)


def test_input_not_utf8(tmp_path):
    put(tmp_path, b"account,amount\ncaf\xe9,1.00\n")
    assert_error(run(tmp_path, "in.csv"), b"ledger: cannot read in.csv: not valid UTF-8\n", 1)


def test_unwritable_output(tmp_path):
    put(tmp_path, "account,amount\na,1\n")
    assert_error(
        run(tmp_path, "in.csv", "no/such/dir/out.csv"),
        b"ledger: cannot write no/such/dir/out.csv: No such file or directory\n", 1,
    )


# --- all or nothing --------------------------------------------------------

def test_bad_data_leaves_existing_output_untouched(tmp_path):
    put(tmp_path, "account,amount\na,1\nb,2\nc,bad\n")
    put(tmp_path, "account,total\nold,1.00\n", name="out.csv")
    proc = run(tmp_path, "in.csv", "out.csv")
    assert_error(proc, b"ledger: in.csv:4: invalid amount 'bad'\n", 2)
    assert (tmp_path / "out.csv").read_bytes() == b"account,total\nold,1.00\n"


def test_bad_data_creates_no_output_file(tmp_path):
    put(tmp_path, "account,amount\na,1\nb,\n")
    proc = run(tmp_path, "in.csv", "out.csv")
    assert_error(proc, b"ledger: in.csv:3: invalid amount ''\n", 2)
    assert not (tmp_path / "out.csv").exists()


def test_bad_data_writes_nothing_to_stdout(tmp_path):
    rows = "".join(f"acct{i:04d},{i}.50\n" for i in range(3000))
    put(tmp_path, "account,amount\n" + rows + "late,1.2.3\n")
    assert_error(run(tmp_path, "in.csv"), b"ledger: in.csv:3002: invalid amount '1.2.3'\n", 2)


# --- output format ---------------------------------------------------------

def test_accounts_sorted_by_code_point(tmp_path):
    put(tmp_path, "account,amount\nalpha,1\nZeta,2\n_misc,3\nBeta,4\n")
    assert_ok(run(tmp_path, "in.csv"), b"account,total\nBeta,4.00\nZeta,2.00\n_misc,3.00\nalpha,1.00\n")


def test_account_with_comma_or_quote_is_quoted(tmp_path):
    put(tmp_path, 'account,amount\n"Smith, J",10\n"say ""hi""",1\n')
    assert_ok(run(tmp_path, "in.csv"), b'account,total\n"Smith, J",10.00\n"say ""hi""",1.00\n')


def test_lines_end_with_lf_only(tmp_path):
    put(tmp_path, "account,amount\r\na,1\r\nb,2\r\n")
    proc = run(tmp_path, "in.csv", "out.csv")
    assert_ok(proc, b"")
    assert (tmp_path / "out.csv").read_bytes() == b"account,total\na,1.00\nb,2.00\n"
