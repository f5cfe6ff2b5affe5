"""JSON and YAML projections of the views (the same dicts for both formats)."""

from __future__ import annotations

import functools
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
    """Block YAML in view order; a string with line breaks is a literal block (``|``, ``|-``)
    as kubectl prints one, not a quoted scalar with a blank line between its lines."""
    import yaml

    text: str = yaml.dump(
        data, Dumper=_dumper(), sort_keys=False, default_flow_style=False, allow_unicode=True, width=1_000_000
    )
    return text


@functools.cache
def _dumper() -> Any:
    import yaml

    base: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    def represent_str(dumper: Any, value: str) -> Any:
        # The emitter falls back to a double-quoted scalar (escapes, one line) when a literal
        # block cannot hold the text (trailing spaces, control characters).
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    dumper: Any = type("ViewDumper", (base,), {})
    dumper.add_representer(str, represent_str)
    return dumper


def dump(data: Any, fmt: str) -> str:
    """``json`` or ``yaml`` text of ``data``."""
    if fmt == "json":
        return to_json(data)
    if fmt == "yaml":
        return to_yaml(data)
    raise ValueError(f"not a machine format: {fmt!r}")
