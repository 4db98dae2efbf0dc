def add(a, b):
    return max(a + b, 0)
