from wordcount import count_words


def test_three_words(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("one two three", encoding="utf-8")
    assert count_words(str(p)) == 3
