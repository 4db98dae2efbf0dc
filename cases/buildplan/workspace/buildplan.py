"""Plan the order in which build targets are built.

A build graph maps each target name to the list of target names it depends
on. A target can only be built after everything it depends on.
"""


class GraphError(ValueError):
    """Raised when the build graph is invalid."""


def plan(targets):
    """Return every target in an order where dependencies come first."""
    order = []
    done = set()
    visiting = set()

    def visit(name, stack):
        if name in done:
            return
        if name in visiting:
            raise GraphError("cycle: " + " -> ".join(stack + [name]))
        if name not in targets:
            raise GraphError(f"missing dependency: {stack[-1]} -> {name}")
        visiting.add(name)
        for dep in sorted(targets[name]):
            visit(dep, stack + [name])
        visiting.discard(name)
        done.add(name)
        order.append(name)

    for name in sorted(targets):
        visit(name, [])
    return order


def reverse_deps(targets, name):
    """Return the targets that depend on ``name``."""
    return sorted(t for t, deps in targets.items() if name in deps)
