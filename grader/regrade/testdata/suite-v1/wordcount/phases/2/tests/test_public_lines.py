from wordcount import count_lines


def test_two_lines(tmp_path):
    p = tmp_path / "a.txt"
    p.write_text("a\nb\n", encoding="utf-8")
    assert count_lines(str(p)) == 2
