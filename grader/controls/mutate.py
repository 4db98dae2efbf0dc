"""Make mutants of a Python reference solution for evalctl's control generator.

Reads {"path": "source", ...} as JSON on stdin and writes a JSON list of
mutants, each {"file", "line", "op", "desc", "source"}: the whole file with
one change. Run in the sandbox image (python3 -I), so the ast module and
ast.unparse are the grader's own Python's.

Operators: comparison swaps and boundary shifts (< to <=, == to !=),
arithmetic and boolean operator swaps, integer constants off by one, True
and False swapped, `not` dropped, a statement dropped (replaced by pass),
an if/elif branch's condition forced false, a return's value replaced by
None. Mutants whose unparsed source equals the original's are left out, and
so are drops of docstrings and __all__ (equivalent by construction).
"""
import ast
import copy
import json
import sys

CMP = {ast.Lt: [ast.LtE, ast.GtE], ast.LtE: [ast.Lt, ast.Gt], ast.Gt: [ast.GtE, ast.LtE], ast.GtE: [ast.Gt, ast.Lt],
       ast.Eq: [ast.NotEq], ast.NotEq: [ast.Eq], ast.In: [ast.NotIn], ast.NotIn: [ast.In], ast.Is: [ast.IsNot], ast.IsNot: [ast.Is]}
BIN = {ast.Add: [ast.Sub], ast.Sub: [ast.Add], ast.Mult: [ast.Add], ast.Div: [ast.Mult], ast.FloorDiv: [ast.Div, ast.Mult],
       ast.Mod: [ast.FloorDiv], ast.Pow: [ast.Mult], ast.BitAnd: [ast.BitOr], ast.BitOr: [ast.BitAnd]}
BOOL = {ast.And: [ast.Or], ast.Or: [ast.And]}


def is_dunder_all(st):
    """An __all__ assignment: dropping it changes no behaviour a test sees."""
    return isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and any(
        isinstance(t, ast.Name) and t.id == "__all__" for t in (st.targets if isinstance(st, ast.Assign) else [st.target]))


def sites(tree):
    """Every (node, kind, arg) mutation site in a stable walk order."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                for new in CMP.get(type(op), []):
                    out.append((node, "compare", (i, new)))
        elif isinstance(node, ast.BinOp):
            for new in BIN.get(type(node.op), []):
                out.append((node, "arith", new))
        elif isinstance(node, ast.AugAssign):
            for new in BIN.get(type(node.op), []):
                out.append((node, "arith", new))
        elif isinstance(node, ast.BoolOp):
            for new in BOOL.get(type(node.op), []):
                out.append((node, "bool", new))
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                out.append((node, "constant", not node.value))
            elif isinstance(node.value, int):
                out.append((node, "constant", node.value + 1))
                out.append((node, "constant", node.value - 1))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append((node, "not", None))
        elif isinstance(node, ast.If):
            out.append((node, "branch", None))
        elif isinstance(node, ast.Return) and node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            out.append((node, "return", None))
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                for i, st in enumerate(stmts):
                    if isinstance(st, ast.stmt) and not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Pass)) \
                            and not (isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str)) \
                            and not is_dunder_all(st):
                        out.append((node, "drop", (field, i)))
    return out


def describe(kind, node, arg):
    line = getattr(node, "lineno", 0)
    if kind == "compare":
        return line, "%s to %s" % (type(node.ops[arg[0]]).__name__, arg[1].__name__)
    if kind in ("arith", "bool"):
        return line, "%s to %s" % (type(node.op).__name__, arg.__name__)
    if kind == "constant":
        return line, "%r to %r" % (node.value, arg)
    if kind == "not":
        return line, "drop not"
    if kind == "branch":
        return line, "if condition forced false"
    if kind == "return":
        return line, "return None instead"
    field, i = arg
    st = getattr(node, field)[i]
    return st.lineno, "drop statement: " + ast.unparse(st).splitlines()[0][:60]


def apply(node, kind, arg):
    if kind == "compare":
        node.ops[arg[0]] = arg[1]()
    elif kind in ("arith", "bool"):
        node.op = arg()
    elif kind == "constant":
        node.value = arg
    elif kind == "return":
        node.value = ast.Constant(value=None)
    elif kind == "branch":
        node.test = ast.Constant(value=False)
    elif kind == "drop":
        field, i = arg
        getattr(node, field)[i] = ast.Pass()
    # "not" is applied by the caller, which replaces the node by its operand.


class Replace(ast.NodeTransformer):
    def __init__(self, target):
        self.target = target

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        return node.operand if node is self.target else node


def main():
    files = json.load(sys.stdin)
    out = []
    for path in sorted(files):
        src = files[path]
        try:
            tree = ast.parse(src)
        except SyntaxError as e:
            print("%s: %s" % (path, e), file=sys.stderr)
            sys.exit(2)
        original = ast.unparse(tree)
        seen = {original}
        for n in range(len(sites(tree))):
            t = copy.deepcopy(tree)
            node, kind, arg = sites(t)[n]
            line, desc = describe(kind, node, arg)
            if kind == "not":
                t = Replace(node).visit(t)
            else:
                apply(node, kind, arg)
            ast.fix_missing_locations(t)
            try:
                new = ast.unparse(t)
                compile(new, path, "exec")
            except Exception:
                continue
            if new in seen:
                continue
            seen.add(new)
            out.append({"file": path, "line": line, "op": kind, "desc": desc, "source": new + "\n"})
    json.dump(out, sys.stdout)


main()
