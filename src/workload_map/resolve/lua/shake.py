"""Only the Lua a script reaches: the runtimes' top-level statements that its code needs.

Karmada compiles a customization's script at every call, so every kilobyte costs on every call.
The runtimes (``J``: jq, ``R``: resolver, ``K``: Karmada's operations) are written as one
top-level statement per definition, unindented, each defining locals (``local function kind``,
``local NULL, EA, EO = ...``, a forward-declared ``compare = function``) or members of the
runtime's table (``function J.add``, ``J.kind = kind``, ``function B.length`` for ``J.B``).
A statement is kept when something kept refers to what it defines: a local by its name in the
same chunk, a member as ``J.name``, ``J.B.name``, ``B.name``, ``R.name`` or ``K.name`` anywhere.
Statements that define nothing (``return J``, a loop filling a table) are always kept.

The analysis over-approximates (a parameter named like a top-level local keeps that local), which
costs bytes, never correctness; ``tests/resolve/test_lua_shake.py`` checks that a shaken script
reads no global the sandbox lacks and that every member it uses is defined.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache

#: Lines that continue a statement rather than start one.
_CONTINUATION = ("end", "else", "elseif", "until", "}", ")", "]")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_MEMBER = re.compile(rf"\b({_NAME})\s*\.\s*({_NAME})(?:\s*\.\s*({_NAME}))?")
_IDENT = re.compile(_NAME)


@dataclass(frozen=True)
class Chunk:
    """One runtime's source, and the names that denote a runtime table in it (``J`` and ``B`` in
    the jq runtime, where ``B`` is ``J.B``)."""

    name: str
    source: str
    #: (name in this chunk, runtime table it denotes)
    table_names: tuple[tuple[str, str], ...]

    @property
    def tables(self) -> dict[str, str]:
        return dict(self.table_names)


@dataclass(frozen=True)
class _Statement:
    chunk: str
    text: str
    defines: frozenset[str]
    refs: frozenset[str]


def _code_only(text: str) -> str:
    """``text`` with string literals emptied and comments removed (the runtimes use no long
    brackets)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _members(tables: Mapping[str, str], m: re.Match[str]) -> list[str]:
    """The members one ``a.b`` or ``a.b.c`` uses (``J.B.length``: ``J.B`` and ``B.length``)."""
    table = tables.get(m[1])
    if table is None:
        return []
    out = [f"{table}.{m[2]}"]
    if table == "J" and m[2] == "B" and m[3]:
        out.append(f"B.{m[3]}")
    return out


def _member_refs(tables: Mapping[str, str], code: str) -> set[str]:
    return {r for m in _MEMBER.finditer(code) for r in _members(tables, m)}


def _references(chunk: Chunk, code: str) -> set[str]:
    refs = _member_refs(chunk.tables, code)
    refs |= {f"{chunk.name}:{name}" for name in _IDENT.findall(code)}
    return refs


def _defines(chunk: Chunk, head: str) -> set[str]:
    """What the statement starting with ``head`` (its code, first line) defines."""
    if m := re.match(rf"local\s+function\s+({_NAME})", head):
        return {f"{chunk.name}:{m[1]}"}
    if m := re.match(rf"function\s+({_NAME})\s*\.\s*({_NAME})", head):
        table = chunk.tables.get(m[1])
        return {f"{table}.{m[2]}"} if table else set()
    if m := re.match(rf"function\s+({_NAME})\s*\(", head):
        return {f"{chunk.name}:{m[1]}"}
    if m := re.match(r"local\s+([^=]+?)\s*(?:=(?!=)|$)", head):
        return {f"{chunk.name}:{name.strip()}" for name in m[1].split(",")}
    if m := re.match(r"([^=]+?)\s*=(?!=)", head):
        out: set[str] = set()
        for target in m[1].split(","):
            target = target.strip()
            if mm := re.fullmatch(rf"({_NAME})\s*\.\s*({_NAME})", target):
                table = chunk.tables.get(mm[1])
                if table:
                    out.add(f"{table}.{mm[2]}")
            elif re.fullmatch(_NAME, target):
                out.add(f"{chunk.name}:{target}")
        return out
    return set()


@cache
def _statements(chunk: Chunk) -> tuple[_Statement, ...]:
    groups: list[list[str]] = []
    for line in chunk.source.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("--"):
            continue
        starts = not line[0].isspace() and not stripped.startswith(_CONTINUATION)
        if starts or not groups:
            groups.append([line])
        else:
            groups[-1].append(line)
    out = []
    tables = chunk.tables
    for lines in groups:
        text = "\n".join(lines)
        code = _code_only(text)
        defines = _defines(chunk, code.split("\n", 1)[0].strip())
        # the name a table is bound to is part of every use of the table
        if any(d.split(":", 1)[-1] in tables for d in defines if ":" in d):
            defines = set()
        out.append(_Statement(chunk.name, text, frozenset(defines), frozenset(_references(chunk, code))))
    return tuple(out)


def shake(chunks: Iterable[Chunk], roots: Iterable[str]) -> dict[str, str]:
    """Per chunk name, its source holding only the statements ``roots`` (symbols such as
    ``"K.GetComponents"`` or ``"J.collect"``) reach, in their order."""
    statements = [s for chunk in chunks for s in _statements(chunk)]
    by_symbol: dict[str, list[int]] = {}
    for i, s in enumerate(statements):
        for d in s.defines:
            by_symbol.setdefault(d, []).append(i)
    keep = {i for i, s in enumerate(statements) if not s.defines}
    pending = list(roots)
    for i in keep:
        pending += statements[i].refs
    seen: set[str] = set()
    while pending:
        symbol = pending.pop()
        if symbol in seen:
            continue
        seen.add(symbol)
        for i in by_symbol.get(symbol, ()):
            if i not in keep:
                keep.add(i)
                pending += statements[i].refs
    out: dict[str, list[str]] = {}
    for i, s in enumerate(statements):
        if i in keep:
            out.setdefault(s.chunk, []).append(s.text)
    return {name: "\n".join(texts) for name, texts in out.items()}


def references(code: str, tables: Mapping[str, str]) -> set[str]:
    """The runtime members ``code`` (a definition table, an entry point) uses."""
    return _member_refs(tables, _code_only(code))
