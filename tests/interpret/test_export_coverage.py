"""The catalog's Lua export coverage, as docs/multicluster.md states it ("Lua export coverage"):
per definition the operations exported and the expressions translated, and over the catalog the
expressions the back end refuses, by construct."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from workload_map.catalog import list_definitions
from workload_map.errors import ExpressionNotTranslatableError
from workload_map.expr.lua import compile_lua
from workload_map.interpret.export import export_customization
from workload_map.resolve import compile_definition
from workload_map.resolve.compiled import CompiledDefinition, CompiledExpression

DOCS = Path(__file__).resolve().parents[2] / "docs" / "multicluster.md"


def _other_expressions(cd: CompiledDefinition) -> list[CompiledExpression]:
    """Expressions the interpreter does not use: gang rules, pod selectors, suspend paths."""
    out: list[CompiledExpression] = []
    for group in cd.pod_groups:
        for member in group.members:
            out += [*(member.group_by or ()), *(member.filters or ())]
    ge = cd.gang_expressions
    if ge is not None:
        out += [e for e in (ge.name, ge.min_member, ge.min_sub_group, ge.sub_groups, ge.pod_sub_group) if e]
    for c in cd.components.values():
        ps = c.pod_selector
        if ps is not None:
            out += [e for e in (ps.type_key, ps.instance_id, ps.replica_key) if e]
        out += [a.path for a in (*c.suspend_actions, *c.resume_actions)]
    return out


def _coverage() -> tuple[dict[str, tuple[str, int, int, int]], Counter[str], int, int]:
    rows: dict[str, tuple[str, int, int, int]] = {}
    refused: Counter[str] = Counter()
    other = other_ok = 0
    for karta in list_definitions():
        cd = compile_definition(karta)
        export = export_customization(cd)
        exprs = list(cd.root_expressions())
        translated = 0
        for ce in exprs:
            try:
                compile_lua(ce.source)
                translated += 1
            except ExpressionNotTranslatableError as exc:
                refused[exc.construct] += 1
        for ce in _other_expressions(cd):
            other += 1
            try:
                compile_lua(ce.source, ("pod",))
                other_ok += 1
            except ExpressionNotTranslatableError as exc:
                refused[exc.construct] += 1
        gvk = cd.root.definition.kind
        assert gvk is not None
        rows[cd.name] = (
            gvk.kind,
            len(export.customization["spec"]["customizations"]),
            translated,
            len(exprs),
        )
    return rows, refused, other, other_ok


def test_the_whole_catalog_exports() -> None:
    rows, refused, other, other_ok = _coverage()
    assert len(rows) == 31
    assert all(ops == 8 and ok == n for _, ops, ok, n in rows.values()), rows
    assert sum(n for *_, n in rows.values()) == 454
    assert (other, other_ok) == (172, 172) and not refused


def test_the_coverage_table_in_the_docs_is_the_measured_one() -> None:
    rows, *_ = _coverage()
    section = DOCS.read_text().split("### Lua export coverage", 1)[1].split("\n## ", 1)[0]
    documented = {}
    for line in section.splitlines():
        m = re.match(r"^\| `([a-z0-9-]+)` \| (\w+) \| (\d)/8 \| (\d+)/(\d+) \|", line)
        if m:
            documented[m[1]] = (m[2], int(m[3]), int(m[4]), int(m[5]))
    assert documented == rows
