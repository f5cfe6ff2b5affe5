"""kubectl's JSONPath template dialect (``-o jsonpath=``), over plain JSON values.

The dialect is client-go's ``util/jsonpath``, reimplemented from its observable behaviour (checked
against kubectl in tests/cli/test_jsonpath.py): text outside ``{...}`` is printed as is; inside,
``.field`` (``\\.`` escapes a dot), ``[n]``, ``[start:end:step]``, ``[*]``, ``['key']``, unions
``[a,b]``, ``*``, recursive descent ``..``, filters ``[?(@.x == "y")]`` (``==``, ``!=``, ``<``,
``>``, ``<=``, ``>=``, or existence), string, number and boolean literals, and
``{range EXPR}...{end}`` blocks. Missing fields print nothing (kubectl's ``allowMissingKeys``);
errors carry kubectl's words.

Output follows kubectl: strings raw, numbers as Go's ``%v`` prints them, ``true``/``false``,
``null``; objects and lists as compact JSON with sorted keys and Go's HTML escaping; several values
of one expression separated by a space. Where Go iterates a map in random order (``*``, ``..``),
this iterates it by sorted key.

Bounded before it runs: the template's length and nesting (:data:`MAX_TEMPLATE`,
:data:`MAX_DEPTH`) and the number of values one template may produce (:data:`MAX_VALUES`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = [
    "MAX_TEMPLATE",
    "JSONPathError",
    "JSONPathExecutionError",
    "JSONPathParseError",
    "Template",
    "go_text",
    "parse",
]

MAX_TEMPLATE = 16 * 1024
MAX_DEPTH = 64
MAX_VALUES = 1_000_000

JSONValue: TypeAlias = Any


class JSONPathError(ValueError):
    """A template that cannot be parsed or run."""


class JSONPathParseError(JSONPathError):
    pass


class JSONPathExecutionError(JSONPathError):
    pass


# --- nodes ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Field:
    name: str


@dataclass(frozen=True)
class Wildcard:
    pass


@dataclass(frozen=True)
class Recursive:
    pass


@dataclass(frozen=True)
class Slice:
    start: int | None
    end: int | None
    step: int | None
    #: ``[n]``: the end is ``n + 1``, counted from the length when ``n`` is negative
    single: bool = False


@dataclass(frozen=True)
class Literal:
    value: str | int | float | bool


@dataclass(frozen=True)
class Identifier:
    name: str


@dataclass(frozen=True)
class Union:
    branches: tuple[Action, ...]


@dataclass(frozen=True)
class Filter:
    left: Action
    right: Action | None
    operator: str  # "exists" when right is None


Node: TypeAlias = Text | Field | Wildcard | Recursive | Slice | Literal | Identifier | Union | Filter


@dataclass(frozen=True)
class Action:
    """One ``{...}``: its nodes applied left to right."""

    nodes: tuple[Node, ...]


# --- parser -----------------------------------------------------------------------------------------

_TERMINATORS = frozenset(" .,[]$@{}")
_SLICE = re.compile(r"^(-?\d*)(:-?\d*)?(:-?\d*)?$")
_DICT_KEY = re.compile(r"^'([^']*)'$")
_FILTER = re.compile(r"^([^!<>=]+)([!<>=]+)(.+?)$", re.DOTALL)


def _alnum(ch: str) -> bool:
    return ch == "_" or ch.isalpha() or ch.isdigit()


def _go_unquote(text: str) -> str:
    """A Go string literal, single quotes read as double quotes (kubectl's UnquoteExtend)."""
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'":
        text = '"' + text[1:-1].replace('\\"', '"').replace('"', '\\"') + '"'
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, str):
        return value
    # Go escapes json does not know: \a \b \f \v \' and octal/hex bytes.
    body = text[1:-1]
    out: list[str] = []
    i = 0
    simple = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
    simple |= {"\\": "\\", "'": "'", '"': '"'}
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in simple:
            out.append(simple[nxt])
            i += 2
        elif nxt == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i + 2 : i + 4]):
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        elif nxt in ("u", "U"):
            width = 4 if nxt == "u" else 8
            digits = body[i + 2 : i + 2 + width]
            if not re.fullmatch(rf"[0-9a-fA-F]{{{width}}}", digits):
                raise JSONPathParseError(f"unquote string {text} error invalid syntax")
            out.append(chr(int(digits, 16)))
            i += 2 + width
        elif re.fullmatch(r"[0-7]{3}", body[i + 1 : i + 4]):
            out.append(chr(int(body[i + 1 : i + 4], 8)))
            i += 4
        else:
            raise JSONPathParseError(f"unquote string {text} error invalid syntax")
    return "".join(out)


