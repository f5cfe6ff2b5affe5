"""Code generator: AST -> Python source -> functions (compiled once per expression).

Streams are compiled in continuation-passing style *at code generation time*: ``stream(node,
inp, env, k)`` returns Python statements that run ``k(value_expr)`` once per output, so
``.a[] | select(.x) | .y`` becomes nested ``for``/``if`` statements with no generators.
Single-output subexpressions (paths, literals, arithmetic, comparisons) compile through
``single()`` to ``(statements, expression)`` and are used inline. Generators appear only where
jq needs laziness or early exit across a boundary: ``try`` bodies that stream, ``label``, user
functions and their closure arguments, ``limit``. Early-exit builtins (``any/all/first/isempty``)
compile to small local functions whose continuation is ``return``.

Invariant: a continuation always runs in the Python function that called ``stream`` for it,
so it may assign that function's locals (``reduce`` accumulators) and ``return`` from it.
Continuations never use ``break``/``continue``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from . import ast as A
from . import dates as D
from . import matches as M
from . import paths as P
from . import runtime as R
from . import values as V
from .registry import BUILTINS, REGISTRY, Builtin

K = Callable[[str], list[str]]
PK = Callable[[str, str], list[str]]

# Generated names start with "_"; runtime helpers are exposed as "R_<name>" globals.
NAMESPACE: dict[str, Any] = {"R_template": R.TEMPLATE}


def _export(module: Any, names: list[str]) -> None:
    for n in names:
        NAMESPACE[f"R_{n}"] = getattr(module, n)


_export(
    R,
    [
        "JqError",
        "JqPathError",
        "BreakOut",
        "NOTHING",
        "over_budget",
        "charge",
        "measure",
        "too_many_results",
        "is_true",
        "compare",
        "dump",
        "index",
        "field_error",
        "iter_error",
        "iterable",
        "slice_value",
        "object_key",
        "interpolate",
        "limit_count",
        "nth_index",
        "break_out",
        "raise_error",
        "LimitExceeded",
    ],
)
_export(
    V,
    [
        "tojson",
        "tostring",
        "has",
        "contains",
        "jtype",
        "to_entries",
        "from_entries",
        "add_values",
        "sort_by_keys",
        "group_by_keys",
        "unique_by_keys",
        "min_by_keys",
        "max_by_keys",
        "isinfinite",
        "isnan",
        "isnormal",
        "format_value",
        "iter_values",
        "tostream",
    ],
)
_export(M, ["match_list", "capture_list", "scan_list", "split_list", "substitute"])
NAMESPACE["R_now"] = D.now
NAMESPACE["R_getpath"] = P.getpath_metered
NAMESPACE["R_setpath"] = P.setpath_metered
NAMESPACE["R_nan"] = math.nan
NAMESPACE["R_inf"] = math.inf
NAMESPACE["R_islice"] = __import__("itertools").islice


@dataclass(frozen=True)
class Call:
    """How generated code calls a value builtin or operator: its global name and whether the
    evaluation's meter (``_b``) goes first."""

    pyname: str
    metered: bool

    def __call__(self, *args: str) -> str:
        return f"{self.pyname}({', '.join(['_b', *args] if self.metered else args)})"


def _call_of(entry: Builtin) -> Call:
    assert entry.python is not None
    pyname = "B_" + "".join(c if c.isalnum() else "_" for c in entry.name) + f"_{entry.arity}"
    NAMESPACE[pyname] = entry.python
    return Call(pyname, bool(entry.cost.metered))


# Builtins that map (input, *value args) -> one value, and the operators, from the registry.
VALUE_FUNCS: dict[tuple[str, int], Call] = {k: _call_of(e) for k, e in REGISTRY.items() if e.kind == "value"}
OPERATORS: dict[str, Call] = {
    op: _call_of(REGISTRY[(name, 2)])
    for op, name in (
        ("+", "_plus"),
        ("-", "_minus"),
        ("*", "_multiply"),
        ("/", "_divide"),
        ("%", "_mod"),
        ("==", "_equal"),
        ("!=", "_notequal"),
        ("<", "_less"),
        ("<=", "_lesseq"),
        (">", "_greater"),
        (">=", "_greatereq"),
    )
}
NEGATE = _call_of(REGISTRY[("_negate", 0)])
INDEX = _call_of(REGISTRY[("_index", 1)])
SLICE = _call_of(REGISTRY[("_slice", 2)])
FORMAT = _call_of(REGISTRY[("@text", 0)])

# Builtins that always return a boolean (so truthiness needs no extra test).
BOOL_FUNCS = frozenset(
    {"not", *(e.name for e in REGISTRY.values() if e.returns_bool and e.kind != "operator")}
)

# `select(type == X)`-style filters: name -> Python condition on `v`, for each of the registry's
# type tests (registry.TYPE_TESTS, NUMBER_TESTS; tests/expr/test_builtin_registry.py checks both).
TYPE_FILTERS = {
    "values": "{v} is not None",
    "nulls": "{v} is None",
    "booleans": "type({v}) is bool",
    "numbers": "(type({v}) is int or type({v}) is float)",
    "strings": "type({v}) is str",
    "arrays": "type({v}) is list",
    "objects": "type({v}) is dict",
    "iterables": "(type({v}) is list or type({v}) is dict)",
    "scalars": "not (type({v}) is list or type({v}) is dict)",
    "finites": "((type({v}) is int or type({v}) is float) and not R_isinfinite({v}) and not R_isnan({v}))",
    "normals": "((type({v}) is int or type({v}) is float) and R_isnormal({v}))",
}

MAX_INLINE_K = 24  # continuation lines duplicated at most this long; longer ones go through a generator
MAX_DEPTH = 14  # indentation depth before a subexpression is moved into its own generator


def indent(lines: list[str], n: int = 1) -> list[str]:
    pad = "    " * n
    return [pad + ln for ln in lines]


def _unless_nothing(var: str, k: K) -> list[str]:
    """Continue with ``var`` only when a builtin produced a value (``R_NOTHING`` means no output)."""
    return [f"if {var} is not R_NOTHING:", *indent(k(var))]


@dataclass
class Func:
    kind: str  # "user" or "closure"
    pyname: str
    params: tuple[str, ...] = ()
    single: bool = False
    ppyname: str = ""  # path-mode version (user functions): ppyname(inp, pth, *closures) -> (v, p)


@dataclass
class Env:
    vars: dict[str, str] = field(default_factory=dict)
    funcs: dict[tuple[str, int], Func] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)

    def with_var(self, name: str, py: str) -> Env:
        return Env({**self.vars, name: py}, self.funcs, self.labels)

    def with_func(self, key: tuple[str, int], f: Func) -> Env:
        return Env(self.vars, {**self.funcs, key: f}, self.labels)

    def with_label(self, name: str, py: str) -> Env:
        return Env(self.vars, self.funcs, {**self.labels, name: py})


class CompileFailure(Exception):
    pass


MAX_GENERATED_NAMES = 10_000


