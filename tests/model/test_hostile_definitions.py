"""Issue 23, validation linear in the definition's size: the attacks reconstructed from the issue's
text (tests/support/hostile_inputs.py) against the loader and the validator.

Growth is measured by counting the Python lines the loader and validator execute for an input and
for one twice its size (deterministic, no clock): linear work doubles, the cubic cycle check the
issue found grew eightfold."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import workload_map.model.loader as loader_module
import workload_map.model.locations as locations_module
import workload_map.model.validator as validator_module
import workload_map.model.yamldocs as yamldocs_module
from tests.support import hostile_inputs as h
from workload_map.model._jq import CompileBudget
from workload_map.model.loader import MAX_FIELD_FINDINGS, load_definitions_text
from workload_map.model.validator import MAX_FINDINGS, validate_definition

WATCHED = {m.__file__ for m in (loader_module, validator_module, locations_module, yamldocs_module)}


def lines_run(work: Callable[[], Any]) -> int:
    """How many lines of the loader, validator and source-map modules ``work`` executes."""
    count = 0

    def tracer(frame: FrameType, event: str, _arg: Any) -> Any:
        nonlocal count
        if frame.f_code.co_filename not in WATCHED:
            return None
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        work()
    finally:
        sys.settrace(None)
    return count


def growth(make_text: Callable[[int], str], n: int, *, validate: bool = True) -> float:
    """Lines run for size 2n over lines run for size n (load, then validate each definition)."""

    def run(size: int) -> Callable[[], Any]:
        text = make_text(size)

        def work() -> None:
            result = load_definitions_text(text, name="hostile.yaml")
            if validate:
                for d in result.definitions:
                    d.validate()

        return work

    return lines_run(run(2 * n)) / lines_run(run(n))


# --- ownerRef cycle ----------------------------------------------------------------------------------


def test_an_ownerref_ring_of_1000_components_is_one_finding() -> None:
    result = load_definitions_text(json.dumps(h.ownerref_cycle(1000)), name="cycle.json")
    [d] = result.definitions
    findings = d.validate()
    assert [(f.code, f.message) for f in findings] == [
        ("KARTA014", "ownership cycle detected involving component c00000")
    ]
    assert findings[0].field == "spec.structureDefinition.childComponents[0].ownerRef"


def test_cycle_check_is_linear() -> None:
    """The issue's cubic check grew 8x per doubling (21 s for 1,000 components); colouring grows 2x."""
    ratio = growth(lambda n: json.dumps(h.ownerref_cycle(n)), 400)
    assert ratio < 2.5, ratio


def test_several_cycles_and_chains_into_them_are_reported_once_each() -> None:
    karta = h.ownerref_cycle(3)  # c00000 -> c00001 -> c00002 -> c00000
    children = karta["spec"]["structureDefinition"]["childComponents"]
    children += [
        {"name": "tail", "ownerRef": "c00001"},  # leads into the ring, is not part of it
        {"name": "x", "ownerRef": "y"},
        {"name": "y", "ownerRef": "x"},  # a second ring, first declared member x
        {"name": "ok", "ownerRef": "root"},
        {"name": "self", "ownerRef": "self"},
    ]
    [d] = load_definitions_text(json.dumps(karta), name="rings.json").definitions
    assert [f.message for f in d.validate()] == [
        "ownership cycle detected involving component c00000",
        "ownership cycle detected involving component x",
        "ownership cycle detected involving component self",
    ]


# --- expressions: one compile budget per file -----------------------------------------------------


def test_expressions_beyond_the_files_compile_budget_are_a_finding_naming_the_file() -> None:
    text = json.dumps(h.many_expressions(50))
    result = load_definitions_text(text, name="exprs.yaml", compile_seconds=0.0)
    [d] = result.definitions
    [f] = [f for f in d.validate() if f.code == "KARTA301"]
    assert f.severity == "error"
    assert f.message.startswith("exprs.yaml: compiling its expressions took more than 0 s of CPU")
    # The phase path is compiled first (and spends the budget); the 50 matchers are not.
    assert "50 expression(s) of this definition were not checked" in f.message
    assert f.field == (
        "spec.structureDefinition.rootComponent.statusDefinition.statusMappings.running[0].byExpression.expression"
    )
    assert f.location is not None and f.location.startswith("exprs.yaml:")


