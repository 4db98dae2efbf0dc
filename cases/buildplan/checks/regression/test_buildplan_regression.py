"""Frozen regression tests: behaviour the starter already had."""
import pytest

import buildplan

GRAPH = {
    "app": ["net", "db"],
    "net": ["core"],
    "db": ["core"],
    "core": [],
    "docs": [],
}


def test_plan_contains_every_target_once():
    order = buildplan.plan(GRAPH)
    assert sorted(order) == sorted(GRAPH)


def test_plan_puts_dependencies_first():
    order = buildplan.plan(GRAPH)
    for target, deps in GRAPH.items():
        for dep in deps:
            assert order.index(dep) < order.index(target)


def test_plan_of_empty_graph():
    assert buildplan.plan({}) == []


def test_plan_of_chain():
    assert buildplan.plan({"c": ["b"], "b": ["a"], "a": []}) == ["a", "b", "c"]


def test_missing_dependency_raises_graph_error():
    with pytest.raises(buildplan.GraphError):
        buildplan.plan({"a": ["b"]})


def test_cycle_raises_graph_error():
    with pytest.raises(buildplan.GraphError):
        buildplan.plan({"a": ["b"], "b": ["a"]})


def test_graph_error_is_value_error():
    assert issubclass(buildplan.GraphError, ValueError)


def test_reverse_deps_includes_direct_dependents():
    assert "app" in buildplan.reverse_deps(GRAPH, "net")
    assert buildplan.reverse_deps(GRAPH, "docs") == []