class Gen:
    def __init__(self) -> None:
        self.counter = 0
        self.depth = 0
        # When set, user functions also get a path-mode version and every closure argument
        # carries its path-mode generator as attribute ``.p`` (see ``closure_args``).
        self.paths_enabled = False

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        if self.counter > MAX_GENERATED_NAMES:
            # Generated code grows with nesting (a nested def is generated per use): bounded here,
            # before compiling megabytes of Python.
            raise CompileFailure(
                "expression is too complex to compile (generated code over "
                f"{MAX_GENERATED_NAMES} names); nest fewer function definitions"
            )
        return f"_{prefix}{self.counter}"

    # ------------------------------------------------------------------ helpers
    def name_of(self, expr: str, lines: list[str]) -> str:
        if expr.isidentifier():
            return expr
        t = self.fresh("t")
        lines.append(f"{t} = {expr}")
        return t

    @staticmethod
    def truth(expr: str, is_bool: bool) -> str:
        if is_bool:
            return expr
        if expr.isidentifier():
            return f"({expr} is not None and {expr} is not False)"
        return f"R_is_true({expr})"

    def is_bool(self, node: A.Node, env: Env) -> bool:
        if isinstance(node, A.Binary):
            return node.op in ("==", "!=", "<", "<=", ">", ">=")
        if isinstance(node, (A.And, A.Or)):
            return True
        if isinstance(node, A.Literal):
            return type(node.value) is bool
        if isinstance(node, A.Call):
            return (node.name, len(node.args)) not in env.funcs and node.name in BOOL_FUNCS
        if isinstance(node, A.Pipe):
            return self.is_bool(node.right, env)
        return False

    def gen_fn(self, node: A.Node, env: Env, params: str = "") -> tuple[str, list[str]]:
        """A local generator function ``name(inp)`` yielding the node's outputs."""
        fn = self.fresh("g")
        inp = self.fresh("i")
        saved = self.depth
        self.depth = 0
        body = self.stream(node, inp, env, lambda v: [f"yield {v}"])
        self.depth = saved
        lines = [f"def {fn}({inp}{params}):", *indent(body), "    return", "    yield"]
        return fn, lines

    # ------------------------------------------------------------------ single-valuedness
    def is_single(self, node: A.Node, env: Env) -> bool:
        s = self.is_single
        if isinstance(node, (A.Identity, A.Literal, A.Var, A.Format, A.ArrayCons)):
            return True
        if isinstance(node, A.ObjectCons):
            return all(s(k, env) and s(v, env) for k, v in node.entries)
        if isinstance(node, A.StringInterp):
            return all(isinstance(p, str) or s(p, env) for p in node.parts)
        if isinstance(node, A.Neg):
            return s(node.operand, env)
        if isinstance(node, (A.Binary, A.And, A.Or, A.Alt, A.Pipe)):
            return s(node.left, env) and s(node.right, env)
        if isinstance(node, A.If):
            return (
                s(node.cond, env) and s(node.then, env) and (node.otherwise is None or s(node.otherwise, env))
            )
        if isinstance(node, A.Index):
            return s(node.target, env) and s(node.key, env)
        if isinstance(node, A.Slice):
            return (
                s(node.target, env)
                and (node.start is None or s(node.start, env))
                and (node.end is None or s(node.end, env))
            )
        if isinstance(node, A.As):
            return (
                not node.alternatives
                and s(node.source, env)
                and s(node.body, self.bind_names(node.pattern, env))
                and not any(not isinstance(k, A.Literal) for k in _pattern_keys(node.pattern))
            )
        if isinstance(node, A.Reduce):
            return s(node.init, env)
        if isinstance(node, A.Try):
            return node.handler is not None and s(node.body, env) and s(node.handler, env)
        if isinstance(node, A.FuncDef):
            return s(node.rest, self.declare(node, env))
        if isinstance(node, A.Call):
            key = (node.name, len(node.args))
            f = env.funcs.get(key)
            if f is not None:
                return f.kind == "user" and f.single
            name = node.name
            if key in VALUE_FUNCS or name in (
                "not",
                "error",
                "env",
                "now",
                "infinite",
                "nan",
                "input_filename",
                "have_literal_numbers",
                "builtins",
            ):
                return all(s(a, env) for a in node.args)
            if key in (("first", 0), ("last", 0), ("nth", 1), ("debug", 0), ("stderr", 0)):
                return all(s(a, env) for a in node.args)
            if name in (
                "map",
                "map_values",
                "with_entries",
                "sort_by",
                "group_by",
                "unique_by",
                "min_by",
                "max_by",
                "isempty",
                "add",
                "INDEX",
                "pick",
            ) or (name in ("any", "all", "IN") and node.args):
                return True
            if name in ("ltrimstr", "rtrimstr"):
                return all(s(a, env) for a in node.args)
            return False
        return False

    def bind_names(self, pattern: A.Pattern, env: Env) -> Env:
        for name in _pattern_vars(pattern):
            env = env.with_var(name, self.fresh("v" + _safe(name)))
        return env

    def declare(self, node: A.FuncDef, env: Env) -> Env:
        key = (node.name, len(node.params))
        f = Func("user", self.fresh("f" + _safe(node.name)), node.params, False)
        f.ppyname = f.pyname + "_p"
        inner = env.with_func(key, f)
        if not node.params:
            body_env = inner
            f.single = self.is_single(node.body, body_env)
        return inner

    # ------------------------------------------------------------------ single mode
    def single(self, node: A.Node, inp: str, env: Env) -> tuple[list[str], str] | None:
        if not self.is_single(node, env):
            return None
        return self.single_code(node, inp, env)

    def single_code(self, node: A.Node, inp: str, env: Env) -> tuple[list[str], str]:
        if isinstance(node, A.Identity):
            return [], inp
        if isinstance(node, A.Literal):
            return [], _literal(node.value)
        if isinstance(node, A.Var):
            if node.name == "ENV":
                return [], "{}"
            return [], env.vars[node.name]
        if isinstance(node, A.Index):
            return self.single_index(node, inp, env)
        if isinstance(node, A.Slice):
            lines, t = self.single_code(node.target, inp, env)
            s = e = "None"
            if node.start is not None:
                pre, s = self.single_code(node.start, inp, env)
                lines += pre
            if node.end is not None:
                pre, e = self.single_code(node.end, inp, env)
                lines += pre
            return lines, f"R_slice_value(_b, {t}, {s}, {e})"
        if isinstance(node, A.Format):
            return [], f"R_format_value(_b, {node.name!r}, {inp})"
        if isinstance(node, A.ArrayCons):
            if node.body is None:
                return [], "[]"
            sv = self.single(node.body, inp, env)
            if sv is not None:
                return sv[0], f"[{sv[1]}]"
            lst = self.fresh("l")
            lines = [f"{lst} = []"]
            lines += self.stream(node.body, inp, env, lambda v: [f"{lst}.append({v})"])
            return lines, lst
        if isinstance(node, A.ObjectCons):
            lines = []
            parts = []
            for k, v in node.entries:
                if isinstance(k, A.Literal) and type(k.value) is str:
                    ks = repr(k.value)
                else:
                    pre, ks = self.single_code(k, inp, env)
                    lines += pre
                    ks = f"R_object_key({ks})"
                pre, vs = self.single_code(v, inp, env)
                lines += pre
                parts.append(f"{ks}: {vs}")
            return lines, "{" + ", ".join(parts) + "}"
        if isinstance(node, A.StringInterp):
            lines = []
            pieces = []
            for p in node.parts:
                if isinstance(p, str):
                    pieces.append(repr(p))
                else:
                    pre, e = self.single_code(p, inp, env)
                    lines += pre
                    pieces.append(self.fmt_piece(node.fmt, e))
            return lines, f"R_interpolate(_b, {', '.join(pieces)})"
        if isinstance(node, A.Neg):
            lines, e = self.single_code(node.operand, inp, env)
            return lines, NEGATE(e)
        if isinstance(node, A.Binary):
            return self.single_binary(node, inp, env)
        if isinstance(node, (A.And, A.Or)):
            lines, lhs = self.single_code(node.left, inp, env)
            lb = self.is_bool(node.left, env)
            rb = self.is_bool(node.right, env)
            rpre, r = self.single_code(node.right, inp, env)
            if not rpre:
                if isinstance(node, A.And):
                    return lines, f"({self.truth(lhs, lb)} and {self.truth(r, rb)})"
                return lines, f"({self.truth(lhs, lb)} or {self.truth(r, rb)})"
            res = self.fresh("b")
            lines.append(f"{res} = {self.truth(lhs, lb)}")
            lines.append(f"if {res}:" if isinstance(node, A.And) else f"if not {res}:")
            lines += indent([*rpre, f"{res} = {self.truth(r, rb)}"])
            return lines, res
        if isinstance(node, A.Alt):
            lines, lhs = self.single_code(node.left, inp, env)
            res = self.fresh("a")
            lines.append(f"{res} = {lhs}")
            rpre, r = self.single_code(node.right, inp, env)
            lines.append(f"if {res} is None or {res} is False:")
            lines += indent([*rpre, f"{res} = {r}"])
            return lines, res
        if isinstance(node, A.Pipe):
            lines, lhs = self.single_code(node.left, inp, env)
            name = self.name_of(lhs, lines)
            pre, r = self.single_code(node.right, name, env)
            return lines + pre, r
        if isinstance(node, A.If):
            lines, c = self.single_code(node.cond, inp, env)
            res = self.fresh("r")
            tpre, t = self.single_code(node.then, inp, env)
            epre: list[str]
            if node.otherwise is None:
                epre, e = [], inp
            else:
                epre, e = self.single_code(node.otherwise, inp, env)
            lines.append(f"if {self.truth(c, self.is_bool(node.cond, env))}:")
            lines += indent([*tpre, f"{res} = {t}"])
            lines.append("else:")
            lines += indent([*epre, f"{res} = {e}"])
            return lines, res
        if isinstance(node, A.As):
            lines, src = self.single_code(node.source, inp, env)
            src = self.name_of(src, lines)
            env2 = self.bind_names(node.pattern, env)
            lines += self.bind_pattern(node.pattern, src, inp, env2)
            pre, body = self.single_code(node.body, inp, env2)
            return lines + pre, body
        if isinstance(node, A.Reduce):
            res = self.fresh("r")
            lines = self.reduce_code(node, inp, env, lambda v: [f"{res} = {v}"])
            return lines, res
        if isinstance(node, A.Try):
            assert node.handler is not None
            res = self.fresh("r")
            bpre, b = self.single_code(node.body, inp, env)
            err = self.fresh("e")
            ev = self.fresh("x")
            hpre, h = self.single_code(node.handler, ev, env)
            lines = ["try:", *indent([*bpre, f"{res} = {b}"]), f"except R_JqError as {err}:"]
            lines += indent([f"{ev} = {err}.value", *hpre, f"{res} = {h}"])
            return lines, res
        if isinstance(node, A.FuncDef):
            env2 = self.declare(node, env)
            lines = self.func_def(node, env2)
            pre, e = self.single_code(node.rest, inp, env2)
            return lines + pre, e
        if isinstance(node, A.Call):
            return self.single_call(node, inp, env)
        raise CompileFailure(f"cannot compile {type(node).__name__} as a single value")

    def fmt_piece(self, fmt: str | None, e: str) -> str:
        if fmt is None or fmt == "text":
            return f"R_tostring(_b, {e})"
        return f"R_format_value(_b, {fmt!r}, {e})"

    def single_index(self, node: A.Index, inp: str, env: Env) -> tuple[list[str], str]:
        lines, t = self.single_code(node.target, inp, env)
        key = node.key
        if isinstance(key, A.Literal) and type(key.value) is str:
            t = self.name_of(t, lines)
            k = repr(key.value)
            return lines, f"({t}.get({k}) if type({t}) is dict else R_field_error({t}, {k}))"
        pre, k = self.single_code(key, inp, env)
        return lines + pre, f"R_index(_b, {t}, {k})"

    def single_binary(self, node: A.Binary, inp: str, env: Env) -> tuple[list[str], str]:
        op = node.op
        lines, left = self.single_code(node.left, inp, env)
        rpre, right = self.single_code(node.right, inp, env)
        if rpre:
            left = self.name_of(left, lines)
            lines += rpre
        rl = node.right
        if op in ("==", "!="):
            neg = op == "!="
            lit = (
                rl if isinstance(rl, A.Literal) else (node.left if isinstance(node.left, A.Literal) else None)
            )
            other = left if lit is rl else right
            if lit is not None and type(lit.value) is str:
                return lines, f"({other} {'!=' if neg else '=='} {lit.value!r})"
            if lit is not None and lit.value is None:
                return lines, f"({other} is {'not ' if neg else ''}None)"
            if lit is not None and type(lit.value) is bool:
                return lines, f"({other} is {'not ' if neg else ''}{lit.value!r})"
            return lines, OPERATORS[op](left, right)
        if op in ("<", "<=", ">", ">=") and isinstance(rl, A.Literal) and type(rl.value) is int:
            left = self.name_of(left, lines)
            slow = OPERATORS[op](left, repr(rl.value))
            return lines, f"({left} {op} {rl.value!r} if type({left}) is int else {slow})"
        return lines, OPERATORS[op](left, right)

    def single_call(self, node: A.Call, inp: str, env: Env) -> tuple[list[str], str]:
        key = (node.name, len(node.args))
        f = env.funcs.get(key)
        if f is not None:
            return [], f"{f.pyname}({inp})"
        name = node.name
        args = node.args
        if key in VALUE_FUNCS:
            lines: list[str] = []
            vals = []
            for a in args:
                pre, e = self.single_code(a, inp, env)
                lines += pre
                vals.append(e)
            return lines, VALUE_FUNCS[key](inp, *vals)
        if name == "not":
            return [], f"({inp} is None or {inp} is False)"
        if name == "error":
            if not args:
                return [], f"R_raise_error({inp})"
            pre, e = self.single_code(args[0], inp, env)
            return pre, f"R_raise_error({e})"
        if name == "env":
            return [], "{}"
        if name == "now":
            return [], "R_now()"
        if name == "infinite":
            return [], "R_inf"
        if name == "nan":
            return [], "R_nan"
        if name == "input_filename":
            return [], "None"
        if name == "have_literal_numbers":
            return [], "True"
        if name == "builtins":
            return [], "R_builtin_names(_b)"
        if key in (("debug", 0), ("stderr", 0)):
            return [], inp
        if key == ("first", 0):
            return [], f"R_index(_b, {inp}, 0)"
        if key == ("last", 0):
            return [], f"R_index(_b, {inp}, -1)"
        if key == ("nth", 1):
            pre, e = self.single_code(args[0], inp, env)
            return pre, f"R_index(_b, {inp}, {e})"
        if name in ("map", "with_entries"):
            lst = self.fresh("l")
            src = inp
            lines = []
            if name == "with_entries":
                src = self.fresh("t")
                lines.append(f"{src} = R_to_entries(_b, {inp})")
            lines += [f"{lst} = []"]
            lines += self.iterate_code(
                src, lambda v: self.stream(args[0], v, env, lambda w: [f"{lst}.append({w})"])
            )
            if name == "with_entries":
                return lines, f"R_from_entries(_b, {lst})"
            return lines, lst
        if name == "map_values":
            return self.map_values(node, inp, env)
        if name in ("sort_by", "group_by", "unique_by", "min_by", "max_by"):
            return self.keyed(node, inp, env)
        if name in ("any", "all") and args:
            return self.any_all(node, inp, env)
        if name == "isempty":
            fn = self.fresh("h")
            i2 = self.fresh("i")
            body = self.stream(args[0], i2, env, lambda v: ["return False"])
            return [f"def {fn}({i2}):", *indent(body), "    return True"], f"{fn}({inp})"
        if name == "IN":
            return self.in_code(node, inp, env)
        if key == ("add", 1):
            lst = self.fresh("l")
            lines = [f"{lst} = []", *self.stream(args[0], inp, env, lambda v: [f"{lst}.append({v})"])]
            return lines, f"R_add_values(_b, {lst})"
        if name == "INDEX":
            return self.index_code(node, inp, env)
        if name == "pick":
            res = self.fresh("r")
            lines = [f"{res} = None"]
            lines += self.pstream(
                args[0],
                inp,
                "()",
                env,
                lambda v, p: [f"{res} = R_setpath(_b, {res}, {p}, R_getpath(_b, {inp}, {p}))"],
            )
            return lines, res
        raise CompileFailure(f"{name}/{len(args)} has no single-value form")

    # ------------------------------------------------------------------ stream mode
    def stream(self, node: A.Node, inp: str, env: Env, k: K) -> list[str]:
        sv = self.single(node, inp, env)
        if sv is not None:
            pre, e = sv
            return pre + k(e)
        if self.depth > MAX_DEPTH:
            # Keep Python's block nesting shallow: run this part as its own generator.
            fn, lines = self.gen_fn(node, env)
            v = self.fresh("v")
            return [*lines, f"for {v} in {fn}({inp}):", *indent(k(v))]
        self.depth += 1
        try:
            return self.stream_code(node, inp, env, k)
        finally:
            self.depth -= 1

    def shareable(self, k: K, times: int) -> tuple[K, list[str], list[str]]:
        """Use ``k`` ``times`` times: ``(k2, head, tail)``. A small ``k`` is inlined at every use
        (head and tail empty); a longer one is generated once, in ``tail``, looping over the list
        buffer that ``head`` creates and ``k2`` appends to. Generating ``k`` once per level keeps
        compile time and code linear in chained forks (``(.a,.b) | (.a,.b) | ...``)."""
        if times <= 1:
            return k, [], []
        v = self.fresh("v")
        once = k(v)
        if len(once) <= MAX_INLINE_K:
            return k, [], []
        buf = self.fresh("q")
        return (lambda x: [f"{buf}.append({x})"]), [f"{buf} = []"], [f"for {v} in {buf}:", *indent(once)]

    def iterate_code(self, src: str, body: Callable[[str], list[str]]) -> list[str]:
        c = self.fresh("c")
        v = self.fresh("v")
        pre: list[str] = []
        src = self.name_of(src, pre)
        lines = body(v) or ["pass"]
        weight = 1 + allocation_weight(lines)
        return [
            *pre,
            f"{c} = {src} if type({src}) is list else "
            f"({src}.values() if type({src}) is dict else R_iter_error({src}))",
            f"_b[0] -= len({c})" if weight == 1 else f"_b[0] -= {weight} * len({c})",
            "if _b[0] < 0: R_over_budget(_b)",
            f"for {v} in {c}:",
            *indent(lines),
        ]

    def stream_code(self, node: A.Node, inp: str, env: Env, k: K) -> list[str]:
        if isinstance(node, A.Iterate):
            return self.stream(node.target, inp, env, lambda t: self.iterate_code(t, k))
        if isinstance(node, A.Index):
            key = node.key
            if isinstance(key, A.Literal) and type(key.value) is str:
                ks = repr(key.value)
                return self.stream(
                    node.target,
                    inp,
                    env,
                    lambda t: self.with_name(
                        t,
                        lambda tn: k(
                            f"({tn}.get({ks}) if type({tn}) is dict else R_field_error({tn}, {ks}))"
                        ),
                    ),
                )
            return self.stream(
                node.key,
                inp,
                env,
                lambda kv: self.stream(node.target, inp, env, lambda t: k(f"R_index(_b, {t}, {kv})")),
            )
        if isinstance(node, A.Slice):
            start = node.start or A.Literal(node.offset, None)
            end = node.end or A.Literal(node.offset, None)
            return self.stream(
                end,
                inp,
                env,
                lambda e: self.stream(
                    start,
                    inp,
                    env,
                    lambda s: self.stream(
                        node.target, inp, env, lambda t: k(f"R_slice_value(_b, {t}, {s}, {e})")
                    ),
                ),
            )
        if isinstance(node, A.Pipe):
            return self.stream(
                node.left, inp, env, lambda v: self.with_name(v, lambda n: self.stream(node.right, n, env, k))
            )
        if isinstance(node, A.Comma):
            k2, buf, tail = self.shareable(k, 2)
            return buf + self.stream(node.left, inp, env, k2) + self.stream(node.right, inp, env, k2) + tail
        if isinstance(node, A.Try):
            return self.try_code(node, inp, env, k)
        if isinstance(node, A.If):
            return self.stream(node.cond, inp, env, lambda c: self.if_branches(node, c, inp, env, k))
        if isinstance(node, A.Alt):
            lst = self.fresh("l")
            lines = [f"{lst} = []"]
            lines += self.stream(
                node.left,
                inp,
                env,
                lambda v: self.with_name(
                    v, lambda n: [f"if {n} is not None and {n} is not False: {lst}.append({n})"]
                ),
            )
            lines.append(f"if not {lst}:")
            lines += indent(self.stream(node.right, inp, env, lambda v: [f"{lst}.append({v})"]))
            v = self.fresh("v")
            lines += [f"for {v} in {lst}:", *indent(k(v))]
            return lines
        if isinstance(node, (A.And, A.Or)):
            is_and = isinstance(node, A.And)

            def after_left(lv: str) -> list[str]:
                t = self.truth(lv, self.is_bool(node.left, env))
                k2, buf, tail = self.shareable(k, 2)
                right = self.stream(
                    node.right, inp, env, lambda rv: k2(self.truth(rv, self.is_bool(node.right, env)))
                )
                decided = k2("False" if is_and else "True")
                then, other = (right, decided) if is_and else (decided, right)
                return [*buf, f"if {t}:", *indent(then), "else:", *indent(other), *tail]

            return self.stream(node.left, inp, env, lambda lv: self.with_name(lv, after_left))
        if isinstance(node, (A.Binary,)):
            op = node.op
            return self.stream(
                node.right,
                inp,
                env,
                lambda r: self.with_name(
                    r, lambda rn: self.stream(node.left, inp, env, lambda lv: k(OPERATORS[op](lv, rn)))
                ),
            )
        if isinstance(node, A.Neg):
            return self.stream(node.operand, inp, env, lambda v: k(NEGATE(v)))
        if isinstance(node, A.ObjectCons):
            return self.object_stream(node, inp, env, k, 0, [])
        if isinstance(node, A.StringInterp):
            return self.interp_stream(node, inp, env, k, len(node.parts) - 1, {})
        if isinstance(node, A.As):
            return self.stream(
                node.source,
                inp,
                env,
                lambda s: self.with_name(s, lambda sn: self.as_body(node, sn, inp, env, k)),
            )
        if isinstance(node, A.Reduce):
            return self.reduce_code(node, inp, env, k)
        if isinstance(node, A.Foreach):
            return self.foreach_code(node, inp, env, k)
        if isinstance(node, A.Label):
            return self.label_code(node, inp, env, k)
        if isinstance(node, A.Break):
            lab = env.labels.get(node.name)
            if lab is None:
                raise CompileFailure(f"$*label-{node.name} is not defined")
            return [f"R_break_out({lab})"]
        if isinstance(node, A.FuncDef):
            env2 = self.declare(node, env)
            return self.func_def(node, env2) + self.stream(node.rest, inp, env2, k)
        if isinstance(node, A.Call):
            return self.call_stream(node, inp, env, k)
        raise CompileFailure(f"cannot compile {type(node).__name__}")

    def _nm(self, expr: str) -> str:
        # Iteration sources must be names (used several times); callers pass names or simple exprs.
        return expr if expr.isidentifier() else f"({expr})"

    def with_name(self, expr: str, body: Callable[[str], list[str]]) -> list[str]:
        lines: list[str] = []
        n = self.name_of(expr, lines)
        return lines + body(n)

    def if_branches(self, node: A.If, c: str, inp: str, env: Env, k: K) -> list[str]:
        k2, buf, tail = self.shareable(k, 2)
        t = self.truth(c, self.is_bool(node.cond, env))
        then = self.stream(node.then, inp, env, k2)
        other = k2(inp) if node.otherwise is None else self.stream(node.otherwise, inp, env, k2)
        return [
            *buf,
            f"if {t}:",
            *indent(then or ["pass"]),
            "else:",
            *indent(other or ["pass"]),
            *tail,
        ]

    def object_stream(
        self, node: A.ObjectCons, inp: str, env: Env, k: K, i: int, done: list[tuple[str, str]]
    ) -> list[str]:
        if i == len(node.entries):
            return k("{" + ", ".join(f"{a}: {b}" for a, b in done) + "}")
        key, val = node.entries[i]

        def with_key(ks: str) -> list[str]:
            kexpr = ks if isinstance(key, A.Literal) and type(key.value) is str else f"R_object_key({ks})"
            return self.with_name(
                kexpr,
                lambda kn: self.stream(
                    val,
                    inp,
                    env,
                    lambda vs: self.with_name(
                        vs, lambda vn: self.object_stream(node, inp, env, k, i + 1, [*done, (kn, vn)])
                    ),
                ),
            )

        return self.stream(key, inp, env, with_key)

    def interp_stream(
        self, node: A.StringInterp, inp: str, env: Env, k: K, i: int, done: dict[int, str]
    ) -> list[str]:
        # jq varies the first interpolation fastest, so loop over the last one outermost.
        if i < 0:
            pieces = [
                repr(p) if isinstance(p, str) else self.fmt_piece(node.fmt, done[j])
                for j, p in enumerate(node.parts)
            ]
            return k(f"R_interpolate(_b, {', '.join(pieces)})")
        part = node.parts[i]
        if isinstance(part, str):
            return self.interp_stream(node, inp, env, k, i - 1, done)
        return self.stream(
            part,
            inp,
            env,
            lambda v: self.with_name(
                v, lambda n: self.interp_stream(node, inp, env, k, i - 1, {**done, i: n})
            ),
        )

    def as_body(self, node: A.As, src: str, inp: str, env: Env, k: K) -> list[str]:
        if node.alternatives:
            return self.as_alternatives(node, src, inp, env, k)
        env2 = self.bind_names(node.pattern, env)
        return self.bind_pattern(node.pattern, src, inp, env2) + self.stream(node.body, inp, env2, k)

    def as_alternatives(
        self, node: A.As, src: str, inp: str, env: Env, k: K, pth: str | None = None, pk: PK | None = None
    ) -> list[str]:
        """``src as P1 ?// P2 ... | body``: every pattern's variables are bound (null when the
        current pattern lacks them). As in libjq, an error while binding a pattern or while
        processing its outputs (body or anything downstream) moves on to the next pattern;
        outputs already produced stay; the last pattern's errors propagate. With ``pth`` the
        body runs in path mode and ``pk`` receives (value, path)."""
        patterns = [node.pattern, *node.alternatives]
        env2 = env
        names: list[str] = []
        for p in patterns:
            for name in _pattern_vars(p):
                if name not in names:
                    names.append(name)
                    env2 = env2.with_var(name, self.fresh("v" + _safe(name)))
        reset = [f"{env2.vars[n]} = None" for n in names]
        v = self.fresh("v")
        buf: list[str] = []
        tail: list[str] = []
        if pth is None:
            fn, gen = self.gen_fn(node.body, env2)
            call = f"{fn}({inp})"
            k2, buf, tail = self.shareable(k, len(patterns))
            emit = k2(v)
        else:
            assert pk is not None
            fn, gen = self.pgen_fn(node.body, env2)
            call = f"{fn}({inp}, {pth})"
            emit = pk(f"{v}[0]", f"{v}[1]")
        go = self.fresh("go")
        lines = [*buf, *gen, f"{go} = True"]
        for i, p in enumerate(patterns):
            bind = [*reset, *self.bind_pattern(p, src, inp, env2)]
            if i == len(patterns) - 1:
                lines += [f"if {go}:", *indent([*bind, f"for {v} in {call}:", *indent(emit or ["pass"])])]
                break
            it = self.fresh("it")
            block = [
                f"{it} = None",
                "try:",
                *indent([*bind, f"{it} = {call}"]),
                "except R_JqError:",
                "    pass",
                f"if {it} is not None:",
                f"    {go} = False",
                "    try:",
                f"        for {v} in {it}:",
                *indent(emit or ["pass"], 3),
                "    except R_JqError:",
                f"        {go} = True",
            ]
            lines += [f"if {go}:", *indent(block)]
        return lines + tail

    def bind_pattern(self, pattern: A.Pattern, src: str, inp: str, env: Env) -> list[str]:
        if isinstance(pattern, A.VarPattern):
            return [f"{env.vars[pattern.name]} = {src}"]
        lines: list[str] = []
        if isinstance(pattern, A.ArrayPattern):
            lines.append(
                f"if {src} is not None and type({src}) is not list: "
                f"R_raise_error('Cannot index ' + R_jtype({src}) + ' with number')"
            )
            for i, p in enumerate(pattern.elements):
                t = self.fresh("t")
                lines.append(f"{t} = R_index(_b, {src}, {i})")
                lines += self.bind_pattern(p, t, inp, env)
            return lines
        for key, sub, bind in pattern.entries:
            pre, ks = self.single_code(key, inp, env)
            lines += pre
            t = self.fresh("t")
            lines.append(f"{t} = R_index(_b, {src}, {ks})")
            if bind is not None:
                lines.append(f"{env.vars[bind]} = {t}")
            if sub is not None:
                lines += self.bind_pattern(sub, t, inp, env)
        return lines

    def reduce_code(self, node: A.Reduce, inp: str, env: Env, k: K) -> list[str]:
        acc = self.fresh("acc")
        env2 = self.bind_names(node.pattern, env)

        def step(v: str) -> list[str]:
            lines = self.bind_pattern(node.pattern, v, inp, env2)
            sv = self.single(node.update, acc, env2)
            if sv is not None:
                return lines + sv[0] + [f"{acc} = {sv[1]}"]
            last = self.fresh("z")
            lines.append(f"{last} = None")
            lines += self.stream(node.update, acc, env2, lambda u: [f"{last} = {u}"])
            return [*lines, f"{acc} = {last}"]

        def with_init(iv: str) -> list[str]:
            return [
                f"{acc} = {iv}",
                *self.stream(node.source, inp, env, lambda v: self.with_name(v, step)),
                *k(acc),
            ]

        return self.stream(node.init, inp, env, with_init)

    def foreach_code(self, node: A.Foreach, inp: str, env: Env, k: K) -> list[str]:
        acc = self.fresh("acc")
        env2 = self.bind_names(node.pattern, env)

        def step(v: str) -> list[str]:
            lines = self.bind_pattern(node.pattern, v, inp, env2)

            def emit(u: str) -> list[str]:
                out = [f"{acc} = {u}"]
                if node.extract is None:
                    return out + k(acc)
                return out + self.stream(node.extract, acc, env2, k)

            return lines + self.stream(node.update, acc, env2, emit)

        def with_init(iv: str) -> list[str]:
            return [f"{acc} = {iv}", *self.stream(node.source, inp, env, lambda v: self.with_name(v, step))]

        return self.stream(node.init, inp, env, with_init)

    def try_code(self, node: A.Try, inp: str, env: Env, k: K) -> list[str]:
        err = self.fresh("e")
        sv = self.single(node.body, inp, env)
        if sv is not None:
            res = self.fresh("r")
            lines = ["try:", *indent([*sv[0], f"{res} = {sv[1]}"]), f"except R_JqError as {err}:"]
            if node.handler is None:
                lines += ["    pass", "else:", *indent(k(res) or ["pass"])]
                return lines
            ev = self.fresh("x")
            k2, buf, tail = self.shareable(k, 2)
            handler = self.stream(node.handler, ev, env, k2)
            lines = (
                buf
                + lines
                + indent([f"{ev} = {err}.value", *handler])
                + ["else:", *indent(k2(res) or ["pass"])]
            )
            return lines + tail
        fn, gen = self.gen_fn(node.body, env)
        it = self.fresh("it")
        v = self.fresh("v")
        k2, buf, tail = self.shareable(k, 2)
        lines = [
            *buf,
            *gen,
            f"{it} = {fn}({inp})",
            "while True:",
            "    try:",
            f"        {v} = next({it})",
            "    except StopIteration:",
            "        break",
            f"    except R_JqError as {err}:",
        ]
        if node.handler is not None:
            ev = self.fresh("x")
            handler = self.stream(node.handler, ev, env, k2)
            lines += indent([f"{ev} = {err}.value", *handler], 2)
        lines += ["        break", *indent(k2(v) or ["pass"])]
        return lines + tail

    def label_code(self, node: A.Label, inp: str, env: Env, k: K) -> list[str]:
        lab = self.fresh("lab")
        env2 = env.with_label(node.name, lab)
        fn, gen = self.gen_fn(node.body, env2)
        it = self.fresh("it")
        v = self.fresh("v")
        err = self.fresh("e")
        return [
            f"{lab} = object()",
            *gen,
            f"{it} = {fn}({inp})",
            "while True:",
            "    try:",
            f"        {v} = next({it})",
            "    except StopIteration:",
            "        break",
            f"    except R_BreakOut as {err}:",
            f"        if {err}.label is not {lab}: raise",
            "        break",
            *indent(k(v) or ["pass"]),
        ]

    def value_func_def(self, node: A.FuncDef, env: Env) -> list[str]:
        f = env.funcs[(node.name, len(node.params))]
        inp = self.fresh("i")
        body_env, py_params, value_params = self.func_body_env(node, env)
        head = f"def {f.pyname}({', '.join([inp, *py_params])}):"
        budget = [f"_b[0] -= {R.CALL_COST}", "if _b[0] < 0: R_over_budget(_b)"]
        saved = self.depth
        self.depth = 0
        try:
            if f.single:
                pre, e = self.single_code(node.body, inp, body_env)
                return [head, *indent([*budget, *pre, f"return {e}"])]

            def bind_values(i: int, benv: Env) -> list[str]:
                if i == len(value_params):
                    return self.stream(node.body, inp, benv, lambda v: [f"yield {v}"])
                name, pn = value_params[i]
                v = self.fresh("v" + _safe(name))
                benv2 = benv.with_var(name, v)
                return [f"for {v} in {pn}({inp}):", *indent(bind_values(i + 1, benv2) or ["pass"])]

            body = bind_values(0, body_env)
            return [head, *indent([*budget, *body, "return", "yield"])]
        finally:
            self.depth = saved

    def func_def(self, node: A.FuncDef, env: Env) -> list[str]:
        lines = self.value_func_def(node, env)
        if self.paths_enabled:
            lines += self.path_func_def(node, env)
        return lines

    def func_body_env(self, node: A.FuncDef, env: Env) -> tuple[Env, list[str], list[tuple[str, str]]]:
        body_env = env
        py_params = []
        value_params = []
        for p in node.params:
            pn = self.fresh("p" + _safe(p.lstrip("$")))
            py_params.append(pn)
            body_env = body_env.with_func((p.lstrip("$"), 0), Func("closure", pn))
            if p.startswith("$"):
                value_params.append((p[1:], pn))
        return body_env, py_params, value_params

    def path_func_def(self, node: A.FuncDef, env: Env) -> list[str]:
        """``def f_p(inp, pth, *closures)``: the function's outputs as (value, path) pairs."""
        f = env.funcs[(node.name, len(node.params))]
        inp = self.fresh("i")
        pth = self.fresh("p")
        body_env, py_params, value_params = self.func_body_env(node, env)
        head = f"def {f.ppyname}({', '.join([inp, pth, *py_params])}):"
        budget = [f"_b[0] -= {R.CALL_COST}", "if _b[0] < 0: R_over_budget(_b)"]

        def bind_values(i: int, benv: Env) -> list[str]:
            if i == len(value_params):
                return self.pstream(node.body, inp, pth, benv, lambda v, p: [f"yield ({v}, {p})"])
            name, pn = value_params[i]
            v = self.fresh("v" + _safe(name))
            benv2 = benv.with_var(name, v)
            return [f"for {v} in {pn}({inp}):", *indent(bind_values(i + 1, benv2) or ["pass"])]

        saved = self.depth
        self.depth = 0
        try:
            body = bind_values(0, body_env)
        finally:
            self.depth = saved
        return [head, *indent([*budget, *body, "return", "yield"])]

    def pgen_fn(self, node: A.Node, env: Env) -> tuple[str, list[str]]:
        """A local generator ``name(inp, pth)`` yielding the node's (value, path) pairs."""
        fn = self.fresh("g")
        inp = self.fresh("i")
        pth = self.fresh("p")
        saved = self.depth
        self.depth = 0
        try:
            body = self.pstream(node, inp, pth, env, lambda v, p: [f"yield ({v}, {p})"])
        finally:
            self.depth = saved
        return fn, [f"def {fn}({inp}, {pth}):", *indent(body), "    return", "    yield"]

    def closure_args(self, args: tuple[A.Node, ...], env: Env) -> tuple[list[str], list[str]]:
        """Closures for a user-function call; with paths enabled each gets its path form as ``.p``."""
        lines: list[str] = []
        closures = []
        for a in args:
            fn, gen = self.gen_fn(a, env)
            lines += gen
            if self.paths_enabled:
                pfn, pgen = self.pgen_fn(a, env)
                lines += [*pgen, f"{fn}.p = {pfn}"]
            closures.append(fn)
        return lines, closures

    # ------------------------------------------------------------------ calls
    def call_stream(self, node: A.Call, inp: str, env: Env, k: K) -> list[str]:
        key = (node.name, len(node.args))
        name, args = node.name, node.args
        f = env.funcs.get(key)
        if f is not None:
            v = self.fresh("v")
            if f.kind == "closure":
                return [f"for {v} in {f.pyname}({inp}):", *indent(k(v))]
            lines, closures = self.closure_args(args, env)
            return [*lines, f"for {v} in {f.pyname}({', '.join([inp, *closures])}):", *indent(k(v))]
        if key in VALUE_FUNCS or key in (("error", 0), ("error", 1), ("nth", 1)):
            return self.cartesian_call(node, inp, env, k)
        if key == ("empty", 0):
            return ["pass"]
        if name == "select":
            cond = args[0]
            sv = self.single(cond, inp, env)
            if sv is not None:
                return [
                    *sv[0],
                    f"if {self.truth(sv[1], self.is_bool(cond, env))}:",
                    *indent(k(inp) or ["pass"]),
                ]
            k2, buf, tail = self.shareable(k, 2)
            return (
                buf
                + self.stream(
                    cond,
                    inp,
                    env,
                    lambda c: [f"if {self.truth(c, self.is_bool(cond, env))}:", *indent(k2(inp) or ["pass"])],
                )
                + tail
            )
        if name in TYPE_FILTERS:
            return [f"if {TYPE_FILTERS[name].format(v=inp)}:", *indent(k(inp))]
        if key == ("first", 1):
            fn = self.fresh("h")
            i2 = self.fresh("i")
            body = self.stream(args[0], i2, env, lambda v: [f"return {v}"])
            r = self.fresh("r")
            return [
                f"def {fn}({i2}):",
                *indent(body),
                "    return R_NOTHING",
                f"{r} = {fn}({inp})",
                *_unless_nothing(r, k),
            ]
        if key == ("last", 1):
            r = self.fresh("r")
            return [
                f"{r} = R_NOTHING",
                *self.stream(args[0], inp, env, lambda v: [f"{r} = {v}"]),
                *_unless_nothing(r, k),
            ]
        if key == ("limit", 2):

            def with_n(n: str) -> list[str]:
                fn, gen = self.gen_fn(args[1], env)
                v = self.fresh("v")
                nn = self.fresh("n")
                return [
                    f"{nn} = R_limit_count({n})",
                    *gen,
                    f"for {v} in R_islice({fn}({inp}), {nn}):",
                    *indent(k(v)),
                ]

            return self.stream(args[0], inp, env, with_n)
        if key == ("nth", 2):

            def with_n2(n: str) -> list[str]:
                fn, gen = self.gen_fn(args[1], env)
                v = self.fresh("v")
                nn = self.fresh("n")
                return [
                    f"{nn} = R_nth_index({n})",
                    *gen,
                    f"for {v} in R_islice({fn}({inp}), {nn}, {nn} + 1):",
                    *indent(k(v)),
                ]

            return self.stream(args[0], inp, env, with_n2)
        if key == ("until", 2):
            return self.until_code(node, inp, env, k)
        if key == ("path", 1):
            return self.pstream(args[0], inp, "()", env, lambda v, p: k(f"list({p})"))
        if name in ("splits", "match", "capture", "scan") or name in ("sub", "gsub"):
            return self.regex_stream(node, inp, env, k)
        if key in (("in", 1), ("inside", 1)):

            def with_arg(a: str) -> list[str]:
                if name == "in":
                    return k(f"R_has({a}, {inp})")
                return k(f"R_contains(_b, {a}, {inp})")

            return self.stream(args[0], inp, env, with_arg)
        if key in (("debug", 1),):
            # jq: `def debug(msg): (msg | debug | empty), .;` -- one output whatever msg yields.
            return [*self.stream(args[0], inp, env, lambda _m: ["pass"]), *k(inp)]
        if key == ("tostream", 0):
            m = self.fresh("m")
            evs = self.fresh("l")
            return [
                f"{evs} = R_tostream(_b, {inp})",
                f"_b[0] -= len({evs})",
                "if _b[0] < 0: R_over_budget(_b)",
                f"for {m} in {evs}:",
                *indent(k(m)),
            ]
        if key == ("fromstream", 1):
            st = self.fresh("st")
            out = self.fresh("o")

            def on_event(ev: str) -> list[str]:
                return [
                    f"{st}, {out} = R_fromstream_step(_b, {st}, {ev})",
                    *_unless_nothing(out, k),
                ]

            return [f"{st} = None", *self.stream(args[0], inp, env, on_event)]
        if key == ("truncate_stream", 1):
            # jq: `. as $n | null | stream | if (.[0]|length) > $n then setpath([0]; .[0][$n:]) ...`
            nul = self.fresh("i")
            out = self.fresh("o")

            def on_ev(ev: str) -> list[str]:
                return [
                    f"{out} = R_truncate_event(_b, {inp}, {ev})",
                    *_unless_nothing(out, k),
                ]

            return [f"{nul} = None", *self.stream(args[0], nul, env, on_ev)]
        if key == ("getpath", 1):
            return self.cartesian_call(node, inp, env, k)
        raise CompileFailure(f"{name}/{len(args)} is not defined")

    def cartesian_call(self, node: A.Call, inp: str, env: Env, k: K) -> list[str]:
        """Value builtins with streaming arguments: one call per combination."""
        args = node.args
        key = (node.name, len(args))

        def go(i: int, vals: list[str]) -> list[str]:
            if i == len(args):
                if key in VALUE_FUNCS:
                    return k(VALUE_FUNCS[key](inp, *vals))
                if node.name == "error":
                    return [f"R_raise_error({vals[0]})"]
                if node.name == "nth":
                    return k(f"R_index(_b, {inp}, {vals[0]})")
                raise CompileFailure(node.name)
            return self.stream(
                args[i], inp, env, lambda v: self.with_name(v, lambda n: go(i + 1, [*vals, n]))
            )

        if node.name == "error" and not args:
            return [f"R_raise_error({inp})"]
        return go(0, [])

    def until_code(self, node: A.Call, inp: str, env: Env, k: K) -> list[str]:
        cond, update = node.args
        cur = self.fresh("u")
        cs = self.single(cond, cur, env)
        us = self.single(update, cur, env)
        if cs is not None and us is not None:
            # (charge_loops adds what the step builds to this one unit per step)
            return [
                f"{cur} = {inp}",
                "while True:",
                *indent(
                    [
                        "_b[0] -= 1",
                        "if _b[0] < 0: R_over_budget(_b)",
                        *cs[0],
                        f"if {self.truth(cs[1], self.is_bool(cond, env))}: break",
                        *us[0],
                        f"{cur} = {us[1]}",
                    ]
                ),
                *k(cur),
            ]
        # General case: the recursive definition from jq's builtins, as a local generator. Each
        # level keeps its generators alive until the levels below it finish, so a level costs
        # CALL_COST times its depth: live frames are paid for, not just calls (a chain of
        # `yield from` is not bounded by Python's recursion limit).
        fn = self.fresh("h")
        i2 = self.fresh("i")
        d = self.fresh("d")
        v = self.fresh("v")
        body = self.stream(
            cond,
            i2,
            env,
            lambda c: [
                f"if {self.truth(c, self.is_bool(cond, env))}:",
                f"    yield {i2}",
                "else:",
                *indent(self.stream(update, i2, env, lambda u: [f"yield from {fn}({u}, {d} + 1)"])),
            ],
        )
        return [
            f"def {fn}({i2}, {d}):",
            f"    _b[0] -= {R.CALL_COST + allocation_weight(body)} * {d}",
            "    if _b[0] < 0: R_over_budget(_b)",
            *indent(body),
            "    return",
            "    yield",
            f"for {v} in {fn}({inp}, 1):",
            *indent(k(v)),
        ]

    def regex_stream(self, node: A.Call, inp: str, env: Env, k: K) -> list[str]:
        name, args = node.name, node.args
        if name in ("sub", "gsub"):
            re_node, repl = args[0], args[1]
            flags_node = args[2] if len(args) == 3 else None

            def with_re(rx: str) -> list[str]:
                def with_flags(fl: str) -> list[str]:
                    fn, gen = self.gen_fn(repl, env)
                    r = self.fresh("r")
                    glob = "True" if name == "gsub" else "False"
                    return [
                        *gen,
                        *self.with_name(
                            f"R_substitute(_b, {inp}, {rx}, {fl}, {fn}, {glob})",
                            lambda rs: [f"for {r} in {rs}:", *indent(k(r))],
                        ),
                    ]

                if flags_node is None:
                    return with_flags("None")
                return self.stream(flags_node, inp, env, with_flags)

            return self.stream(re_node, inp, env, with_re)
        flags_node = args[1] if len(args) > 1 else None

        def with_re2(rx: str) -> list[str]:
            def with_flags(fl: str) -> list[str]:
                m = self.fresh("m")
                fn = {"splits": "R_split_list", "match": "R_match_list", "capture": "R_capture_list"}.get(
                    name, "R_scan_list"
                )
                return [f"for {m} in {fn}(_b, {inp}, {rx}, {fl}):", *indent(k(m))]

            if flags_node is None:
                return with_flags("None")
            return self.stream(flags_node, inp, env, with_flags)

        return self.stream(args[0], inp, env, with_re2)

    def map_values(self, node: A.Call, inp: str, env: Env) -> tuple[list[str], str]:
        f = node.args[0]
        res = self.fresh("r")
        kk = self.fresh("k")
        v = self.fresh("v")
        fn = self.fresh("h")
        i2 = self.fresh("i")
        body = self.stream(f, i2, env, lambda w: [f"return {w}"])
        lines = [
            f"def {fn}({i2}):",
            *indent(body),
            "    return R_NOTHING",
            # a call and a result slot per element, charged before the loop
            f"if type({inp}) is dict or type({inp}) is list: _b[0] -= 4 * len({inp})",
            "if _b[0] < 0: R_over_budget(_b)",
            f"if type({inp}) is dict:",
            f"    {res} = {{}}",
            f"    for {kk}, {v} in {inp}.items():",
            f"        {v} = {fn}({v})",
            f"        if {v} is not R_NOTHING: {res}[{kk}] = {v}",
            f"elif type({inp}) is list:",
            f"    {res} = []",
            f"    for {v} in {inp}:",
            f"        {v} = {fn}({v})",
            f"        if {v} is not R_NOTHING: {res}.append({v})",
            "else:",
            f"    R_iter_error({inp})",
        ]
        return lines, res

    def keyed(self, node: A.Call, inp: str, env: Env) -> tuple[list[str], str]:
        f = node.args[0]
        keys = self.fresh("ks")
        lines = [f"{keys} = []"]

        def per_item(v: str) -> list[str]:
            sv = self.single(f, v, env)
            if sv is not None:
                return [*sv[0], f"{keys}.append([{sv[1]}])"]
            one = self.fresh("l")
            return [
                f"{one} = []",
                *self.stream(f, v, env, lambda w: [f"{one}.append({w})"]),
                f"{keys}.append({one})",
            ]

        lines += [
            f"if type({inp}) is not list: R_raise_error(R_jtype({inp}) + ' (' + R_dump({inp}, 30)[:30] + "
            "') cannot be sorted, as it is not an array')"
        ]
        lines += self.iterate_code(inp, per_item)
        fn = {
            "sort_by": "R_sort_by_keys",
            "group_by": "R_group_by_keys",
            "unique_by": "R_unique_by_keys",
            "min_by": "R_min_by_keys",
            "max_by": "R_max_by_keys",
        }[node.name]
        return lines, f"{fn}(_b, {inp}, {keys})"

    def any_all(self, node: A.Call, inp: str, env: Env) -> tuple[list[str], str]:
        is_any = node.name == "any"
        fn = self.fresh("h")
        i2 = self.fresh("i")
        if len(node.args) == 2:
            gen, cond = node.args
        else:
            gen, cond = A.Iterate(node.offset, A.Identity(node.offset)), node.args[0]
        cb = self.is_bool(cond, env)

        def on_item(v: str) -> list[str]:
            def on_cond(c: str) -> list[str]:
                t = self.truth(c, cb)
                return [f"if {t}: return True"] if is_any else [f"if not {t}: return False"]

            return self.stream(cond, v, env, on_cond)

        body = self.stream(gen, i2, env, lambda v: self.with_name(v, on_item))
        end = "return False" if is_any else "return True"
        return [f"def {fn}({i2}):", *indent(body or ["pass"]), f"    {end}"], f"{fn}({inp})"

    def in_code(self, node: A.Call, inp: str, env: Env) -> tuple[list[str], str]:
        fn = self.fresh("h")
        i2 = self.fresh("i")
        if len(node.args) == 1:
            src_node: A.Node = A.Identity(node.offset)
            set_node = node.args[0]
        else:
            src_node, set_node = node.args

        def on_src(sv: str) -> list[str]:
            return self.with_name(
                sv,
                lambda sn: self.stream(
                    set_node, i2, env, lambda x: [f"if {OPERATORS['=='](sn, x)}: return True"]
                ),
            )

        body = self.stream(src_node, i2, env, on_src)
        return [f"def {fn}({i2}):", *indent(body or ["pass"]), "    return False"], f"{fn}({inp})"

    def index_code(self, node: A.Call, inp: str, env: Env) -> tuple[list[str], str]:
        if len(node.args) == 1:
            src: A.Node = A.Iterate(node.offset, A.Identity(node.offset))
            keyf = node.args[0]
        else:
            src, keyf = node.args
        res = self.fresh("r")

        def on_row(row: str) -> list[str]:
            return self.with_name(
                row, lambda rn: self.stream(keyf, rn, env, lambda kv: [f"{res}[R_tostring(_b, {kv})] = {rn}"])
            )

        return [f"{res} = {{}}", *self.stream(src, inp, env, on_row)], res

    # ------------------------------------------------------------------ path mode
    def pstream(self, node: A.Node, inp: str, pth: str, env: Env, k: PK) -> list[str]:
        """Outputs as (value, path-tuple) pairs, for path(f), paths(), assignment and pick."""
        if self.depth > MAX_DEPTH and not isinstance(node, A.Identity):
            # Keep Python's block nesting shallow, as ``stream`` does.
            fn, gen = self.pgen_fn(node, env)
            v, p = self.fresh("v"), self.fresh("p")
            return [*gen, f"for {v}, {p} in {fn}({inp}, {pth}):", *indent(k(v, p))]
        self.depth += 1
        try:
            return self.pstream_code(node, inp, pth, env, k)
        finally:
            self.depth -= 1

    def pstream_code(self, node: A.Node, inp: str, pth: str, env: Env, k: PK) -> list[str]:
        if isinstance(node, A.Identity):
            return k(inp, pth)
        if isinstance(node, A.Index):

            def with_target(tv: str, tp: str) -> list[str]:
                def with_key(kv: str) -> list[str]:
                    return self.with_name(
                        kv,
                        lambda kn: self.with_name(
                            f"R_index(_b, {tv}, {kn}) if {tv} is not None else None",
                            lambda vn: k(vn, f"({tp} + ({kn},))"),
                        ),
                    )

                key = node.key
                if isinstance(key, A.Literal):
                    return with_key(repr(key.value))
                return self.stream(key, inp, env, with_key)

            return self.pstream(
                node.target, inp, pth, env, lambda tv, tp: self.with_name(tv, lambda tn: with_target(tn, tp))
            )
        if isinstance(node, A.Slice):

            def with_t(tv: str, tp: str) -> list[str]:
                s = node.start or A.Literal(node.offset, None)
                e = node.end or A.Literal(node.offset, None)
                return self.stream(
                    s,
                    inp,
                    env,
                    lambda sv: self.stream(
                        e,
                        inp,
                        env,
                        lambda ev: self.with_name(
                            f"R_slice_value(_b, {tv}, {sv}, {ev})",
                            lambda vn: k(vn, f"({tp} + ({{'start': {sv}, 'end': {ev}}},))"),
                        ),
                    ),
                )

            return self.pstream(
                node.target, inp, pth, env, lambda tv, tp: self.with_name(tv, lambda tn: with_t(tn, tp))
            )
        if isinstance(node, A.Iterate):

            def with_t2(tv: str, tp: str) -> list[str]:
                kk = self.fresh("k")
                v = self.fresh("v")
                return [
                    f"if type({tv}) is dict:",
                    f"    {kk}_it = {tv}.items()",
                    f"elif type({tv}) is list:",
                    f"    {kk}_it = enumerate({tv})",
                    "else:",
                    f"    R_iter_error({tv})",
                    f"_b[0] -= len({tv})",
                    "if _b[0] < 0: R_over_budget(_b)",
                    f"for {kk}, {v} in {kk}_it:",
                    *indent(k(v, f"({tp} + ({kk},))") or ["pass"]),
                ]

            return self.pstream(
                node.target, inp, pth, env, lambda tv, tp: self.with_name(tv, lambda tn: with_t2(tn, tp))
            )
        if isinstance(node, A.Pipe):
            return self.pstream(
                node.left,
                inp,
                pth,
                env,
                lambda v, p: self.with_name(
                    v, lambda vn: self.with_name(p, lambda pn: self.pstream(node.right, vn, pn, env, k))
                ),
            )
        if isinstance(node, (A.Comma, A.If)) or (isinstance(node, A.As) and node.alternatives):
            # Every branch continues with ``k``: a long ``k`` is generated once, looping over the
            # pairs of a generator of the fork (lazy, in order), so chained forks stay linear. As
            # in stream mode (``shareable``), errors raised by a long ``k`` then no longer move
            # ``?//`` on to its next pattern.
            v, p = self.fresh("v"), self.fresh("p")
            once = k(v, p)
            if len(once) > MAX_INLINE_K:
                fn, gen = self.pgen_fn(node, env)
                return [*gen, f"for {v}, {p} in {fn}({inp}, {pth}):", *indent(once)]
        if isinstance(node, A.Comma):
            return self.pstream(node.left, inp, pth, env, k) + self.pstream(node.right, inp, pth, env, k)
        if isinstance(node, A.If):

            def branches(c: str) -> list[str]:
                t = self.truth(c, self.is_bool(node.cond, env))
                then = self.pstream(node.then, inp, pth, env, k)
                other = (
                    k(inp, pth) if node.otherwise is None else self.pstream(node.otherwise, inp, pth, env, k)
                )
                return [f"if {t}:", *indent(then or ["pass"]), "else:", *indent(other or ["pass"])]

            return self.stream(node.cond, inp, env, branches)
        if isinstance(node, A.Alt):
            lst = self.fresh("l")
            lines = [f"{lst} = []"]
            lines += self.pstream(
                node.left,
                inp,
                pth,
                env,
                lambda v, p: self.with_name(
                    v, lambda n: [f"if {n} is not None and {n} is not False: {lst}.append(({n}, {p}))"]
                ),
            )
            lines.append(f"if not {lst}:")
            lines += indent(
                self.pstream(node.right, inp, pth, env, lambda v, p: [f"{lst}.append(({v}, {p}))"])
            )
            v = self.fresh("v")
            p = self.fresh("p")
            return [*lines, f"for {v}, {p} in {lst}:", *indent(k(v, p))]
        if isinstance(node, A.Try):
            fn = self.fresh("g")
            i2 = self.fresh("i")
            p2 = self.fresh("p")
            body = self.pstream(node.body, i2, p2, env, lambda v, p: [f"yield ({v}, {p})"])
            it = self.fresh("it")
            v = self.fresh("v")
            err = self.fresh("e")
            lines = [
                f"def {fn}({i2}, {p2}):",
                *indent(body),
                "    return",
                "    yield",
                f"{it} = {fn}({inp}, {pth})",
                "while True:",
                "    try:",
                f"        {v} = next({it})",
                "    except StopIteration:",
                "        break",
                f"    except R_JqError as {err}:",
            ]
            if node.handler is not None:
                ev = self.fresh("x")
                lines += indent(
                    [
                        f"{ev} = {err}.value",
                        *self.stream(node.handler, ev, env, lambda hv: [f"R_path_error({hv})"]),
                    ],
                    2,
                )
            lines += ["        break", *indent(k(f"{v}[0]", f"{v}[1]"))]
            return lines
        if isinstance(node, A.As) and node.alternatives:
            return self.stream(
                node.source,
                inp,
                env,
                lambda s: self.with_name(
                    s, lambda sn: self.as_alternatives(node, sn, inp, env, lambda _v: [], pth, k)
                ),
            )
        if isinstance(node, A.As):

            def as_body(s: str) -> list[str]:
                env2 = self.bind_names(node.pattern, env)
                return self.bind_pattern(node.pattern, s, inp, env2) + self.pstream(
                    node.body, inp, pth, env2, k
                )

            return self.stream(node.source, inp, env, lambda s: self.with_name(s, as_body))
        if isinstance(node, A.FuncDef):
            env2 = self.declare(node, env)
            return self.func_def(node, env2) + self.pstream(node.rest, inp, pth, env2, k)
        if isinstance(node, A.Label):
            lab = self.fresh("lab")
            env2 = env.with_label(node.name, lab)
            fn = self.fresh("g")
            i2 = self.fresh("i")
            p2 = self.fresh("p")
            body2 = self.pstream(node.body, i2, p2, env2, lambda v, p: [f"yield ({v}, {p})"])
            it = self.fresh("it")
            v = self.fresh("v")
            err = self.fresh("e")
            return [
                f"{lab} = object()",
                f"def {fn}({i2}, {p2}):",
                *indent(body2),
                "    return",
                "    yield",
                f"{it} = {fn}({inp}, {pth})",
                "while True:",
                "    try:",
                f"        {v} = next({it})",
                "    except StopIteration:",
                "        break",
                f"    except R_BreakOut as {err}:",
                f"        if {err}.label is not {lab}: raise",
                "        break",
                *indent(k(f"{v}[0]", f"{v}[1]")),
            ]
        if isinstance(node, A.Break):
            return self.stream(node, inp, env, lambda v: [])
        if isinstance(node, A.Reduce):
            return self.preduce(node, inp, pth, env, k)
        if isinstance(node, A.Foreach):
            return self.pforeach(node, inp, pth, env, k)
        if isinstance(node, A.Call):
            f = env.funcs.get((node.name, len(node.args)))
            if f is None:
                return self.pcall(node, inp, pth, env, k)
            v = self.fresh("v")
            p = self.fresh("p")
            if f.kind == "closure":
                return [f"for {v}, {p} in {f.pyname}.p({inp}, {pth}):", *indent(k(v, p))]
            lines, closures = self.closure_args(node.args, env)
            call = f"{f.ppyname}({', '.join([inp, pth, *closures])})"
            return [*lines, f"for {v}, {p} in {call}:", *indent(k(v, p))]
        # Anything else is not a path expression: jq fails on the first value it produces.
        return self.stream(node, inp, env, lambda v: [f"R_path_error({v})"])

    def pcall(self, node: A.Call, inp: str, pth: str, env: Env, k: PK) -> list[str]:
        key = (node.name, len(node.args))
        args = node.args
        if key == ("empty", 0):
            return ["pass"]
        if node.name == "error":
            # The stream's value is the raising call itself: evaluate it as a statement (an
            # empty continuation left nothing to run, and an empty block that did not compile).
            return self.stream(node, inp, env, lambda v: [v])
        if key == ("select", 1):
            return self.stream(
                args[0],
                inp,
                env,
                lambda c: [
                    f"if {self.truth(c, self.is_bool(args[0], env))}:",
                    *indent(k(inp, pth) or ["pass"]),
                ],
            )
        if node.name in TYPE_FILTERS and not args:
            return [f"if {TYPE_FILTERS[node.name].format(v=inp)}:", *indent(k(inp, pth))]
        if key == ("getpath", 1):
            return self.stream(
                args[0],
                inp,
                env,
                lambda pv: self.with_name(
                    pv,
                    lambda pn: [
                        f"if type({pn}) is not list: R_raise_error('Path must be specified as an array')",
                        *self.with_name(
                            f"R_getpath(_b, {inp}, {pn})", lambda vn: k(vn, f"({pth} + tuple({pn}))")
                        ),
                    ],
                ),
            )
        if key == ("last", 1):
            # jq 1.7+: `def last(f): reduce f as $x (null; $x)` -- the result is $x, a value and
            # not a path, so libjq fails with the last output (and yields nothing for none).
            r = self.fresh("r")
            return [
                f"{r} = R_NOTHING",
                *self.stream(args[0], inp, env, lambda v: [f"{r} = {v}"]),
                f"if {r} is not R_NOTHING: R_path_error({r})",
            ]
        if key in (("first", 1), ("limit", 2), ("nth", 2)):
            fn, lines = self.pgen_fn(args[-1], env)
            v = self.fresh("v")
            if key == ("first", 1):
                return [
                    *lines,
                    f"for {v} in R_islice({fn}({inp}, {pth}), 1):",
                    *indent(k(f"{v}[0]", f"{v}[1]")),
                ]

            def with_n(n: str) -> list[str]:
                nn = self.fresh("n")
                if key == ("nth", 2):
                    count, window = f"R_nth_index({n})", f"{nn}, {nn} + 1"
                else:
                    count, window = f"R_limit_count({n})", nn
                return [
                    f"{nn} = {count}",
                    *lines,
                    f"for {v} in R_islice({fn}({inp}, {pth}), {window}):",
                    *indent(k(f"{v}[0]", f"{v}[1]")),
                ]

            return self.stream(args[0], inp, env, with_n)
        if key in (("first", 0), ("last", 0)):
            idx = "0" if node.name == "first" else "-1"
            return self.with_name(f"R_index(_b, {inp}, {idx})", lambda vn: k(vn, f"({pth} + ({idx},))"))
        if key in (("debug", 0), ("stderr", 0)):
            return k(inp, pth)
        if key == ("debug", 1):
            return self.stream(A.Call(node.offset, "debug", (args[0],)), inp, env, lambda _v: k(inp, pth))
        if key == ("nth", 1):
            return self.stream(
                args[0],
                inp,
                env,
                lambda n: self.with_name(
                    n,
                    lambda nn: self.with_name(
                        f"R_index(_b, {inp}, {nn})", lambda vn: k(vn, f"({pth} + ({nn},))")
                    ),
                ),
            )
        return self.stream(node, inp, env, lambda v: [f"R_path_error({v})"])

    def preduce(self, node: A.Reduce, inp: str, pth: str, env: Env, k: PK) -> list[str]:
        """Path mode threads the accumulator's path through the updates (as gojq does; libjq
        loses it after the first update and fails with "Invalid path expression near ...")."""
        acc, accp = self.fresh("acc"), self.fresh("accp")
        env2 = self.bind_names(node.pattern, env)

        def step(v: str) -> list[str]:
            zv, zp = self.fresh("z"), self.fresh("zp")
            return [
                *self.bind_pattern(node.pattern, v, inp, env2),
                f"if {accp} is None: R_path_error({acc})",
                f"{zv}, {zp} = None, None",
                *self.pstream(node.update, acc, accp, env2, lambda u, up: [f"{zv}, {zp} = {u}, {up}"]),
                f"{acc}, {accp} = {zv}, {zp}",
            ]

        def with_init(iv: str, ip: str) -> list[str]:
            return [
                f"{acc}, {accp} = {iv}, {ip}",
                *self.stream(node.source, inp, env, lambda v: self.with_name(v, step)),
                f"if {accp} is None: R_path_error({acc})",
                *k(acc, accp),
            ]

        return self.pstream(node.init, inp, pth, env, with_init)

    def pforeach(self, node: A.Foreach, inp: str, pth: str, env: Env, k: PK) -> list[str]:
        acc, accp = self.fresh("acc"), self.fresh("accp")
        env2 = self.bind_names(node.pattern, env)

        def step(v: str) -> list[str]:
            def emit(u: str, up: str) -> list[str]:
                out = [f"{acc}, {accp} = {u}, {up}"]
                if node.extract is None:
                    return out + k(acc, accp)
                return out + self.pstream(node.extract, acc, accp, env2, k)

            return self.bind_pattern(node.pattern, v, inp, env2) + self.pstream(
                node.update, acc, accp, env2, emit
            )

        def with_init(iv: str, ip: str) -> list[str]:
            return [
                f"{acc}, {accp} = {iv}, {ip}",
                *self.stream(node.source, inp, env, lambda v: self.with_name(v, step)),
            ]

        return self.pstream(node.init, inp, pth, env, with_init)


