"""The encoder against our strict parser: escaping round-trips, one declaration per family."""

from __future__ import annotations

import pytest

from tests.exporter.promparse import FormatError, parse
from workload_map.exporter import exposition
from workload_map.exporter.exposition import Family, escape_label_value, format_value, sample


@pytest.mark.parametrize("value", ["plain", 'quo"te', "back\\slash", "new\nline", '\\"\n\\n', "ünï", ""])
def test_label_escaping_round_trips(value: str) -> None:
    fam = Family("wmap_test_info", "info", "help with \\ and\nnewline")
    text = fam.render([([("a", value), ("b", "x")], 1)]).decode()
    exp = parse(text)
    assert exp.types == {"wmap_test_info": "gauge"}
    assert exp.helps["wmap_test_info"] == "help with \\ and\nnewline"
    assert exp.samples[0].labels == {"a": value, "b": "x"}


def test_values() -> None:
    assert format_value(3) == "3"
    assert format_value(2.5) == "2.5"
    assert format_value(4.0) == "4"
    assert format_value(float("nan")) == "NaN"
    assert format_value(float("inf")) == "+Inf"
    assert format_value(True) == "1"
    assert sample("x", [], 0.1) == "x 0.1\n"
    assert escape_label_value("ok") == "ok"


def test_label_values_escape_the_same_when_remembered_and_the_memory_is_bounded() -> None:
    long = "x" * (exposition.MAX_LABEL_VALUE_LENGTH + 40)
    values = ['a"b', "back\\slash", "line\nfeed", "plain", long]
    first = [escape_label_value(v) for v in values]
    assert first[:4] == ['a\\"b', "back\\\\slash", "line\\nfeed", "plain"]
    assert first[4] == exposition.cut_label_value(long)
    assert [escape_label_value(v) for v in values] == first  # remembered: the same text
    assert long not in exposition._ESCAPED  # a long value is not kept alive
    for i in range(exposition.ESCAPED_MAX + 10):
        escape_label_value(f"pod-{i}")
    assert len(exposition._ESCAPED) <= exposition.ESCAPED_MAX
    assert escape_label_value('a"b') == first[0]


def test_parser_rejects_bad_output() -> None:
    with pytest.raises(FormatError):
        parse("x 1\n")  # no family
    with pytest.raises(FormatError):
        parse("# TYPE x gauge\nx 1\n# TYPE x gauge\nx 2\n")
    with pytest.raises(FormatError):
        parse('# TYPE x gauge\nx{a="b\\q"} 1\n')
    with pytest.raises(FormatError):
        parse("# TYPE x gauge\nx 1\nx 2\n")
