"""jq text for a syntax tree: :func:`to_source` is the inverse of the parser, up to parentheses.

Every compound child is parenthesised, so the text parses back into the same tree (offsets
aside) without reasoning about precedence. Used by callers that take an expression apart
(``parse_tree``) and need to evaluate or name one of its parts: the text of a part compiles on
its own (given the variables and ``def``s in scope) and reads well in an error message.

Two constructs do not come back node for node, only with the same meaning: a ``$__loc__``
literal object becomes an object constructor, and a negative or non-finite number literal
becomes ``-x``, ``infinite`` or ``nan``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from workload_map.errors import ExpressionSyntaxError

from . import ast as A
from .lexer import KEYWORDS

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Nodes printed as a self-contained term (postfix suffixes can follow them directly).
_TERMS: tuple[type, ...] = (A.Identity, A.RecurseAll, A.Literal, A.Var, A.Index, A.Slice, A.Iterate)
_TERMS += (A.Format, A.ArrayCons, A.ObjectCons, A.Call, A.StringInterp)


def to_source(node: A.Node) -> str:
    """jq text that parses back into ``node`` (with the same meaning; see the module notes)."""
    return _Printer().node(node)


class _Printer:
    def node(self, n: A.Node) -> str:
        method = getattr(self, "_" + type(n).__name__, None)
        if method is None:  # a node type this printer does not know (never for parsed trees)
            raise ExpressionSyntaxError("", f"cannot print a {type(n).__name__} node", None)
        text: str = method(n)
        return text

    def term(self, n: A.Node) -> str:
        """``n`` as a term: printed as is when it already is one, else in parentheses."""
        text = self.node(n)
        if isinstance(n, _TERMS) and not (isinstance(n, A.Literal) and _negative(n.value)):
            return text
        return f"({text})"

    def base(self, n: A.Node) -> str:
        """The target of a postfix step (``.x``, ``[k]``, ``[]``): a term, numbers parenthesised
        (``1.x`` would lex as the number ``1.``)."""
        if isinstance(n, A.Literal) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
            return f"({self.node(n)})"
        return self.term(n)

    def _Identity(self, _n: A.Identity) -> str:
        return "."

    def _RecurseAll(self, _n: A.RecurseAll) -> str:
        return ".."

    def _Literal(self, n: A.Literal) -> str:
        return _literal(n.value)

    def _Var(self, n: A.Var) -> str:
        return "$" + n.name

    def _Index(self, n: A.Index) -> str:
        key = n.key
        base = "" if isinstance(n.target, A.Identity) else self.base(n.target)
        if isinstance(key, A.Literal) and isinstance(key.value, str):
            if _IDENT.match(key.value) and key.value not in KEYWORDS:
                return f"{base}.{key.value}"
            return f"{base or '.'}[{_literal(key.value)}]"
        return f"{base or '.'}[{self.node(key)}]"

    def _Slice(self, n: A.Slice) -> str:
        base = "." if isinstance(n.target, A.Identity) else self.base(n.target)
        start = "" if n.start is None else self.node(n.start)
        end = "" if n.end is None else self.node(n.end)
        return f"{base}[{start}:{end}]"

    def _Iterate(self, n: A.Iterate) -> str:
        base = "." if isinstance(n.target, A.Identity) else self.base(n.target)
        return f"{base}[]"

    def _Try(self, n: A.Try) -> str:
        body = f"try ({self.node(n.body)})"
        return body if n.handler is None else f"{body} catch ({self.node(n.handler)})"

    def _StringInterp(self, n: A.StringInterp) -> str:
        out = []
        for part in n.parts:
            out.append(
                json.dumps(part, ensure_ascii=False)[1:-1]
                if isinstance(part, str)
                else f"\\({self.node(part)})"
            )
        text = '"' + "".join(out) + '"'
        return f"@{n.fmt} {text}" if n.fmt else text

    def _Format(self, n: A.Format) -> str:
        return "@" + n.name

    def _ArrayCons(self, n: A.ArrayCons) -> str:
        return "[]" if n.body is None else f"[{self.node(n.body)}]"

    def _ObjectCons(self, n: A.ObjectCons) -> str:
        entries = []
        for key, value in n.entries:
            k = (
                _literal(key.value)
                if isinstance(key, A.Literal) and isinstance(key.value, str)
                else f"({self.node(key)})"
            )
            entries.append(f"{k}: ({self.node(value)})")
        return "{" + ", ".join(entries) + "}"

    def _Neg(self, n: A.Neg) -> str:
        return f"-{self.term(n.operand)}"

    def _Binary(self, n: A.Binary) -> str:
        return f"{self.term(n.left)} {n.op} {self.term(n.right)}"

    def _And(self, n: A.And) -> str:
        return f"{self.term(n.left)} and {self.term(n.right)}"

    def _Or(self, n: A.Or) -> str:
        return f"{self.term(n.left)} or {self.term(n.right)}"

    def _Alt(self, n: A.Alt) -> str:
        return f"{self.term(n.left)} // {self.term(n.right)}"

    def _Assign(self, n: A.Assign) -> str:
        return f"{self.term(n.left)} {n.op} {self.term(n.right)}"

    def _Pipe(self, n: A.Pipe) -> str:
        return f"{self.term(n.left)} | {self.term(n.right)}"

    def _Comma(self, n: A.Comma) -> str:
        return f"{self.term(n.left)}, {self.term(n.right)}"

    def _If(self, n: A.If) -> str:
        text = f"if {self.node(n.cond)} then {self.node(n.then)}"
        if n.otherwise is not None:
            text += f" else {self.node(n.otherwise)}"
        return text + " end"

    def pattern(self, p: A.Pattern) -> str:
        if isinstance(p, A.VarPattern):
            return "$" + p.name
        if isinstance(p, A.ArrayPattern):
            return "[" + ", ".join(self.pattern(e) for e in p.elements) + "]"
        entries = []
        for key, sub, bind in p.entries:
            if bind is not None:
                head = "$" + bind
            elif isinstance(key, A.Literal) and isinstance(key.value, str):
                head = _literal(key.value)
            else:
                head = f"({self.node(key)})"
            entries.append(head if sub is None else f"{head}: {self.pattern(sub)}")
        return "{" + ", ".join(entries) + "}"

    def _As(self, n: A.As) -> str:
        patterns = " ?// ".join(self.pattern(p) for p in (n.pattern, *n.alternatives))
        return f"{self.term(n.source)} as {patterns} | {self.node(n.body)}"

    def _Reduce(self, n: A.Reduce) -> str:
        head = f"reduce {self.term(n.source)} as {self.pattern(n.pattern)}"
        return f"{head} ({self.node(n.init)}; {self.node(n.update)})"

    def _Foreach(self, n: A.Foreach) -> str:
        head = f"foreach {self.term(n.source)} as {self.pattern(n.pattern)}"
        extract = "" if n.extract is None else f"; {self.node(n.extract)}"
        return f"{head} ({self.node(n.init)}; {self.node(n.update)}{extract})"

    def _Label(self, n: A.Label) -> str:
        return f"label ${n.name} | {self.node(n.body)}"

    def _Break(self, n: A.Break) -> str:
        return f"break ${n.name}"

    def _FuncDef(self, n: A.FuncDef) -> str:
        return f"{self.definition(n)} {self.node(n.rest)}"

    def definition(self, n: A.FuncDef) -> str:
        """``def name(params): body;`` alone (without what follows it)."""
        params = f"({'; '.join(n.params)})" if n.params else ""
        return f"def {n.name}{params}: {self.node(n.body)};"

    def _Call(self, n: A.Call) -> str:
        if not n.args:
            return n.name
        return f"{n.name}({'; '.join(self.node(a) for a in n.args)})"


def definition_source(node: A.FuncDef) -> str:
    """The text of one ``def`` without what follows it: ``def f($x): $x + 1;``."""
    return _Printer().definition(node)


def _negative(value: Any) -> bool:
    return (
        isinstance(value, (int, float)) and not isinstance(value, bool) and (value < 0 or math.isnan(value))
    )


def _literal(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "infinite" if value > 0 else "(-infinite)"
        return f"({value!r})" if value < 0 else repr(value)
    if isinstance(value, int):
        return f"({value})" if value < 0 else str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: {_literal(v)}" for k, v in value.items())
            + "}"
        )
    raise ExpressionSyntaxError("", f"cannot print a literal of type {type(value).__name__}", None)