def _dump_trunc(v: Any) -> str:
    """libjq 1.8's ``jv_dump_string_trunc`` with its 30-byte buffer: over 29 bytes, keep 25
    bytes (whole characters), then ``...`` and the text's last character (read from a bounded
    prefix: a container's or string's last character is its closing one)."""
    text = R.dump(v, 64)
    raw = text.encode()
    if len(raw) <= 29:
        return text
    last = text[-1]
    if text.endswith("..."):  # cut: a container's or string's last character is its closing one
        last = "]" if type(v) is list else "}" if type(v) is dict else '"' if type(v) is str else last
    return raw[:25].decode(errors="ignore") + "..." + last


def _path_error(v: Any) -> Any:
    raise R.JqPathError(f"Invalid path expression with result {_dump_trunc(v)}")


NAMESPACE["R_path_error"] = _path_error


def _fromstream_step(meter: R.Meter, state: Any, ev: Any) -> tuple[Any, Any]:
    """One event of jq's ``fromstream`` (its definition, step by step): returns the new state
    ``{"x": partial, "e": done}`` and the completed value or NOTHING."""
    if state is None or state["e"]:
        state = {"x": None, "e": False}
    head = R.index(meter, ev, 0)
    if R.jeq(meter, V.length(ev), 2):
        state = P.setpath_metered(meter, state, ["e"], R.jeq(meter, V.length(head), 0))
        state = P.setpath_metered(meter, state, R.add(meter, ["x"], head), R.index(meter, ev, 1))
    else:
        state = P.setpath_metered(meter, state, ["e"], R.jeq(meter, V.length(head), 1))
    return state, (state["x"] if state["e"] else R.NOTHING)


