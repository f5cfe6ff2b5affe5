"""JSON and YAML projections of the views (the same dicts for both formats)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["dump", "envelope", "to_json", "to_yaml"]


def envelope(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``get``'s list shape: ``{"items": [...], "count": N}`` (never null)."""
    return {"items": list(items), "count": len(items)}


def to_json(data: Any) -> str:
    """2-space indented JSON with a trailing newline (keys in view order)."""
    import orjson

    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"


def to_yaml(data: Any) -> str:
    import yaml

    dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text: str = yaml.dump(
        data, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1_000_000
    )
    return text


def dump(data: Any, fmt: str) -> str:
    """``json`` or ``yaml`` text of ``data``."""
    if fmt == "json":
        return to_json(data)
    if fmt == "yaml":
        return to_yaml(data)
    raise ValueError(f"not a machine format: {fmt!r}")
