"""Kubernetes label selectors (``a=b,c!=d,e in (f,g),h notin (i),j,!k``): parse and match."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

__all__ = ["SelectorError", "parse_selector"]

Matcher = Callable[[Mapping[str, str]], bool]

_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_VALUE = r"[-A-Za-z0-9_.]*"
_EQ = re.compile(rf"^\s*({_KEY})\s*(==|=|!=)\s*({_VALUE})\s*$")
_SET = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EXISTS = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")


class SelectorError(ValueError):
    pass


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
