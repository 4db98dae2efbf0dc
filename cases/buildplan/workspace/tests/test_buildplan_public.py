import pytest

from buildplan import GraphError, plan, reverse_deps

GRAPH = {
    "app": ["lib", "assets"],
    "lib": ["core"],
    "assets": [],
    "core": [],
}


def test_dependencies_come_first():
    order = plan(GRAPH)
    assert sorted(order) == sorted(GRAPH)
    for target, deps in GRAPH.items():
        for dep in deps:
            assert order.index(dep) < order.index(target)


def test_simple_chain():
    assert plan({"c": ["b"], "b": ["a"], "a": []}) == ["a", "b", "c"]


def test_missing_dependency_is_an_error():
    with pytest.raises(GraphError) as info:
        plan({"app": ["nope"]})
    assert info.value.problems == ["missing dependency: app -> nope"]


def test_reverse_deps_direct():
    assert reverse_deps(GRAPH, "lib") == ["app"]
