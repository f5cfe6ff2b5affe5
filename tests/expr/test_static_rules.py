"""Static rules (upstream spec 2.9 plus our additions), name resolution, syntax errors, analyze()."""

from __future__ import annotations

import contextlib

import pytest

from workload_map.errors import ExpressionSafetyError, ExpressionSyntaxError
from workload_map.expr import analyze, compile_expression

FORBIDDEN = [
    (".a = 1", "modifying operator '=' is not allowed"),
    (".a |= 1", "modifying operator '|=' is not allowed"),
    (".a += 1", "modifying operator '+=' is not allowed"),
    (".a -= 1", "modifying operator '-=' is not allowed"),
    (".a *= 1", "modifying operator '*=' is not allowed"),
    (".a /= 1", "modifying operator '/=' is not allowed"),
    (".a %= 1", "modifying operator '%=' is not allowed"),
    (".a //= 1", "modifying operator '//=' is not allowed"),
    ("del(.a)", "del function is not allowed"),
    ("..", "recursive descent operator '..' is not allowed"),
    ("range(5)", "function 'range' may produce excessive output and is not allowed"),
    ("range(0; 5)", "function 'range' may produce excessive output and is not allowed"),
    ("paths", "function 'paths' may produce excessive output and is not allowed"),
    ('paths(type == "number")', "function 'paths' may produce excessive output and is not allowed"),
    ("recurse", "function 'recurse' may produce excessive output and is not allowed"),
    ("recurse(.a)", "function 'recurse' may produce excessive output and is not allowed"),
    ("walk(.)", "function 'walk' may produce excessive output and is not allowed"),
    ("repeat(.)", "function 'repeat' may produce excessive output and is not allowed"),
    ("while(true; .)", "function 'while' may loop forever and is not allowed"),
    ("combinations", "function 'combinations' may produce excessive output and is not allowed"),
    ("input", "function 'input' reads further inputs, which definitions do not have and is not allowed"),
    ("inputs", "function 'inputs' reads further inputs, which definitions do not have and is not allowed"),
    ("halt", "function 'halt' would stop the process and is not allowed"),
    ("halt_error", "function 'halt_error' would stop the process and is not allowed"),
    ('delpaths([["a"]])', "function 'delpaths' deletes paths and is not allowed"),
]

# Every nesting position the upstream walker covers: {} is replaced by the forbidden construct.
POSITIONS = [
    "{}",
    "def f: {}; f",
    "def f(g): g; f({})",
    "[{}]",
    "{{a: ({})}}",
    "{{({}): 1}}",
    '"x\\({})"',
    "if {} then 1 else 2 end",
    "if true then {} else 2 end",
    "if true then 1 elif {} then 2 else 3 end",
    "if true then 1 else {} end",
    "try {} catch .",
    "try 1 catch {}",
    "({})?",
    "reduce ({}) as $x (0; .)",
    "reduce .[] as $x ({}; .)",
    "reduce .[] as $x (0; {})",
    "foreach ({}) as $x (0; .)",
    "foreach .[] as $x (0; .; {})",
    ".[{}]",
    ".[{}:]",
    ".[:{}]",
    "select({})",
    "map({})",
    "any(.[]; {})",
    "{} // 1",
    "1, {}",
    ". as $x | {}",
    "label $out | {}",
    "1 + ({})",
    '@base64 "\\({})"',
]


@pytest.mark.parametrize(("src", "message"), FORBIDDEN)
def test_forbidden_construct(src: str, message: str) -> None:
    with pytest.raises(ExpressionSafetyError) as info:
        compile_expression(src)
    assert info.value.message == message


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize(
    ("inner", "message"), [FORBIDDEN[0], FORBIDDEN[8], FORBIDDEN[9], FORBIDDEN[10], FORBIDDEN[16]]
)
def test_forbidden_in_every_position(position: str, inner: str, message: str) -> None:
    src = position.format(f"({inner})")
    findings = analyze(src)
    assert [f.message for f in findings] == [message], src
    with pytest.raises(ExpressionSafetyError):
        compile_expression(src)


