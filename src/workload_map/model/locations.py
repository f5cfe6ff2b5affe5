"""Source locations: from a JSON path inside a definition to ``file:line:column``.

The loader keeps the PyYAML node tree of every document (composed by libyaml, the same pass
that builds the data), and a ``SourceMap`` answers lookups by walking that tree on demand.
Nothing is precomputed, so loading pays nothing for locations that are never asked for; a
lookup costs one step per path segment. JSON files are parsed with the fast JSON parser and
composed as YAML (a superset) only on the first lookup.

Paths are camelCase dotted paths as used in findings: ``spec.structureDefinition.
childComponents[1].scaleDefinition.replicasPath``, or tuples of keys and indices. Lines and
columns are 1-based.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import yaml

PathPart = str | int
Path = tuple[PathPart, ...]

_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def parse_path(path: str | Sequence[PathPart]) -> Path:
    """``a.b[1].c`` -> ``("a", "b", 1, "c")``. Keys containing dots cannot be expressed; pass a
    tuple for those."""
    if not isinstance(path, str):
        return tuple(path)
    out: list[PathPart] = []
    for m in _SEGMENT.finditer(path):
        out.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
    return tuple(out)


def format_path(path: Sequence[PathPart]) -> str:
    """``("a", "b", 1, "c")`` -> ``a.b[1].c``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


@dataclass(frozen=True, slots=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


def _pos(mark: yaml.Mark) -> Position:
    return Position(mark.line + 1, mark.column + 1)


#: Mappings with more entries than this get a key index on their first lookup (a scan is cheaper
#: for small ones); lookups in a wide mapping then cost one step instead of one per entry.
_INDEXED = 16
_Entry = tuple["yaml.Node | None", yaml.Node]


def _child(
    node: yaml.Node, part: PathPart, index: dict[int, dict[str, _Entry]] | None = None
) -> _Entry | None:
    """(key node or None, value node) of ``part`` under ``node``; the last duplicate key wins, as
    when the data was built."""
    if isinstance(node, yaml.MappingNode):
        want = str(part)
        if index is not None and len(node.value) > _INDEXED:
            keys = index.get(id(node))
            if keys is None:
                keys = index[id(node)] = {
                    k.value: (k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)
                }
            return keys.get(want)
        found: _Entry | None = None
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == want:
                found = (k, v)
        return found
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return None, node.value[part]
    return None


class SourceMap:
    """Locations of one document. ``prefix`` is the part of the logical path that the document
    does not spell out (a bare spec is read as ``spec``, so ``prefix=("spec",)``)."""

    __slots__ = ("_compose", "_index", "_node", "_prefix", "origin")

    def __init__(
        self,
        origin: str,
        node: yaml.Node | None = None,
        *,
        prefix: Path = (),
        compose: Callable[[], yaml.Node | None] | None = None,
    ) -> None:
        self.origin = origin
        self._node = node
        self._compose = compose
        self._prefix = prefix
        self._index: dict[int, dict[str, _Entry]] = {}

    @classmethod
    def empty(cls, origin: str) -> SourceMap:
        return cls(origin)

    @property
    def node(self) -> yaml.Node | None:
        if self._node is None and self._compose is not None:
            compose, self._compose = self._compose, None
            try:
                self._node = compose()
            except yaml.YAMLError:
                self._node = None
        return self._node

    def _strip(self, path: Path) -> Path | None:
        n = len(self._prefix)
        if path[:n] != self._prefix:
            return None
        return path[n:]

    def _steps(self, path: str | Sequence[PathPart]) -> tuple[yaml.Node | None, list[yaml.Node], bool]:
        """Follow ``path``: (document node, the mark-bearing node of each step found, complete?).
        For a mapping step two nodes are recorded (key, value); for a list step one (the item)."""
        node = self.node
        if node is None:
            return None, [], False
        rel = self._strip(parse_path(path))
        if rel is None:
            return node, [], False
        marks: list[yaml.Node] = []
        current: yaml.Node = node
        for part in rel:
            step = _child(current, part, self._index)
            if step is None:
                return node, marks, False
            marks.append(step[0] if step[0] is not None else step[1])
            marks.append(step[1])
            current = step[1]
        return node, marks, True

    def position(self, path: str | Sequence[PathPart], *, key: bool = True) -> Position | None:
        """Where ``path`` is written. For a mapping entry, the key (``key=True``) or the value;
        for a list item, the item. A path that does not exist resolves to its deepest existing
        ancestor (so a missing required field points at the mapping that lacks it)."""
        node, marks, _ = self._steps(path)
        if node is None:
            return None
        if not marks:
            return _pos(node.start_mark)
        return _pos((marks[-2] if key else marks[-1]).start_mark)

    def value_node(self, path: str | Sequence[PathPart]) -> yaml.Node | None:
        node, marks, complete = self._steps(path)
        if node is None or not complete:
            return None
        return marks[-1] if marks else node

    def location(
        self, path: str | Sequence[PathPart], *, key: bool = True, offset: int | None = None
    ) -> str | None:
        """``file:line:column`` of ``path``. With ``offset`` (a 0-based character offset into a
        string value, e.g. where a jq parse error is), point inside the value when the scalar is
        written on one line so the column is exact; otherwise at the value."""
        if offset is not None:
            node = self.value_node(path)
            if (
                isinstance(node, yaml.ScalarNode)
                and node.start_mark.line == node.end_mark.line
                and node.style in (None, "", "'", '"')
            ):
                quote = 1 if node.style in ("'", '"') else 0
                # Escapes inside quoted scalars shift columns; accept the approximation there.
                return (
                    f"{self.origin}:{node.start_mark.line + 1}:{node.start_mark.column + 1 + quote + offset}"
                )
            pos = self.position(path, key=False)
        else:
            pos = self.position(path, key=key)
        return None if pos is None else f"{self.origin}:{pos}"

    def items(self) -> Iterator[tuple[str, Position]]:
        """Every path in the document with the position of its value, in document order."""
        node = self.node
        if node is None:
            return
        stack: list[tuple[Path, yaml.Node]] = [(self._prefix, node)]
        while stack:
            path, current = stack.pop()
            yield format_path(path), _pos(current.start_mark)
            children: list[tuple[Path, yaml.Node]] = []
            if isinstance(current, yaml.MappingNode):
                for k, v in current.value:
                    if isinstance(k, yaml.ScalarNode):
                        children.append(((*path, k.value), v))
            elif isinstance(current, yaml.SequenceNode):
                children = [((*path, i), v) for i, v in enumerate(current.value)]
            stack.extend(reversed(children))

    def __repr__(self) -> str:
        return f"SourceMap({self.origin!r})"
