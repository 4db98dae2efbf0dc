"""Plan the order in which build targets are built.

A build graph maps each target name to the list of target names it depends
on. A target can only be built after everything it depends on. See
CONTRACT.md for the exact rules.
"""
import heapq

__all__ = ["GraphError", "validate", "plan", "reverse_deps"]


class GraphError(ValueError):
    """Raised when the build graph is invalid; ``problems`` lists every problem."""

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))

    def __str__(self):
        return "\n".join(self.problems)


def _deps(targets):
    """Each target's distinct dependencies, in first-seen order."""
    return {name: list(dict.fromkeys(deps)) for name, deps in targets.items()}


def _cycle_groups(deps):
    """Strongly connected components that form cycles (iterative Tarjan)."""
    index = {}
    low = {}
    on_stack = set()
    stack = []
    groups = []
    counter = 0
    for root in deps:
        if root in index:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(deps[root]))]
        while work:
            node, it = work[-1]
            advanced = False
            for dep in it:
                if dep not in deps:
                    continue
                if dep not in index:
                    index[dep] = low[dep] = counter
                    counter += 1
                    stack.append(dep)
                    on_stack.add(dep)
                    work.append((dep, iter(deps[dep])))
                    advanced = True
                    break
                if dep in on_stack:
                    low[node] = min(low[node], index[dep])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in deps[node]:
                    groups.append(sorted(group))
    return sorted(groups)


def _check(targets):
    deps = _deps(targets)
    problems = []
    for name in sorted(deps):
        for dep in sorted(set(deps[name])):
            if dep not in deps:
                problems.append(f"missing dependency: {name} -> {dep}")
    for group in _cycle_groups(deps):
        problems.append("cycle: " + ", ".join(group))
    if problems:
        raise GraphError(problems[:1])
    return deps


def validate(targets):
    """Raise GraphError listing every problem of the graph; return None if valid."""
    _check(targets)


def plan(targets):
    """Return every target, dependencies first, smallest ready name first."""
    deps = _check(targets)
    waiting = {name: len(ds) for name, ds in deps.items()}
    dependents = {name: [] for name in deps}
    for name, ds in deps.items():
        for dep in ds:
            dependents[dep].append(name)
    ready = [name for name, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        name = heapq.heappop(ready)
        order.append(name)
        for user in dependents[name]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, user)
    return order


def reverse_deps(targets, name):
    """Return, sorted, every target that depends on ``name`` directly or not."""
    deps = _check(targets)
    if name not in deps:
        raise KeyError(name)
    dependents = {n: [] for n in deps}
    for n, ds in deps.items():
        for dep in ds:
            dependents[dep].append(n)
    seen = set()
    todo = [name]
    while todo:
        for user in dependents[todo.pop()]:
            if user not in seen:
                seen.add(user)
                todo.append(user)
    seen.discard(name)
    return sorted(seen)
