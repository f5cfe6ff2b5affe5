"""Running an expression as the cost-model tests need it: the answer or the error, the units the
evaluation charged and the peak bytes it allocated (tracemalloc)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Mapping
from typing import Any

from workload_map.errors import ExpressionError
from workload_map.expr import compile_expression
from workload_map.expr import runtime as R


def evaluate(src: str, data: Any, variables: Mapping[str, Any] | None = None) -> tuple[Any, int, int]:
    """(outputs or the ExpressionError, units charged, peak bytes allocated while evaluating)."""
    expr = compile_expression(src, list(variables or ()))
    meter = R.start()
    tracemalloc.start()
    try:
        try:
            out: Any = expr.all(data, variables, meter=meter)
        except ExpressionError as exc:
            out = exc
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, R.used(meter), peak
