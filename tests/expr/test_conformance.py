"""Conformance corpus: every case runs through our engine and libjq (the `jq` binding) on
several inputs; outputs must be equal, and when one side errors the other must too."""

from __future__ import annotations

import math
from typing import Any

import jq
import pytest

from workload_map.errors import ExpressionError
from workload_map.expr import compile_expression

from .samples import INPUTS

# Catalog paths and rules quoted in upstream-spec section 4.
CATALOG = [
    ".spec.parallelism // 1",
    ".spec.suspend",
    "(.status.active // 0) > 0 and (.status.ready // 0) == 0",
    "(.status.active // 0) > 0 and (.status.ready // 0) > 0",
    ".spec.parallelism > 1 and (.status.ready // 0) < .spec.parallelism and ((.status.succeeded // 0) > 0 or "
    "(.status.failed // 0) > 0)",
    ".spec.jobTemplate.spec.template",
    ".spec.jobTemplate.spec.parallelism // 1",
    "(.spec.suspend // false) == true",
    ".status.lastScheduleTime == null",
    ".spec.template",
    ".spec.replicas // 1",
    ".status.phase",
    ".spec.replicatedJobs[].template.spec.template",
    ".spec.replicatedJobs[].name",
    ".spec.replicatedJobs[] | .replicas * .template.spec.parallelism",
    "(.status.replicatedJobsStatus // []) | any(.[]; .active > 0 or .ready > 0) and all(.[]; (.failed // 0) == 0)",
    "any(.status.replicatedJobsStatus[]?; .ready > 0 and .active > 0) and all(.status.replicatedJobsStatus[]?; "
    ".failed == 0)",
    "any((.status.replicatedJobsStatus // [])[]; .active > 0 and (.ready // 0) == 0)",
    ".spec.pytorchReplicaSpecs.Master.template",
    ".spec.pytorchReplicaSpecs.Master.replicas // 1",
    ".spec.pytorchReplicaSpecs.Worker.replicas // 1",
    ".spec.elasticPolicy.minReplicas",
    ".spec.elasticPolicy.maxReplicas",
    ".spec.mpiReplicaSpecs.Launcher",
    ".spec.runPolicy.suspend",
    ".spec.suspend == true and (.status.state == \"suspended\" or (.status.state | not))",
    ".status.state",
    ".spec.headGroupSpec.template",
    ".spec.workerGroupSpecs[].template",
    ".spec.workerGroupSpecs[].groupName",
    ".spec.workerGroupSpecs[]?.replicas // 1",
    ".spec.workerGroupSpecs[]? | .replicas // 1",
    ".spec.workerGroupSpecs[].minReplicas",
    ".status.jobDeploymentStatus == \"Initializing\"",
    ".spec.leaderWorkerTemplate.leaderTemplate",
    ".spec.leaderWorkerTemplate.workerTemplate",
    "(.spec.replicas // 1) * ((.spec.leaderWorkerTemplate.size // 1) - 1)",
    ".spec.leaderWorkerTemplate.size",
    ".status.replicas > 0 and .status.readyReplicas == .status.replicas and .status.updatedReplicas == "
    ".status.replicas",
    ".spec.predictor | ( (.[]? | select(type ==\"object\" and .storageUri)))",
    ".spec.predictor.minReplicas",
    "(.spec.replicas // .spec.scaling.minReplicas)",
    ".metadata.annotations[\"autoscaling.knative.dev/min-scale\"] // 1 | tonumber",
    ".metadata.annotations[\"autoscaling.knative.dev/max-scale\"] | tonumber?",
    ".spec.services | to_entries[] | .key",
    ".spec.services[] | (.replicas // 1) * (.multinode.nodeCount // 1)",
    ".spec.components[] | .name",
    ".spec.components[]? | .podTemplate",
    ".metadata.labels[\"nvidia.com/dynamo-component\"] | ascii_downcase",
    "(.status.availableReplicas // 0) >= (.spec.replicas // 0)",
    "(.spec.replicas // 1) * (.spec.template.cliques[]?.spec.replicas // 1)",
    ".spec.template.cliques[]?.name",
    "if .spec.operatingMode == \"Suspended\" then 0 else 1 end",
    ".status.conditions[]? | select(.type == \"Ready\") | .status",
    "[.status.conditions[]? | select(.type == \"Failed\" and .status == \"True\")] | length > 0",
    "(.status.conditions // []) | map(select(.status == \"True\") | .type)",
    ".spec.template.cliques[]? as $c | select(($c.name // \"\") != \"\") | $c.name",
]

