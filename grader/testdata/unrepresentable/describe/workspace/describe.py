def add(a, b):
    raise NotImplementedError


def module_name(m):
    raise NotImplementedError


def depth(xs):
    raise NotImplementedError