def test_the_budget_is_shared_by_every_definition_of_a_file() -> None:
    one = h.many_expressions(3)
    two = json.loads(json.dumps(one))
    two["metadata"]["name"] = "second"
    text = "---\n".join(json.dumps(d) + "\n" for d in (one, two))
    [a, b] = load_definitions_text(text, name="two.yaml", compile_seconds=0.0).definitions
    [f] = a.validate()  # its phase path is compiled, its 3 matchers are not
    assert f.code == "KARTA301" and "3 expression(s) of this definition were not checked" in f.message
    [f] = b.validate()  # nothing of the second is compiled: the file's budget is spent
    assert f.code == "KARTA301" and "4 expression(s) of this definition were not checked" in f.message
    # A generous budget checks everything: no finding at all.
    [c, e] = load_definitions_text(text, name="two.yaml").definitions
    assert c.validate() == [] and e.validate() == []


def test_without_a_file_a_definition_gets_a_budget_of_its_own() -> None:
    [d] = load_definitions_text(json.dumps(h.many_expressions(5))).definitions
    budget = CompileBudget("mine", seconds=0.0)
    [f] = validate_definition(d.karta, budget=budget)
    assert f.code == "KARTA301" and f.message.startswith("mine: ")
    assert budget.skipped == 5 and budget.exhausted  # 6 expressions, the first compiled
    assert validate_definition(d.karta) == []


def test_many_matchers_are_compared_in_linear_time() -> None:
    """4,000 matchers took 33 s, most of it comparing each with every earlier one (KARTA207/208)."""
    ratio = growth(lambda n: json.dumps(h.many_expressions(n)), 150)
    assert ratio < 2.6, ratio


def test_duplicate_and_cross_status_matchers_still_reported() -> None:
    karta = h.karta("m", {"structureDefinition": {"rootComponent": h._root()}})
    mappings = karta["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"]
    mappings["running"] = [{"byPhase": "Running"}, {"byPhase": "Running"}, {"byPhase": "Up"}]
    mappings["failed"] = [{"byPhase": "Up"}, {"byPhase": "Up"}]
    mappings["degraded"] = [{"byPhase": "Up"}]
    [d] = load_definitions_text(json.dumps(karta)).definitions
    assert [(f.code, f.field.rsplit(".", 1)[-1] if f.field else None) for f in d.validate()] == [
        ("KARTA207", "running[1]"),
        ("KARTA208", "failed[0]"),
        ("KARTA207", "failed[1]"),
        ("KARTA208", "degraded[0]"),
    ]


# --- unknown fields and repeated keys -------------------------------------------------------------


def test_100000_unknown_fields_are_100_findings_and_a_count() -> None:
    result = load_definitions_text(h.unknown_fields_yaml(100_000), name="wide.yaml")
    unknown = [f for f in result.findings if f.code == "KARTA101"]
    assert len(unknown) == MAX_FIELD_FINDINGS + 1
    assert unknown[0].message.startswith(
        'unknown field "unknownField0" at spec.structureDefinition.rootComponent'
    )
    assert unknown[0].location == "wide.yaml:13:7"
    assert unknown[-1].message == "99,900 more unknown fields not listed"
    assert {f.severity for f in unknown} == {"error"}


def test_unknown_fields_cost_linear_time() -> None:
    assert growth(h.unknown_fields_yaml, 3000, validate=False) < 2.4


def test_100000_repeated_keys_are_100_findings_and_a_count() -> None:
    result = load_definitions_text(h.duplicate_keys_yaml(100_000), name="dups.yaml", field_validation="warn")
    dups = [f for f in result.findings if f.code == "KARTA107"]
    assert len(dups) == MAX_FIELD_FINDINGS + 1 and {f.severity for f in dups} == {"warning"}
    assert dups[0].message == 'duplicate key "name" (the last value wins)'
    assert dups[-1].message == "99,900 more repeated keys not listed"
    [d] = result.definitions
    assert d.karta.spec.structure_definition.root_component.name == "root"  # the last one wins


def test_repeated_keys_cost_linear_time() -> None:
    assert growth(h.duplicate_keys_yaml, 3000, validate=False) < 2.4


