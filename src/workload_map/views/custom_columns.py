"""``get -o custom-columns=HEADER:PATH,...`` and ``-o custom-columns-file=FILE``, as kubectl
spells them, over the view model (the JSON Schema ``view.v1``): each PATH is a plain field path
(:mod:`workload_map.views.fieldpath`); a missing value prints ``<none>`` like kubectl, lists and
objects print as compact JSON."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from workload_map.views.fieldpath import FieldPathError, lookup, parse

__all__ = ["Column", "CustomColumnsError", "parse_file", "parse_spec", "rows"]

Column = tuple[str, tuple[str | int, ...]]
MAX_COLUMNS = 64


class CustomColumnsError(ValueError):
    """A custom-columns spec or file that cannot be used."""


def _column(header: str, path: str, where: str) -> Column:
    if not header or not path:
        raise CustomColumnsError(
            f"unexpected custom-columns spec: {where}, expected <header>:<json-path-expr>"
        )
    try:
        return header, parse(path)
    except FieldPathError as exc:
        raise CustomColumnsError(f"custom-columns {header}: {exc}") from None


def parse_spec(spec: str) -> list[Column]:
    parts = [p for p in spec.split(",") if p]
    if not parts:
        raise CustomColumnsError("custom-columns format specified but no custom columns given")
    if len(parts) > MAX_COLUMNS:
        raise CustomColumnsError(f"at most {MAX_COLUMNS} custom columns")
    out = []
    for part in parts:
        header, sep, path = part.partition(":")
        out.append(_column(header, path if sep else "", part))
    return out


def parse_file(text: str, origin: str) -> list[Column]:
    """kubectl's file form: a line of headers, a line of paths (whitespace separated)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) != 2:
        raise CustomColumnsError(f"{origin}: expected two lines (headers, then paths), found {len(lines)}")
    headers, paths = lines[0].split(), lines[1].split()
    if len(headers) != len(paths):
        raise CustomColumnsError(f"{origin}: {len(headers)} headers but {len(paths)} paths")
    if len(headers) > MAX_COLUMNS:
        raise CustomColumnsError(f"{origin}: at most {MAX_COLUMNS} custom columns")
    return [_column(h, p, f"{h} {p}") for h, p in zip(headers, paths, strict=True)]


def _cell(value: Any) -> str:
    if value is None:
        return "<none>"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, int, float)):
        return str(value)
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def rows(
    columns: Sequence[Column], documents: Sequence[Mapping[str, Any]], *, headers: bool = True
) -> list[list[str]]:
    out = [[h for h, _ in columns]] if headers else []
    for doc in documents:
        out.append([_cell(lookup(doc, path)) for _, path in columns])
    return out
