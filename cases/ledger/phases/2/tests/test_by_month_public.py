import subprocess
import sys
from pathlib import Path

LEDGER = Path(__file__).resolve().parents[1] / "ledger.py"


def run(cwd, *args):
    return subprocess.run(
        [sys.executable, str(LEDGER), *args],
        cwd=cwd, capture_output=True, text=True, timeout=60,
    )


def test_by_month_totals(tmp_path):
    (tmp_path / "in.csv").write_text(
        "date,account,amount\n"
        "2024-01-03,checking,1500.00\n"
        "2024-01-09,checking,-82.40\n"
        "2024-02-01,checking,10\n"
    )
    proc = run(tmp_path, "--by-month", "in.csv")
    assert proc.returncode == 0
    assert proc.stdout == (
        "month,account,total\n"
        "2024-01,checking,1417.60\n"
        "2024-02,checking,10.00\n"
    )


def test_plain_totals_unchanged(tmp_path):
    (tmp_path / "in.csv").write_text("date,account,amount\n2024-01-03,cash,1\n2024-02-03,cash,2\n")
    proc = run(tmp_path, "in.csv")
    assert proc.returncode == 0
    assert proc.stdout == "account,total\ncash,3.00\n"
