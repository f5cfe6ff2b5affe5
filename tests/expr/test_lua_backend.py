"""The Lua back end against the Python back end, run under Lua 5.1 set up as Karmada runs scripts
(tests/support/karmada_lua.py).

The whole conformance corpus of tests/expr/test_conformance.py (the catalog's expressions and the
jq feature cases) is translated; every translatable expression must give the Python back end's
outputs (or fail where it fails) on every sample input, as Karmada would hand the input to Lua
(``null`` members and elements gone). An empty ``{}`` or ``[]`` of the input is one empty Lua
table: there the Lua answer must be the Python answer for one reading of the empty containers
(all objects, or all arrays).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.karmada_lua import KarmadaLua
from workload_map.errors import (
    ExpressionError,
    ExpressionNotTranslatableError,
    ExpressionSafetyError,
    ExpressionSyntaxError,
)
from workload_map.expr import compile_expression
from workload_map.expr.lua import LUA_BUILTINS, compile_lua, runtime_chunk
from workload_map.expr.lua.emit import lua_pattern
from workload_map.expr.names import BUILTINS
from workload_map.resolve.lua import resolver_chunk

from .samples import INPUTS
from .test_conformance import CASES

RUN = """function(F, x)
  J.start()
  local ok, r, n = pcall(J.collect, F, x)
  J.stop()
  if not ok then
    if type(r) == "table" and r.jq ~= nil then return false, J.tostring(r.jq) end
    return false, tostring(r)
  end
  local out = {}
  for i = 1, n do out[i] = J.tojson_sorted(r[i]) end
  return true, out
end"""


class Lua:
    """The jq runtime loaded in one Karmada-like Lua state."""

    def __init__(self, pairs_order: str = "lua") -> None:
        self.k = KarmadaLua(track_depth=False, pairs_order=pairs_order)
        self.k.lua.execute("J = (function(...)\n" + runtime_chunk() + "\nend)()")
        self.runner = self.k.lua.eval(RUN)
        self.null = self.k.lua.eval("J.NULL")

    def run(self, source: str, data: Any) -> tuple[str, Any]:
        f = self.k.lua.eval(compile_lua(source).filter)
        ok, out = self.runner(f, self.k.to_lua(data) if data is not None else self.null)
        if not ok:
            return "error", out
        return "ok", [json.loads(out[i]) for i in range(1, len(out) + 1)]


@pytest.fixture(scope="module")
def lua() -> Iterator[Lua]:
    yield Lua()


def go_number(x: float) -> int | float:
    """A double as a reader of Karmada's JSON sees it: Go writes integral values below 1e21
    without exponent, which read back as integers."""
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


def _karmada(v: Any) -> Any:
    """What Karmada hands Lua: null members and elements gone (gopher-json), keys sorted, numbers
    as Go's JSON writes them."""
    if isinstance(v, dict):
        return {k: _karmada(x) for k, x in sorted(v.items()) if x is not None}
    if isinstance(v, list):
        return [_karmada(x) for x in v if x is not None]
    if isinstance(v, float):
        return go_number(v)
    return v


def _canon(v: Any) -> Any:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, int | float):
        return None if isinstance(v, float) and math.isnan(v) else float(v)
    if isinstance(v, list):
        return [_canon(x) for x in v]
    return {k: _canon(x) for k, x in v.items()}


def _swap_empties(v: Any, to: Any) -> Any:
    if isinstance(v, dict):
        return {k: _swap_empties(x, to) for k, x in v.items()} if v else to()
    if isinstance(v, list):
        return [_swap_empties(x, to) for x in v] if v else to()
    return v


def _has_empty(v: Any) -> bool:
    if isinstance(v, dict | list):
        return not v or any(_has_empty(x) for x in (v.values() if isinstance(v, dict) else v))
    return False


def _python(source: str, data: Any) -> tuple[str, Any]:
    try:
        return "ok", compile_expression(source).all(data)
    except ExpressionError as exc:
        return "error", exc.message