def _truncate_event(meter: R.Meter, depth: Any, ev: Any) -> Any:
    head = R.index(meter, ev, 0)
    if R.compare(V.length(head), depth) > 0:
        return P.setpath_metered(meter, ev, [0], R.slice_value(meter, head, depth, None))
    return R.NOTHING


def _builtin_names(meter: R.Meter) -> list[str]:
    R.charge(meter, 2 * len(BUILTINS))  # a fresh list of short strings each time
    return sorted(f"{name}/{arity}" for name, arity in BUILTINS)


NAMESPACE["R_fromstream_step"] = _fromstream_step
NAMESPACE["R_truncate_event"] = _truncate_event
NAMESPACE["R_builtin_names"] = _builtin_names


def _literal(v: Any) -> str:
    if type(v) is float:
        if v != v:
            return "R_nan"
        if v in (math.inf, -math.inf):
            return "R_inf" if v > 0 else "(-R_inf)"
    return repr(v)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def _pattern_vars(p: A.Pattern) -> list[str]:
    if isinstance(p, A.VarPattern):
        return [p.name]
    if isinstance(p, A.ArrayPattern):
        return [n for e in p.elements for n in _pattern_vars(e)]
    out: list[str] = []
    for _key, sub, bind in p.entries:
        if bind is not None:
            out.append(bind)
        if sub is not None:
            out += _pattern_vars(sub)
    return out


