"""-o custom-columns over the view model (views/custom_columns.py)."""

from __future__ import annotations

import pytest

from workload_map.views.custom_columns import CustomColumnsError, parse_file, parse_spec, rows

DOC = {"name": "a", "ready": True, "labels": {"k": "v"}, "phases": ["Running"]}


def test_cells() -> None:
    cols = parse_spec("N:.name,R:.ready,L:.labels,P:.phases,M:.missing")
    assert rows(cols, [DOC]) == [
        ["N", "R", "L", "P", "M"],
        ["a", "true", '{"k":"v"}', '["Running"]', "<none>"],
    ]
    assert rows(cols, [DOC], headers=False) == [["a", "true", '{"k":"v"}', '["Running"]', "<none>"]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("N R\n", "expected two lines"),
        ("N R\n.name\n", "2 headers but 1 paths"),
        ("N\nname\n", 'must start with "."'),
    ],
)
def test_file_errors(text: str, message: str) -> None:
    with pytest.raises(CustomColumnsError, match=message.replace(".", r"\.")):
        parse_file(text, "cols.txt")


def test_spec_limits() -> None:
    with pytest.raises(CustomColumnsError, match="no custom columns given"):
        parse_spec("")
    with pytest.raises(CustomColumnsError, match="at most 64"):
        parse_spec(",".join(f"C{i}:.name" for i in range(65)))
