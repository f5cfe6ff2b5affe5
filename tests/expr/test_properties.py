"""Property tests: random JSON never produces anything but ExpressionError subclasses, and
path/alternative/select expressions agree with libjq on random inputs."""

from __future__ import annotations

import math
from typing import Any

import jq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.errors import ExpressionError
from workload_map.expr import compile_expression

KEYS = st.sampled_from(["a", "b", "spec", "status", "name", "type", "replicas", "x"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**31), max_value=2**31),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=8),
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(KEYS, children, max_size=4)),
    max_leaves=20,
)

ANY_EXPRS = [
    ".a.b",
    ".[]",
    ".[]?",
    ".a[0]",
    "keys",
    "length",
    "to_entries",
    "from_entries",
    "add",
    "sort",
    "unique",
    "tostring",
    "tonumber",
    "tojson",
    ".a + .b",
    ".a * .b",
    ".a - .b",
    ".a / .b",
    ".a % .b",
    "map(.a)",
    '[.[] | select(.type == "x")]',
    "any(.[]?; . == 1)",
    "all(.[]; .)",
    "flatten",
    "min",
    "max",
    "reverse",
    "sort_by(.a)",
    "group_by(.type)",
    'join(",")',
    "ascii_downcase",
    'test("a")',
    'split(",")',
    "implode",
    "explode",
    "@base64d",
    "@csv",
    "@sh",
    "fromjson",
    'has("a")',
    "has(0)",
    ".[1:]",
    "contains({})",
    "keys_unsorted",
    "with_entries(.)",
    'getpath(["a", 0])',
    "to_entries | from_entries",
    "-.",
    "not",
    "[.[]?] | length",
    ".a // .b // 1",
    "first(.[]?)",
    "limit(2; .[]?)",
    "isempty(.[]?)",
    "INDEX(.name)",
    "indices(1)",
    'ltrimstr("a")',
    'splits("a")',
    "utf8bytelength",
    "gmtime",
    "todate",
    "floor",
    "sqrt",
    "@uri",
    "@html",
    "@tsv",
    "tostring | fromjson",
    "[.[]?] | sort_by(type)",
    "min_by(.a)",
]

AGREE_EXPRS = [
    ".a",
    ".a.b",
    ".spec.replicas // 1",
    ".a // .b",
    "[.[]?]",
    "[.[]? | .name?]",
    ".a?.b?",
    "[.[]? | select(. != null)]",
    '[.[]? | select(type == "object") | .type]',
    "(.a // []) | length?",
    '.status.name // "none"',
    "[.[]?.a?]",
    "if .a then .a else .b end",
    ".a == .b",
    ".a < .b",
    "[.a, .b] | sort",
    "keys?",
    "type",
    "[.[]? | numbers]",
    "[.[]? | strings]",
    "any(.[]?; . == null)",
    "all(.[]?; . != null)",
    ".[0]?",
    ".[-1:]?",
    "[path(.a?, .b?)]",
    "[path(.[]?)]",
    "[path(.a // .b)]",
    "[path(.[]? | select(. == null))]",
]


def _canon(v: Any) -> Any:
    if type(v) in (int, float) and type(v) is not bool:
        f = float(v)
        return None if math.isnan(f) else ("n", f)
    if type(v) is list:
        return [_canon(x) for x in v]
    if type(v) is dict:
        return [(k, _canon(x)) for k, x in v.items()]
    return v


COMPILED = [compile_expression(e) for e in ANY_EXPRS]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON)
def test_only_expression_errors_escape(data: Any) -> None:
    for expr in COMPILED:
        try:
            expr.all(data)
            expr.first(data)
        except ExpressionError:
            pass


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON)
def test_agrees_with_libjq_on_random_inputs(data: Any) -> None:
    for src in AGREE_EXPRS:
        try:
            ref: Any = ("ok", _canon(jq.compile(src).input_value(data).all()))
        except ValueError:
            ref = ("error",)
        try:
            ours: Any = ("ok", _canon(compile_expression(src).all(data)))
        except ExpressionError:
            ours = ("error",)
        assert ours == ref, f"{src} on {data!r}"
