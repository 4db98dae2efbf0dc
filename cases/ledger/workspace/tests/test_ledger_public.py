import subprocess
import sys
from pathlib import Path

LEDGER = Path(__file__).resolve().parents[1] / "ledger.py"


def run(cwd, *args):
    return subprocess.run(
        [sys.executable, str(LEDGER), *args],
        cwd=cwd, capture_output=True, text=True, timeout=60,
    )


def test_totals_to_stdout(tmp_path):
    (tmp_path / "in.csv").write_text(
        "account,amount\n"
        "checking,100.00\n"
        "savings,25.50\n"
        "checking,-40.25\n"
    )
    proc = run(tmp_path, "in.csv")
    assert proc.returncode == 0
    assert proc.stdout == "account,total\nchecking,59.75\nsavings,25.50\n"


def test_totals_to_output_file(tmp_path):
    (tmp_path / "in.csv").write_text("date,account,amount\n2024-01-01,cash,3\n")
    proc = run(tmp_path, "in.csv", "out.csv")
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert (tmp_path / "out.csv").read_text() == "account,total\ncash,3.00\n"


def test_invalid_amount_is_reported_with_its_row(tmp_path):
    (tmp_path / "in.csv").write_text("account,amount\ncash,1.00\ncash,abc\n")
    proc = run(tmp_path, "in.csv")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == "ledger: in.csv:3: invalid amount 'abc'\n"