def _pattern_keys(p: A.Pattern) -> list[A.Node]:
    if isinstance(p, A.ObjectPattern):
        out: list[A.Node] = []
        for key, sub, _bind in p.entries:
            out.append(key)
            if sub is not None:
                out += _pattern_keys(sub)
        return out
    if isinstance(p, A.ArrayPattern):
        return [k for e in p.elements for k in _pattern_keys(e)]
    return []


def _uses_path_mode(node: Any) -> bool:
    """Does the expression call ``path``/``pick`` anywhere (so value code needs path closures)?"""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, A.Call) and (n.name, len(n.args)) in (("path", 1), ("pick", 1)):
            return True
        if isinstance(n, (list, tuple)):
            stack.extend(n)
        elif hasattr(n, "__dataclass_fields__"):
            stack.extend(getattr(n, f) for f in n.__dataclass_fields__)
    return False


# Units per container a display builds: a small list is ~90 bytes, a small dict ~230.
CONTAINER_COST = {"[": 2, "{": 4}
# A list or dict display in generated code: `[`/`{` opening a value (not a subscript such as _b[0]).
_DISPLAY = re.compile(r"(?:^|[=(,:]|\breturn|\byield)\s*([\[{])")


def allocation_weight(lines: list[str]) -> int:
    """Containers a block of generated code builds per run, counted statically: a loop (or call)
    whose body builds many of them is charged for each, so memory stays proportional to the budget
    even when constructs are unrolled (``reduce`` over a literal list, long literals). A container
    costs CONTAINER_COST units by its kind, so 1,000,000 units stay under 64 MB of containers."""
    return sum(_line_weight(line) for line in lines)


