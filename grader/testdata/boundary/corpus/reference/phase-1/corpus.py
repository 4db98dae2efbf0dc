"""An honest answer exercising Python's ordinary semantics (the boundary's
differential test grades it through the boundary and runs it directly)."""
import decimal


class School:
    def __init__(self):
        self._grades = {}

    def add_student(self, name, grade):
        if name in self._grades:
            return False
        self._grades[name] = grade
        return True

    def roster(self):
        return sorted(self._grades, key=lambda n: (self._grades[n], n))

    def grade(self, grade_number):
        return sorted(n for n, g in self._grades.items() if g == grade_number)


def protocol_names(op=None, args=None, kw=None, name=None, f=None, o=None, self=None, cls=None, target=None, q=None):
    return [op, args, kw, name, f, o, self, cls, target, q]


def echo_kw(*args, **kw):
    return [list(args), kw]


class Zipper:
    def __init__(self, tree, path):
        self.tree, self.path = tree, path

    @staticmethod
    def from_tree(tree):
        return Zipper(tree, [])

    def value(self):
        return self.tree["value"]

    def set_value(self, v):
        self.tree["value"] = v
        return self

    def left(self):
        return None if self.tree["left"] is None else Zipper(self.tree["left"], self.path + [self.tree])

    def right(self):
        return None if self.tree["right"] is None else Zipper(self.tree["right"], self.path + [self.tree])

    def up(self):
        return Zipper(self.path[-1], self.path[:-1]) if self.path else None

    def to_tree(self):
        return self.path[0] if self.path else self.tree


def append_deep(tree, item):
    tree["children"][0]["items"].append(item)


class Holder:
    def __init__(self, items):
        self.items = items

    def add(self, x):
        self.items.append(x)

    def held(self):
        return self.items


def identity(x):
    return x


def same(a, b):
    return a is b


def notify(callback, values):
    for v in values:
        callback(v, tag="t", name=v)


def use_double(sock):
    data = sock.recv(4)
    sock.send(data.upper())
    return sock.closed


def use_mock(m):
    m.start(speed=3)
    return m.status()


def count(n):
    yield from range(n)


class Countdown:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        n = self.n
        while n > 0:
            yield n
            n -= 1


class AppError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def fail(code):
    raise AppError(code, "failed with %d" % code)


def catch_callback(cb):
    try:
        cb()
    except ValueError as e:
        return "caught: %s" % e
    return "no error"


def edge_numbers():
    return [float("inf"), float("-inf"), -0.0, 2 ** 100, -(2 ** 63), 5e-324, complex(1, -0.0), decimal.Decimal("1.10")]


def is_nan(x):
    return x != x


def divide(a, b):
    return a / b


def ident_list(xs):
    return [xs, xs]