FEATURES = [
    # paths and indexing
    ".", ".a", ".a.b", ".a.b[0]", ".a.b[-1]", ".a.b[1:]", ".a.b[:1]", ".a.b[-2:]", ".nums[1:3]", ".s[0:5]",
    ".s[-5:]", ".[\"a\"]", ".a[\"b\"][2].c", ".\"a\"", ".a?", ".[]?", "[.[]?]", ".a.b[]?", ".nums[1.5]",
    ".a.b[10]", ".mixed[]", ".o[]", ".o | keys", ".o | keys_unsorted", "[.[]?] | length", ".a.b.[0]",
    ".nums[]?", ".spec.replicatedJobs[0].name", ".[0]", ".[-1]", ".[1:]", ".[0]?", ".a[.]?", "try .[0] catch .",
    # comma, pipe, alternative
    ".a, .s", "(.a, .s) | type", ".missing // \"d\"", ".a.d // .a.e // 3", "[.nums[]? // 0]",
    "[(null, false) // 1]", "[(1, null, 2) // 3]", "[empty // 4]", ".a.e // empty", "(.x // .y) // \"z\"",
    # comparisons and order
    "1 < 2", "\"a\" < \"b\"", "[] < {}", "null < false", "false < true", "true < 0", "0 < \"\"", "\"\" < []",
    "[1,2] < [1,3]", "{\"a\":1} < {\"a\":2}", "{\"a\":2} < {\"b\":1}", "1 == 1.0", "1 != \"1\"", "[1] == [1.0]",
    "{\"a\":[1]} == {\"a\":[1]}", "true == 1", "null == false", ".nums | sort", ".mixed | sort", ".strs | sort",
    "[3, 1, 2] | max, min", ".nums | min_by(-.)", ".mixed | unique", "[{\"a\":2,\"b\":1},{\"a\":1}] | sort",
    # arithmetic
    "1 + 2", "1 - 2.5", "3 * 4", "10 / 2", "10 / 4", "7 % 3", "-7 % 3", "7 % -3", "5.9 % 2", "null + 1",
    "1 + null", "\"a\" + \"b\"", "[1] + [2]", "{\"a\":1} + {\"b\":2}", "{\"a\":{\"b\":1}} * {\"a\":{\"c\":2}}",
    "\"ab\" * 3", "\"ab\" * 0", "[1,2,3,1] - [1]", "\"a,b,c\" / \",\"", "-(1)", "-.nums[0]?", "1 / 0", "\"a\" - 1",
    "{} - {}", "[] * 2", "1.5 + 1.5", "0.1 + 0.2", "1e3", "100000000000", "2 * 3 + 4", "2 + 3 * 4", "(2 + 3) * 4",
    "4 - 2 - 1", "8 / 2 / 2", "1 % 0",
    # logic
    "true and false", "true or false", "null or 1", "(1, null) and true", "[(true, false) or (true, false)]",
    "not", ".a | not", "[true, false, null, 0] | map(not)", "if . then 1 else 2 end", "if .a then .a.e else .s end",
    "if .a.e then 1 elif .a.d then 2 else 3 end", "if false then 1 end", "[if (true, false) then 1 else 2 end]",
    "if .x then 1 elif .y then 2 end",
    # literals and strings
    "\"a\\tb\\u00e9\\\"\"", "\"x\\(1 + 2)y\"", "\"\\(.a)\"", "\"\\(.s)-\\(.nums)\"", "\"\\(1,2)-\\(3,4)\"", "@json",
    "@text", "@base64", "@base64 \"v=\\(.s)\"", ".s | @base64 | @base64d", ".s | @uri", ".csv | @csv", ".csv | @tsv",
    ".s | @html", ".s | @sh", ".csv[0:2] | @sh", "@json \"x\\(.a)\"", "\"<&>\\\"'\" | @html", "\"é ü\" | @uri",
    "[1, \"a b\"] | @sh", "null | @sh", "true", "false", "null", "123", "-1", "1.25", "[]", "{}", "[1, [2, {\"a\": 3}]]",
    # construction
    "[.a, .s]", "{a: 1}", "{a}", "{\"a\": .s}", "{(.s): 1}", "{(\"x\",\"y\"): (1,2)}", "{a: (1,2), b: (3,4)}",
    "{$__loc__}", "1 as $x | {$x}", "{\"a b\"}", "{s, o}", "{\"k\": [.[]?]}",
    "[.[]? | {v: .}]", "[1, 2] | {x: .[0], y: .[1]}", "{}",
    # variables, reduce, foreach, label, functions
    ". as $x | $x", "1 as $x | 2 as $y | [$x, $y]", "[.[]? as $x | $x]", ". as [$a, $b] | [$a, $b]",
    ". as {a: $x} | $x", ". as {$a} | $a", ".a? as {b: [$f, $g]} | [$f, $g]", "[[1, {\"b\": 2}]] | .[] as [$a, {b: $c}] | $a + $c",
    "reduce (1, 2, 3) as $x (0; . + $x)", "reduce .nums[]? as $n (0; . + $n)", "reduce empty as $x (5; . + 1)",
    "reduce (1, 2) as $x (0; empty)", "[foreach (1, 2, 3) as $x (0; . + $x)]", "[foreach (1, 2, 3) as $x (0; . + $x; [$x, .])]",
    "[foreach (1, 2) as $x (0; empty; .)]", "[label $f | 1, 2, break $f, 3]", "[label $a | label $b | 1, break $a, 2]",
    "def f: . + 1; 1 | f", "def f(g): [g, g]; f(1, 2)", "def f($a; $b): $a + $b; f(1; 2)", "def f(g; $v): [g, $v]; f(1,2; 3,4)",
    "def fac: if . <= 1 then 1 else . * (. - 1 | fac) end; 10 | fac", "def f: def g: 3; g * 2; f",
    "def f(x): x * 2; [f(1, 2)]", "def ack(m; n): if m == 0 then n + 1 elif n == 0 then ack(m - 1; 1) else ack(m - 1; ack(m; n - 1)) end; ack(2; 3)",
    "def f: reduce .[]? as $x (0; . + 1); f", "[.[]? | numbers]", "[.mixed[]? | scalars]", "[.mixed[]? | iterables]",
    "[.mixed[]? | strings, booleans, nulls, arrays, objects]", "[.mixed[]? | values]", "$__loc__", "$ENV | type", "env | type",
    # try / error
    "try error(\"x\") catch .", "try error catch .", "try error({\"a\":1}) catch .a", "[.[]? | try tonumber catch \"bad\"]",
    "try (1, 2, error(\"x\"), 3) catch .", "[try (1, error(\"x\"), 3)]", "error(\"boom\")", "error", "error(null)",
    "try error(null) catch .", "(1, 2)?", "[.[] | tonumber?]", "[.s?, 1]", ".a.b.c?", "try (\"a\" | tonumber) catch .",
    # builtins
    "length", ".a | length", ".s | length", ".nums | length", "-5 | length", ".s | utf8bytelength", "\"é\" | utf8bytelength",
    "keys", "[.[]?] | add", ".nums | add", ".strs | add", "[] | add", "add(.nums[]?)", ".nums | any", ".nums | all",
    "[] | any, all", "any(.[]?; . == 1)", "all(.[]?; . != null)", "[.nums[]? | floor, ceil, round, fabs, sqrt]",
    "[2 | pow(.; 10), log, exp, log10]", "[.[]? | tostring]", "[.[]? | tojson]", "[.[]? | type]", ".o | to_entries",
    ".o | to_entries | from_entries", ".o | with_entries(select(.key == \"z\"))",
    "[{\"name\":\"a\",\"value\":1},{\"k\":\"b\",\"v\":2}] | from_entries", "[{\"key\":1,\"value\":2}] | from_entries",
    "{\"a\":1} | has(\"a\"), has(\"b\")", "[1,2] | has(0), has(5)", "\"a\" | in({\"a\": 1})", ".nums | map(. * 2)",
    ".o | map_values(type)", "[1, 2, 3] | map_values(select(. > 1))",
    ".o | map(type)", ".nums | sort_by(.)", ".mixed | sort_by(type)", "[{\"a\":2},{\"a\":1},{\"a\":2,\"b\":0}] | sort_by(.a)",
    "[{\"a\":2},{\"a\":1},{\"a\":2,\"b\":0}] | group_by(.a)", "[{\"a\":2},{\"a\":1},{\"a\":2,\"b\":0}] | unique_by(.a)",
    "[{\"a\":2},{\"a\":1}] | min_by(.a), max_by(.a)", ".strs | unique", ".nums | reverse", "null | reverse",
    "[1, [2]] | contains([[2]])", "\"foobar\" | contains(\"bar\")", "{\"a\":[1,2],\"b\":1} | contains({\"a\":[1]})",
    "[1] | inside([1, 2])", ".s | startswith(\"Hell\"), endswith(\"ld\")", ".s | ltrimstr(\"Hello\"), rtrimstr(\"World\")",
    "\"  x \" | trim, ltrim, rtrim", ".s | explode | implode", ".s | split(\", \")", ".s | split(\"\")",
    "[.strs[]? | ascii_downcase, ascii_upcase]", ".strs | join(\"-\")", "[1, null, \"a\", true] | join(\",\")",
    ".s | test(\"world\"), test(\"world\"; \"i\")", ".s | [match(\"o\"; \"g\").offset]", ".s | capture(\"(?<first>\\\\w+), (?<second>\\\\w+)\")",
    ".s | [scan(\"[A-Z]\")]", ".s | sub(\"o\"; \"0\")", ".s | gsub(\"o\"; \"0\")", ".s | gsub(\"(?<l>[A-Z])\"; \"<\\(.l)>\")",
    ".s | [splits(\", *\")]", ".s | split(\", *\"; null)", ".s | ascii_downcase | test(\"^hello\")", ".s | indices(\"o\")",
    ".s | index(\"o\"), rindex(\"o\")", "[1, 2, 1] | indices(1)", "[1, 2, 1, 2] | indices([1, 2])", "\"a\" | tojson | fromjson",
    "\"[1,{\\\"a\\\":2}]\" | fromjson", ".t | fromdate", ".t | fromdateiso8601 | todate", "1425599507 | todateiso8601",
    "1425599507 | gmtime", "1425599507 | gmtime | mktime", "1425599507 | strftime(\"%Y-%m-%d\")", ".t | strptime(\"%Y-%m-%dT%H:%M:%SZ\")",
    "[.[]? | tonumber?]", "\"12\" | tonumber", "\"1.5\" | tonumber", "\"x\" | tonumber", "\"1e2\" | tonumber",
    "[1, [2, [3, [4]]]] | flatten", "[1, [2, [3, [4]]]] | flatten(1)", "[1, [2]] | flatten(0)", "infinite | isinfinite",
    "nan | isnan", "1 | isnormal", "[nan] | sort", "nan < 1", "[infinite, -infinite] | map(tostring)",
    "first(.[]?)", "first(empty)", "[.[]?] | first", "last(.[]?)", "[limit(2; .[]?)]",
    "[limit(0; 1, 2)]", "[limit(1; 1, error(\"x\"))]", "nth(1; .[]?)", "[.[]?] | nth(0)", "isempty(empty)", "isempty(.[]?)",
    "[.[]? | select(type == \"number\")]", "0 | until(. >= 10; . + 3)", "2 | IN(1, 2)",
    "IN(.[]?; 1, \"a\")", "INDEX({\"id\":1},{\"id\":2}; .id)", "[{\"id\":\"x\"}] | INDEX(.id)", "path(.a.b[0])",
    "[path(.a, .b)]", "[path(.[]?)]", "[path(.a // .b)]", "path(.a | select(. == null))", "[path(first(.a, .b))]",
    "[path(if .a then .b else .c end)]", "path(getpath([\"a\", \"b\"]))", "getpath([\"a\", \"b\"])", "getpath([\"x\", 0, \"y\"])",
    "setpath([\"a\", \"b\"]; 1)", "null | setpath([\"x\", 1]; 2)", "{\"a\":{\"b\":1,\"c\":2}} | pick(.a.b)",
    "[1, [2]] | pick(.[1][0])", "path(1)", "[path(. as $x | .a)]", "[.[]? | objects | keys]", "tostring", "[1, 2] | tojson",
    "{\"b\": 1, \"a\": [1.5, \"x\"]} | tojson", "[1, 2] | tostring", "{\"a\": 1} | tostring", "1.5 | tostring",
    "[.[]? | length?]", "[3, 1] | sort | first, last", "[\"a-b\" | splits(\"-\")]",
    "-5 | abs", "[[1, 2], [3]] | transpose", "[1, 2, 3] | bsearch(2)",
    "[1, 2, 3] | bsearch(0)", "\"abc\" | ascii_downcase", "65 | [.] | implode", "[65, 66] | implode", "[1] | add(.[])",
    "{\"a\": \"b\"} | to_entries[] | \"\\(.key)=\\(.value)\"", "[.[]? | select(. == null) | 1]", "getpath([\"a\"]) // 5",
]