@lru_cache(maxsize=1 << 14)
def _line_weight(line: str) -> int:
    # Cached: nested blocks are weighed again by every enclosing loop (iterate_code, calls).
    return sum(CONTAINER_COST[m] for m in _DISPLAY.findall(line))


_LOOP = re.compile(r"^(\s*)(?:for .+ in .+|while .+):$")


def charge_loops(lines: list[str]) -> list[str]:
    """Charge every loop of generated code that builds containers, per step, by what its body builds.

    Loops over collections are charged up front (``_b[0] -= n * len(c)``, see iterate_code); this
    covers the rest: loops over generator streams (a ``reduce`` over a long comma list, a split
    subexpression), whose items cost nothing to produce but whose bodies may build many containers.
    """
    # One pass: where each loop's body ends (the next non-blank line indented no deeper than the
    # loop), and prefix sums of the lines' weights, so nested loops cost no rescans.
    ends = [len(lines)] * len(lines)
    open_loops: list[tuple[int, int]] = []  # (indentation, line index)
    prefix = [0]
    for i, line in enumerate(lines):
        prefix.append(prefix[-1] + _line_weight(line))
        if line.strip():
            indentation = len(line) - len(line.lstrip())
            while open_loops and open_loops[-1][0] >= indentation:
                ends[open_loops.pop()[1]] = i
            if _LOOP.match(line):
                open_loops.append((indentation, i))
    out: list[str] = []
    for i, line in enumerate(lines):
        out.append(line)
        m = _LOOP.match(line)
        if m is None or (i > 0 and "R_over_budget" in lines[i - 1]):
            continue  # charged before it starts (iterate_code)
        weight = prefix[ends[i]] - prefix[i + 1]
        if weight:
            pad = " " * (len(m.group(1)) + 4)
            out += [f"{pad}_b[0] -= {weight}", f"{pad}if _b[0] < 0: R_over_budget(_b)"]
    return out


