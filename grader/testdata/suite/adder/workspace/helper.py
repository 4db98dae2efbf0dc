def label(n):
    return f"n={n}"
