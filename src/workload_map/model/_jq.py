"""The few things the validator needs from the jq engine, behind one small seam.

The engine (``workload_map.expr``) is imported on first use so that importing the model does not
load it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from workload_map.errors import ExpressionError, ExpressionSyntaxError


@dataclass(frozen=True, slots=True)
class ExpressionProblem:
    kind: Literal["syntax", "safety"]
    message: str
    offset: int | None


def check(source: str, variables: tuple[str, ...] = ()) -> ExpressionProblem | None:
    """Compile ``source`` seeing ``$variables`` (cached by the engine); the first problem, or
    None when it is fine."""
    from workload_map.expr import compile_expression

    try:
        compile_expression(source, variables)
    except ExpressionSyntaxError as exc:
        return ExpressionProblem("syntax", exc.message, exc.offset)
    except ExpressionError as exc:
        return ExpressionProblem("safety", exc.message, None)
    return None


def assignable(source: str) -> bool | None:
    """Whether ``source`` denotes assignable paths; None when the engine cannot tell."""
    import workload_map.expr as expr

    fn: Any = getattr(expr, "is_assignable", None)
    try:
        if callable(fn):
            return bool(fn(source))
        compiled: Any = expr.compile_expression(source)
        attr: Any = getattr(compiled, "is_assignable", None)
        if attr is None:
            return None
        return bool(attr() if callable(attr) else attr)
    except ExpressionError:
        return None
