import pytest

import wordcount
from wordcount import count_words


class FakeFile:
    """A file whose read fails. Version 1.0.1: it supports the
    context-manager protocol like a real file (1.0.0 did not, which failed
    correct answers that open with "with")."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def read(self, *args):
        raise OSError("disk on fire")

    def close(self):
        pass


def test_runs_of_whitespace(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("  alpha\tbeta\n\ngamma  delta ", encoding="utf-8")
    assert count_words(str(p)) == 4


def test_empty(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("", encoding="utf-8")
    assert count_words(str(p)) == 0


def test_missing_file(tmp_path):
    missing = str(tmp_path / "nope.txt")
    with pytest.raises(ValueError, match="unreadable: "):
        count_words(missing)


def test_read_error(monkeypatch):
    monkeypatch.setattr(wordcount, "open", lambda *a, **k: FakeFile(), raising=False)
    with pytest.raises(ValueError, match="unreadable: data.txt"):
        count_words("data.txt")