def test_repeated_keys_of_many_list_items_are_found_by_bisection() -> None:
    """Each item of a list is a definition: its repeated keys are looked up, not scanned for."""
    items = "".join(
        f"- metadata: {{name: d{i}}}\n  spec:\n    structureDefinition:\n      rootComponent:\n"
        f"        name: a\n        name: root\n        kind: {{group: g, version: v1, kind: K{i}}}\n"
        for i in range(400)
    )
    result = load_definitions_text(items, name="list.yaml")
    assert len(result.definitions) == 400
    per_definition = {d.name: [f.code for f in d.findings] for d in result.definitions}
    assert all(codes == ["KARTA107"] for codes in per_definition.values())


def test_findings_per_definition_are_capped_with_a_count() -> None:
    """401 pod-bearing components without selectors: 400 KARTA216 warnings, 200 listed."""
    root = h._root()
    root["specDefinition"] = {"podSpecPath": ".spec"}
    children = [
        {"name": f"c{i}", "ownerRef": "root", "specDefinition": {"podSpecPath": f".spec.c{i}"}}
        for i in range(400)
    ]
    karta = h.karta("wide", {"structureDefinition": {"rootComponent": root, "childComponents": children}})
    [d] = load_definitions_text(json.dumps(karta)).definitions
    findings = d.validate()
    assert len(findings) == MAX_FINDINGS + 1
    last = findings[-1]
    assert (last.code, last.severity) == ("KARTA302", "warning")
    assert last.message == "200 more finding(s) not shown (the first 200 are)"


# --- JSON, YAML size, documents ---------------------------------------------------------------------


def test_json_text_is_parsed_as_json(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_yaml(*_args: Any) -> Any:
        raise AssertionError("JSON went through the YAML composer")

    monkeypatch.setattr(yamldocs_module, "compose_all", no_yaml)
    docs = yamldocs_module.load_yaml_documents(json.dumps(h.jobset_with_containers(250_000)), "big.json")
    assert len(
        docs[0]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"]
    ) == (250_000)


def test_json_with_more_values_than_allowed_is_refused_before_parsing() -> None:
    text = "[" + ",".join(["{}"] * (yamldocs_module.MAX_JSON_VALUES + 1)) + "]"
    with pytest.raises(
        yamldocs_module.DefinitionError, match=r"^many.json: the document holds more than 2,000,000"
    ):
        yamldocs_module.load_yaml_documents(text, "many.json")


def test_yaml_with_too_much_structure_is_refused_before_composing() -> None:
    text = "- a\n" * (yamldocs_module.MAX_YAML_NODES // 2 + 1)
    with pytest.raises(
        yamldocs_module.DefinitionError, match=r"^lines.yaml: too much YAML structure to read"
    ):
        yamldocs_module.load_yaml_documents(text, "lines.yaml")


def test_too_many_documents_are_refused() -> None:
    text = "a: 1\n---\n" * (yamldocs_module.MAX_DOCUMENTS + 1)
    with pytest.raises(
        yamldocs_module.DefinitionError, match=r"docs.yaml holds more than 10,000 YAML documents"
    ):
        yamldocs_module.load_yaml_documents(text, "docs.yaml")


def test_many_values_without_aliases_do_not_blame_aliases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamldocs_module, "MAX_EXPANDED_VALUES", 1000)
    text = "items:\n" + "".join(f"- {{a: {i}}}\n" for i in range(600))
    with pytest.raises(yamldocs_module.DefinitionError) as info:
        yamldocs_module.load_yaml_documents(text, "plain.yaml")
    assert str(info.value) == "plain.yaml:1:1: the document holds more than 1,000 values"


def test_a_big_json_definition_is_not_composed_for_locations(tmp_path: Path) -> None:
    karta = h.ownerref_cycle(3)
    karta["spec"]["structureDefinition"]["rootComponent"]["bogus"] = "x" * (
        loader_module.MAX_JSON_LOCATED + 1
    )
    result = load_definitions_text(json.dumps(karta), name="big.json")
    [f] = result.findings
    assert f.code == "KARTA101" and f.location is None  # no YAML composition of 2 MiB of JSON


def test_a_cluster_karta_is_validated_within_one_objects_budget() -> None:
    """A Karta stored without the operator (no webhook) is skipped with a warning once its
    expressions pass one object's budget, instead of costing every command that lists them."""
    from workload_map.definitions_source import decode_cluster_items

    entries, warnings = decode_cluster_items([h.many_expressions(3000)])
    assert entries == []
    [w] = warnings
    assert w.message.startswith(
        'skipping Karta definition "many-expressions": invalid: Karta "many-expressions": '
    )
    assert "compiling its expressions took more than 0.5 s of CPU" in w.message
