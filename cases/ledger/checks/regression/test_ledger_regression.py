"""Frozen regression tests (phase 1): behaviour the starter already had."""
import os
import subprocess
import sys
from pathlib import Path

LEDGER = Path(os.environ.get("EVALCTL_WORKSPACE", "/workspace")) / "ledger.py"


def run(cwd, *args):
    return subprocess.run(
        [sys.executable, str(LEDGER), *args],
        cwd=cwd, capture_output=True, timeout=60,
    )


def put(tmp_path, text, name="in.csv"):
    (tmp_path / name).write_bytes(text.encode("utf-8"))


def test_small_totals_to_stdout(tmp_path):
    put(tmp_path, "account,amount\nrent,-900.00\nsalary,2500.00\nrent,-100.00\n")
    proc = run(tmp_path, "in.csv")
    assert proc.returncode == 0
    assert proc.stdout == b"account,total\nrent,-1000.00\nsalary,2500.00\n"


def test_accounts_sorted(tmp_path):
    put(tmp_path, "account,amount\nzoo,1\nbank,2\nmid,3\n")
    proc = run(tmp_path, "in.csv")
    assert proc.stdout == b"account,total\nbank,2.00\nmid,3.00\nzoo,1.00\n"


def test_output_file_gets_the_totals(tmp_path):
    put(tmp_path, "account,amount\na,1.50\nb,2.25\na,1.50\n")
    proc = run(tmp_path, "in.csv", "totals.csv")
    assert proc.returncode == 0
    assert proc.stdout == b""
    assert (tmp_path / "totals.csv").read_bytes() == b"account,total\na,3.00\nb,2.25\n"


def test_extra_columns_ignored(tmp_path):
    put(tmp_path, "date,amount,memo,account\n2024-01-01,5.00,x,cash\n2024-01-02,1.25,y,cash\n")
    proc = run(tmp_path, "in.csv")
    assert proc.returncode == 0
    assert proc.stdout == b"account,total\ncash,6.25\n"


def test_header_only_gives_header(tmp_path):
    put(tmp_path, "account,amount\n")
    proc = run(tmp_path, "in.csv")
    assert proc.returncode == 0
    assert proc.stdout == b"account,total\n"


def test_non_numeric_amount_exits_2(tmp_path):
    put(tmp_path, "account,amount\ncash,ten\n")
    proc = run(tmp_path, "in.csv")
    assert proc.returncode == 2
    assert proc.stdout == b""


def test_no_arguments_is_usage_error(tmp_path):
    proc = run(tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(b"usage:")
    assert proc.stdout == b""
