from helper import label


def test_label():
    assert label(3) == "n=3"
