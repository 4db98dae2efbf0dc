from wordcount import count_words


def test_single_word(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("word", encoding="utf-8")
    assert count_words(str(p)) == 1
