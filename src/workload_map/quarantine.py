"""Quarantine of definitions that keep exceeding the expression engine's limits.

Every evaluation is bounded (cost budget and deadline, :mod:`workload_map.expr.runtime`), but a
hostile definition still costs up to one deadline per workload: a thousand workloads of its type
would hold the exporter's or the server's workers for minutes. The long-running consumers therefore
keep one :class:`Quarantine`: after ``threshold`` consecutive limit failures a definition is not
evaluated for ``period`` seconds (its workloads are reported as failed, quarantined); then one
evaluation is let through as a probe. A probe that fails again doubles the period (up to
``max_period``); any success lifts the quarantine.

Only limit errors count (:func:`exceeded_limits`): a field missing on one object is that object's
problem, not the definition's cost.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from workload_map import messages
from workload_map.errors import DefinitionQuarantinedError, ExpressionLimitError, WorkloadMapError, caused_by

__all__ = ["Quarantine", "QuarantineState", "exceeded_limits"]

T = TypeVar("T")


def exceeded_limits(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was caused by, the engine refusing work beyond its budget or deadline."""
    return caused_by(exc, ExpressionLimitError)


@dataclass(frozen=True)
class QuarantineState:
    """What is known of one definition's limit failures."""

    definition: str
    #: Consecutive limit failures (reset by a success).
    consecutive: int
    #: Limit failures since the process started.
    total: int
    #: The last limit error's message.
    last_error: str
    #: Monotonic time until which the definition is not evaluated (0: not quarantined).
    until: float = 0.0
    #: Length of the current (or next) quarantine.
    period: float = 0.0
    #: How many times it was put in quarantine.
    times: int = 0

    def active(self, now: float) -> bool:
        return self.until > now

    def to_dict(self, now: float) -> dict[str, object]:
        return {
            "definition": self.definition,
            "quarantined": self.active(now),
            "retryInSeconds": round(max(0.0, self.until - now), 1),
            "consecutiveFailures": self.consecutive,
            "limitFailures": self.total,
            "times": self.times,
            "lastError": self.last_error,
        }


class Quarantine:
    """Per-definition limit-failure accounting; thread-safe."""

    def __init__(
        self,
        *,
        threshold: int = 3,
        period: float = 60.0,
        max_period: float = 900.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.threshold = max(1, threshold)
        self.base_period = period
        self.max_period = max_period
        self._clock = clock
        self._lock = threading.Lock()
        self._states: dict[str, QuarantineState] = {}
        self._probing: set[str] = set()

    def now(self) -> float:
        return self._clock()

    def admit(self, definition: str) -> QuarantineState | None:
        """None when ``definition`` may be evaluated now; else its state (still quarantined).

        When a quarantine has run out, the first caller is admitted as the probe and others keep
        being refused until that probe reports :meth:`succeeded` or :meth:`failed`.
        """
        with self._lock:
            state = self._states.get(definition)
            if state is None or state.until == 0.0:
                return None
            if state.active(self._clock()) or definition in self._probing:
                return state
            self._probing.add(definition)
            return None

    def succeeded(self, definition: str) -> None:
        with self._lock:
            self._probing.discard(definition)
            state = self._states.get(definition)
            if state is not None and (state.consecutive or state.until):
                self._states[definition] = replace(state, consecutive=0, until=0.0)

    def failed(self, definition: str, exc: BaseException) -> bool:
        """Record a failure; True when it was a limit failure (the only kind counted)."""
        if not exceeded_limits(exc):
            self.succeeded(definition)  # the definition's cost was fine: this object is at fault
            return False
        now = self._clock()
        with self._lock:
            probe = definition in self._probing
            self._probing.discard(definition)
            state = self._states.get(definition) or QuarantineState(definition, 0, 0, "")
            state = replace(
                state, consecutive=state.consecutive + 1, total=state.total + 1, last_error=str(exc)
            )
            if probe or (state.consecutive >= self.threshold and not state.active(now)):
                period = self.base_period if state.times == 0 else min(self.max_period, state.period * 2)
                state = replace(state, until=now + period, period=period, times=state.times + 1)
            self._states[definition] = state
        return True

    def run(self, definition: str, work: Callable[[], T]) -> T:
        """``work()`` (an evaluation of ``definition``) unless the definition is quarantined, with its
        outcome recorded; raises DefinitionQuarantinedError instead of running it while quarantined."""
        refused = self.admit(definition)
        if refused is not None:
            raise DefinitionQuarantinedError(
                messages.definition_quarantined(
                    definition, refused.until - self._clock(), refused.consecutive, refused.last_error
                ),
                definition=definition,
            )
        try:
            result = work()
        except WorkloadMapError as exc:
            self.failed(definition, exc)
            raise
        except BaseException:
            with self._lock:
                self._probing.discard(definition)
            raise
        self.succeeded(definition)
        return result

    def state(self, definition: str) -> QuarantineState | None:
        with self._lock:
            return self._states.get(definition)

    def states(self) -> list[QuarantineState]:
        """Every definition that ever exceeded its limits, by name."""
        with self._lock:
            return sorted(self._states.values(), key=lambda s: s.definition)

    def forget(self, definition: str) -> None:
        """Drop what is known (the definition changed or went away)."""
        with self._lock:
            self._states.pop(definition, None)
            self._probing.discard(definition)
