"""Regular expressions for the jq regex builtins, on RE2 (``google-re2``).

RE2 matches in time linear in the subject, whatever the pattern, so a hostile pattern cannot
stall a process: ``(a|a)*$`` or ``a*a*a*a*a*$`` on 100,000 characters take microseconds. The
price is the constructs RE2 cannot run in linear time: backreferences, lookahead and
lookbehind, atomic groups and possessive quantifiers. jq's Oniguruma has them; a pattern that
uses one is refused when the definition is loaded (and at run time for computed patterns) with
a message naming the construct.

jq (Oniguruma) flags: ``g`` global, ``i`` ignore case, ``x`` extended (whitespace and ``#``
comments outside classes are dropped before RE2 sees the pattern), ``n`` ignore empty matches,
``s`` single-line (dot matches newline), ``l`` longest, ``p`` = ``s`` + multi-line.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import re2

MAX_SUBJECT = 1_000_000  # characters; RE2 is linear, this only bounds memory
MAX_PATTERN = 10_000  # characters
# RE2's own memory budget for one compiled program (bytes); larger programs are refused.
MAX_PROGRAM_MEMORY = 8 << 20

_NAMED_GROUP = re.compile(r"\(\?<(?=[A-Za-z_])")
# Constructs RE2 rejects, recognised to give a message that names them (RE2's own is terse).
_UNSUPPORTED = (
    (re.compile(r"(?<!\\)(?:\\\\)*\\[1-9]"), "backreferences (\\1) are not supported"),
    (re.compile(r"(?<!\\)(?:\\\\)*\\k<"), "named backreferences (\\k<name>) are not supported"),
    (re.compile(r"\(\?<?[=!]"), "lookahead and lookbehind ((?=...), (?!...), (?<=...)) are not supported"),
    (re.compile(r"\(\?>"), "atomic groups ((?>...)) are not supported"),
    (re.compile(r"(?<!\\)[*+?}]\+"), "possessive quantifiers (*+, ++, ?+) are not supported"),
)


def translate(pattern: str) -> str:
    """Oniguruma named groups ``(?<name>...)`` become ``(?P<name>...)``."""
    return _NAMED_GROUP.sub("(?P<", pattern)


def _strip_extended(pattern: str) -> str:
    """The ``x`` flag: drop unescaped whitespace and ``#`` comments outside character classes."""
    out: list[str] = []
    i = 0
    in_class = False
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
        elif ch == "#":
            end = pattern.find("\n", i)
            i = n if end < 0 else end
            continue
        elif not ch.isspace():
            out.append(ch)
        i += 1
    return "".join(out)


def parse_flags(flags: str | None) -> tuple[str, bool, bool, bool, bool]:
    """(inline RE2 flags, global, skip-empty-matches, longest, extended); ValueError when unknown."""
    inline = ""
    glob = skip_empty = longest = extended = False
    for ch in flags or "":
        if ch == "g":
            glob = True
        elif ch == "i":
            inline += "i"
        elif ch == "x":
            extended = True
        elif ch == "n":
            skip_empty = True
        elif ch == "s":
            inline += "s"
        elif ch == "p":
            inline += "sm"
        elif ch == "l":
            longest = True
        else:
            raise ValueError(f"{flags} is not a valid modifier string")
    return "".join(sorted(set(inline))), glob, skip_empty, longest, extended


def _program(pattern: str, flags: str) -> tuple[Any, bool, bool]:
    """Compile for RE2: (regexp, global, skip-empty); raises ValueError with jq-style text."""
    inline, glob, skip_empty, longest, extended = parse_flags(flags)
    if len(pattern) > MAX_PATTERN:
        raise ValueError(f"regular expression longer than {MAX_PATTERN} characters")
    text = _strip_extended(pattern) if extended else pattern
    for rule, what in _UNSUPPORTED:
        if rule.search(text):
            raise ValueError(f"{pattern} is not a supported regex: {what} (RE2 syntax, linear-time matching)")
    options = re2.Options()
    options.log_errors = False
    options.longest_match = longest
    options.max_mem = MAX_PROGRAM_MEMORY
    source = translate(text)
    if inline:
        source = f"(?{inline}){source}"
    try:
        rx = re2.compile(source, options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise ValueError(f"{pattern} is not a valid regex: {detail}") from None
    return rx, glob, skip_empty


def regex_safety_problem(pattern: str, flags: str = "") -> str | None:
    """A message when the pattern is invalid or uses a construct RE2 cannot run, else None."""
    try:
        _program(pattern, flags)
    except ValueError as exc:
        return str(exc)
    return None


@lru_cache(maxsize=512)
def compiled(pattern: str, flags: str) -> tuple[Any, bool, bool, str | None]:
    """(compiled regex or None, global, skip-empty, problem message)."""
    try:
        rx, glob, skip_empty = _program(pattern, flags)
    except ValueError as exc:
        return None, False, False, str(exc)
    return rx, glob, skip_empty, None
