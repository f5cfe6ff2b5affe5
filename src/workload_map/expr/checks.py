"""Static checks: the Karta rules (upstream spec 2.9) plus name resolution.

``find_issues`` walks the whole tree and returns every finding, so a validator can report them
all at once; ``compile_expression`` raises on the first one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import ast as A
from .names import BUILTINS, EXCESSIVE_OUTPUT, FORBIDDEN_REASONS, FORMATS
from .regex import regex_safety_problem


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    offset: int | None


@dataclass
class _Scope:
    funcs: frozenset[tuple[str, int]] = frozenset()
    vars: frozenset[str] = frozenset()
    labels: frozenset[str] = frozenset()


@dataclass
class _Walker:
    findings: list[Finding] = field(default_factory=list)

    def add(self, code: str, message: str, offset: int | None) -> None:
        self.findings.append(Finding(code, message, offset))

    def pattern_vars(self, p: A.Pattern, scope: _Scope) -> set[str]:
        if isinstance(p, A.VarPattern):
            return {p.name}
        out: set[str] = set()
        if isinstance(p, A.ArrayPattern):
            for e in p.elements:
                out |= self.pattern_vars(e, scope)
            return out
        for key, sub, bind in p.entries:
            if not isinstance(key, A.Literal):
                self.walk(key, scope)
            if bind is not None:
                out.add(bind)
            if sub is not None:
                out |= self.pattern_vars(sub, scope)
        return out

    def walk(self, node: A.Node, scope: _Scope) -> None:
        if isinstance(node, (A.Identity, A.Literal)):
            return
        if isinstance(node, A.RecurseAll):
            self.add("recursive-descent", "recursive descent operator '..' is not allowed", node.offset)
            return
        if isinstance(node, A.Var):
            if node.name != "ENV" and node.name not in scope.vars:
                self.add("undefined-variable", f"${node.name} is not defined", node.offset)
            return
        if isinstance(node, A.Index):
            self.walk(node.target, scope)
            self.walk(node.key, scope)
            return
        if isinstance(node, A.Slice):
            self.walk(node.target, scope)
            if node.start is not None:
                self.walk(node.start, scope)
            if node.end is not None:
                self.walk(node.end, scope)
            return
        if isinstance(node, A.Iterate):
            self.walk(node.target, scope)
            return
        if isinstance(node, A.Try):
            self.walk(node.body, scope)
            if node.handler is not None:
                self.walk(node.handler, scope)
            return
        if isinstance(node, A.StringInterp):
            if node.fmt is not None and node.fmt not in FORMATS:
                self.add("unknown-format", f"{node.fmt} is not a valid format", node.offset)
            for part in node.parts:
                if not isinstance(part, str):
                    self.walk(part, scope)
            return
        if isinstance(node, A.Format):
            if node.name not in FORMATS:
                self.add("unknown-format", f"{node.name} is not a valid format", node.offset)
            return
        if isinstance(node, A.ArrayCons):
            if node.body is not None:
                self.walk(node.body, scope)
            return
        if isinstance(node, A.ObjectCons):
            for k, v in node.entries:
                self.walk(k, scope)
                self.walk(v, scope)
            return
        if isinstance(node, A.Neg):
            self.walk(node.operand, scope)
            return
        if isinstance(node, (A.Binary, A.And, A.Or, A.Alt, A.Pipe, A.Comma)):
            self.walk(node.left, scope)
            self.walk(node.right, scope)
            return
        if isinstance(node, A.Assign):
            self.add("modifying-operator", f"modifying operator '{node.op}' is not allowed", node.offset)
            self.walk(node.left, scope)
            self.walk(node.right, scope)
            return
        if isinstance(node, A.If):
            self.walk(node.cond, scope)
            self.walk(node.then, scope)
            if node.otherwise is not None:
                self.walk(node.otherwise, scope)
            return
        if isinstance(node, A.As):
            self.walk(node.source, scope)
            names = self.pattern_vars(node.pattern, scope)
            for alt in node.alternatives:
                names |= self.pattern_vars(alt, scope)
            self.walk(node.body, _Scope(scope.funcs, scope.vars | names, scope.labels))
            return
        if isinstance(node, (A.Reduce, A.Foreach)):
            self.walk(node.source, scope)
            self.walk(node.init, scope)
            names = self.pattern_vars(node.pattern, scope)
            inner = _Scope(scope.funcs, scope.vars | names, scope.labels)
            self.walk(node.update, inner)
            if isinstance(node, A.Foreach) and node.extract is not None:
                self.walk(node.extract, inner)
            return
        if isinstance(node, A.Label):
            self.walk(node.body, _Scope(scope.funcs, scope.vars, scope.labels | {node.name}))
            return
        if isinstance(node, A.Break):
            if node.name not in scope.labels:
                self.add("undefined-label", f"$*label-{node.name} is not defined", node.offset)
            return
        if isinstance(node, A.FuncDef):
            me = (node.name, len(node.params))
            body_funcs = set(scope.funcs) | {me}
            body_vars = set(scope.vars)
            for p in node.params:
                if p.startswith("$"):
                    body_vars.add(p[1:])
                    body_funcs.add((p[1:], 0))
                else:
                    body_funcs.add((p, 0))
            self.walk(node.body, _Scope(frozenset(body_funcs), frozenset(body_vars), frozenset()))
            self.walk(node.rest, _Scope(scope.funcs | {me}, scope.vars, scope.labels))
            return
        if isinstance(node, A.Call):
            self.check_call(node, scope)
            for arg in node.args:
                self.walk(arg, scope)
            return
        raise AssertionError(f"unknown node {node!r}")

    def check_call(self, node: A.Call, scope: _Scope) -> None:
        name, arity = node.name, len(node.args)
        # Forbidden names are rejected even when a user def shadows them, like upstream's walker.
        if name == "del":
            self.add("del", "del function is not allowed", node.offset)
            return
        if name in EXCESSIVE_OUTPUT:
            self.add(
                "excessive-output",
                f"function '{name}' may produce excessive output and is not allowed",
                node.offset,
            )
            return
        if name in FORBIDDEN_REASONS:
            self.add(
                "forbidden-function",
                f"function '{name}' {FORBIDDEN_REASONS[name]} and is not allowed",
                node.offset,
            )
            return
        if (name, arity) in scope.funcs or (name, arity) in BUILTINS:
            if name in ("test", "match", "capture", "scan", "split", "splits", "sub", "gsub") and node.args:
                self.check_regex_literal(node)
            return
        self.add("undefined-function", f"{name}/{arity} is not defined", node.offset)

    def check_regex_literal(self, node: A.Call) -> None:
        if node.name == "split" and len(node.args) == 1:
            return  # split/1 splits on a plain string, not a regex
        pattern = node.args[0]
        flags = node.args[1] if len(node.args) > 1 and node.name not in ("sub", "gsub") else None
        if len(node.args) > 2:
            flags = node.args[2]
        if isinstance(pattern, A.Literal) and isinstance(pattern.value, str):
            flag_text = flags.value if isinstance(flags, A.Literal) and isinstance(flags.value, str) else ""
            problem = regex_safety_problem(pattern.value, flag_text)
            if problem is not None:
                self.add("unsafe-regex", problem, pattern.offset)


def find_issues(root: A.Node, variables: tuple[str, ...] = ()) -> list[Finding]:
    """All findings, in source order of discovery; ``variables`` are the names callers bind."""
    walker = _Walker()
    walker.walk(root, _Scope(vars=frozenset(variables)))
    return walker.findings
