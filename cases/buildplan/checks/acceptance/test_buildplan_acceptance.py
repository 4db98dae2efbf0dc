"""Frozen acceptance tests for buildplan.py: one stated contract edge each."""
import copy
import time

import pytest

import buildplan


def call(fn, *args):
    """Call fn, turning a RecursionError into a short failure (a traceback
    thousands of frames deep takes pytest a long time to print)."""
    try:
        return fn(*args)
    except RecursionError:
        pass
    pytest.fail(f"{fn.__name__} hit RecursionError", pytrace=False)


def problems_of(fn, *args):
    with pytest.raises(buildplan.GraphError) as info:
        call(fn, *args)
    return info.value.problems


def chain(n):
    """t00000 depends on t00001, which depends on t00002, ... down to the
    last name, which depends on nothing: a depth-first walk in name order
    goes n levels deep. Returns (build order, graph)."""
    names = [f"t{i:05d}" for i in range(n)]
    graph = {name: [nxt] for name, nxt in zip(names, names[1:])}
    graph[names[-1]] = []
    return names[::-1], graph


def test_tie_break_smallest_ready_target_first():
    assert buildplan.plan({"z": [], "a": ["z"], "m": []}) == ["m", "z", "a"]


def test_newly_ready_smaller_target_goes_next():
    assert buildplan.plan({"b": [], "c": [], "a": ["b"]}) == ["b", "a", "c"]


def test_tie_break_uses_code_point_order():
    graph = {"a": [], "B": [], "_": [], "Z": ["a"]}
    assert buildplan.plan(graph) == ["B", "_", "a", "Z"]


def test_duplicate_dependency_counts_once():
    graph = {"app": ["lib", "lib", "core"], "lib": ["core", "core"], "core": []}
    assert buildplan.plan(graph) == ["core", "lib", "app"]
    assert buildplan.validate(graph) is None


def test_graph_is_not_modified():
    graph = {"app": ["lib", "lib"], "lib": [], "x": ["app"]}
    before = copy.deepcopy(graph)
    buildplan.plan(graph)
    buildplan.reverse_deps(graph, "lib")
    buildplan.validate(graph)
    assert graph == before


def test_all_missing_dependencies_reported_sorted():
    graph = {"web": ["zlib", "auth", "db"], "api": ["yaml", "db"], "db": []}
    assert problems_of(buildplan.plan, graph) == [
        "missing dependency: api -> yaml",
        "missing dependency: web -> auth",
        "missing dependency: web -> zlib",
    ]


def test_missing_dependency_reported_once_per_pair():
    graph = {"app": ["ghost", "ghost"], "lib": ["ghost"]}
    assert problems_of(buildplan.validate, graph) == [
        "missing dependency: app -> ghost",
        "missing dependency: lib -> ghost",
    ]


def test_self_dependency_is_a_cycle():
    assert problems_of(buildplan.plan, {"a": ["a"], "b": []}) == ["cycle: a"]


def test_cycle_group_members_sorted():
    graph = {"c": ["a"], "a": ["b"], "b": ["c"], "d": []}
    assert problems_of(buildplan.plan, graph) == ["cycle: a, b, c"]


def test_interlocking_cycles_form_one_group():
    graph = {"a": ["b"], "b": ["a", "c"], "c": ["b"], "d": ["c"]}
    assert problems_of(buildplan.validate, graph) == ["cycle: a, b, c"]


def test_every_cycle_reported_and_dependents_not_mentioned():
    graph = {
        "x": ["y"], "y": ["x"],
        "b": ["a"], "a": ["b"],
        "m": ["m"],
        "uses_cycle": ["x"],
        "ok": [],
    }
    assert problems_of(buildplan.plan, graph) == ["cycle: a, b", "cycle: m", "cycle: x, y"]


def test_missing_dependencies_listed_before_cycles():
    graph = {"a": ["b"], "b": ["a"], "z": ["nope"], "c": ["c", "gone"]}
    assert problems_of(buildplan.plan, graph) == [
        "missing dependency: c -> gone",
        "missing dependency: z -> nope",
        "cycle: a, b",
        "cycle: c",
    ]


def test_error_message_joins_problem_lines():
    with pytest.raises(buildplan.GraphError) as info:
        buildplan.validate({"q": ["q"], "p": ["zz"]})
    err = info.value
    assert isinstance(err, ValueError)
    assert str(err) == "missing dependency: p -> zz\ncycle: q"


def test_validate_returns_none_for_valid_graph():
    assert buildplan.validate({"a": [], "b": ["a"]}) is None
    assert buildplan.validate({}) is None


def test_reverse_deps_transitive_and_sorted():
    graph = {
        "core": [], "util": ["core"], "net": ["util"], "db": ["core"],
        "app": ["net", "db"], "docs": [],
    }
    assert buildplan.reverse_deps(graph, "core") == ["app", "db", "net", "util"]
    assert buildplan.reverse_deps(graph, "util") == ["app", "net"]
    assert buildplan.reverse_deps(graph, "docs") == []


def test_reverse_deps_unknown_target_is_key_error():
    with pytest.raises(KeyError):
        buildplan.reverse_deps({"a": []}, "b")


def test_reverse_deps_invalid_graph_raises_graph_error():
    assert problems_of(buildplan.reverse_deps, {"a": ["b"], "b": ["a"], "c": []}, "c") == [
        "cycle: a, b"
    ]


def test_deep_chain_plan():
    order, graph = chain(10_000)
    start = time.perf_counter()
    assert call(buildplan.plan, graph) == order
    assert call(buildplan.validate, graph) is None
    assert time.perf_counter() - start < 5


def test_deep_chain_reverse_deps():
    order, graph = chain(10_000)
    # order[0] is the bottom of the chain: everything else depends on it.
    assert call(buildplan.reverse_deps, graph, order[0]) == sorted(order[1:])
    assert call(buildplan.reverse_deps, graph, order[5000]) == sorted(order[5001:])


def test_deep_chain_missing_dependency_at_bottom():
    order, graph = chain(10_000)
    graph[order[0]] = ["bedrock"]
    assert problems_of(buildplan.plan, graph) == [f"missing dependency: {order[0]} -> bedrock"]


def test_long_cycle_reported():
    order, graph = chain(10_000)
    graph[order[0]] = [order[-1]]
    graph["leaf"] = [order[1234]]
    assert problems_of(buildplan.plan, graph) == ["cycle: " + ", ".join(sorted(order))]
