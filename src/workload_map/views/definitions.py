"""The ``wmap definitions`` view (upstream-spec 5.6): rows, the table, the machine envelope.

Table ``NAME  KIND  ORIGIN  COMPONENTS`` sorted by name. KIND is kubectl's qualified form
(``PyTorchJob.v1.kubeflow.org``; ``<none>`` when the root has no kind). COMPONENTS is the root's
name then up to ``limit`` child names, then ``+N more`` (``limit`` 0 shows all).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workload_map.definitions_source import DefinitionEntry, kind_version_group
from workload_map.views.format import columns

__all__ = [
    "DefinitionRow",
    "components_text",
    "definitions_envelope",
    "definitions_table",
    "filter_entries",
    "rows",
]

HEADERS = ("NAME", "KIND", "ORIGIN", "COMPONENTS")


@dataclass(frozen=True)
class DefinitionRow:
    name: str
    kind: str
    origin: str
    components: str


def components_text(entry: DefinitionEntry, limit: int) -> str:
    s = entry.karta.spec.structure_definition
    children = [c.name for c in s.child_components]
    shown = children if limit == 0 else children[:limit]
    parts = [s.root_component.name, *shown]
    hidden = len(children) - len(shown)
    if hidden > 0:
        parts.append(f"+{hidden} more")
    return ", ".join(parts)


def _kind(entry: DefinitionEntry) -> str:
    gvk = entry.karta.root_gvk
    if gvk is None or not gvk.kind:
        return "<none>"
    return kind_version_group(gvk)


def rows(entries: Sequence[DefinitionEntry], limit: int = 3) -> list[DefinitionRow]:
    out = [DefinitionRow(e.name, _kind(e), e.origin, components_text(e, limit)) for e in entries]
    return sorted(out, key=lambda r: r.name)


def filter_entries(
    entries: Sequence[DefinitionEntry], group: str | None, kind: str | None, version: str | None
) -> list[DefinitionEntry]:
    """Exact group; kind case-insensitive; exact version (a filter that stops short of a version
    matches every version)."""
    out: list[DefinitionEntry] = []
    for e in entries:
        gvk = e.karta.root_gvk
        if gvk is None:
            continue
        if group is not None and gvk.group != group:
            continue
        if kind is not None and gvk.kind.lower() != kind.lower():
            continue
        if version is not None and gvk.version != version:
            continue
        out.append(e)
    return out


def definitions_table(entries: Sequence[DefinitionEntry], limit: int = 3) -> str:
    body = [(r.name, r.kind, r.origin, r.components) for r in rows(entries, limit)]
    return "\n".join(columns([HEADERS, *body])) + "\n"


def definitions_envelope(entries: Sequence[DefinitionEntry]) -> dict[str, Any]:
    """``{"items": [full Karta objects, sorted by name], "count": N}``."""
    items = [e.karta.to_wire() for e in sorted(entries, key=lambda e: e.name)]
    return {"items": items, "count": len(items)}
