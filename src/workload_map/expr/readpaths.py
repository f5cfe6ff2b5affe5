"""Best-effort static analysis: which input field paths does an expression read, and which of
them does it yield as its output?

Used to lint definitions against CRD schemas. Paths are tuples of field names with ``"[]"``
for iteration and for numeric indexes. Only what can be proven statically is returned: keys
computed at run time end the path, and values read through variables or user functions are
not followed.
"""

from __future__ import annotations

from . import ast as A
from .registry import TYPE_TESTS

Path = tuple[str, ...]

# Builtins whose output is (a subset of) their input: paths flow through them.
_PASS_THROUGH = frozenset({*TYPE_TESTS, "debug", "stderr"})


class _Reader:
    def __init__(self) -> None:
        self.found: list[Path] = []

    def record(self, paths: list[Path]) -> None:
        for p in paths:
            if p and p not in self.found:
                self.found.append(p)

    def visit(self, node: A.Node | None, bases: list[Path]) -> list[Path]:
        if node is None:
            return bases
        v = self.visit
        if isinstance(node, A.Identity):
            return bases
        if isinstance(node, A.Index):
            targets = v(node.target, bases)
            key = node.key
            if isinstance(key, A.Literal) and type(key.value) is str:
                return [(*p, key.value) for p in targets]
            if isinstance(key, A.Literal) and type(key.value) in (int, float):
                return [(*p, "[]") for p in targets]
            self.record(v(key, bases))
            self.record(targets)
            return []
        if isinstance(node, A.Iterate):
            return [(*p, "[]") for p in v(node.target, bases)]
        if isinstance(node, A.Slice):
            self.record(v(node.start, bases) if node.start else [])
            self.record(v(node.end, bases) if node.end else [])
            return v(node.target, bases)
        if isinstance(node, A.Pipe):
            return v(node.right, v(node.left, bases))
        if isinstance(node, (A.Comma, A.Alt)):
            return v(node.left, bases) + v(node.right, bases)
        if isinstance(node, A.Try):
            out = v(node.body, bases)
            if node.handler is not None:
                self.record(v(node.handler, []))
            return out
        if isinstance(node, A.If):
            self.record(v(node.cond, bases))
            return v(node.then, bases) + (bases if node.otherwise is None else v(node.otherwise, bases))
        if isinstance(node, (A.Binary, A.And, A.Or)):
            self.record(v(node.left, bases))
            self.record(v(node.right, bases))
            return []
        if isinstance(node, A.Neg):
            self.record(v(node.operand, bases))
            return []
        if isinstance(node, A.ArrayCons):
            self.record(v(node.body, bases) if node.body is not None else [])
            return []
        if isinstance(node, A.ObjectCons):
            for key, val in node.entries:
                self.record(v(key, bases))
                self.record(v(val, bases))
            return []
        if isinstance(node, A.StringInterp):
            for part in node.parts:
                if not isinstance(part, str):
                    self.record(v(part, bases))
            return []
        if isinstance(node, A.As):
            self.record(v(node.source, bases))
            return v(node.body, bases)
        if isinstance(node, (A.Reduce, A.Foreach)):
            self.record(v(node.source, bases))
            self.record(v(node.init, bases))
            return []
        if isinstance(node, A.FuncDef):
            return v(node.rest, bases)
        if isinstance(node, A.Call):
            return self.call(node, bases)
        return []

    def call(self, node: A.Call, bases: list[Path]) -> list[Path]:
        name, args = node.name, node.args
        v = self.visit
        if name == "select" and len(args) == 1:
            self.record(v(args[0], bases))
            return bases
        if name in _PASS_THROUGH and not args:
            return bases
        if name in ("first", "last") and not args:
            return [(*p, "[]") for p in bases]
        if name in ("first", "last", "limit", "until") and args:
            return v(args[-1], bases)
        if name in ("map", "map_values") and len(args) == 1:
            self.record(v(args[0], [(*p, "[]") for p in bases]))
            return []
        if name in ("any", "all") and len(args) == 2:
            self.record(v(args[1], v(args[0], bases)))
            return []
        if name in ("any", "all", "sort_by", "group_by", "unique_by", "min_by", "max_by") and len(args) == 1:
            self.record(v(args[0], [(*p, "[]") for p in bases]))
            return []
        if name == "getpath" and args and isinstance(args[0], A.ArrayCons):
            body = args[0].body
            keys: list[str] = []
            while body is not None:
                if isinstance(body, A.Comma) and isinstance(body.right, A.Literal):
                    keys.insert(0, "[]" if type(body.right.value) is not str else body.right.value)
                    body = body.left
                elif isinstance(body, A.Literal):
                    keys.insert(0, "[]" if type(body.value) is not str else body.value)
                    body = None
                else:
                    return []
            return [p + tuple(keys) for p in bases]
        self.record(bases)
        for a in args:
            self.record(v(a, bases))
        return []


def static_read_paths(root: A.Node) -> list[Path]:
    r = _Reader()
    r.record(r.visit(root, [()]))
    return r.found


def static_output_paths(root: A.Node) -> list[Path]:
    """The paths whose values ``root`` outputs as they are (a subset of what it reads):
    arithmetic, constructed values and calls yield none."""
    out: list[Path] = []
    for p in _Reader().visit(root, [()]):
        if p and p not in out:
            out.append(p)
    return out
