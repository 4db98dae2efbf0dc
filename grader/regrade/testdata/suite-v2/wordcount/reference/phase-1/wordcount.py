def _read(path):
    try:
        f = open(path, encoding="utf-8")
        try:
            return f.read()
        finally:
            f.close()
    except OSError as e:
        raise ValueError("unreadable: " + path) from e


def count_words(path):
    return len(_read(path).split())