class _Parser:
    def __init__(self, text: str, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise JSONPathParseError("template nested too deeply")
        self.text = text
        self.pos = 0
        self.depth = depth
        self.root: list[Text | Action] = []

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos : self.pos + n]

    def parse(self) -> list[Text | Action]:
        while self.pos < len(self.text):
            start = self.text.find("{", self.pos)
            if start < 0:
                self.root.append(Text(self.text[self.pos :]))
                break
            if start > self.pos:
                self.root.append(Text(self.text[self.pos : start]))
            self.pos = start + 1
            nodes: list[Node] = []
            self._inside(nodes)
            self.root.append(Action(tuple(nodes)))
        return self.root

    def _inside(self, nodes: list[Node]) -> None:
        """Nodes up to and including the closing ``}``."""
        while True:
            rest = self.text[self.pos :]
            if rest.startswith("}"):
                self.pos += 1
                return
            if rest.startswith("[?("):
                nodes.append(self._filter())
                continue
            if rest.startswith(".."):
                if nodes and isinstance(nodes[-1], Recursive):
                    raise JSONPathParseError("invalid multiple recursive descent")
                self.pos += 2
                nodes.append(Recursive())
                if self.pos < len(self.text) and _alnum(self.text[self.pos]):
                    nodes.append(self._field())
                continue
            if not rest or rest[0] in "\n\r":
                raise JSONPathParseError("unclosed action")
            ch = rest[0]
            if ch in " @$":
                self.pos += 1
            elif ch == "[":
                nodes.append(self._array())
            elif ch in "\"'":
                nodes.append(self._quote(ch))
            elif ch == ".":
                self.pos += 1
                nodes.append(self._field())
            elif ch in "+-" or ch.isdigit():
                nodes.append(self._number())
            elif _alnum(ch):
                nodes.append(self._identifier())
            else:
                raise JSONPathParseError(f"unrecognized character in action: {_go_rune(ch)}")

    def _field(self) -> Node:
        start = self.pos
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == "\\":
                self.pos += 2
                continue
            if ch in _TERMINATORS:
                break
            self.pos += 1
        value = self.text[start : self.pos]
        if value == "*":
            return Wildcard()
        return Field(value.replace("\\", ""))

    def _identifier(self) -> Node:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in _TERMINATORS:
            self.pos += 1
        value = self.text[start : self.pos]
        if value in ("true", "false"):
            return Literal(value == "true")
        return Identifier(value)

    def _number(self) -> Node:
        start = self.pos
        if self.text[self.pos] in "+-":
            self.pos += 1
        while self.pos < len(self.text) and (self.text[self.pos] == "." or self.text[self.pos].isdigit()):
            self.pos += 1
        value = self.text[start : self.pos]
        if re.fullmatch(r"[+-]?\d+", value):
            return Literal(int(value))
        try:
            return Literal(float(value))
        except ValueError:
            raise JSONPathParseError(f"cannot parse number {value}") from None

    def _quote(self, end: str) -> Node:
        start = self.pos
        self.pos += 1
        while True:
            if self.pos >= len(self.text) or self.text[self.pos] == "\n":
                raise JSONPathParseError("unterminated quoted string")
            ch = self.text[self.pos]
            self.pos += 1
            if ch == end and self.text[self.pos - 2] != "\\":
                break
        return Literal(_go_unquote(self.text[start : self.pos]))

    def _array(self) -> Node:
        start = self.pos
        close = -1
        for i in range(self.pos + 1, len(self.text)):
            if self.text[i] == "\n":
                break
            if self.text[i] == "]":
                close = i
                break
        if close < 0:
            raise JSONPathParseError("unterminated array")
        self.pos = close + 1
        inner = self.text[start + 1 : close]
        if inner == "*":
            inner = ":"
        parts = inner.split(",")
        if len(parts) > 1:
            branches = []
            for part in parts:
                sub = _Parser("{[" + part.strip(" ") + "]}", self.depth + 1).parse()
                branches.append(_only_action(sub))
            return Union(tuple(branches))
        key = _DICT_KEY.match(inner)
        if key is not None:
            sub = _Parser("{." + key.group(1) + "}", self.depth + 1).parse()
            action = _only_action(sub)
            if len(action.nodes) == 1:
                return action.nodes[0]
            return Union((action,))
        m = _SLICE.match(inner)
        if m is None:
            raise JSONPathParseError(f"invalid array index {inner}")
        first, second, third = m.groups()
        start_v = int(first) if first not in ("", None) else None
        if second is None:
            return Slice(start_v if start_v is not None else 0, None, None, single=True)
        end_v = int(second[1:]) if second[1:] else None
        step_v = int(third[1:]) if third is not None and third[1:] else None
        return Slice(start_v, end_v, step_v)

    def _filter(self) -> Node:
        self.pos += 3
        start = self.pos
        begin = end = False
        pair = ""
        while True:
            if self.pos >= len(self.text) or self.text[self.pos] == "\n":
                raise JSONPathParseError("unterminated filter")
            ch = self.text[self.pos]
            self.pos += 1
            if ch in "\"'":
                if not begin:
                    begin, pair = True, ch
                    continue
                if self.text[self.pos - 2] != "\\" and ch == pair:
                    end = True
            elif ch == ")" and begin == end:
                break
        if self.peek() != "]":
            raise JSONPathParseError("unclosed array expect ]")
        self.pos += 1
        body = self.text[start : self.pos - 2]
        m = _FILTER.match(body)
        if m is None:
            return Filter(_only_action(_Parser("{" + body + "}", self.depth + 1).parse()), None, "exists")
        left = _only_action(_Parser("{" + m.group(1) + "}", self.depth + 1).parse())
        right = _only_action(_Parser("{" + m.group(3) + "}", self.depth + 1).parse())
        return Filter(left, right, m.group(2))


