"""Adversarial inputs at the megabyte scale for every builtin in the registry, by argument kind.

``cases(entry)`` turns a registry entry into jq programs with their variables: each input and
argument drawn from the pool of its declared kind (registry.ArgKind). The registry test
(test_builtin_registry.py) runs them under a small budget and checks each ends in an answer or a
limit error within bounded memory; ``bench/bench_hostile_expr.py --registry`` runs them with the
engine's real limits and prints the worst times.

The pools are the shapes issue 23's trial used: long strings (1 MB), many and empty matches,
many groups, overlapping needles, wide and deep values, values that share children (a small
object standing for 2**40 leaves), huge and repeated date formats, non-finite and out-of-range
numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from workload_map.expr.registry import REGISTRY, Builtin
from workload_map.expr.values import dump_prefix

MB = 1_000_000


def shared(depth: int) -> Any:
    """``[x, x]`` nested ``depth`` times: 2**depth leaves in ``depth`` lists."""
    x: Any = ["a"]
    for _ in range(depth):
        x = [x, x]
    return x


def deep(depth: int) -> Any:
    x: Any = []
    for _ in range(depth):
        x = [x]
    return x


@cache
def pools() -> dict[str, list[Any]]:
    """Values per kind (built once: a few tens of MB)."""
    long_a = "a" * MB
    wide = list(range(MB))
    wide_object = {str(i): i for i in range(200_000)}
    return {
        "any": [long_a, wide, wide_object, shared(40), deep(5_000), None, 1e300],
        "string": [long_a, "ab" * (MB // 2), "\u00e9\u20ac" * (MB // 4) + "a", " " * MB + "x", ""],
        "number": [0, -1, 1e300, -1e300, math.nan, math.inf, 2**53 + 1, 0.5],
        "array": [wide, ["x" * 64] * 200_000, shared(40), deep(5_000), [[1, 2]] * 200_000, []],
        "object": [wide_object, {"a": shared(40), "b": wide}, {}],
        "path": [[0] * 5_000, ["a"] * 5_000, [{"start": 0, "end": MB}], [MB - 1], []],
        "regex": [
            "",
            "a",
            "(a?)" * 64,
            "a*b|a",
            "(a|b)*a(a|b){30}c",
            "(" * 40 + ".*" + ")" * 40,
            "(?<x>a)(?<y>)",
        ],
        "flags": [None, "g", "gn", "gx", "l"],
        "format": [
            "%Y" * 100_000,
            "%c" * 100_000,
            "-" * MB + "%Y",
            "%Y-%m-%dT%H:%M:%SZ",
            "%1000000Y",
            "%s%j%U%G",
        ],
        "time": [
            0,
            1425599507.5,
            math.nan,
            math.inf,
            1e300,
            -1e300,
            [1e300, 0, 1, 0, 0, 0, 0, 0],
            [math.nan, 0, 1],
            [2024, 1e300, -1e300, 0, 0, 0],
            "2015-03-05T23:51:47Z" * 50_000,
        ],
        "entries": [[{"key": str(i), "value": i} for i in range(200_000)], [{"name": "a" * MB, "value": 1}]],
        "codepoints": [wide, [0x10FFFF] * 300_000, [-1, 1e300, math.nan]],
        "count": [0, 1, 1e9, -1, 0.5],
    }


# Filters (jq source) for forms' closure arguments.
FILTERS: dict[str, list[str]] = {
    "filter": [".", "empty", "(., .)", "[., .]", "tostring", ".[]?"],
    "cond": ["true", "false", ". == null", "length > 1"],
    "replacement": ['"x"', '"\\(.x)\\(.x)"', '("a", "b")', "tojson"],
}

# How an operator entry is written in jq.
_OPERATOR_SYNTAX = {
    "_plus": "$a0 + $a1",
    "_minus": "$a0 - $a1",
    "_multiply": "$a0 * $a1",
    "_divide": "$a0 / $a1",
    "_mod": "$a0 % $a1",
    "_equal": "$a0 == $a1",
    "_notequal": "$a0 != $a1",
    "_less": "$a0 < $a1",
    "_lesseq": "$a0 <= $a1",
    "_greater": "$a0 > $a1",
    "_greatereq": "$a0 >= $a1",
    "_negate": "-$in",
    "_index": "$in[$a0]",
    "_slice": "$in[$a0:$a1]",
    "_iterate": "[$in[]]",
}


@dataclass(frozen=True)
class Case:
    source: str
    variables: dict[str, Any]

    def __repr__(self) -> str:
        shown = {k: _short(v) for k, v in self.variables.items()}
        return f"{self.source} with {shown}"


def _short(v: Any) -> str:
    text = dump_prefix(v, 60)  # bounded: repr of a value sharing children is exponential
    size = f", len {len(v)}" if isinstance(v, (str, list, dict)) else ""
    return text if len(text) <= 60 else f"{text[:40]}... ({type(v).__name__}{size})"


def kinds_without_pool() -> set[str]:
    """Argument kinds some entry declares that have no adversarial values here."""
    known = set(pools()) | set(FILTERS)
    return {k for e in REGISTRY.values() for k in (e.input, *e.args) if k not in known}


def _pool(kind: str) -> list[Any]:
    return FILTERS[kind] if kind in FILTERS else pools()[kind]


def cases(entry: Builtin, limit: int = 8) -> Iterator[Case]:
    """Up to ``limit`` programs running ``entry`` on adversarial inputs: every value of the input
    pool, and of each argument's pool, appears at least once (rotating), within ``limit``."""
    kinds = (entry.input, *entry.args)
    value_pools = [_pool(k) for k in kinds]
    count = min(limit, max(len(p) for p in value_pools))
    for i in range(count):
        picks = [p[(i * (j + 1)) % len(p)] for j, p in enumerate(value_pools)]
        yield case_of(entry, picks)


def case_of(entry: Builtin, picks: list[Any]) -> Case:
    """The program running ``entry`` on ``picks`` (input first, then one value per argument)."""
    variables: dict[str, Any] = {"in": picks[0]}
    args: list[str] = []
    for j, (kind, value) in enumerate(zip(entry.args, picks[1:], strict=True)):
        if kind in FILTERS:
            args.append(value)
        else:
            variables[f"a{j}"] = value
            args.append(f"$a{j}")
    if entry.kind == "operator":
        return Case(_OPERATOR_SYNTAX[entry.name], variables)
    if entry.kind == "format":
        return Case(f"$in | {entry.name}", variables)
    call = entry.name if not args else f"{entry.name}({'; '.join(args)})"
    return Case(f"$in | {call}", variables)


def all_cases(limit: int = 8) -> Iterator[tuple[Builtin, Case]]:
    for entry in REGISTRY.values():
        for case in cases(entry, limit):
            yield entry, case


__all__ = [
    "FILTERS",
    "MB",
    "Case",
    "all_cases",
    "case_of",
    "cases",
    "deep",
    "kinds_without_pool",
    "pools",
    "shared",
]
