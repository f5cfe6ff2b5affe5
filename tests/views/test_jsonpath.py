"""The jsonpath engine (views/jsonpath.py) on fixed data. Each expectation is what kubectl v1.32
printed for the same template over the same values (tests/cli/test_jsonpath.py checks the engine
against kubectl itself on the test API server; these run without it)."""

from __future__ import annotations

from typing import Any

import pytest

from workload_map.views.jsonpath import (
    MAX_TEMPLATE,
    JSONPathExecutionError,
    JSONPathParseError,
    go_text,
    parse,
)

DOC: dict[str, Any] = {
    "kind": "List",
    "items": [
        {
            "name": "a",
            "n": None,
            "f": 2,
            "g": 1.5,
            "big": 1e21,
            "e": 1e-7,
            "m": 1000000.0,
            "h": "<&>",
            "t": True,
            "tags": ["x", "y"],
            "o": {"k": 1},
            "kids": [{"name": "a1"}, {"name": "a2"}],
        },
        {"name": "b", "f": 3, "g": 0.1, "t": False, "kids": []},
    ],
}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{.items[*].name}", "a b"),
        ("{range .items[*]}{.name}{'\\t'}{.f}{\"\\n\"}{end}", "a\t2\nb\t3\n"),
        ("literal {.kind} x", "literal List x"),
        ("{.items[0].o}", '{"k":1}'),
        ("{.items[0].h}", "<&>"),
        ("{.items[0].n}", "null"),
        ("{.items[0].g} {.items[0].big} {.items[0].e} {.items[0].m}", "1.5 1e+21 1e-07 1000000"),
        (
            "{.items[0]}",
            '{"big":1e+21,"e":1e-7,"f":2,"g":1.5,"h":"\\u003c\\u0026\\u003e",'
            '"kids":[{"name":"a1"},{"name":"a2"}],"m":1000000,"n":null,"name":"a","o":{"k":1},'
            '"t":true,"tags":["x","y"]}',
        ),
        ("{.items[-1:].name}", "b"),
        ("{.items[-1].name}", "b"),
        ("{.items[1:1]}", ""),
        ("{.items[::2].name}", "a"),
        ("{.items[0,1].name}", "a b"),
        ("{.items[0]['name','f']}", "a 2"),
        ("{.items[*]['name']}", "a b"),
        ("{.items[?(@.f==3)].name}", "b"),
        ("{.items[?(@.n)].name}", "a"),
        ("{.items[?(@.t==true)].name}", "a"),
        ("{.items[?(@.name!='a')].name}", "b"),
        ('{.items[?(@.name>="b")].name}', "b"),
        ("{.items[*].kids[*].name}", "a1 a2"),
        ("{range .items[*]}{.name}:{range .kids[*]}{.name},{end};{end}", "a:a1,a2,;b:;"),
        ("{range .items[*]}{.name}", "ab"),  # no {end}: the body runs again on the outer data
        ("{range .items[*]}{.kind}", "List"),
        ("{.items[0].name.*}", "97"),  # Go iterates a string's bytes
        ("{.missing}{.items.x}{.items[0].name.x}{.}", ""),
        ("{true}{1}{1.5}", "true11.5"),
        ('{"a" "b"}', "b"),
        ("{$.kind}{@.kind}{ .kind }", "ListListList"),
        ("{..name}", "a a1 a2 b"),
        ("{.items[0].tags}", '["x","y"]'),
        ('{"\\u00e9\\x41"}', "éA"),
    ],
)
def test_render(template: str, expected: str) -> None:
    assert parse(template).render(DOC) == expected


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{.items[0", "unterminated array"),
        ("{.items[0]", "unclosed action"),
        ('{"abc}', "unterminated quoted string"),
        ('{.items[?(@.x=="a"}', "unterminated filter"),
        ("{.items[a]}", "invalid array index a"),
        ('{.items[*]["name"]}', 'invalid array index "name"'),
        ("{.items[1:x]}", "invalid array index 1:x"),
        ("{....a}", "invalid multiple recursive descent"),
        ("{#}", "unrecognized character in action: U+0023 '#'"),
        ("{.items[*].name,.kind}", "unrecognized character in action: U+002C ','"),
    ],
)
def test_parse_errors(template: str, message: str) -> None:
    with pytest.raises(JSONPathParseError) as err:
        parse(template)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{.items[5]}", "array index out of bounds: index 5, length 2"),
        ("{.items[-3]}", "array index out of bounds: index -1, length 2"),
        ("{.items[2:1]}", "array index out of bounds: index 2, length 2"),
        ("{.items[0:1:0]}", "step must be > 0"),
        ("{.items[0].name[0]}", "string is not array or slice"),
        ("{end}", "not in range, nothing to end"),
        ("{range .items[*]}{end}{end}", "not in range, nothing to end"),
        ("{foo}", "unrecognized identifier foo"),
        ("{.items[?(@.name==1)]}", "incompatible types for comparison"),
        ("{.items[?(@.g>1)]}", "incompatible types for comparison"),
        ("{.items[?(@.t<true)]}", "invalid type for comparison"),
        ("{.items[?(@.o==1)]}", "invalid type for comparison"),
        ("{.items[?(@.kids[*].name=='a1')]}", "can only compare one element at a time"),
        ("{.items[?(@.name='a')]}", "unrecognized filter operator ="),
    ],
)
def test_execution_errors(template: str, message: str) -> None:
    with pytest.raises(JSONPathExecutionError) as err:
        parse(template).render(DOC)
    assert str(err.value) == message


def test_as_json_prints_each_value_list_as_an_indented_array() -> None:
    t = parse("{range .items[*]}{.name}{.f}{end}", as_json=True)
    assert t.render(DOC) == '[\n    "a"\n]\n[\n    2\n]\n[\n    "b"\n]\n[\n    3\n]\n'
    assert parse("{.items[0].o}", as_json=True).render(DOC) == '[\n    {\n        "k": 1\n    }\n]\n'


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.1, "0.1"),
        (123456789.0, "123456789"),
        (1e20, "100000000000000000000"),
        (1.5e-5, "1.5e-05"),
        (0.0001, "0.0001"),
        (-2.5, "-2.5"),
        (7, "7"),
        (False, "false"),
    ],
)
def test_go_number_text(value: Any, text: str) -> None:
    assert go_text(value) == text


def test_bounds_are_checked_before_running() -> None:
    with pytest.raises(JSONPathParseError, match="longer than"):
        parse("{.a}" * (MAX_TEMPLATE // 4 + 1))
    with pytest.raises(JSONPathParseError):
        parse("{.a[" + "[" * 10)
    wide = {"items": [list(range(1000)) for _ in range(1100)]}
    with pytest.raises(JSONPathExecutionError, match="more than"):
        parse("{.items[*][*]}").render(wide)
