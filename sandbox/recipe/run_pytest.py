"""Run pytest for the evalctl grader.

Started as `python3 -I -B /opt/evalctl/run_pytest.py ARGS`: isolated mode keeps
PYTHONPATH, the user site and the current directory off sys.path, so nothing
in the answer is imported before pytest and the standard library. The answer's
directory is appended, after them, so its modules can be imported by the
tests but cannot shadow pytest or the standard library.
"""
import os
import sys

sys.path.append(os.environ.get("EVALCTL_WORKSPACE", "/workspace"))

import pytest  # noqa: E402

sys.exit(pytest.main(sys.argv[1:]))