CASES = CATALOG + FEATURES


def _canon(v: Any) -> Any:
    if type(v) is bool or v is None or type(v) is str:
        return v
    if type(v) in (int, float):
        if isinstance(v, float) and math.isnan(v):
            return None  # jq prints nan as null
        if isinstance(v, float) and math.isinf(v):
            return ("n", math.copysign(1.7976931348623157e308, v))
        return ("n", float(v))
    if type(v) is list:
        return [_canon(x) for x in v]
    if type(v) is dict:
        return [("k", k, _canon(x)) for k, x in v.items()]
    return ("?", repr(v))


def _reference(src: str, data: Any) -> tuple[str, Any]:
    try:
        return "ok", jq.compile(src).input_value(data).all()
    except ValueError as exc:
        return "error", str(exc)


def _ours(src: str, data: Any) -> tuple[str, Any]:
    try:
        return "ok", compile_expression(src).all(data)
    except ExpressionError as exc:
        return "error", exc.message


@pytest.mark.parametrize("src", CASES)
def test_agrees_with_libjq(src: str) -> None:
    for data in INPUTS:
        kind_ref, ref = _reference(src, data)
        kind_ours, ours = _ours(src, data)
        assert kind_ours == kind_ref, f"{src!r} on {str(data)[:60]}: ours={ours!r} libjq={ref!r}"
        if kind_ref == "ok":
            assert _canon(ours) == _canon(ref), f"{src!r} on {str(data)[:60]}: ours={ours!r} libjq={ref!r}"


# Runtime error texts we match verbatim (libjq wording).
MESSAGES = [
    ('"abc" | .[]', "Cannot iterate over string (\"abc\")"),
    ("[1] | .type", 'Cannot index array with string ("type")'),
    ('"x" | .a', 'Cannot index string with string ("a")'),
    ("{} | .[0]", "Cannot index object with number (0)"),
    ("null | .[]", "Cannot iterate over null (null)"),
    ('1 + "a"', 'number (1) and string ("a") cannot be added'),
    ("1 / 0", "number (1) and number (0) cannot be divided because the divisor is zero"),
    ('error("custom")', "custom"),
    ('"abc" | tonumber', 'string ("abc") cannot be parsed as a number'),
    ("true | length", "boolean (true) has no length"),
    ("null | keys", "null (null) has no keys"),
    ("path(1)", "Invalid path expression with result 1"),
    ("limit(-1; 1)", "limit doesn't support negative count"),
]


@pytest.mark.parametrize(("src", "message"), MESSAGES)
def test_error_messages_match_libjq(src: str, message: str) -> None:
    kind, ref = _reference(src, None)
    assert kind == "error" and ref == message
    with pytest.raises(ExpressionError) as info:
        compile_expression(src).all(None)
    assert info.value.message == message
