"""Tokenizer for jq source text.

String literals are lexed eagerly, including ``\\(...)`` interpolations, whose tokens are kept
nested inside the string token so the parser can parse them as sub-expressions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workload_map.errors import ExpressionSyntaxError

KEYWORDS = frozenset(
    {
        "def",
        "if",
        "then",
        "elif",
        "else",
        "end",
        "as",
        "reduce",
        "foreach",
        "try",
        "catch",
        "label",
        "import",
        "include",
        "and",
        "or",
        "__loc__",
    }
)

# Longest first so that e.g. "//=" wins over "//" and "?//" over "?".
OPERATORS = (
    "?//",
    "//=",
    "|=",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "==",
    "!=",
    "<=",
    ">=",
    "//",
    "..",
    "|",
    ",",
    ".",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    ":",
    ";",
    "=",
    "<",
    ">",
    "+",
    "-",
    "*",
    "/",
    "%",
    "?",
)

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


@dataclass
class Token:
    kind: str  # "op", "ident", "keyword", "field", "var", "number", "string", "format", "eof"
    value: str
    offset: int
    number: int | float = 0
    # For strings: literal text pieces and nested token lists (interpolations), in order.
    parts: list[str | list[Token]] = field(default_factory=list)


def _is_ident_start(ch: str) -> bool:
    return ch.isascii() and (ch.isalpha() or ch == "_")


def _is_ident_char(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


class Lexer:
    def __init__(self, source: str) -> None:
        self.src = source
        self.pos = 0

    def error(self, message: str, offset: int) -> ExpressionSyntaxError:
        return ExpressionSyntaxError(self.src, message, offset)

    def tokenize(self) -> list[Token]:
        tokens = self._tokens(stop_at_close=False)
        tokens.append(Token("eof", "", len(self.src)))
        return tokens

    def _tokens(self, stop_at_close: bool) -> list[Token]:
        """Lex until end of input or, inside an interpolation, the ``)`` that closes it."""
        out: list[Token] = []
        depth = 0
        src = self.src
        n = len(src)
        while True:
            self._skip_space()
            if self.pos >= n:
                if stop_at_close:
                    raise self.error("unterminated string interpolation", self.pos)
                return out
            start = self.pos
            ch = src[start]
            if ch == '"':
                out.append(self._string())
                continue
            if ch == "$":
                self.pos += 1
                name = self._ident_text()
                if not name:
                    raise self.error("expected a variable name after '$'", start)
                out.append(Token("var", name, start))
                continue
            if ch == "@":
                self.pos += 1
                name = self._ident_text()
                if not name:
                    raise self.error("expected a format name after '@'", start)
                out.append(Token("format", name, start))
                continue
            if ch.isdigit() or (ch == "." and start + 1 < n and src[start + 1].isdigit()):
                out.append(self._number())
                continue
            if ch == "." and start + 1 < n and _is_ident_start(src[start + 1]):
                self.pos += 1
                out.append(Token("field", self._ident_text(), start))
                continue
            if _is_ident_start(ch):
                name = self._ident_text()
                # Module-qualified names (a::b) are lexed as one identifier.
                while (
                    src.startswith("::", self.pos) and self.pos + 2 < n and _is_ident_start(src[self.pos + 2])
                ):
                    self.pos += 2
                    name += "::" + self._ident_text()
                out.append(Token("keyword" if name in KEYWORDS else "ident", name, start))
                continue
            for op in OPERATORS:
                if src.startswith(op, start):
                    self.pos += len(op)
                    if op == "(":
                        depth += 1
                    elif op == ")":
                        if depth == 0 and stop_at_close:
                            return out
                        depth -= 1
                    out.append(Token("op", op, start))
                    break
            else:
                raise self.error(f"unexpected character {ch!r}", start)

    def _skip_space(self) -> None:
        src = self.src
        n = len(src)
        while self.pos < n:
            ch = src[self.pos]
            if ch in " \t\r\n":
                self.pos += 1
            elif ch == "#":
                while self.pos < n and src[self.pos] != "\n":
                    self.pos += 1
            else:
                return

    def _ident_text(self) -> str:
        start = self.pos
        src = self.src
        if self.pos < len(src) and _is_ident_start(src[self.pos]):
            self.pos += 1
            while self.pos < len(src) and _is_ident_char(src[self.pos]):
                self.pos += 1
        return src[start : self.pos]

    def _number(self) -> Token:
        src = self.src
        start = self.pos
        n = len(src)
        while self.pos < n and src[self.pos].isdigit():
            self.pos += 1
        is_float = False
        if self.pos < n and src[self.pos] == ".":
            is_float = True
            self.pos += 1
            while self.pos < n and src[self.pos].isdigit():
                self.pos += 1
        if self.pos < n and src[self.pos] in "eE":
            save = self.pos
            self.pos += 1
            if self.pos < n and src[self.pos] in "+-":
                self.pos += 1
            if self.pos < n and src[self.pos].isdigit():
                is_float = True
                while self.pos < n and src[self.pos].isdigit():
                    self.pos += 1
            else:
                self.pos = save
        text = src[start : self.pos]
        value: int | float
        if is_float:
            value = float(text)
            if value.is_integer() and "." not in text and abs(value) < 2**53:
                value = int(value)
        else:
            value = int(text)
        return Token("number", text, start, number=value)

    def _string(self) -> Token:
        src = self.src
        start = self.pos
        self.pos += 1
        parts: list[str | list[Token]] = []
        buf: list[str] = []
        n = len(src)
        while True:
            if self.pos >= n:
                raise self.error("unterminated string literal", start)
            ch = src[self.pos]
            if ch == '"':
                self.pos += 1
                break
            if ch == "\\":
                if self.pos + 1 >= n:
                    raise self.error("unterminated string literal", start)
                esc = src[self.pos + 1]
                if esc in _ESCAPES:
                    buf.append(_ESCAPES[esc])
                    self.pos += 2
                elif esc == "u":
                    code = self._hex4(self.pos + 2)
                    self.pos += 6
                    if 0xD800 <= code < 0xDC00 and src.startswith("\\u", self.pos):
                        low = self._hex4(self.pos + 2)
                        if 0xDC00 <= low < 0xE000:
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                            self.pos += 6
                    if 0xD800 <= code < 0xE000:
                        code = 0xFFFD
                    buf.append(chr(code))
                elif esc == "(":
                    self.pos += 2
                    if buf:
                        parts.append("".join(buf))
                        buf = []
                    inner_start = self.pos
                    inner = self._tokens(stop_at_close=True)
                    if not inner:
                        raise self.error("empty string interpolation", inner_start)
                    inner.append(Token("eof", "", self.pos - 1))
                    parts.append(inner)
                else:
                    raise self.error(f"invalid escape '\\{esc}' in string literal", self.pos)
            else:
                buf.append(ch)
                self.pos += 1
        if buf or not parts:
            parts.append("".join(buf))
        return Token("string", src[start : self.pos], start, parts=parts)

    def _hex4(self, at: int) -> int:
        text = self.src[at : at + 4]
        if len(text) != 4 or any(c not in "0123456789abcdefABCDEF" for c in text):
            raise self.error("invalid \\u escape in string literal", at - 2)
        return int(text, 16)


def tokenize(source: str) -> list[Token]:
    return Lexer(source).tokenize()