def test_analyze_reports_all_findings_with_offsets() -> None:
    src = ".a = 1 | del(.b) | [..] | range(3) | to_entrie | $nope"
    findings = analyze(src)
    assert [f.code for f in findings] == [
        "modifying-operator",
        "del",
        "recursive-descent",
        "excessive-output",
        "undefined-function",
        "undefined-variable",
    ]
    assert findings[0].offset == 3
    assert src[findings[1].offset :].startswith("del")
    assert src[findings[2].offset :].startswith("..")


def test_analyze_clean_expression_has_no_findings() -> None:
    assert analyze(".spec.replicas // 1") == []
    assert analyze("def f(g): g; f(.a) | any(.[]; . > 1)") == []


@pytest.mark.parametrize(
    ("src", "message"),
    [
        ("to_entrie", "to_entrie/0 is not defined"),
        ("map(.a; .b)", "map/2 is not defined"),
        ("$undefined", "$undefined is not defined"),
        ("def f(g): g; f", "f/0 is not defined"),
        ("def f: $x; 1 as $x | f", "$x is not defined"),
        ("break $nowhere", "$*label-nowhere is not defined"),
        ("@base32", "base32 is not a valid format"),
        (
            'test("(a)\\\\1")',
            "(a)\\1 is not a supported regex: backreferences (\\1) are not supported"
            " (RE2 syntax, linear-time matching)",
        ),
        (
            'test("a(?=b)")',
            "a(?=b) is not a supported regex: lookahead and lookbehind ((?=...), (?!...), (?<=...))"
            " are not supported (RE2 syntax, linear-time matching)",
        ),
        (
            'test("a++")',
            "a++ is not a supported regex: possessive quantifiers (*+, ++, ?+) are not supported"
            " (RE2 syntax, linear-time matching)",
        ),
    ],
)
def test_undefined_and_unsafe_names(src: str, message: str) -> None:
    with pytest.raises(ExpressionSafetyError) as info:
        compile_expression(src)
    assert info.value.message == message


def test_variables_declared_at_compile_time() -> None:
    expr = compile_expression(".a + $n", variables=["n"])
    assert expr.all({"a": 1}, variables={"n": 2}) == [3]
    with pytest.raises(ExpressionSafetyError):
        compile_expression(".a + $n")


def test_user_defs_shadowing_forbidden_names_are_still_rejected() -> None:
    with pytest.raises(ExpressionSafetyError, match="range"):
        compile_expression("def range(n): n; range(3)")


@pytest.mark.parametrize(
    ("src", "offset"),
    [
        (".spec.replicatedJobs[", 21),
        (".a |", 4),
        ("{a: }", 4),
        ('"unterminated', 0),
        ("if . then 1", 11),
        (".a ] ", 3),
        ("", 0),
        ("1 < 2 < 3", 6),
        ("reduce . as x (0; .)", 12),
    ],
)
def test_syntax_errors_have_offset_and_caret(src: str, offset: int) -> None:
    with pytest.raises(ExpressionSyntaxError) as info:
        compile_expression(src)
    assert info.value.offset == offset
    assert f"at offset {offset}" in info.value.message
    assert info.value.message.rstrip().endswith("^")


def test_deeply_nested_source_is_a_syntax_error_not_a_crash() -> None:
    with pytest.raises(ExpressionSyntaxError):
        compile_expression("(" * 5000 + "." + ")" * 5000)
    [finding] = analyze("[" * 5000)
    assert finding.code == "syntax"


def test_every_declared_builtin_compiles_and_runs_typed() -> None:
    from workload_map.errors import ExpressionError
    from workload_map.expr.names import BUILTINS

    for name, arity in sorted(BUILTINS):
        args = "; ".join(["."] * arity)
        src = f"{name}({args})" if arity else name
        expr = compile_expression(src)
        for data in (None, "a", [1, "b"], {"a": 1}):
            with contextlib.suppress(ExpressionError):
                expr.all(data)
