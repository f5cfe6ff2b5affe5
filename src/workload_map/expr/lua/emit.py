"""The Lua code generator: one checked jq syntax tree -> one Lua 5.1 expression.

Every filter becomes a Lua function ``function(x, emit)`` that calls ``emit(value)`` once per
output, in the order the Python back end yields them (the right operand of a binary operator
outermost, the key of ``.[k]`` before its target, object entries in order...). Nodes that always
yield one value (paths, literals, arithmetic, calls of value builtins on such nodes) are also
written as plain Lua value expressions, so a path like ``.spec.a.b // 1`` costs no callbacks
(gopher-lua allows 256 call frames). Variables become Lua locals captured by closures; ``def``
becomes a local function (closure parameters are filters, ``$`` parameters bound in turn); a
label is a fresh table a ``break`` raises. Runtime helpers live in the local table ``J``
(jq_runtime.lua), so a generated function needs one upvalue for all of them.

What cannot be translated raises :class:`Untranslatable` naming the construct; the caller turns
it into ``ExpressionNotTranslatableError`` with the source.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import ast as A
from .builtins import FORMAT_REASON, LUA_BUILTINS, LUA_FORMATS, REGEX, TYPE_FILTERS

#: Deeper syntax trees are refused: gopher-lua's parser and call stack are small.
MAX_DEPTH = 40


class Untranslatable(Exception):
    """A construct the Lua back end does not translate; ``construct`` names it."""

    def __init__(self, construct: str, reason: str) -> None:
        super().__init__(f"{construct}: {reason}")
        self.construct = construct
        self.reason = reason


@dataclass(frozen=True)
class _Func:
    """A jq function in scope: a user ``def`` (Lua local ``lua``) or a closure parameter."""

    kind: str  # "def" or "param"
    lua: str
    params: tuple[str, ...] = ()


@dataclass
class Env:
    vars: dict[str, str] = field(default_factory=dict)
    funcs: dict[tuple[str, int], _Func] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)

    def with_var(self, name: str, lua: str) -> Env:
        return Env({**self.vars, name: lua}, self.funcs, self.labels)

    def with_func(self, key: tuple[str, int], f: _Func) -> Env:
        return Env(self.vars, {**self.funcs, key: f}, self.labels)

    def with_label(self, name: str, lua: str) -> Env:
        return Env(self.vars, self.funcs, {**self.labels, name: lua})


def lua_string(s: str) -> str:
    """A Lua string literal for ``s`` (bytes outside printable ASCII escaped as ``\\ddd``)."""
    out = ['"']
    for b in s.encode("utf-8", "surrogatepass"):
        c = chr(b)
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif 32 <= b < 127:
            out.append(c)
        else:
            out.append(f"\\{b:03d}")
    out.append('"')
    return "".join(out)


def lua_literal(v: Any) -> str:
    if v is None:
        return "J.NULL"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return repr(float(v)) if abs(v) > 2**53 else str(v)
    if isinstance(v, float):
        if v != v:
            return "(0/0)"
        if math.isinf(v):
            return "math.huge" if v > 0 else "(-math.huge)"
        return repr(v)
    if isinstance(v, str):
        return lua_string(v)
    if isinstance(v, list):
        if not v:
            return "J.EA"
        return "J.mkarr({" + ", ".join(lua_literal(x) for x in v) + f"}}, {len(v)})"
    if isinstance(v, dict):
        if not v:
            return "J.EO"
        keys = ", ".join(lua_string(k) for k in v)
        vals = ", ".join(lua_literal(x) for x in v.values())
        return f"J.mkobj({{{keys}}}, {{{vals}}}, {len(v)})"
    raise Untranslatable("literal", f"cannot write {type(v).__name__} as Lua")


_BINARY = {
    "+": "J.add",
    "-": "J.sub",
    "*": "J.mul",
    "/": "J.div",
    "%": "J.mod",
    "==": "J.eq",
    "!=": "J.ne",
    "<": "J.lt",
    "<=": "J.le",
    ">": "J.gt",
    ">=": "J.ge",
}


_LUA_MAGIC = set("^$()%.[]*+-?")
_ESCAPES = {"d": "%d", "w": "[%w_]", "s": "[\t\n\f\r ]"}


def lua_pattern(regex: str) -> str | None:
    r"""A Lua pattern matching exactly what the RE2 ``regex`` matches, for a small safe subset:
    ``^`` first, ``$`` last, ASCII literals, non-negated ``[...]`` classes of ASCII characters and
    ranges, ``\d``, ``\w``, ``\s``, escaped punctuation, and ``*``/``+``/``?`` after one of
    those. Anything else (alternation, groups, ``.``, negated classes, counted repetition, lazy
    quantifiers, other escapes, non-ASCII) gives None."""
    if not regex.isascii():
        return None
    out: list[str] = []
    i, n = 0, len(regex)
    if regex.startswith("^"):
        out.append("^")
        i = 1
    end_anchor = regex.endswith("$") and not regex.endswith("\\$")
    if end_anchor:
        n -= 1
    last_atom = False
    while i < n:
        c = regex[i]
        if c in "*+?":
            if not last_atom or (i + 1 < n and regex[i + 1] in "*+?"):
                return None
            out.append(c)
            last_atom = False
            i += 1
            continue
        if c == "\\":
            if i + 1 >= n:
                return None
            e = regex[i + 1]
            if e in _ESCAPES:
                out.append(_ESCAPES[e])
            elif not e.isalnum() and e.isprintable():
                out.append(("%" + e) if e in _LUA_MAGIC else e)
            else:
                return None
            i += 2
            last_atom = True
            continue
        if c == "[":
            close = regex.find("]", i + 1)
            if close < 0 or close == i + 1:
                return None
            body = regex[i + 1 : close]
            if body.startswith("^") or "[" in body or "\\" in body:
                return None
            items = []
            for ch in body:
                items.append(("%" + ch) if ch in "%]^" else ch)
            out.append("[" + "".join(items) + "]")
            i = close + 1
            last_atom = True
            continue
        if c in "|(){}.$^":
            return None
        if not c.isprintable():
            return None
        out.append(("%" + c) if c in _LUA_MAGIC else c)
        last_atom = True
        i += 1
    if end_anchor:
        out.append("$")
    return "".join(out)


def _calls(node: Any, key: tuple[str, int]) -> bool:
    """Whether ``node`` calls the function ``key`` anywhere (recursion check)."""
    if isinstance(node, A.Call) and (node.name, len(node.args)) == key:
        return True
    if isinstance(node, tuple):
        return any(_calls(x, key) for x in node)
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is None:
        return False
    return any(_calls(getattr(node, f), key) for f in fields)


class Emitter:
    def __init__(self) -> None:
        self.n = 0

    def fresh(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    # ------------------------------------------------------------------ single values
    def single(self, node: A.Node, env: Env, x: str) -> str | None:
        """A Lua expression for the one value ``node`` yields on input ``x``, or None when the
        node may yield another number of values (or is not worth inlining)."""
        if isinstance(node, A.Identity):
            return x
        if isinstance(node, A.Literal):
            return lua_literal(node.value)
        if isinstance(node, A.Var):
            if node.name == "ENV":
                return "J.EO"
            return self.var(node.name, env)
        if isinstance(node, A.Index):
            t = self.single(node.target, env, x)
            if t is None:
                return None
            key = node.key
            if isinstance(key, A.Literal) and isinstance(key.value, str):
                return f"J.field({t}, {lua_string(key.value)})"
            k = self.single(key, env, x)
            return None if k is None else f"J.index({t}, {k})"
        if isinstance(node, A.Slice):
            t = self.single(node.target, env, x)
            s = "J.NULL" if node.start is None else self.single(node.start, env, x)
            e = "J.NULL" if node.end is None else self.single(node.end, env, x)
            if t is None or s is None or e is None:
                return None
            return f"J.slice({t}, {s}, {e})"
        if isinstance(node, A.Neg):
            v = self.single(node.operand, env, x)
            return None if v is None else f"J.neg({v})"
        if isinstance(node, A.Binary):
            left = self.single(node.left, env, x)
            right = self.single(node.right, env, x)
            if left is None or right is None:
                return None
            return f"{_BINARY[node.op]}({left}, {right})"
        if isinstance(node, (A.And, A.Or)):
            left = self.single(node.left, env, x)
            right = self.single(node.right, env, x)
            if left is None or right is None:
                return None
            op = "and" if isinstance(node, A.And) else "or"
            return f"(J.truthy({left}) {op} J.truthy({right}))"
        if isinstance(node, A.Alt):
            left = self.single(node.left, env, x)
            right = self.single(node.right, env, x)
            if left is None or right is None:
                return None
            v = self.fresh("a")
            return f"(function({v}) if J.truthy({v}) then return {v} end return {right} end)({left})"
        if isinstance(node, A.Pipe):
            left = self.single(node.left, env, x)
            if left is None:
                return None
            y = self.fresh("x")
            right = self.single(node.right, env, y)
            if right is None:
                return None
            return f"(function({y}) return {right} end)({left})"
        if isinstance(node, A.If):
            c = self.single(node.cond, env, x)
            t = self.single(node.then, env, x)
            e = x if node.otherwise is None else self.single(node.otherwise, env, x)
            if c is None or t is None or e is None:
                return None
            return f"(function() if J.truthy({c}) then return {t} end return {e} end)()"
        if isinstance(node, A.ArrayCons):
            if node.body is None:
                return "J.EA"
            v = self.single(node.body, env, x)
            return None if v is None else f"J.mkarr({{{v}}}, 1)"
        if isinstance(node, A.ObjectCons):
            keys, vals = [], []
            for knode, vnode in node.entries:
                if isinstance(knode, A.Literal) and isinstance(knode.value, str):
                    k = lua_string(knode.value)
                else:
                    ks = self.single(knode, env, x)
                    if ks is None:
                        return None
                    k = f"J.objkey({ks})"
                v = self.single(vnode, env, x)
                if v is None:
                    return None
                keys.append(k)
                vals.append(v)
            if not keys:
                return "J.EO"
            return f"J.mkobj({{{', '.join(keys)}}}, {{{', '.join(vals)}}}, {len(keys)})"
        if isinstance(node, A.Format):
            self.check_format(node.name)
            return f"J.format({lua_string(node.name)}, {x})"
        if isinstance(node, A.StringInterp):
            pieces = []
            for part in node.parts:
                if isinstance(part, str):
                    pieces.append(lua_string(part))
                    continue
                v = self.single(part, env, x)
                if v is None:
                    return None
                pieces.append(self.fmt_piece(node.fmt, v))
            return "(" + " .. ".join(pieces or ['""']) + ")"
        if isinstance(node, A.Call):
            call = (node.name, len(node.args))
            if call in env.funcs:
                return None
            tr = LUA_BUILTINS.get(call)
            if tr is not None and tr.kind == "value":
                args = [self.single(a, env, x) for a in node.args]
                if any(a is None for a in args):
                    return None
                return f"J.B.{tr.lua}({', '.join([x, *(a for a in args if a is not None)])})"
            if call == ("first", 0):
                return f"J.index({x}, 0)"
            if call == ("last", 0):
                return f"J.index({x}, -1)"
            return None
        return None

    def var(self, name: str, env: Env) -> str:
        lua = env.vars.get(name)
        if lua is None:
            raise Untranslatable(f"${name}", "variable is not defined")
        return lua

    def fmt_piece(self, fmt: str | None, v: str) -> str:
        if fmt is None or fmt == "text":
            return f"J.tostring({v})"
        self.check_format(fmt)
        return f"J.format({lua_string(fmt)}, {v})"

    def check_format(self, name: str) -> None:
        if name not in LUA_FORMATS:
            raise Untranslatable(f"@{name}", FORMAT_REASON)

    # ------------------------------------------------------------------ filters
    def filter(self, node: A.Node, env: Env, depth: int = 0) -> str:
        """A Lua expression of the filter ``function(x, emit)`` for ``node``."""
        if depth > MAX_DEPTH:
            raise Untranslatable("nesting", f"more than {MAX_DEPTH} levels deep for Lua")
        f = self.filter_
        d = depth + 1
        s = self.single(node, env, "x")
        if s is not None:
            if s == "x":
                return "J.id"
            return f"function(x, emit) emit({s}) end"
        if isinstance(node, A.Index):
            t = f(node.target, env, d)
            key = node.key
            if isinstance(key, A.Literal) and isinstance(key.value, str):
                field = lua_string(key.value)
                return f"function(x, emit) ({t})(x, function(t) emit(J.field(t, {field})) end) end"
            k = f(key, env, d)
            return (
                f"function(x, emit) ({k})(x, function(k) ({t})(x, function(t) "
                "emit(J.index(t, k)) end) end) end"
            )
        if isinstance(node, A.Slice):
            t = f(node.target, env, d)
            s_ = "J.const(J.NULL)" if node.start is None else f(node.start, env, d)
            e_ = "J.const(J.NULL)" if node.end is None else f(node.end, env, d)
            return (
                f"function(x, emit) ({e_})(x, function(e) ({s_})(x, function(s) ({t})(x, function(t) "
                "emit(J.slice(t, s, e)) end) end) end) end"
            )
        if isinstance(node, A.Iterate):
            t = f(node.target, env, d)
            return f"function(x, emit) ({t})(x, function(t) J.each(t, emit) end) end"
        if isinstance(node, A.Pipe):
            left = f(node.left, env, d)
            right = f(node.right, env, d)
            return f"function(x, emit) ({left})(x, function(v) ({right})(v, emit) end) end"
        if isinstance(node, A.Comma):
            left = f(node.left, env, d)
            right = f(node.right, env, d)
            return f"function(x, emit) ({left})(x, emit); ({right})(x, emit) end"
        if isinstance(node, A.Alt):
            left = f(node.left, env, d)
            right = f(node.right, env, d)
            return (
                f"function(x, emit) local got, n = {{}}, 0; ({left})(x, function(v) "
                "if J.truthy(v) then n = n + 1; got[n] = v end end); "
                f"if n == 0 then ({right})(x, emit) else for i = 1, n do emit(got[i]) end end end"
            )
        if isinstance(node, A.And):
            left = f(node.left, env, d)
            right = f(node.right, env, d)
            return (
                f"function(x, emit) ({left})(x, function(l) if J.truthy(l) then ({right})(x, function(r) "
                "emit(J.truthy(r)) end) else emit(false) end end) end"
            )
        if isinstance(node, A.Or):
            left = f(node.left, env, d)
            right = f(node.right, env, d)
            return (
                f"function(x, emit) ({left})(x, function(l) if J.truthy(l) then emit(true) else "
                f"({right})(x, function(r) emit(J.truthy(r)) end) end end) end"
            )
        if isinstance(node, A.Binary):
            left = f(node.left, env, d)
            right = f(node.right, env, d)
            op = _BINARY[node.op]
            return (
                f"function(x, emit) ({right})(x, function(r) ({left})(x, function(l) "
                f"emit({op}(l, r)) end) end) end"
            )
        if isinstance(node, A.Neg):
            v = f(node.operand, env, d)
            return f"function(x, emit) ({v})(x, function(v) emit(J.neg(v)) end) end"
        if isinstance(node, A.If):
            c = f(node.cond, env, d)
            t = f(node.then, env, d)
            e = "J.id" if node.otherwise is None else f(node.otherwise, env, d)
            return (
                f"function(x, emit) ({c})(x, function(c) if J.truthy(c) then ({t})(x, emit) "
                f"else ({e})(x, emit) end end) end"
            )
        if isinstance(node, A.Try):
            body = f(node.body, env, d)
            handler = "nil" if node.handler is None else f(node.handler, env, d)
            return f"J.try({body}, {handler})"
        if isinstance(node, A.ArrayCons):
            assert node.body is not None  # an empty [] is single
            body = f(node.body, env, d)
            return (
                f"function(x, emit) local out, n = {{}}, 0; ({body})(x, function(v) "
                "n = n + 1; out[n] = v end); emit(J.mkarr(out, n)) end"
            )
        if isinstance(node, A.ObjectCons):
            return self.object_filter(node, env, d)
        if isinstance(node, A.StringInterp):
            return self.interp_filter(node, env, d)
        if isinstance(node, A.As):
            return self.as_filter(node, env, d)
        if isinstance(node, A.Reduce):
            return self.reduce_filter(node, env, d)
        if isinstance(node, A.Foreach):
            return self.foreach_filter(node, env, d)
        if isinstance(node, A.Label):
            lab = self.fresh("lab")
            body = f(node.body, env.with_label(node.name, lab), d)
            return f"J.label(function({lab}) return {body} end)"
        if isinstance(node, A.Break):
            target = env.labels.get(node.name)
            if target is None:
                raise Untranslatable(f"break ${node.name}", "label is not defined")
            return f"function() error({target}, 0) end"
        if isinstance(node, A.FuncDef):
            return self.def_filter(node, env, d)
        if isinstance(node, A.Call):
            return self.call_filter(node, env, d)
        if isinstance(node, A.RecurseAll):
            raise Untranslatable("..", "recursive descent is not allowed")
        if isinstance(node, A.Assign):
            raise Untranslatable(node.op, "assignment is not allowed")
        raise Untranslatable(type(node).__name__, "not translated")

    filter_ = filter

    def object_filter(self, node: A.ObjectCons, env: Env, d: int) -> str:
        n = len(node.entries)
        keys = [self.fresh("k") for _ in range(n)]
        vals = [self.fresh("v") for _ in range(n)]
        inner = f"emit(J.mkobj({{{', '.join(keys)}}}, {{{', '.join(vals)}}}, {n}))"
        for i in range(n - 1, -1, -1):
            knode, vnode = node.entries[i]
            vf = self.filter(vnode, env, d)
            inner = f"({vf})(x, function({vals[i]}) {inner} end)"
            if isinstance(knode, A.Literal) and isinstance(knode.value, str):
                inner = f"local {keys[i]} = {lua_string(knode.value)}; {inner}"
            else:
                kf = self.filter(knode, env, d)
                raw = self.fresh("kr")
                inner = f"({kf})(x, function({raw}) local {keys[i]} = J.objkey({raw}); {inner} end)"
        return f"function(x, emit) {inner} end"

    def interp_filter(self, node: A.StringInterp, env: Env, d: int) -> str:
        names: dict[int, str] = {}
        for i, part in enumerate(node.parts):
            if not isinstance(part, str):
                names[i] = self.fresh("s")
        pieces = [
            lua_string(p) if isinstance(p, str) else self.fmt_piece(node.fmt, names[i])
            for i, p in enumerate(node.parts)
        ]
        inner = "emit(" + (" .. ".join(pieces) or '""') + ")"
        # the first interpolation varies fastest: the last one is the outermost loop
        for i, part in enumerate(node.parts):
            if isinstance(part, str):
                continue
            pf = self.filter(part, env, d)
            inner = f"({pf})(x, function({names[i]}) {inner} end)"
        return f"function(x, emit) {inner} end"

    # -- patterns
    def pattern_names(self, p: A.Pattern, env: Env) -> Env:
        if isinstance(p, A.VarPattern):
            return env.with_var(p.name, self.fresh("v_" + _safe(p.name)))
        if isinstance(p, A.ArrayPattern):
            for e in p.elements:
                env = self.pattern_names(e, env)
            return env
        for _key, sub, bind in p.entries:
            if bind is not None:
                env = env.with_var(bind, self.fresh("v_" + _safe(bind)))
            if sub is not None:
                env = self.pattern_names(sub, env)
        return env

    def bind(self, p: A.Pattern, src: str, env: Env, outer: Env) -> str:
        """Lua statements binding pattern ``p`` to the value ``src`` (names from ``env``; object
        keys computed in ``outer`` on the input ``x``)."""
        if isinstance(p, A.VarPattern):
            return f"local {env.vars[p.name]} = {src}; "
        out = []
        if isinstance(p, A.ArrayPattern):
            out.append(
                f'if {src} ~= J.NULL and not J.isarr({src}) then J.fail("Cannot index " .. J.tname({src}) '
                '.. " with number") end; '
            )
            for i, e in enumerate(p.elements):
                t = self.fresh("t")
                out.append(f"local {t} = J.index({src}, {i}); ")
                out.append(self.bind(e, t, env, outer))
            return "".join(out)
        for key, sub, bind in p.entries:
            k = self.single(key, outer, "x")
            if k is None:
                raise Untranslatable("object pattern", "a computed key that yields several values")
            t = self.fresh("t")
            out.append(f"local {t} = J.index({src}, {k}); ")
            if bind is not None:
                out.append(f"local {env.vars[bind]} = {t}; ")
            if sub is not None:
                out.append(self.bind(sub, t, env, outer))
        return "".join(out)

    def as_filter(self, node: A.As, env: Env, d: int) -> str:
        if node.alternatives:
            raise Untranslatable("?//", "destructuring alternatives are not translated")
        src = self.filter(node.source, env, d)
        env2 = self.pattern_names(node.pattern, env)
        body = self.filter(node.body, env2, d)
        bind = self.bind(node.pattern, "s", env2, env)
        return f"function(x, emit) ({src})(x, function(s) {bind}({body})(x, emit) end) end"

    def reduce_filter(self, node: A.Reduce, env: Env, d: int) -> str:
        init = self.filter(node.init, env, d)
        src = self.filter(node.source, env, d)
        env2 = self.pattern_names(node.pattern, env)
        update = self.filter(node.update, env2, d)
        bind = self.bind(node.pattern, "v", env2, env)
        return (
            f"function(x, emit) ({init})(x, function(acc) ({src})(x, function(v) {bind}"
            f"local last = J.NULL; ({update})(acc, function(u) last = u end); acc = last end); "
            "emit(acc) end) end"
        )

    def foreach_filter(self, node: A.Foreach, env: Env, d: int) -> str:
        init = self.filter(node.init, env, d)
        src = self.filter(node.source, env, d)
        env2 = self.pattern_names(node.pattern, env)
        update = self.filter(node.update, env2, d)
        bind = self.bind(node.pattern, "v", env2, env)
        out = "emit(acc)" if node.extract is None else f"({self.filter(node.extract, env2, d)})(acc, emit)"
        return (
            f"function(x, emit) ({init})(x, function(acc) ({src})(x, function(v) {bind}"
            f"({update})(acc, function(u) acc = u; {out} end) end) end) end"
        )

    # -- functions
    def def_filter(self, node: A.FuncDef, env: Env, d: int) -> str:
        key = (node.name, len(node.params))
        if _calls(node.body, key):
            raise Untranslatable(
                f"def {node.name}/{len(node.params)}",
                "recursion: a loop whose length the input does not bound "
                "(in Lua it could only end at the step budget)",
            )
        lua = self.fresh("f_" + _safe(node.name))
        params = [self.fresh("p") for _ in node.params]
        body_env = env
        value_params: list[tuple[str, str]] = []
        for pname, pl in zip(node.params, params, strict=True):
            name = pname.lstrip("$")
            body_env = body_env.with_func((name, 0), _Func("param", pl))
            if pname.startswith("$"):
                v = self.fresh("v_" + _safe(name))
                body_env = body_env.with_var(name, v)
                value_params.append((pl, v))
        body = f"({self.filter(node.body, body_env, d)})(x, emit)"
        for pl, v in reversed(value_params):
            body = f"{pl}(x, function({v}) {body} end)"
        rest_env = env.with_func(key, _Func("def", lua, node.params))
        rest = self.filter(node.rest, rest_env, d)
        sig = ", ".join(["x", "emit", *params])
        return f"(function() local {lua} = function({sig}) {body} end; return {rest} end)()"

    def call_filter(self, node: A.Call, env: Env, d: int) -> str:
        key = (node.name, len(node.args))
        fn = env.funcs.get(key)
        if fn is not None:
            if fn.kind == "param":
                return fn.lua
            args = [self.filter(a, env, d) for a in node.args]
            return f"function(x, emit) {fn.lua}(x, emit{''.join(', ' + a for a in args)}) end"
        tr = LUA_BUILTINS.get(key)
        label = f"{node.name}/{len(node.args)}"
        if tr is None:
            raise Untranslatable(label, "no such builtin")
        if tr.kind == "untranslatable":
            raise Untranslatable(label, tr.reason)
        if tr.kind == "value":
            args = [self.filter(a, env, d) for a in node.args]
            names = [self.fresh("a") for _ in args]
            inner = f"emit(J.B.{tr.lua}({', '.join(['x', *names])}))"
            for a, nm in reversed(list(zip(args, names, strict=True))):
                inner = f"({a})(x, function({nm}) {inner} end)"
            return f"function(x, emit) {inner} end"
        method: Callable[[A.Call, Env, int], str] = getattr(self, f"form_{tr.lua}")
        return method(node, env, d)

    # ------------------------------------------------------------------ forms
    def form_test(self, node: A.Call, env: Env, d: int) -> str:
        label = f"test/{len(node.args)}"
        pattern = node.args[0]
        if not (isinstance(pattern, A.Literal) and isinstance(pattern.value, str)):
            raise Untranslatable(label, "the regular expression is not a string literal; " + REGEX)
        if len(node.args) == 2:
            flags = node.args[1]
            if not (isinstance(flags, A.Literal) and flags.value in (None, "")):
                raise Untranslatable(label, "regular expression flags are not translated")
        lua = lua_pattern(pattern.value)
        if lua is None:
            raise Untranslatable(
                label,
                f"the regular expression {pattern.value!r} is beyond the subset Lua patterns express exactly",
            )
        return f"function(x, emit) emit(J.test(x, {lua_string(lua)})) end"

    def form_empty(self, node: A.Call, env: Env, d: int) -> str:
        return "J.none"

    def form_identity(self, node: A.Call, env: Env, d: int) -> str:
        return "J.id"

    def form_error(self, node: A.Call, env: Env, d: int) -> str:
        if not node.args:
            return "function(x) J.fail(x) end"
        a = self.filter(node.args[0], env, d)
        return f"function(x) ({a})(x, function(v) J.fail(v) end) end"

    def form_select(self, node: A.Call, env: Env, d: int) -> str:
        c = self.filter(node.args[0], env, d)
        return f"function(x, emit) ({c})(x, function(c) if J.truthy(c) then emit(x) end end) end"

    def form_type_filter(self, node: A.Call, env: Env, d: int) -> str:
        return f"function(v, emit) if {TYPE_FILTERS[node.name]} then emit(v) end end"

    def form_map(self, node: A.Call, env: Env, d: int) -> str:
        g = self.filter(node.args[0], env, d)
        return (
            "function(x, emit) local out, n = {}, 0; J.each(x, function(v) "
            f"({g})(v, function(w) n = n + 1; out[n] = w end) end); emit(J.mkarr(out, n)) end"
        )

    def form_with_entries(self, node: A.Call, env: Env, d: int) -> str:
        g = self.filter(node.args[0], env, d)
        return (
            "function(x, emit) local out, n = {}, 0; J.each(J.B.to_entries(x), function(v) "
            f"({g})(v, function(w) n = n + 1; out[n] = w end) end); "
            "emit(J.B.from_entries(J.mkarr(out, n))) end"
        )

    def form_map_values(self, node: A.Call, env: Env, d: int) -> str:
        g = self.filter(node.args[0], env, d)
        return f"function(x, emit) emit(J.map_values(x, {g})) end"

    def form_keyed(self, node: A.Call, env: Env, d: int) -> str:
        g = self.filter(node.args[0], env, d)
        return (
            "function(x, emit) if not J.isarr(x) or x == J.NULL then "
            'J.fail(J.describe(x) .. " cannot be sorted, as it is not an array") end; '
            f"local keys = {{}}; for i = 1, J.alen(x) do local ks, kn = J.collect({g}, x[i]); "
            f"keys[i] = J.mkarr(ks, kn) end; emit(J.{node.name}_keys(x, keys)) end"
        )

    def form_any_all(self, node: A.Call, env: Env, d: int) -> str:
        if len(node.args) == 2:
            gen, cond = node.args
        else:
            gen, cond = A.Iterate(node.offset, A.Identity(node.offset)), node.args[0]
        g = self.filter(gen, env, d)
        c = self.filter(cond, env, d)
        return f"J.anyall({'true' if node.name == 'any' else 'false'}, {g}, {c})"

    def form_add_of(self, node: A.Call, env: Env, d: int) -> str:
        g = self.filter(node.args[0], env, d)
        return (
            f"function(x, emit) local acc = J.NULL; ({g})(x, function(v) acc = J.add(acc, v) end); "
            "emit(acc) end"
        )

    def form_isempty(self, node: A.Call, env: Env, d: int) -> str:
        g = self.filter(node.args[0], env, d)
        return f"function(x, emit) emit(J.first_of({g}, x) == nil) end"

    def form_first_value(self, node: A.Call, env: Env, d: int) -> str:
        return "function(x, emit) emit(J.index(x, 0)) end"

    def form_last_value(self, node: A.Call, env: Env, d: int) -> str:
        return "function(x, emit) emit(J.index(x, -1)) end"

    def form_nth_value(self, node: A.Call, env: Env, d: int) -> str:
        n = self.filter(node.args[0], env, d)
        return f"function(x, emit) ({n})(x, function(n) emit(J.index(x, n)) end) end"

    def form_first_of(self, node: A.Call, env: Env, d: int) -> str:
        g = self.filter(node.args[0], env, d)
        return f"function(x, emit) local v = J.first_of({g}, x); if v ~= nil then emit(v) end end"

    def form_last_of(self, node: A.Call, env: Env, d: int) -> str:
        g = self.filter(node.args[0], env, d)
        return (
            f"function(x, emit) local last; ({g})(x, function(v) last = v end); "
            "if last ~= nil then emit(last) end end"
        )

    def form_nth_of(self, node: A.Call, env: Env, d: int) -> str:
        n = self.filter(node.args[0], env, d)
        g = self.filter(node.args[1], env, d)
        return f"function(x, emit) ({n})(x, function(n) J.nth_of(n, {g}, x, emit) end) end"

    def form_limit(self, node: A.Call, env: Env, d: int) -> str:
        n = self.filter(node.args[0], env, d)
        g = self.filter(node.args[1], env, d)
        return f"function(x, emit) ({n})(x, function(n) J.limit(n, {g}, x, emit) end) end"

    def form_in_set(self, node: A.Call, env: Env, d: int) -> str:
        if len(node.args) == 1:
            src, s = "J.id", self.filter(node.args[0], env, d)
        else:
            src, s = self.filter(node.args[0], env, d), self.filter(node.args[1], env, d)
        return f"function(x, emit) emit(J.in_set(x, {src}, {s})) end"

    def form_index_by(self, node: A.Call, env: Env, d: int) -> str:
        if len(node.args) == 1:
            src, keyf = "function(x, emit) J.each(x, emit) end", self.filter(node.args[0], env, d)
        else:
            src, keyf = self.filter(node.args[0], env, d), self.filter(node.args[1], env, d)
        return f"function(x, emit) emit(J.index_by(x, {src}, {keyf})) end"

    def form_in_inside(self, node: A.Call, env: Env, d: int) -> str:
        a = self.filter(node.args[0], env, d)
        test = "J.B.has(a, x)" if node.name == "in" else "J.B.contains(a, x)"
        return f"function(x, emit) ({a})(x, function(a) emit({test}) end) end"

    def form_debug_msg(self, node: A.Call, env: Env, d: int) -> str:
        m = self.filter(node.args[0], env, d)
        return f"function(x, emit) ({m})(x, function() end); emit(x) end"

    def form_env(self, node: A.Call, env: Env, d: int) -> str:
        return "J.const(J.EO)"

    def form_input_filename(self, node: A.Call, env: Env, d: int) -> str:
        return "J.const(J.NULL)"

    def form_have_literal_numbers(self, node: A.Call, env: Env, d: int) -> str:
        return "J.const(true)"

    def form_path(self, node: A.Call, env: Env, d: int) -> str:
        p = self.paths(node.args[0], env, d)
        return f"function(x, emit) ({p})(x, J.EA, function(_, p) emit(p) end) end"

    def form_pick(self, node: A.Call, env: Env, d: int) -> str:
        p = self.paths(node.args[0], env, d)
        return (
            f"function(x, emit) local r = J.NULL; ({p})(x, J.EA, function(_, p) "
            "r = J.setpath(r, p, J.getpath(x, p)) end); emit(r) end"
        )

    # ------------------------------------------------------------------ path mode
    def paths(self, node: A.Node, env: Env, d: int) -> str:
        """A Lua ``function(x, path, emit)`` calling ``emit(value, path)`` for each path the node
        denotes (a subset of jq's path expressions: ., .k, .[k], .[], |, ",", ?, if, //, select,
        empty, getpath, first/last/nth of these, $x binding)."""
        if d > MAX_DEPTH:
            raise Untranslatable("nesting", f"more than {MAX_DEPTH} levels deep for Lua")
        p = self.paths
        d1 = d + 1
        if isinstance(node, A.Identity):
            return "function(x, pth, emit) emit(x, pth) end"
        if isinstance(node, A.Index):
            t = p(node.target, env, d1)
            key = node.key
            if isinstance(key, A.Literal) and isinstance(key.value, str):
                k = lua_string(key.value)
                return (
                    f"function(x, pth, emit) ({t})(x, pth, function(v, q) "
                    f"emit(v == J.NULL and J.NULL or J.field(v, {k}), J.pextend(q, {k})) end) end"
                )
            kf = self.filter(key, env, d1)
            return (
                f"function(x, pth, emit) ({t})(x, pth, function(v, q) ({kf})(x, function(k) "
                "emit(v == J.NULL and J.NULL or J.index(v, k), J.pextend(q, k)) end) end) end"
            )
        if isinstance(node, A.Iterate):
            t = p(node.target, env, d1)
            return f"function(x, pth, emit) ({t})(x, pth, function(v, q) J.each_path(v, q, emit) end) end"
        if isinstance(node, A.Pipe):
            left = p(node.left, env, d1)
            right = p(node.right, env, d1)
            return f"function(x, pth, emit) ({left})(x, pth, function(v, q) ({right})(v, q, emit) end) end"
        if isinstance(node, A.Comma):
            left = p(node.left, env, d1)
            right = p(node.right, env, d1)
            return f"function(x, pth, emit) ({left})(x, pth, emit); ({right})(x, pth, emit) end"
        if isinstance(node, A.Try) and node.handler is None:
            body = p(node.body, env, d1)
            return f"J.try_paths({body})"
        if isinstance(node, A.If):
            c = self.filter(node.cond, env, d1)
            t = p(node.then, env, d1)
            e = (
                "function(x, pth, emit) emit(x, pth) end"
                if node.otherwise is None
                else p(node.otherwise, env, d1)
            )
            return (
                f"function(x, pth, emit) ({c})(x, function(c) if J.truthy(c) then ({t})(x, pth, emit) "
                f"else ({e})(x, pth, emit) end end) end"
            )
        if isinstance(node, A.Alt):
            left = p(node.left, env, d1)
            right = p(node.right, env, d1)
            return (
                f"function(x, pth, emit) local got, n = {{}}, 0; ({left})(x, pth, function(v, q) "
                "if J.truthy(v) then n = n + 1; got[n] = {v, q} end end); "
                f"if n == 0 then ({right})(x, pth, emit) else "
                "for i = 1, n do emit(got[i][1], got[i][2]) end end end"
            )
        if isinstance(node, A.As) and isinstance(node.pattern, A.VarPattern) and not node.alternatives:
            src = self.filter(node.source, env, d1)
            env2 = self.pattern_names(node.pattern, env)
            body = p(node.body, env2, d1)
            v = env2.vars[node.pattern.name]
            return (
                f"function(x, pth, emit) ({src})(x, function(s) local {v} = s; "
                f"({body})(x, pth, emit) end) end"
            )
        if isinstance(node, A.Call) and (node.name, len(node.args)) not in env.funcs:
            call = (node.name, len(node.args))
            if call == ("empty", 0):
                return "function() end"
            if call == ("select", 1):
                c = self.filter(node.args[0], env, d1)
                return (
                    f"function(x, pth, emit) ({c})(x, function(c) if J.truthy(c) then "
                    "emit(x, pth) end end) end"
                )
            if call == ("getpath", 1):
                a = self.filter(node.args[0], env, d1)
                return (
                    f"function(x, pth, emit) ({a})(x, function(a) "
                    "emit(J.getpath(x, a), J.pconcat(pth, a)) end) end"
                )
            if call in (("first", 0), ("last", 0)):
                i = "0" if node.name == "first" else "-1"
                return f"function(x, pth, emit) emit(J.index(x, {i}), J.pextend(pth, {i})) end"
        raise Untranslatable("path expression", f"{_describe(node)} is not translated in path mode")


def _describe(node: A.Node) -> str:
    if isinstance(node, A.Call):
        return f"{node.name}/{len(node.args)}"
    return type(node).__name__


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)
