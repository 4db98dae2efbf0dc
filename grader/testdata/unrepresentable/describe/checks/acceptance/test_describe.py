"""Run in one process, all three pass with the reference. Through the
boundary, the second and third hand the answer what it cannot carry: a
module of the tests' (never shared) and a list nested 250 levels deep
(deeper than 200): their failures are the boundary's, not the answer's."""
import math

from describe import add, depth, module_name


def test_add():
    assert add(2, 3) == 5


def test_module():
    assert module_name(math) == "math"


def test_deep():
    xs = []
    for _ in range(249):
        xs = [xs]
    assert depth(xs) == 250
