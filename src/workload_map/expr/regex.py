"""Regular expressions for the jq regex builtins, on RE2 (``google-re2``), and the metered
search loop every regex builtin runs (``searches``).

RE2 matches in time linear in the subject, whatever the pattern, so a hostile pattern cannot
stall a process: ``(a|a)*$`` or ``a*a*a*a*a*$`` on 100,000 characters take microseconds. The
price is the constructs RE2 cannot run in linear time: backreferences, lookahead and
lookbehind, atomic groups and possessive quantifiers. jq's Oniguruma has them; a pattern that
uses one is refused when the definition is loaded (and at run time for computed patterns) with
a message naming the construct.

"Linear" hides two factors the cost model has to pay for. One search costs up to the subject's
length times the program's size (RE2 falls back from its DFA to an NFA on patterns such as
``(a|b)*a(a|b){30}``: seconds on a megabyte). And a global match runs one search per match, each
of which may read far past the match it returns (leftmost-first ``a*b|a`` on ``aaaa...`` reads
to the end every time: quadratic). So every search is afforded at its worst case before it runs
(the rest of the subject at the program's rate: refused when the budget left could not pay for
it) and charged after it ran: what it was seen to read or, for a search whose worst case is
long, the CPU time it took, whichever is more.

jq (Oniguruma) flags: ``g`` global, ``i`` ignore case, ``x`` extended (whitespace and ``#``
comments outside classes are dropped before RE2 sees the pattern), ``n`` ignore empty matches,
``s`` single-line (dot matches newline), ``l`` longest, ``p`` = ``s`` + multi-line.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import re2
from re2 import _re2

from .runtime import STRING_UNIT, LimitExceeded, Meter, afford, charge, charge_seconds, charge_text

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


def _program(pattern: str, flags: str, capture: bool = True) -> tuple[Any, bool, bool]:
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
    options.never_capture = not capture
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


@dataclass(frozen=True)
class Program:
    """A compiled jq regex: the RE2 program, the jq flags it was given, its groups' names and the
    units per subject byte one search may cost (from the program's size)."""

    regexp: Any  # re2._re2.RE2
    glob: bool
    skip_empty: bool
    names: tuple[str | None, ...]  # the name of group 1, 2, ... (None when unnamed)
    rate: float


# One search reads each subject byte with every instruction of the program at worst (RE2's DFA
# thrashing or its NFA: ~5 ns each, measured): a unit (~0.25 us) is afforded for this many
# instruction-bytes before a search runs.
INSTRUCTION_BYTES_PER_UNIT = 32
# What a search is charged afterwards: the bytes it was seen to read at this rate (RE2's DFA,
# ~1-4 ns a byte), or, when it was timed, its CPU time if that is more.
SCAN_BYTES_PER_UNIT = 64
# Fixed cost of one search (a call into RE2, its span list, the loop around it).
SEARCH_UNITS = 6
# A search whose worst case is above this is timed (thread CPU time, ~1 us to read twice) and
# charged at least the time it took; cheaper ones are charged their worst case outright.
TIMED_UNITS = 256


@lru_cache(maxsize=512)
def _compiled(pattern: str, flags: str, capture: bool) -> Program | str:
    try:
        rx, glob, skip_empty = _program(pattern, flags, capture)
    except ValueError as exc:
        return str(exc)
    regexp = rx._regexp
    names: list[str | None] = [None] * regexp.NumberOfCapturingGroups()
    for name, i in rx.groupindex.items():
        names[i - 1] = name
    size = max(2, regexp.ProgramSize())
    return Program(regexp, glob, skip_empty, tuple(names), size / INSTRUCTION_BYTES_PER_UNIT)


def compiled(meter: Meter, pattern: str, flags: str, capture: bool = True) -> Program:
    """The program for ``pattern`` with jq ``flags`` (cached); compiling is charged by the
    pattern's length whether cached or not (the charge does not depend on cache state). Raises
    LimitExceeded with the problem for an invalid or unsupported pattern, like the static check
    does for literal ones."""
    charge_text(meter, len(pattern) * 4)
    program = _compiled(pattern, flags, capture)
    if isinstance(program, str):
        raise LimitExceeded(program)
    return program


_UNANCHORED = _re2.RE2.Anchor.UNANCHORED


def searches(meter: Meter, program: Program, subject: str) -> Iterator[list[tuple[int, int]]]:
    """Every match of ``program`` in ``subject``, left to right, as jq's global matching finds them
    (after an empty match the next search starts one character later); each match is the list
    of (start, end) character spans of group 0, 1, ... ((-1, -1) for a group that did not take
    part). Every search is afforded before it runs and charged after (module docstring)."""
    if len(subject) > MAX_SUBJECT:
        raise LimitExceeded(f"regular expression subject longer than {MAX_SUBJECT} characters")
    ascii_only = subject.isascii()
    charge_text(meter, len(subject) * (1 if ascii_only else 4))  # the UTF-8 copy RE2 reads
    # (lone surrogates cannot be encoded: "?" stands for each, one character for one)
    data = subject.encode("utf-8", "replace")
    end = len(data)
    regexp = program.regexp
    rate = program.rate
    # Byte offsets become character offsets incrementally (one pass over the subject in all).
    last_byte = last_char = 0
    pos = 0
    while True:
        rest = end - pos
        worst = int(rest * rate) + SEARCH_UNITS
        afford(meter, worst)
        if worst > TIMED_UNITS:
            started = time.thread_time()
            spans = regexp.Match(_UNANCHORED, data, pos, end)
            seconds = time.thread_time() - started
            start, stop = spans[0]
            seen = (end if start < 0 else stop) - pos
            charge_seconds(meter, seconds, seen // SCAN_BYTES_PER_UNIT + 2 * SEARCH_UNITS)
        else:
            spans = regexp.Match(_UNANCHORED, data, pos, end)
            start, stop = spans[0]
            charge(meter, worst)
        if start < 0:
            return
        if ascii_only:
            yield spans
        else:
            # Offsets only grow from the last match's end: converted in one pass over the text.
            table = {}
            b, c = last_byte, last_char
            for o in sorted({o for span in spans for o in span if o >= 0}):
                c += _re2.BytesToCharLen(data, b, o)
                b = o
                table[o] = c
            yield [(table[s], table[e]) if s >= 0 else (-1, -1) for s, e in spans]
            last_byte, last_char = stop, table[stop]
        if stop > start:
            pos = stop
        elif stop >= end:
            return
        else:
            pos = stop + (1 if ascii_only else _re2.CharLenToBytes(data, stop, 1))


def regex_safety_problem(pattern: str, flags: str = "") -> str | None:
    """A message when the pattern is invalid or uses a construct RE2 cannot run, else None."""
    program = _compiled(pattern, flags, True)
    return program if isinstance(program, str) else None


__all__ = [
    "MAX_PATTERN",
    "MAX_SUBJECT",
    "STRING_UNIT",
    "Program",
    "charge",
    "compiled",
    "parse_flags",
    "regex_safety_problem",
    "searches",
    "translate",
]