def _same(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    if a[0] != b[0]:
        return False
    return a[0] == "error" or _canon(a[1]) == _canon(b[1])


def test_every_builtin_has_a_translation_or_a_reason() -> None:
    assert set(LUA_BUILTINS) == set(BUILTINS)
    for key, tr in LUA_BUILTINS.items():
        assert tr.kind in ("value", "form", "untranslatable"), key
        if tr.kind == "untranslatable":
            assert len(tr.reason) > 20, key
        else:
            assert tr.lua, key


@pytest.mark.parametrize("pairs_order", ["lua", "reversed"])
def test_the_whole_corpus_agrees_with_the_python_back_end(pairs_order: str) -> None:
    # twice: with C Lua's pairs order and with every pairs loop backwards, since gopher-lua visits
    # tables in insertion order; the answers must not depend on it (input objects are iterated in
    # sorted key order, the order of Karmada's JSON)
    lua = Lua(pairs_order)
    stats: Counter[str] = Counter()
    differences = []
    for source in CASES:
        try:
            compile_lua(source)
        except ExpressionNotTranslatableError:
            stats["refused"] += 1
            continue
        except ExpressionError:
            continue  # the Python back end refuses it too
        stats["translated"] += 1
        for data in INPUTS:
            given = _karmada(data)
            ours = lua.run(source, given)
            if _same(ours, _python(source, given)):
                stats["agree"] += 1
                continue
            readings = [_swap_empties(given, dict), _swap_empties(given, list)]
            if _has_empty(given) and any(_same(ours, _python(source, r)) for r in readings):
                stats["agree on an empty container"] += 1
                continue
            differences.append((source, str(given)[:60], ours, _python(source, given)))
    assert differences == []
    assert stats["translated"] >= 330 and stats["agree"] >= 3900, stats


@pytest.mark.parametrize(
    ("source", "data", "expected"),
    [
        # gopher-json drops null members: has() and keys do not see them
        ('has("a")', {"a": None, "b": 1}, [False]),
        ("keys", {"a": None, "b": 1}, [["b"]]),
        # ... and null elements of arrays (the rest moves up)
        (".[1]", [1, None, 3], [3]),
        # input objects iterate in sorted key order (Karmada serializes them so)
        ("[.[]]", {"b": 1, "a": 2}, [[2, 1]]),
        # an empty input table is an object to `type` and `tojson`
        (".x | type", {"x": []}, ["object"]),
        (".x | tojson", {"x": []}, ["{}"]),
        # ... and indexes, iterates, adds and compares as either
        (".x[0], [.x[]], .x + [1], (.x == [])", {"x": {}}, [None, [], [1], True]),
        # objects the expression builds keep their key order
        ("{b: 1, a: 2} | keys_unsorted", None, [["b", "a"]]),
    ],
)
def test_documented_value_differences(lua: Lua, source: str, data: Any, expected: list[Any]) -> None:
    assert lua.run(source, data) == ("ok", expected)


def test_strings_are_code_points_as_in_python(lua: Lua) -> None:
    source = '"héllo" | length, .[1:3], explode, (explode | implode), ("é" * 3 | length), ascii_upcase'
    assert lua.run(source, None) == _python(source, None)
    assert lua.run(source, None)[1][:2] == [5, "él"]


@pytest.mark.parametrize(
    "value", [0, -0.0, 1, -7, 0.1, 1.5, 1e-05, 0.0001, 123456.25, 2.0**53 - 1, 1e21, 1e300, -2.5e-300]
)
def test_numbers_print_as_the_python_back_end_prints_them(lua: Lua, value: float) -> None:
    given = _karmada(value)
    for source in ("tostring", ". * 3 | tostring", ". / 7 | tostring"):
        assert lua.run(source, given) == ("ok", [compile_expression(source).first(given)])


def test_integers_beyond_2_53_print_as_doubles(lua: Lua) -> None:
    # Python prints an input integer's digits but a double from arithmetic in exponent form; Lua
    # has doubles only and prints the latter (documented).
    assert lua.run(". * 3 | tostring", 10**16) == (
        "ok",
        [compile_expression(". * 3 | tostring").first(10**16)],
    )
    assert lua.run("tostring", 10**17) == ("ok", ["1e+17"])


def test_sort_by_is_stable(lua: Lua) -> None:
    data = [{"k": 1, "i": i} for i in range(20)] + [{"k": 0, "i": 99}]
    assert lua.run("sort_by(.k) | map(.i)", data) == ("ok", [[99, *range(20)]])


@pytest.mark.parametrize(
    ("source", "construct"),
    [
        ('test("a|b")', "test/1"),
        ('sub("a"; "b")', "sub/2"),
        ("now", "now/0"),
        ("log", "log/0"),
        ("def f: f; f", "def f/0"),
        ("[until(. > 3; . + 1)]", "until/2"),
        ("@base64", "@base64"),
        (". as [$a] ?// $a | $a", "?//"),
        ("fromjson", "fromjson/0"),
    ],
)
def test_untranslatable_constructs_are_named(source: str, construct: str) -> None:
    with pytest.raises(ExpressionNotTranslatableError) as err:
        compile_lua(source)
    assert err.value.construct == construct
    assert err.value.source == source
    assert construct in err.value.message


def test_front_end_errors_are_the_python_back_ends() -> None:
    with pytest.raises(ExpressionSyntaxError):
        compile_lua(".a[")
    with pytest.raises(ExpressionSafetyError, match="not allowed"):
        compile_lua("[.[] | recurse]")
    with pytest.raises(ExpressionSafetyError, match="is not defined"):
        compile_lua("nosuchfunction")


def test_deep_expressions_are_refused() -> None:
    deep = "." + "|(." * 60 + ")" * 60
    with pytest.raises(ExpressionNotTranslatableError, match="levels deep"):
        compile_lua(deep)


@pytest.mark.parametrize(
    ("regex", "lua_pat"),
    [
        ("^[0-9]+[kKmMgGtTpP]$", "^[0-9]+[kKmMgGtTpP]$"),
        ("abc", "abc"),
        (r"^v\d+\.\d+$", r"^v%d+%.%d+$"),
        (r"a\-b?c*", "a%-b?c*"),
        ("a|b", None),
        ("(ab)+", None),
        ("a.c", None),
        ("[^a]", None),
        ("a{2}", None),
        ("a+?", None),
        ("é", None),
        (r"\bword", None),
    ],
)
def test_regex_subset_becomes_an_exact_lua_pattern(regex: str, lua_pat: str | None) -> None:
    assert lua_pattern(regex) == lua_pat


@pytest.mark.parametrize("regex", ["^[0-9]+[kKmMgGtTpP]$", r"^v\d+\.\d+$", r"a\-b?c*", r"\w+@\s"])
def test_translated_regexes_match_what_re2_matches(lua: Lua, regex: str) -> None:
    subjects = [
        "512M",
        "512Mi",
        "12k",
        "x12k",
        "v1.25",
        "v1x25",
        "a-c",
        "a-bccc",
        "ab",
        "x_1@ ",
        "x@y",
        "",
        "a\nb",
    ]
    source = f"test({json.dumps(regex)})"
    for s in subjects:
        assert lua.run(source, s) == _python(source, s), (regex, s)


# --- the Lua sources stay within Karmada's sandbox ---------------------------------------------

_SOURCES = {"jq_runtime.lua": runtime_chunk, "resolver.lua": resolver_chunk}


@pytest.mark.parametrize("name", sorted(_SOURCES))
def test_the_runtime_uses_only_what_karmada_opens(name: str) -> None:
    text = _SOURCES[name]()
    code = "\n".join(line.split("--", 1)[0] for line in text.splitlines())
    forbidden = (
        r"\b(string\.(gsub|rep|dump)|:gsub|:rep|setmetatable|getmetatable|rawget|rawset|rawequal"
        r"|load\s*\(|loadstring|dofile|require\s*\(|io\.|os\.|debug\.|coroutine\.)"
    )
    assert re.search(forbidden, code) is None, re.search(forbidden, code)
    # gopher-lua's string.format is Go's fmt: only float formats behave as in C there
    for fmt in re.findall(r'string\.format\("([^"]*)"', code):
        assert re.fullmatch(r"%\.\d*[fg]|%\.", fmt), fmt


# --- hostile expressions: the step budget bounds the Lua as the cost model bounds Python ---------

_ARRAY = {"a": list(range(1000))}
_FORTY = ".a[:40][]"  # forty steps


@pytest.mark.parametrize(
    "source",
    [
        # a billion loop steps from three nested iterations of a 1,000-element array
        "reduce (.a[] as $x | .a[] as $y | .a[]) as $z (0; . + 1)",
        "first(.a[] as $x | .a[] as $y | .a[] | select(. < 0))",
        "any(.a[] as $x | .a[] as $y | .a[]; . < 0)",
        "[limit(5; .a[] as $x | .a[] as $y | .a[] | select(. < 0))]",
        # forty steps build a value of 2**40 nodes sharing children; walking it is the explosion
        f"reduce {_FORTY} as $i ([0]; [., .]) | tojson | length",
        f"reduce {_FORTY} as $i ([0]; [., .]) | flatten | length",
        f"reduce {_FORTY} as $i ([0]; [., .]) | sort | length",
        f"reduce {_FORTY} as $i ({{a: 0}}; {{a: ., b: .}}) | tostring | length",
        # copies that double at every step
        f"reduce {_FORTY} as $i ([0]; . + .) | length",
        f"reduce {_FORTY} as $i ({{}}; . * {{a: ., b: .}}) | length",
        # a quadratic string: 1,000 appends to a growing text
        'reduce .a[] as $i (""; . + ("0123456789" * 1000)) | length',
    ],
)
def test_hostile_expressions_are_stopped_by_the_step_budget(lua: Lua, source: str) -> None:
    # Python stops each by its cost budget or deadline; the Lua, which has no deadline of its
    # own (Karmada's one-second timeout is the only one), by its step budget, long before that
    # second would pass)
    kind, message = _python(source, _ARRAY)
    assert kind == "error" and re.search("cost budget|time limit", message), message
    kind, message = lua.run(source, _ARRAY)
    assert kind == "error" and "step budget of 1000000" in message, message


def test_the_step_budget_is_per_evaluation_and_not_a_jq_error(lua: Lua) -> None:
    # `try` does not catch it (as Python's LimitExceeded), and the next evaluation starts afresh
    hostile = "try (reduce (.a[] as $x | .a[] as $y | .a[]) as $z (0; . + 1)) catch 0"
    assert "step budget" in lua.run(hostile, _ARRAY)[1]
    assert lua.run("[.a[] | . * 2] | length", _ARRAY) == ("ok", [1000])
    # a lot of work within the budget is answered (as the Python back end does, load permitting:
    # its deadline is wall-clock, see the next test)
    within = "reduce (.a[] as $x | .a[:300][]) as $z (0; . + 1)"
    assert lua.run(within, _ARRAY) == ("ok", [300000])


_WIDE = {"a": list(range(1000)), "o": {f"k{i}": i for i in range(1000)}}


@pytest.mark.parametrize("n", [300, 700, 1000])
@pytest.mark.parametrize(
    "template",
    [
        "reduce (.a[] as $x | .a[:N][]) as $z (0; . + 1)",
        "[.a[] as $x | .a[:N][] | select(. < 0)] | length",
        "any(.a[] as $x | .a[:N][]; . < 0)",
        "[.a[:N][] as $x | .o[] | select(. < 0)] | length",
        "[.a[:N][] as $x | .a | sort | .[0]] | length",
        "[.a[:N][] as $x | .a | tojson | length] | length",
        "[.a[:N][] as $x | .a + .a | length] | length",
        "[.a[:N][] as $x | .o | to_entries | length] | length",
        "[.a[:N][] as $x | .a | unique | length] | length",
        "[.a[:N][] as $x | .o * .o | length] | length",
    ],
)
def test_the_step_budget_refuses_nothing_the_python_back_end_answers(lua: Lua, template: str, n: int) -> None:
    # Near the budget (up to a million loop steps): the Lua charges no more than the cost model,
    # so where Python answers the Lua gives the same answer (it may answer where Python stops).
    source = template.replace("N", str(n))
    python = _python(source, _WIDE)
    if python[0] == "ok":
        assert lua.run(source, _WIDE) == python, source
    else:
        assert re.search("cost budget|time limit", python[1]), python[1]
