"""Regular expressions for the jq regex builtins, on Python ``re``.

Python's ``re`` has no timeout, so hostile patterns are bounded by two rules instead:
patterns with a quantifier nested inside another unbounded quantifier (``(a+)+``, ``(a*)*``,
``(?:a|ab)*c*``-style nesting), or with backreferences, are rejected (the classic catastrophic
backtracking shapes), and subjects longer than ``MAX_SUBJECT`` characters are refused.
Polynomial backtracking with several adjacent quantifiers is still possible but bounded by
the subject cap.

jq (Oniguruma) flags: ``g`` global, ``i`` ignore case, ``x`` extended, ``n`` ignore empty
matches, ``s`` single-line (dot matches newline), ``l`` longest (ignored), ``p`` = ``s`` + multiline.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

try:  # Python >= 3.11
    from re import _parser as sre_parse  # type: ignore[attr-defined, unused-ignore]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse  # type: ignore[no-redef, unused-ignore]

MAX_SUBJECT = 100_000
_NAMED_GROUP = re.compile(r"\(\?<(?=[A-Za-z_])")
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")


def translate(pattern: str) -> str:
    """Oniguruma named groups ``(?<name>...)`` become Python's ``(?P<name>...)``."""
    return _NAMED_GROUP.sub("(?P<", pattern)


def _contains_repeat(items: Any) -> bool:
    for op, av in items:
        name = str(op)
        if name in _REPEATS:
            return True
        if name == "SUBPATTERN" and _contains_repeat(av[-1]):
            return True
        if name == "BRANCH" and any(_contains_repeat(b) for b in av[1]):
            return True
    return False


def _nested_problem(items: Any) -> str | None:
    for op, av in items:
        name = str(op)
        if name in ("GROUPREF", "GROUPREF_EXISTS"):
            return "backreferences are not allowed in regular expressions"
        if name in _REPEATS:
            _lo, hi, sub = av
            if hi > 1 and _contains_repeat(sub):
                return "nested quantifiers are not allowed in regular expressions (catastrophic backtracking)"
            inner = _nested_problem(sub)
            if inner:
                return inner
        elif name == "SUBPATTERN":
            inner = _nested_problem(av[-1])
            if inner:
                return inner
        elif name == "BRANCH":
            for b in av[1]:
                inner = _nested_problem(b)
                if inner:
                    return inner
        elif name in ("ASSERT", "ASSERT_NOT"):
            inner = _nested_problem(av[1])
            if inner:
                return inner
    return None


def python_flags(flags: str | None) -> tuple[int, bool, bool]:
    """Return (re flags, global, skip-empty-matches); raises ValueError for unknown flags."""
    out = 0
    glob = False
    skip_empty = False
    for ch in flags or "":
        if ch == "g":
            glob = True
        elif ch == "i":
            out |= re.IGNORECASE
        elif ch == "x":
            out |= re.VERBOSE
        elif ch == "n":
            skip_empty = True
        elif ch == "s":
            out |= re.DOTALL
        elif ch == "p":
            out |= re.DOTALL | re.MULTILINE
        elif ch == "l":
            pass
        else:
            raise ValueError(f"{flags} is not a valid modifier string")
    return out, glob, skip_empty


def regex_safety_problem(pattern: str, flags: str = "") -> str | None:
    """A message when the pattern is invalid or unsafe, else None."""
    try:
        pyflags, _, _ = python_flags(flags)
    except ValueError as exc:
        return str(exc)
    try:
        parsed = sre_parse.parse(translate(pattern), pyflags)
    except (re.error, RecursionError, OverflowError) as exc:
        return f"{pattern} (at offset {getattr(exc, 'pos', 0) or 0}) is not a valid regex: {exc}"
    return _nested_problem(list(parsed))


@lru_cache(maxsize=512)
def compiled(pattern: str, flags: str) -> tuple[re.Pattern[str] | None, bool, bool, str | None]:
    """(compiled regex or None, global, skip-empty, problem message)."""
    problem = regex_safety_problem(pattern, flags)
    if problem is not None:
        return None, False, False, problem
    pyflags, glob, skip_empty = python_flags(flags)
    return re.compile(translate(pattern), pyflags), glob, skip_empty, None
