"""The syntax tree of a jq expression: immutable nodes, each with its 0-based source offset."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Identity:
    offset: int


@dataclass(frozen=True)
class RecurseAll:
    """``..`` (parsed so the static checks can name it; never compiled)."""

    offset: int


@dataclass(frozen=True)
class Literal:
    offset: int
    value: Any


@dataclass(frozen=True)
class Var:
    offset: int
    name: str


@dataclass(frozen=True)
class Index:
    """``target[key]``; ``.foo`` is ``Index(Identity, Literal("foo"))``. ``key`` sees the same input
    as the whole term, not the target's output (jq semantics)."""

    offset: int
    target: Node
    key: Node


@dataclass(frozen=True)
class Slice:
    offset: int
    target: Node
    start: Node | None
    end: Node | None


@dataclass(frozen=True)
class Iterate:
    offset: int
    target: Node


@dataclass(frozen=True)
class Try:
    """``try body catch handler``; ``body?`` is ``Try(body, None)``."""

    offset: int
    body: Node
    handler: Node | None


@dataclass(frozen=True)
class StringInterp:
    """A string literal with ``\\(...)`` parts; ``fmt`` is the ``@format`` applied to each part."""

    offset: int
    parts: tuple[str | Node, ...]
    fmt: str | None


@dataclass(frozen=True)
class Format:
    """``@base64`` and friends used as a filter."""

    offset: int
    name: str


@dataclass(frozen=True)
class ArrayCons:
    offset: int
    body: Node | None


@dataclass(frozen=True)
class ObjectCons:
    offset: int
    entries: tuple[tuple[Node, Node], ...]


@dataclass(frozen=True)
class Neg:
    offset: int
    operand: Node


@dataclass(frozen=True)
class Binary:
    """Arithmetic and comparison: ``+ - * / % == != < <= > >=``."""

    offset: int
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class And:
    offset: int
    left: Node
    right: Node


@dataclass(frozen=True)
class Or:
    offset: int
    left: Node
    right: Node


@dataclass(frozen=True)
class Alt:
    """``left // right``."""

    offset: int
    left: Node
    right: Node


@dataclass(frozen=True)
class Assign:
    """``= |= += -= *= /= %= //=``: parsed only so the static checks can reject it."""

    offset: int
    op: str
    left: Node
    right: Node


@dataclass(frozen=True)
class Pipe:
    offset: int
    left: Node
    right: Node


@dataclass(frozen=True)
class Comma:
    offset: int
    left: Node
    right: Node


@dataclass(frozen=True)
class If:
    """``elif`` chains are nested ``If`` nodes in ``otherwise``; a missing else is ``None`` (identity)."""

    offset: int
    cond: Node
    then: Node
    otherwise: Node | None


@dataclass(frozen=True)
class VarPattern:
    offset: int
    name: str


@dataclass(frozen=True)
class ArrayPattern:
    offset: int
    elements: tuple[Pattern, ...]


@dataclass(frozen=True)
class ObjectPattern:
    """Entries are ``(key, pattern)``; ``{$a}`` is ``(Literal("a"), VarPattern("a"))`` plus binding
    ``$a`` to the whole value is expressed by ``bind_key``."""

    offset: int
    entries: tuple[tuple[Node, Pattern | None, str | None], ...]


Pattern = VarPattern | ArrayPattern | ObjectPattern


@dataclass(frozen=True)
class As:
    """``source as $pattern | body``; ``alternatives`` are further patterns after ``?//``."""

    offset: int
    source: Node
    pattern: Pattern
    body: Node
    alternatives: tuple[Pattern, ...] = ()


@dataclass(frozen=True)
class Reduce:
    offset: int
    source: Node
    pattern: Pattern
    init: Node
    update: Node


@dataclass(frozen=True)
class Foreach:
    offset: int
    source: Node
    pattern: Pattern
    init: Node
    update: Node
    extract: Node | None


@dataclass(frozen=True)
class Label:
    offset: int
    name: str
    body: Node


@dataclass(frozen=True)
class Break:
    offset: int
    name: str


@dataclass(frozen=True)
class FuncDef:
    """``def name(params): body; rest``. Params starting with ``$`` are value params."""

    offset: int
    name: str
    params: tuple[str, ...]
    body: Node
    rest: Node


@dataclass(frozen=True)
class Call:
    offset: int
    name: str
    args: tuple[Node, ...]


Node = (
    Identity
    | RecurseAll
    | Literal
    | Var
    | Index
    | Slice
    | Iterate
    | Try
    | StringInterp
    | Format
    | ArrayCons
    | ObjectCons
    | Neg
    | Binary
    | And
    | Or
    | Alt
    | Assign
    | Pipe
    | Comma
    | If
    | As
    | Reduce
    | Foreach
    | Label
    | Break
    | FuncDef
    | Call
)