def _only_action(parts: list[Text | Action]) -> Action:
    for p in parts:
        if isinstance(p, Action):
            return p
    return Action(())


def _go_rune(ch: str) -> str:
    return f"U+{ord(ch):04X} '{ch}'"


# --- evaluation -------------------------------------------------------------------------------------


def _go_type(value: JSONValue) -> str:
    if isinstance(value, Mapping):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, _Byte):
        return "uint8"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return "<nil>"


class _Byte(int):
    """One byte of a string, what Go yields when it iterates a string."""


class _TemplateText(str):
    """Text the template itself wrote (outside braces, or a quoted literal such as ``{"\\n"}``),
    as opposed to text from the data: :meth:`Template.render` prints it as written even when it
    escapes the data's control characters."""

    __slots__ = ()


class _Run:
    """One execution: client-go's range bookkeeping (ranges open, ends seen, the last end's
    position) over the flat list of template parts, so unbalanced templates print what kubectl
    prints."""

    def __init__(self, parts: Sequence[Text | Action]) -> None:
        self.parts = parts
        self.count = 0
        self.begin_range = 0
        self.in_range = 0
        self.end_range = 0
        self.last_end = -1

    def identifier(self, values: list[JSONValue], name: str) -> list[JSONValue]:
        if name == "range":
            self.begin_range += 1
            return values
        if name == "end":
            if self.end_range < self.in_range:
                self.end_range += 1
            else:
                raise JSONPathExecutionError("not in range, nothing to end")
            return []
        raise JSONPathExecutionError(f"unrecognized identifier {name}")

    def find(self, start: int, data: JSONValue, depth: int = 0) -> list[list[JSONValue]]:
        if depth > MAX_DEPTH:
            raise JSONPathExecutionError("ranges nested too deeply")
        current = [data]
        out: list[list[JSONValue]] = []
        i = start
        while i < len(self.parts):
            part = self.parts[i]
            results = [_TemplateText(part.text)] if isinstance(part, Text) else self.action(current, part)
            if 0 < self.end_range <= self.in_range:
                self.end_range -= 1
                self.last_end = i
                break
            if self.begin_range > 0:
                self.begin_range -= 1
                self.in_range += 1
                if results:
                    for value in results:
                        out.extend(self.find(i + 1, value, depth + 1))
                else:
                    self.find(i + 1, None, depth + 1)
                self.in_range -= 1
                # Resume after the end that closed this range; with none, right after the range.
                if self.last_end > i:
                    i = self.last_end
                i += 1
                continue
            out.append(results)
            i += 1
        return out

    def grow(self, values: list[JSONValue]) -> list[JSONValue]:
        self.count += len(values)
        if self.count > MAX_VALUES:
            raise JSONPathExecutionError(f"the template produces more than {MAX_VALUES} values")
        return values

    def action(self, values: list[JSONValue], action: Action) -> list[JSONValue]:
        current = values
        for node in action.nodes:
            current = self.grow(self.node(current, node))
        return current

    def node(self, values: list[JSONValue], node: Node) -> list[JSONValue]:
        if isinstance(node, Text):
            return [_TemplateText(node.text)]
        if isinstance(node, Literal):
            return [_TemplateText(node.value) if isinstance(node.value, str) else node.value]
        if isinstance(node, Field):
            return [v[node.name] for v in values if isinstance(v, Mapping) and node.name in v]
        if isinstance(node, Wildcard):
            return [child for v in values for child in _children(v)]
        if isinstance(node, Recursive):
            out: list[JSONValue] = []
            for v in values:
                self._descend(v, out, 0)
            return out
        if isinstance(node, Slice):
            return self._slice(values, node)
        if isinstance(node, Union):
            return [x for branch in node.branches for x in self.action(values, branch)]
        if isinstance(node, Filter):
            return self._filter(values, node)
        return self.identifier(values, node.name)

    def _descend(self, value: JSONValue, out: list[JSONValue], depth: int) -> None:
        children = list(_children(value))
        if not children:
            return
        if depth > 10_000:
            raise JSONPathExecutionError("data nested too deeply")
        out.append(value)
        self.grow([value])
        for child in children:
            self._descend(child, out, depth + 1)

    def _slice(self, values: list[JSONValue], node: Slice) -> list[JSONValue]:
        out: list[JSONValue] = []
        for value in values:
            if value is None:
                continue
            if not isinstance(value, list):
                raise JSONPathExecutionError(f"{_go_type(value)} is not array or slice")
            length = len(value)
            start = node.start if node.start is not None else 0
            if start < 0:
                start += length
            if node.single:
                end = (node.start or 0) + 1
                if end <= 0:
                    end += length
            else:
                end = node.end if node.end is not None else length
                if end < 0:
                    end += length
            if end == start:
                continue
            if start >= length or start < 0:
                raise JSONPathExecutionError(f"array index out of bounds: index {start}, length {length}")
            if end > length or end < 0:
                raise JSONPathExecutionError(f"array index out of bounds: index {end - 1}, length {length}")
            if start > end:
                raise JSONPathExecutionError(f"starting index {start} is greater than ending index {end}")
            step = 1
            if node.step is not None:
                if node.step <= 0:
                    raise JSONPathExecutionError("step must be > 0")
                step = node.step
            out.extend(value[start:end:step])
        return out

    def _filter(self, values: list[JSONValue], node: Filter) -> list[JSONValue]:
        out: list[JSONValue] = []
        for value in values:
            if not isinstance(value, list):
                shown = "<nil>" if value is None else go_text(value)
                raise JSONPathExecutionError(f"{shown} is not array or slice and cannot be filtered")
            for item in value:
                lefts = self.action([item], node.left)
                if node.right is None:
                    if lefts:
                        out.append(item)
                    continue
                if not lefts:
                    continue
                if len(lefts) > 1:
                    raise JSONPathExecutionError("can only compare one element at a time")
                rights = self.action([item], node.right)
                if not rights:
                    continue
                if len(rights) > 1:
                    raise JSONPathExecutionError("can only compare one element at a time")
                if _compare(lefts[0], rights[0], node.operator):
                    out.append(item)
        return out


