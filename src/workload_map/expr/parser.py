"""Recursive-descent parser producing the frozen AST in ``ast.py``.

Precedence, lowest first (as in jq): ``|`` (right), ``,`` (left), ``//`` (right), assignment
operators (non-associative), ``or``, ``and``, comparisons (non-associative), ``+ -``, ``* / %``,
unary minus, postfix terms.
"""

from __future__ import annotations

from workload_map.errors import ExpressionSyntaxError

from . import ast as A
from .lexer import Token, tokenize

ASSIGN_OPS = frozenset({"=", "|=", "+=", "-=", "*=", "/=", "%=", "//="})
COMPARE_OPS = frozenset({"==", "!=", "<", "<=", ">", ">="})
MAX_NESTING = 200
# Binary operators and commas are parsed by loops, not recursion, so the tree can be deeper
# than the nesting the parser counts: the finished tree is checked too, before any recursive
# pass (checks, compiler) walks it. And the text itself is bounded.
MAX_TREE_DEPTH = 200
MAX_SOURCE = 100_000  # characters


class Parser:
    def __init__(self, source: str, tokens: list[Token]) -> None:
        self.src = source
        self.toks = tokens
        self.i = 0
        self.depth = 0

    # -- token helpers ----------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def error(self, message: str, tok: Token | None = None) -> ExpressionSyntaxError:
        t = tok or self.tok
        return ExpressionSyntaxError(self.src, message, t.offset)

    def unexpected(self) -> ExpressionSyntaxError:
        t = self.tok
        if t.kind == "eof":
            return self.error("syntax error: unexpected end of expression")
        return self.error(f"syntax error: unexpected {t.value!r}")

    def is_op(self, value: str) -> bool:
        t = self.tok
        return t.kind == "op" and t.value == value

    def is_kw(self, value: str) -> bool:
        t = self.tok
        return t.kind == "keyword" and t.value == value

    def expect_op(self, value: str) -> Token:
        if not self.is_op(value):
            t = self.tok
            got = "end of expression" if t.kind == "eof" else repr(t.value)
            raise self.error(f"syntax error: expected '{value}' but found {got}")
        t = self.tok
        self.i += 1
        return t

    def expect_kw(self, value: str) -> Token:
        if not self.is_kw(value):
            t = self.tok
            got = "end of expression" if t.kind == "eof" else repr(t.value)
            raise self.error(f"syntax error: expected '{value}' but found {got}")
        t = self.tok
        self.i += 1
        return t

    # -- grammar ----------------------------------------------------------
    def parse_program(self) -> A.Node:
        if self.tok.kind == "eof":
            raise self.error("syntax error: empty expression")
        node = self.parse_pipe()
        if self.tok.kind != "eof":
            raise self.unexpected()
        return node

    def parse_pipe(self) -> A.Node:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error("expression is nested too deeply")
        try:
            if self.is_kw("def"):
                start = self.tok.offset
                name, params, body = self.parse_def()
                rest = self.parse_pipe()
                return A.FuncDef(start, name, params, body, rest)
            if self.is_kw("label"):
                start = self.tok.offset
                self.i += 1
                if self.tok.kind != "var":
                    raise self.error("syntax error: expected '$name' after 'label'")
                name = self.tok.value
                self.i += 1
                self.expect_op("|")
                return A.Label(start, name, self.parse_pipe())
            left = self.parse_comma()
            if self.is_op("|"):
                t = self.tok
                self.i += 1
                return A.Pipe(t.offset, left, self.parse_pipe())
            return left
        finally:
            self.depth -= 1

    def parse_def(self) -> tuple[str, tuple[str, ...], A.Node]:
        self.expect_kw("def")
        t = self.tok
        if t.kind not in ("ident", "keyword") or t.value in ("if", "then", "else", "end", "def"):
            raise self.error("syntax error: expected a function name after 'def'")
        name = t.value
        self.i += 1
        params: list[str] = []
        if self.is_op("("):
            self.i += 1
            while True:
                p = self.tok
                if p.kind == "var":
                    params.append("$" + p.value)
                elif p.kind in ("ident", "keyword"):
                    params.append(p.value)
                else:
                    raise self.error("syntax error: expected a parameter name")
                self.i += 1
                if self.is_op(";"):
                    self.i += 1
                    continue
                self.expect_op(")")
                break
        self.expect_op(":")
        body = self.parse_pipe()
        self.expect_op(";")
        return name, tuple(params), body

    def parse_comma(self) -> A.Node:
        left = self.parse_alt()
        while self.is_op(","):
            t = self.tok
            self.i += 1
            left = A.Comma(t.offset, left, self.parse_alt())
        return left

    def parse_alt(self) -> A.Node:
        left = self.parse_assign()
        if self.is_op("//"):
            t = self.tok
            self.i += 1
            return A.Alt(t.offset, left, self.parse_alt())
        if self.is_op("?//"):
            raise self.error("syntax error: the destructuring alternative operator '?//' is not supported")
        return left

    def parse_assign(self) -> A.Node:
        left = self.parse_or()
        t = self.tok
        if t.kind == "op" and t.value in ASSIGN_OPS:
            self.i += 1
            right = self.parse_alt() if t.value == "//=" else self.parse_or()
            return A.Assign(t.offset, t.value, left, right)
        return left

    def parse_or(self) -> A.Node:
        left = self.parse_and()
        while self.is_kw("or"):
            t = self.tok
            self.i += 1
            left = A.Or(t.offset, left, self.parse_and())
        return left

    def parse_and(self) -> A.Node:
        left = self.parse_compare()
        while self.is_kw("and"):
            t = self.tok
            self.i += 1
            left = A.And(t.offset, left, self.parse_compare())
        return left

    def parse_compare(self) -> A.Node:
        left = self.parse_additive()
        t = self.tok
        if t.kind == "op" and t.value in COMPARE_OPS:
            self.i += 1
            right = self.parse_additive()
            node: A.Node = A.Binary(t.offset, t.value, left, right)
            t2 = self.tok
            if t2.kind == "op" and t2.value in COMPARE_OPS:
                raise self.error(f"syntax error: unexpected {t2.value!r} (comparisons do not chain)")
            return node
        return left

    def parse_additive(self) -> A.Node:
        left = self.parse_multiplicative()
        while self.tok.kind == "op" and self.tok.value in ("+", "-"):
            t = self.tok
            self.i += 1
            left = A.Binary(t.offset, t.value, left, self.parse_multiplicative())
        return left

    def parse_multiplicative(self) -> A.Node:
        left = self.parse_unary()
        while self.tok.kind == "op" and self.tok.value in ("*", "/", "%"):
            t = self.tok
            self.i += 1
            left = A.Binary(t.offset, t.value, left, self.parse_unary())
        return left

    def parse_unary(self) -> A.Node:
        if self.is_op("-"):
            t = self.tok
            self.i += 1
            return A.Neg(t.offset, self.parse_unary())
        return self.parse_postfix(allow_as=True)

    def parse_postfix(self, allow_as: bool) -> A.Node:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error("expression is nested too deeply")
        try:
            term = self.parse_term()
            term = self.parse_suffixes(term)
            if allow_as and self.is_kw("as"):
                t = self.tok
                self.i += 1
                pattern = self.parse_pattern()
                alternatives: list[A.Pattern] = []
                while self.is_op("?//"):
                    self.i += 1
                    alternatives.append(self.parse_pattern())
                self.expect_op("|")
                body = self.parse_pipe()
                return A.As(t.offset, term, pattern, body, tuple(alternatives))
            return term
        finally:
            self.depth -= 1

    def parse_suffixes(self, term: A.Node) -> A.Node:
        while True:
            t = self.tok
            if t.kind == "field":
                self.i += 1
                term = A.Index(t.offset, term, A.Literal(t.offset, t.value))
            elif t.kind == "op" and t.value == "." and self.toks[self.i + 1].kind == "string":
                self.i += 1
                term = A.Index(t.offset, term, self.parse_string_token(None))
            elif (
                t.kind == "op"
                and t.value == "."
                and self.toks[self.i + 1].kind == "op"
                and (self.toks[self.i + 1].value == "[")
            ):
                self.i += 1  # jq 1.7 allows `.a.[0]`
            elif t.kind == "op" and t.value == "[":
                term = self.parse_bracket(term)
            elif t.kind == "op" and t.value == "?":
                self.i += 1
                term = self.optional(t.offset, term)
            else:
                return term

    @staticmethod
    def optional(offset: int, term: A.Node) -> A.Node:
        """``?`` after ``.foo``, ``[k]`` or ``[]`` makes only that last step optional (as jq does):
        errors from the term before it still propagate."""
        if isinstance(term, A.Iterate) and not isinstance(term.target, A.Identity):
            return A.Pipe(
                offset, term.target, A.Try(offset, A.Iterate(term.offset, A.Identity(offset)), None)
            )
        if (
            isinstance(term, A.Index)
            and isinstance(term.key, A.Literal)
            and not isinstance(term.target, A.Identity)
        ):
            step = A.Index(term.offset, A.Identity(offset), term.key)
            return A.Pipe(offset, term.target, A.Try(offset, step, None))
        if isinstance(term, A.Index) and not isinstance(term.target, A.Identity):
            # The key sees the term's input, so bind that input to a hidden variable first.
            hidden = f"__opt{offset}"
            key = A.Pipe(offset, A.Var(offset, hidden), term.key)
            step = A.Index(term.offset, A.Identity(offset), key)
            body = A.Pipe(offset, term.target, A.Try(offset, step, None))
            return A.As(offset, A.Identity(offset), A.VarPattern(offset, hidden), body)
        return A.Try(offset, term, None)

    def parse_bracket(self, target: A.Node) -> A.Node:
        t = self.expect_op("[")
        if self.is_op("]"):
            self.i += 1
            return A.Iterate(t.offset, target)
        if self.is_op(":"):
            self.i += 1
            end = self.parse_pipe()
            self.expect_op("]")
            return A.Slice(t.offset, target, None, end)
        first = self.parse_pipe()
        if self.is_op(":"):
            self.i += 1
            if self.is_op("]"):
                self.i += 1
                return A.Slice(t.offset, target, first, None)
            end = self.parse_pipe()
            self.expect_op("]")
            return A.Slice(t.offset, target, first, end)
        self.expect_op("]")
        return A.Index(t.offset, target, first)

    def parse_string_token(self, fmt: str | None) -> A.Node:
        t = self.tok
        if t.kind != "string":
            raise self.error("syntax error: expected a string")
        self.i += 1
        parts: list[str | A.Node] = []
        for part in t.parts:
            if isinstance(part, str):
                parts.append(part)
            else:
                sub = Parser(self.src, part)
                sub.depth = self.depth
                node = sub.parse_pipe()
                if sub.tok.kind != "eof":
                    raise sub.unexpected()
                parts.append(node)
        if all(isinstance(p, str) for p in parts):
            return A.Literal(t.offset, "".join(p for p in parts if isinstance(p, str)))
        return A.StringInterp(t.offset, tuple(parts), fmt)

    def parse_term(self) -> A.Node:
        t = self.tok
        kind, value = t.kind, t.value
        if kind == "number":
            self.i += 1
            return A.Literal(t.offset, t.number)
        if kind == "string":
            return self.parse_string_token(None)
        if kind == "format":
            self.i += 1
            if self.tok.kind == "string":
                node = self.parse_string_token(value)
                if isinstance(node, A.Literal):
                    return node
                return node
            return A.Format(t.offset, value)
        if kind == "field":
            self.i += 1
            return A.Index(t.offset, A.Identity(t.offset), A.Literal(t.offset, value))
        if kind == "var":
            self.i += 1
            if value == "__loc__":
                line = self.src.count("\n", 0, t.offset) + 1
                return A.Literal(t.offset, {"file": "<top-level>", "line": line})
            return A.Var(t.offset, value)
        if kind == "op":
            if value == ".":
                self.i += 1
                nxt = self.tok
                if nxt.kind == "string":
                    return A.Index(t.offset, A.Identity(t.offset), self.parse_string_token(None))
                return A.Identity(t.offset)
            if value == "..":
                self.i += 1
                return A.RecurseAll(t.offset)
            if value == "(":
                self.i += 1
                inner = self.parse_pipe()
                self.expect_op(")")
                return inner
            if value == "[":
                self.i += 1
                if self.is_op("]"):
                    self.i += 1
                    return A.ArrayCons(t.offset, None)
                body = self.parse_pipe()
                self.expect_op("]")
                return A.ArrayCons(t.offset, body)
            if value == "{":
                return self.parse_object()
            raise self.unexpected()
        if kind == "keyword":
            if value == "if":
                return self.parse_if()
            if value == "try":
                self.i += 1
                body = self.parse_postfix(allow_as=False)
                handler: A.Node | None = None
                if self.is_kw("catch"):
                    self.i += 1
                    handler = self.parse_postfix(allow_as=False)
                return A.Try(t.offset, body, handler)
            if value in ("reduce", "foreach"):
                return self.parse_reduce(value == "reduce")
            if value == "def":
                name, params, body = self.parse_def()
                rest = self.parse_pipe()
                return A.FuncDef(t.offset, name, params, body, rest)
            if value == "label":
                return self.parse_pipe()
            if value in ("import", "include"):
                raise self.error(f"syntax error: '{value}' (modules) is not supported")
            raise self.unexpected()
        if kind == "ident" and value in ("true", "false", "null"):
            self.i += 1
            return A.Literal(t.offset, {"true": True, "false": False, "null": None}[value])
        if kind == "ident":
            self.i += 1
            args: list[A.Node] = []
            if self.is_op("("):
                self.i += 1
                while True:
                    args.append(self.parse_pipe())
                    if self.is_op(";"):
                        self.i += 1
                        continue
                    self.expect_op(")")
                    break
            if value == "break" and not args:
                if self.tok.kind != "var":
                    raise self.error("syntax error: expected '$name' after 'break'")
                name = self.tok.value
                self.i += 1
                return A.Break(t.offset, name)
            return A.Call(t.offset, value, tuple(args))
        raise self.unexpected()

    def parse_if(self, keyword: str = "if") -> A.Node:
        # `elif` is an `if` nested in the else branch, sharing the outer `end`.
        t = self.expect_kw(keyword)
        cond = self.parse_pipe()
        self.expect_kw("then")
        then = self.parse_pipe()
        otherwise: A.Node | None = None
        if self.is_kw("elif"):
            otherwise = self.parse_if("elif")
        elif self.is_kw("else"):
            self.i += 1
            otherwise = self.parse_pipe()
            self.expect_kw("end")
        else:
            self.expect_kw("end")
        return A.If(t.offset, cond, then, otherwise)

    def parse_reduce(self, is_reduce: bool) -> A.Node:
        t = self.tok
        self.i += 1
        source = self.parse_postfix(allow_as=False)
        self.expect_kw("as")
        pattern = self.parse_pattern()
        self.expect_op("(")
        init = self.parse_pipe()
        self.expect_op(";")
        update = self.parse_pipe()
        if is_reduce:
            self.expect_op(")")
            return A.Reduce(t.offset, source, pattern, init, update)
        extract: A.Node | None = None
        if self.is_op(";"):
            self.i += 1
            extract = self.parse_pipe()
        self.expect_op(")")
        return A.Foreach(t.offset, source, pattern, init, update, extract)

    def parse_pattern(self) -> A.Pattern:
        t = self.tok
        if t.kind == "var":
            self.i += 1
            return A.VarPattern(t.offset, t.value)
        if self.is_op("["):
            self.i += 1
            elems: list[A.Pattern] = []
            while True:
                elems.append(self.parse_pattern())
                if self.is_op(","):
                    self.i += 1
                    continue
                self.expect_op("]")
                break
            return A.ArrayPattern(t.offset, tuple(elems))
        if self.is_op("{"):
            self.i += 1
            entries: list[tuple[A.Node, A.Pattern | None, str | None]] = []
            while True:
                k = self.tok
                key: A.Node
                bind: str | None = None
                if k.kind == "var":
                    self.i += 1
                    key = A.Literal(k.offset, k.value)
                    bind = k.value
                elif k.kind in ("ident", "keyword"):
                    self.i += 1
                    key = A.Literal(k.offset, k.value)
                elif k.kind == "string":
                    key = self.parse_string_token(None)
                elif self.is_op("("):
                    self.i += 1
                    key = self.parse_pipe()
                    self.expect_op(")")
                else:
                    raise self.error("syntax error: invalid object pattern key")
                sub: A.Pattern | None = None
                if self.is_op(":"):
                    self.i += 1
                    sub = self.parse_pattern()
                elif bind is None:
                    raise self.error("syntax error: object pattern key needs ': $pattern'")
                entries.append((key, sub, bind))
                if self.is_op(","):
                    self.i += 1
                    continue
                self.expect_op("}")
                break
            return A.ObjectPattern(t.offset, tuple(entries))
        raise self.error("syntax error: expected a '$name', array or object pattern after 'as'")

    def parse_object(self) -> A.Node:
        t = self.expect_op("{")
        entries: list[tuple[A.Node, A.Node]] = []
        if self.is_op("}"):
            self.i += 1
            return A.ObjectCons(t.offset, ())
        while True:
            k = self.tok
            key: A.Node
            value: A.Node | None = None
            if k.kind == "var":
                self.i += 1
                if k.value == "__loc__":
                    line = self.src.count("\n", 0, k.offset) + 1
                    key = A.Literal(k.offset, "__loc__")
                    value = A.Literal(k.offset, {"file": "<top-level>", "line": line})
                else:
                    key = A.Literal(k.offset, k.value)
                    value = A.Var(k.offset, k.value)
            elif k.kind in ("ident", "keyword"):
                self.i += 1
                key = A.Literal(k.offset, k.value)
            elif k.kind == "number":
                self.i += 1
                key = A.Literal(k.offset, k.number)  # rejected at run time like jq
            elif k.kind == "string":
                key = self.parse_string_token(None)
            elif k.kind == "format":
                self.i += 1
                if self.tok.kind == "string":
                    key = self.parse_string_token(k.value)
                else:
                    key = A.Format(k.offset, k.value)
            elif self.is_op("("):
                self.i += 1
                key = self.parse_pipe()
                self.expect_op(")")
            else:
                raise self.error("syntax error: invalid object key")
            if self.is_op(":"):
                if value is not None and isinstance(value, A.Var):
                    raise self.error("syntax error: unexpected ':' after '$name' object key")
                self.i += 1
                value = self.parse_object_value()
            elif value is None:
                # `{a}` / `{"a"}` / `{"\(x)"}` mean `{a: .a}`.
                value = A.Index(k.offset, A.Identity(k.offset), key)
            entries.append((key, value))
            if self.is_op(","):
                self.i += 1
                if self.is_op("}"):
                    raise self.unexpected()
                continue
            self.expect_op("}")
            break
        return A.ObjectCons(t.offset, tuple(entries))

    def parse_object_value(self) -> A.Node:
        """Object values are `ExpD`: pipes of terms without a top-level comma."""
        left = self.parse_alt()
        if self.is_op("|"):
            t = self.tok
            self.i += 1
            return A.Pipe(t.offset, left, self.parse_object_value())
        return left


