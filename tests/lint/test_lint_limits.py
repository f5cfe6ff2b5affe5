"""lint_definition within limits (issue 23): its expressions are charged to the file's compile
budget, shared with the validator's (LINT018 when it runs out), and at most 200 findings are kept
per definition (LINT019 counts the rest)."""

from __future__ import annotations

import yaml

from workload_map.lint import SchemaSet, crd_schemas, lint_definition
from workload_map.model.loader import load_definitions_text
from workload_map.model.validator import CompileBudget

from .widget import CRD, definition, root

SCHEMAS = SchemaSet().add(crd_schemas(CRD, "widgets.yaml"))


def _with_matchers(count: int, path: str) -> str:
    d = definition()
    matchers = [
        {"byExpression": {"expression": f"{path}{i} == {i}", "expectedResult": "true"}} for i in range(count)
    ]
    root(d)["statusDefinition"]["statusMappings"]["running"] = matchers
    return yaml.safe_dump(d, sort_keys=False)


def test_targets_past_the_compile_budget_are_one_finding() -> None:
    [loaded] = load_definitions_text(_with_matchers(20, ".status.phase + "), name="w.yaml").definitions
    findings = lint_definition(
        loaded.karta, SCHEMAS, source_map=loaded.source_map, budget=CompileBudget("w.yaml", 0.0)
    )
    [f] = findings
    assert (f.code, f.severity) == ("LINT018", "error")
    assert f.message.startswith("w.yaml: compiling its expressions took more than 0 s of CPU")
    assert f.field is not None and f.location is not None and f.location.startswith("w.yaml:")
    # The loader's budget is the one lint shares with validate: a generous one checks everything.
    assert lint_definition(loaded.karta, SCHEMAS, source_map=loaded.source_map, budget=loaded.budget) == []


def test_findings_are_capped_with_a_count() -> None:
    [loaded] = load_definitions_text(_with_matchers(300, ".spec.nope"), name="w.yaml").definitions
    findings = lint_definition(loaded.karta, SCHEMAS, source_map=loaded.source_map)
    assert len(findings) == 201
    assert {f.code for f in findings[:200]} == {"LINT001"}
    last = findings[-1]
    assert (last.code, last.severity) == ("LINT019", "error")  # the left-out findings are errors
    assert last.message == "100 more finding(s) not shown (the first 200 are)"