@dataclass
class Program:
    all_fn: Callable[..., list[Any]]
    first_fn: Callable[..., Any]
    paths_fn: Callable[..., list[tuple[Any, ...]]]
    code: str
    #: Whether ``all`` (``first``) charges a meter. Each takes ``(input, variables, meter=None)``
    #: and makes its own meter when given none; a caller that wants to go on charging the same
    #: evaluation (api._check_built) or read what it used passes one (``runtime.start()``).
    all_metered: bool = True
    first_metered: bool = True


def build(root: A.Node, variables: tuple[str, ...]) -> Program:
    """Generate and compile the three entry points for one expression."""
    env = Env()
    gen = Gen()
    header = []
    for name in variables:
        py = gen.fresh("v" + _safe(name))
        env = env.with_var(name, py)
        header.append(f"{py} = _vars[{name!r}]")
    budget = R.meter_prologue()

    gen.paths_enabled = _uses_path_mode(root)
    sv = gen.single(root, "inp", env)
    if sv is not None:
        all_body = [*sv[0], f"return [{sv[1]}]"]
    else:
        all_body = [
            "_out = []",
            *gen.stream(
                root,
                "inp",
                env,
                lambda v: [f"_out.append({v})", f"if len(_out) > {R.MAX_RESULTS}: R_too_many_results()"],
            ),
            "return _out",
        ]
    first_body = [*gen.stream(root, "inp", env, lambda v: [f"return {v}"]), "return None"]
    gen.paths_enabled = True
    paths_body = [
        "_out = []",
        *gen.pstream(
            root,
            "inp",
            "()",
            env,
            lambda v, p: [f"_out.append({p})", f"if len(_out) > {R.MAX_RESULTS}: R_too_many_results()"],
        ),
        "return _out",
    ]

    code_lines = []
    metered: dict[str, bool] = {}
    for fname, body in (("_all", all_body), ("_first", first_body), ("_paths", paths_body)):
        body = charge_loops(body)
        code_lines.append(f"def {fname}(inp, _vars, _b=None):")
        # No meter at all for code that charges nothing (a fixed path: `.spec.replicas // 1`).
        metered[fname] = _uses_meter(body)
        code_lines += indent([*(budget if metered[fname] else []), *header, *body])
    code = "\n".join(code_lines) + "\n"
    ns = dict(NAMESPACE)
    exec(compile(code, "<jq>", "exec"), ns)
    return Program(ns["_all"], ns["_first"], ns["_paths"], code, metered["_all"], metered["_first"])


def _uses_meter(body: list[str]) -> bool:
    """Does the generated code charge the meter ``_b`` (itself or through a builtin)?"""
    return re.search(r"\b_b\b", "\n".join(body)) is not None


__all__ = ["BUILTINS", "CompileFailure", "Program", "build"]
