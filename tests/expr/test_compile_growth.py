"""Compiling is linear in chained forks: each ``,``, ``if``, ``and``/``or``, ``?//``, ``select``
or path-mode fork generates the code after it once, not once per branch (10 chained
``(.a,.b) |`` generated 2^10 continuations: 455 ms, and 12 were refused as too complex).

The generator's name cap counts every name it makes, discarded or not, so a chain that compiles
at a length where doubling work would pass the cap shows the work is bounded; the generated code
must grow linearly. No timings: what grows is counted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from workload_map.expr import compile_expression

from .test_conformance import libjq_result, our_result

CHAINS: dict[str, Callable[[int], str]] = {
    "comma": lambda n: "." + " | (.a, .b)" * n,
    "comma, long tail": lambda n: "." + " | (.a, .b) | {x: .a, y: [.b, .a]}" * n,
    "if": lambda n: "." + " | (if .a then .a else .b end)" * n,
    "if without else": lambda n: "." + " | (if .a then .a end)" * n,
    "and/or": lambda n: "." + " | ((.a and .b), (.a or .b)) | {a: ., b: .}" * n,
    "select": lambda n: "." + " | select(.a, .b)" * n,
    "alternative patterns": lambda n: "." + " | (. as [$a] ?// $a | $a)" * n,
    "try": lambda n: "." + " | (.a)?" * n,
    "path of commas": lambda n: "path(." + " | (.a, .b)" * n + ")",
    "path of ifs": lambda n: "path(." + " | (if .a then .a else .b end)" * n + ")",
    "path of alternative patterns": lambda n: "path(." + " | (. as [$a] ?// $a | .a)" * n + ")",
}


def _lines(src: str) -> int:
    return compile_expression(src).generated_source.count("\n")


@pytest.mark.parametrize("shape", CHAINS, ids=list(CHAINS))
def test_chained_forks_compile_to_code_linear_in_their_length(shape: str) -> None:
    chain = CHAINS[shape]
    # Compiling 32 at all shows the work is bounded: 2^32 continuations would pass the name cap.
    small, large = _lines(chain(16)), _lines(chain(32))
    assert large <= 2.5 * small, (small, large)


def _nested(depth: int) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = {"a": value, "b": [i, value] if i % 3 else None}
    return value


# Fork chains short enough for libjq's output count, long enough that the code after each fork
# is generated once and buffered or looped over (not inlined), in value and path mode.
AGREEING = [
    "[." + " | (.a, .b)?" * 6 + "]",
    "[." + " | (.a, .b)? | {x: .a?, y: [.b?]}" * 3 + "]",
    "[." + " | (if .a then .a else .b end)?" * 6 + "]",
    "[." + " | ((.a and .b), (.a or .b)) | {a: ., b: [., .]}" * 3 + "]",
    "[." + " | select(.a, .b) | .a" * 4 + "]",
    "[." + " | (. as [$a] ?// $a | $a) | (.a, .b)?" * 4 + "]",
    "[path(." + " | (.a, .b)?" * 6 + ")]",
    "[path(." + " | (if .a then .a else .b end)?" * 6 + ")]",
    "first(." + " | (.a, .b)?" * 6 + ")",
    "[limit(5; ." + " | (.a, .b)? | select(. != null)" * 6 + ")]",
]


@pytest.mark.parametrize("src", AGREEING)
def test_long_fork_chains_agree_with_libjq(src: str) -> None:
    for data in (_nested(8), {"a": [1, {"a": 2}], "b": {"a": None, "b": 3}}, None):
        assert our_result(src, data) == libjq_result(src, data), f"{src} on {data!r}"
