import pytest

from wordcount import count_lines


def test_lines(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("one\ntwo two\nthree", encoding="utf-8")
    assert count_lines(str(p)) == 3


def test_lines_missing_file(tmp_path):
    with pytest.raises(ValueError, match="unreadable: "):
        count_lines(str(tmp_path / "nope.txt"))
