"""Field paths into the view model, in kubectl's ``--sort-by`` spelling: ``.name``,
``{.resources.gpus}``, ``.components[0].desired``, ``.labels.app``.

Only plain field and index steps (what ``--sort-by`` needs); ``-o jsonpath`` with ranges and
filters is a separate, larger dialect. :func:`sort_key` orders values as kubectl does: numbers
numerically, strings by text, and objects that lack the field first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["FieldPathError", "lookup", "parse", "sort_key"]

_STEP = re.compile(r"\.([A-Za-z0-9_\-/]+)|\[(\d+)\]|\['([^']+)'\]")
MAX_PATH = 256


class FieldPathError(ValueError):
    """A path that is not a plain field path."""


def parse(path: str) -> tuple[str | int, ...]:
    text = path.strip()
    if len(text) > MAX_PATH:
        raise FieldPathError(f"field path longer than {MAX_PATH} characters")
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if not text.startswith("."):
        raise FieldPathError(f'field path "{path}" must start with "." (e.g. .name or {{.resources.gpus}})')
    steps: list[str | int] = []
    pos = 0
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None:
            raise FieldPathError(f'unsupported field path "{path}" at "{text[pos:]}"')
        field, index, quoted = m.groups()
        steps.append(int(index) if index is not None else (field if field is not None else quoted))
        pos = m.end()
    return tuple(steps)


def lookup(data: Any, steps: Sequence[str | int]) -> Any:
    """The value at ``steps`` in ``data``, ``None`` when some step is missing."""
    current = data
    for step in steps:
        if isinstance(step, int):
            if not isinstance(current, list) or step >= len(current):
                return None
            current = current[step]
        else:
            if not isinstance(current, Mapping) or step not in current:
                return None
            current = current[step]
    return current


def sort_key(value: Any) -> tuple[int, float, str]:
    """Missing first, then numbers by value, then everything else by its text."""
    if value is None:
        return (0, 0.0, "")
    if isinstance(value, bool):
        return (2, 0.0, str(value).lower())
    if isinstance(value, (int, float)):
        return (1, float(value), "")
    return (2, 0.0, value if isinstance(value, str) else repr(value))