def _children(value: JSONValue) -> Iterator[JSONValue]:
    if isinstance(value, Mapping):
        for key in sorted(value):
            yield value[key]
    elif isinstance(value, list):
        yield from value
    elif isinstance(value, str):
        for b in value.encode("utf-8"):
            yield _Byte(b)


def _kind(value: JSONValue) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "invalid"


_BAD = "incompatible types for comparison"
_INVALID = "invalid type for comparison"


def _compare(left: JSONValue, right: JSONValue, op: str) -> bool:
    if op not in ("==", "!=", "<", ">", "<=", ">="):
        raise JSONPathExecutionError(f"unrecognized filter operator {op}")
    k1, k2 = _kind(left), _kind(right)
    if op in ("==", "!="):
        if "invalid" in (k1, k2):
            raise JSONPathExecutionError(_INVALID)
        if k1 != k2:
            raise JSONPathExecutionError(_BAD)
        equal = bool(left == right)
        return equal if op == "==" else not equal
    if k1 in ("bool", "invalid") or k2 in ("bool", "invalid"):
        raise JSONPathExecutionError(_INVALID)
    if k1 != k2:
        raise JSONPathExecutionError(_BAD)
    less = bool(left < right)
    if op == "<":
        return less
    if op == ">=":
        return not less
    equal = bool(left == right)
    return less or equal if op == "<=" else not (less or equal)


# --- printing ---------------------------------------------------------------------------------------


