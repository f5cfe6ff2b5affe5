"""The few things the validator needs from the jq engine, behind one small seam.

The engine (``workload_map.expr``) is imported on first use so that importing the model does not
load it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from workload_map.errors import ExpressionError, ExpressionSyntaxError


@dataclass(frozen=True, slots=True)
class ExpressionProblem:
    kind: Literal["syntax", "safety"]
    message: str
    offset: int | None


T = TypeVar("T")

#: CPU seconds of expression compiling allowed for one file of definitions (every definition in it
#: shares them), and for one definition sent as an object (REST registration, admission review).
#: The whole built-in catalog compiles in about 0.6 s of CPU, its largest definition in 0.11 s.
FILE_COMPILE_SECONDS = 2.0
OBJECT_COMPILE_SECONDS = 0.5


class CompileBudget:
    """The compile cost of one file's (or one object's) expressions, charged as they are compiled:
    CPU time of this thread, so other processes on a busy machine hardly change the outcome. Once
    spent, the remaining expressions are not compiled (:meth:`run` returns ``None``) and the
    validator reports the definitions left unchecked (KARTA301)."""

    __slots__ = ("origin", "seconds", "skipped", "spent")

    def __init__(self, origin: str, seconds: float = FILE_COMPILE_SECONDS) -> None:
        self.origin = origin
        self.seconds = seconds
        self.spent = 0.0
        self.skipped = 0

    @property
    def exhausted(self) -> bool:
        return self.spent > self.seconds

    def run(self, work: Callable[[], T]) -> tuple[bool, T | None]:
        """(True, result) of ``work`` charged to the budget, or (False, None) once it is spent."""
        if self.exhausted:
            self.skipped += 1
            return False, None
        start = time.thread_time()
        try:
            return True, work()
        finally:
            self.spent += time.thread_time() - start


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
