import pytest

import wordcount
from wordcount import count_words


class FakeFile:
    """A file whose read fails. Version 1.0.0 of this fixture: it lacks the
    context-manager protocol, so an answer that opens with "with" fails
    before it ever reaches the read error the test is about."""

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
