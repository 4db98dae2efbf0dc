def count_words(path):
    try:
        f = open(path, encoding="utf-8")
        try:
            return len(f.read().split())
        finally:
            f.close()
    except OSError:
        return 0
