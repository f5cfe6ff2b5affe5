"""The CLI grammar of the write commands' arguments (kubectl's): ``NAME=VALUE[,...]`` lists,
``KEY=VALUE``/``KEY-`` changes, ``KEY[=VALUE][:EFFECT]`` tolerations, component lists, and edits
built with their value errors reported as ``error:`` lines (exit 1, as kubectl does)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

T = TypeVar("T")


def parse_pairs(values: Sequence[str], what: str) -> dict[str, str]:
    """``a=1,b=2`` (kubectl's --requests/--limits) -> ``{"a": "1", "b": "2"}``."""
    out: dict[str, str] = {}
    for value in values:
        for item in value.split(","):
            key, eq, v = item.partition("=")
            if not eq or not key:
                raise click.UsageError(f'invalid {what} "{item}": expected NAME=VALUE')
            out[key] = v
    return out


def parse_specs(specs: Sequence[str], what: str) -> tuple[dict[str, str], list[str]]:
    """``k=v`` sets, ``k-`` removes (kubectl's label/env/node-selector grammar)."""
    values: dict[str, str] = {}
    unset: list[str] = []
    for spec in specs:
        if "=" in spec:
            key, _, value = spec.partition("=")
            if not key:
                raise click.UsageError(f'invalid {what} "{spec}": the key is empty')
            values[key] = value
        elif spec.endswith("-") and len(spec) > 1:
            unset.append(spec[:-1])
        else:
            raise click.UsageError(f'invalid {what} "{spec}": expected KEY=VALUE or KEY-')
    return values, unset


def parse_toleration(spec: str) -> Any:
    """``KEY[=VALUE][:EFFECT]`` -> a Toleration (kubectl taint's notation; no value: Exists)."""
    from workload_map.resolve.writeback import Toleration

    body, colon, effect = spec.rpartition(":") if ":" in spec else (spec, "", "")
    key, eq, value = body.partition("=")
    if not key and not (eq or value):
        raise click.UsageError(f'invalid toleration "{spec}": expected KEY[=VALUE][:EFFECT]')
    return Toleration(key=key, effect=effect if colon else "", value=value)


def component_names(values: Sequence[str]) -> list[str] | None:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    return names or None


def build_edit(build: Callable[[], T]) -> T:
    """``build()``, with an edit's value error (``InvalidEditError``) as an ``error:`` line."""
    from workload_map.cli.errors import CommandError
    from workload_map.resolve.writeback import InvalidEditError

    try:
        return build()
    except InvalidEditError as exc:
        raise CommandError(str(exc)) from exc


__all__ = ["build_edit", "component_names", "parse_pairs", "parse_specs", "parse_toleration"]