def _children(node: object) -> list[object]:
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is None:
        return list(node) if isinstance(node, (list, tuple)) else []
    return [getattr(node, f) for f in fields]


def tree_depth(root: A.Node, limit: int = MAX_TREE_DEPTH) -> tuple[int, int | None]:
    """(depth of the tree, offset of the first node deeper than ``limit`` or None). Iterative."""
    deepest = 0
    stack: list[tuple[object, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if hasattr(node, "__dataclass_fields__"):
            if depth > limit:
                offset = getattr(node, "offset", None)
                return depth, offset if isinstance(offset, int) else 0
            depth += 1
            deepest = max(deepest, depth)
        for child in _children(node):
            if isinstance(child, (list, tuple)) or hasattr(child, "__dataclass_fields__"):
                stack.append((child, depth))
    return deepest, None


def parse(source: str) -> A.Node:
    """Parse jq text into an AST; raises ExpressionSyntaxError with a 0-based offset."""
    if len(source) > MAX_SOURCE:
        raise ExpressionSyntaxError(
            source, f"expression is {len(source)} characters long, more than the allowed {MAX_SOURCE}", None
        )
    try:
        root = Parser(source, tokenize(source)).parse_program()
    except RecursionError:
        raise ExpressionSyntaxError(source, "expression is nested too deeply", None) from None
    _, offset = tree_depth(root)
    if offset is not None:
        raise ExpressionSyntaxError(
            source,
            f"expression is nested too deeply (more than {MAX_TREE_DEPTH} operators, terms or "
            "brackets inside one another)",
            offset,
        )
    return root
