"""Workload filters shared by ``wmap get`` and the HTTP API: the phase names a filter may use, and
Kubernetes label selectors (``a=b,c!=d,e in (f,g),h notin (i),j,!k``): parse and match.

Each consumer turns :class:`SelectorError` / :class:`UnknownPhaseError` into its own error (a usage
error in the CLI, a 400 in the API).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

__all__ = ["PHASES", "SelectorError", "UnknownPhaseError", "check_selector", "parse_phases", "parse_selector"]

#: The phases a ``--phase`` / ``?phase=`` filter accepts, in the order help and errors list them.
PHASES = (
    "Undefined",
    "Resuming",
    "Suspending",
    "Suspended",
    "Running",
    "Failed",
    "Completed",
    "Initializing",
    "Degraded",
)

Matcher = Callable[[Mapping[str, str]], bool]

_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_VALUE = r"[-A-Za-z0-9_.]*"
_EQ = re.compile(rf"^\s*({_KEY})\s*(==|=|!=)\s*({_VALUE})\s*$")
_SET = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EXISTS = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")


class SelectorError(ValueError):
    pass


class UnknownPhaseError(ValueError):
    """A phase filter named something not in :data:`PHASES`."""

    def __init__(self, phase: str) -> None:
        super().__init__(f'invalid phase "{phase}": must be one of {", ".join(PHASES)}')
        self.phase = phase


def parse_phases(values: Iterable[str]) -> tuple[str, ...]:
    """Phase names from ``values`` (each may be comma-separated), unique and in order.

    Raises :class:`UnknownPhaseError` for the first name not in :data:`PHASES`."""
    out: list[str] = []
    for value in values:
        for part in value.split(","):
            phase = part.strip()
            if not phase:
                continue
            if phase not in PHASES:
                raise UnknownPhaseError(phase)
            out.append(phase)
    return tuple(dict.fromkeys(out))


def _split(selector: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    cur = ""
    for ch in selector:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def _term(text: str) -> Matcher:
    m = _EQ.match(text)
    if m:
        key, op, value = m.group(1), m.group(2), m.group(3)
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    m = _SET.match(text)
    if m:
        key, op = m.group(1), m.group(2)
        values = {v.strip() for v in m.group(3).split(",") if v.strip()}
        if any(not re.fullmatch(_VALUE, v) for v in values):
            raise SelectorError(f'invalid value in label selector term "{text.strip()}"')
        if op == "in":
            return lambda labels: key in labels and labels[key] in values
        return lambda labels: labels.get(key) not in values
    m = _EXISTS.match(text)
    if m:
        neg, key = m.group(1), m.group(2)
        if neg:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    raise SelectorError(f'unable to parse requirement "{text.strip()}"')


def parse_selector(selector: str) -> Matcher:
    """A matcher for ``selector`` (empty matches everything); :class:`SelectorError` if malformed."""
    if not selector.strip():
        return lambda labels: True
    terms = [_term(t) for t in _split(selector)]
    return lambda labels: all(t(labels) for t in terms)


def check_selector(selector: str) -> None:
    """Raise :class:`SelectorError` if ``selector`` is malformed (empty is fine)."""
    parse_selector(selector)
