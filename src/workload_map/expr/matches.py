"""jq's regex builtins (``test``, ``match``, ``capture``, ``scan``, ``splits``, ``split/2``,
``sub``, ``gsub``) on the metered search loop of ``regex.searches``.

Semantics follow libjq 1.8's definitions in ``builtin.jq``: ``scan`` and ``splits`` match
globally; ``splits`` yields the pieces between every match, empty ones included; ``sub`` keeps one
result per output of the replacement filter (the i-th output of every match builds the i-th
result), and the input unchanged when no replacement was made. Every match object, capture and
piece is charged before it is built: a few units for its containers plus its text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .regex import Program, compiled, searches
from .runtime import MAX_RESULTS, JqError, LimitExceeded, Meter, charge, charge_text, describe

# Units for one match object and one capture object (a dict and its small values).
MATCH_UNITS = 6
GROUP_UNITS = 5


def _program(meter: Meter, v: Any, pattern: Any, flags: Any, capture: bool = True) -> Program:
    if type(v) is not str:
        raise JqError(f"{describe(v)} cannot be matched, as it is not a string")
    if type(pattern) is not str:
        raise JqError(f"{describe(pattern)} cannot be matched, as it is not a string")
    if flags is not None and type(flags) is not str:
        raise JqError(f"{describe(flags)} is not a string")
    return compiled(meter, pattern, flags or "", capture)


def _global(flags: Any) -> Any:
    """``$flags + "g"`` as libjq's ``scan``, ``splits`` and ``gsub`` compute it."""
    if flags is None:
        return "g"
    if type(flags) is not str:
        raise JqError(f'{describe(flags)} and string ("g") cannot be added')
    return flags + "g"


def _matches(meter: Meter, v: str, program: Program) -> Iterator[list[tuple[int, int]]]:
    """The matches jq reports: all of them with the ``g`` flag, else the first; ``n`` drops empty
    ones."""
    for spans in searches(meter, program, v):
        start, end = spans[0]
        if program.skip_empty and start == end:
            continue
        yield spans
        if not program.glob:
            return


def _match_object(meter: Meter, v: str, program: Program, spans: list[tuple[int, int]]) -> dict[str, Any]:
    start, end = spans[0]
    text = sum(e - s for s, e in spans if s >= 0)
    charge(meter, MATCH_UNITS + GROUP_UNITS * (len(spans) - 1))
    charge_text(meter, text)
    captures = []
    for (s, e), name in zip(spans[1:], program.names, strict=True):
        if s < 0:
            # libjq's key order for a group that did not take part
            captures.append({"offset": -1, "string": None, "length": 0, "name": name})
        else:
            captures.append({"offset": s, "length": e - s, "string": v[s:e], "name": name})
    return {"offset": start, "length": end - start, "string": v[start:end], "captures": captures}


def match_list(meter: Meter, v: Any, pattern: Any, flags: Any = None) -> Iterator[dict[str, Any]]:
    """``match(re; flags)``: match objects, one at a time (each search runs when it is asked for)."""
    program = _program(meter, v, pattern, flags)
    for spans in _matches(meter, v, program):
        yield _match_object(meter, v, program, spans)


def _capture_of(meter: Meter, v: str, program: Program, spans: list[tuple[int, int]]) -> dict[str, Any]:
    """The named captures of one match as jq's ``capture`` object (a later group of the same name
    wins, as ``from_entries`` does)."""
    charge(meter, MATCH_UNITS + len(spans))
    charge_text(meter, sum(e - s for (s, e), n in zip(spans[1:], program.names, strict=True) if n and s >= 0))
    out: dict[str, Any] = {}
    for (s, e), name in zip(spans[1:], program.names, strict=True):
        if name is not None:
            out[name] = v[s:e] if s >= 0 else None
    return out


def capture_list(meter: Meter, v: Any, pattern: Any, flags: Any = None) -> Iterator[dict[str, Any]]:
    """``capture(re; flags)``: one object of named captures per match."""
    program = _program(meter, v, pattern, flags)
    for spans in _matches(meter, v, program):
        yield _capture_of(meter, v, program, spans)


def scan_list(meter: Meter, v: Any, pattern: Any, flags: Any = None) -> Iterator[Any]:
    """``scan(re; flags)``: every match (global), as its text or, with groups, their texts."""
    program = _program(meter, v, pattern, _global(flags))
    for spans in _matches(meter, v, program):
        charge(meter, 1 + len(spans))
        charge_text(
            meter, sum(e - s for s, e in spans[1:] if s >= 0) if len(spans) > 1 else spans[0][1] - spans[0][0]
        )
        if len(spans) == 1:
            start, end = spans[0]
            yield v[start:end]
        else:
            yield [v[s:e] if s >= 0 else None for s, e in spans[1:]]


def test(meter: Meter, v: Any, pattern: Any, flags: Any = None) -> bool:
    """``test(re; flags)``: whether there is a match (no groups extracted, nothing built)."""
    program = _program(meter, v, pattern, flags, capture=False)
    return next(_matches(meter, v, program), None) is not None


def split_list(meter: Meter, v: Any, pattern: Any, flags: Any = None) -> Iterator[str]:
    """``splits(re; flags)``: the pieces between global matches (libjq: empty matches split too,
    so ``"ab" | [splits("")]`` is ``["", "a", "b", ""]``)."""
    program = _program(meter, v, pattern, _global(flags), capture=False)
    prev = 0
    for spans in _matches(meter, v, program):
        start, end = spans[0]
        charge(meter, 1)
        charge_text(meter, start - prev)
        yield v[prev:start]
        prev = end
    charge(meter, 1)
    charge_text(meter, len(v) - prev)
    yield v[prev:]


def split_array(meter: Meter, v: Any, pattern: Any, flags: Any = None) -> list[str]:
    """``split(re; flags)``: the pieces as one array."""
    return list(split_list(meter, v, pattern, flags))


def substitute(
    meter: Meter, v: Any, pattern: Any, flags: Any, replacement: Callable[[Any], Any], glob: bool
) -> list[str]:
    """``sub``/``gsub``: libjq 1.8's ``reduce match(...) as $m ({s, r: []}; reduce (captures |
    repl) as $s (.i = 0; .r[.i] += .s[.next:offset] + $s | .i += 1) | .next = ...) | .r[] +
    .s[.next:] // .s``. Results are kept as lists of parts and joined once (no quadratic
    re-copying); every part is charged before it is kept."""
    program = _program(meter, v, pattern, _global(flags) if glob else flags)
    results: list[list[str]] = []
    prev = 0
    for spans in _matches(meter, v, program):
        start, end = spans[0]
        gap = v[prev:start]
        outputs = replacement(_capture_of(meter, v, program, spans))
        for i, out in enumerate(outputs):
            if type(out) is not str:
                if out is not None:
                    raise JqError(f"{describe(gap)} and {describe(out)} cannot be added")
                out = ""  # string + null is the string
            if i == len(results):
                if i >= MAX_RESULTS:
                    raise LimitExceeded(f"query results exceed the allowed number {MAX_RESULTS}")
                results.append([])
            charge(meter, 2)
            charge_text(meter, len(gap) + len(out))
            results[i].append(gap)
            results[i].append(out)
        prev = end
    if not results:
        return [v]
    tail = v[prev:]
    total = sum(len(p) for parts in results for p in parts) + len(tail) * len(results)
    charge_text(meter, total)
    return ["".join(parts) + tail for parts in results]


__all__ = [
    "capture_list",
    "match_list",
    "scan_list",
    "split_array",
    "split_list",
    "substitute",
    "test",
]
