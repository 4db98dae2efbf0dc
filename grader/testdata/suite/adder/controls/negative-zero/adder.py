def add(a, b):
    s = a + b
    return s if s >= 0 or a == 0 else 0
