def count_words(path):
    with open(path, encoding="utf-8") as f:
        return len(f.read().split(" "))