def _shortest(value: float) -> tuple[str, str, int]:
    """``(sign, digits, point)`` with ``value == sign 0.digits * 10**point``, digits the shortest
    that read back as ``value`` (what Go's ``strconv`` and Python's ``repr`` both produce)."""
    mantissa, _, exp_text = repr(value).partition("e")
    sign = "-" if mantissa.startswith("-") else ""
    whole, _, frac = mantissa.lstrip("-").partition(".")
    raw = whole + frac
    digits = raw.lstrip("0")
    point = len(whole) + (int(exp_text) if exp_text else 0) - (len(raw) - len(digits))
    return sign, digits.rstrip("0") or "0", point


def _float_text(value: float, *, exponent: bool, min_exp_digits: int) -> str:
    sign, digits, point = _shortest(value)
    if exponent:
        exp10 = point - 1
        head = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{head}e{'-' if exp10 < 0 else '+'}{abs(exp10):0{min_exp_digits}d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _go_float(value: float) -> str:
    """Go's ``%v`` of a float64: shortest digits, an exponent below 1e-4 or from 1e21."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    exp10 = _shortest(value)[2] - 1
    return _float_text(value, exponent=exp10 < -4 or exp10 >= 21, min_exp_digits=2)


def _go_json_float(value: float) -> str:
    """Go's ``json.Marshal`` of a float64 (``1e-7``, ``1e+21``, ``1000000``)."""
    if value == 0 or not math.isfinite(value):
        return "0"
    a = abs(value)
    return _float_text(value, exponent=a < 1e-6 or a >= 1e21, min_exp_digits=1)


def _go_string(text: str) -> str:
    return (
        json.dumps(text, ensure_ascii=False)
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _go_json(value: JSONValue, indent: str | None = None, level: int = 0) -> str:
    """Go's ``json.Marshal`` (``indent`` None) or ``json.MarshalIndent(v, "", indent)``: sorted
    keys, ``<``, ``>`` and ``&`` escaped, Go's number forms."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return _go_json_float(value)
    if isinstance(value, str):
        return _go_string(value)
    if isinstance(value, Mapping):
        parts = [(_go_string(str(k)), _go_json(value[k], indent, level + 1)) for k in sorted(value, key=str)]
        if not parts:
            return "{}"
        if indent is None:
            return "{" + ",".join(f"{k}:{v}" for k, v in parts) + "}"
        inner, outer = "\n" + indent * (level + 1), "\n" + indent * level
        return "{" + ",".join(f"{inner}{k}: {v}" for k, v in parts) + outer + "}"
    if isinstance(value, (list, tuple)):
        items = [_go_json(x, indent, level + 1) for x in value]
        if not items:
            return "[]"
        if indent is None:
            return "[" + ",".join(items) + "]"
        inner, outer = "\n" + indent * (level + 1), "\n" + indent * level
        return "[" + ",".join(inner + x for x in items) + outer + "]"
    return _go_string(str(value))


def go_text(value: JSONValue) -> str:
    """One value as kubectl's jsonpath prints it: strings raw, floats as Go's ``%v``, the rest
    as Go's JSON (objects, lists, ``null``, booleans, integers)."""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return _go_float(value)
    return _go_json(value)


# --- the template -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """A parsed template; :meth:`render` runs it on one document."""

    source: str
    parts: tuple[Text | Action, ...]
    as_json: bool = False

    def results(self, data: JSONValue) -> list[list[JSONValue]]:
        """The value lists kubectl prints one after the other (raises
        :class:`JSONPathExecutionError`)."""
        return _Run(self.parts).find(0, data)

    def render(self, data: JSONValue, *, escape: Callable[[str], str] | None = None) -> str:
        """The text kubectl prints for ``data``: nothing is printed when the run fails. With
        ``escape``, every value that comes from ``data`` is passed through it (the CLI escapes
        control characters there); the template's own text is printed as written. JSON output
        (``jsonpath-as-json``) is always exact."""
        chunks: list[str] = []
        for values in self.results(data):
            if self.as_json:
                chunks.append(_go_json(list(values), "    ") + "\n")
            else:
                chunks.append(" ".join(_printed(v, escape) for v in values))
        return "".join(chunks)


def _printed(value: JSONValue, escape: Callable[[str], str] | None) -> str:
    text = go_text(value)
    return text if escape is None or isinstance(value, _TemplateText) else escape(text)


def parse(source: str, *, as_json: bool = False) -> Template:
    """Parse ``source`` (raises :class:`JSONPathParseError` with kubectl's words)."""
    if len(source) > MAX_TEMPLATE:
        raise JSONPathParseError(f"template longer than {MAX_TEMPLATE} characters")
    return Template(source, tuple(_Parser(source).parse()), as_json)
