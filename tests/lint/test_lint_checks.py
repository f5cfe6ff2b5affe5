"""lint_definition: a correct definition is clean; each deliberate mistake fires its check."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from workload_map.lint import CODES, KindSchema, SchemaSet, crd_schemas, lint_definition, output_paths
from workload_map.lint.checks import NoSchemaError
from workload_map.model.definition import Karta
from workload_map.model.loader import load_definitions_text

from .widget import CRD, definition, root, worker

SCHEMAS = SchemaSet().add(crd_schemas(CRD, "widgets.yaml"))

Mutation = Callable[[dict[str, Any]], None]


def lint(d: dict[str, Any]) -> list[Any]:
    return lint_definition(Karta.model_validate(d), SCHEMAS)


def test_correct_definition_is_clean() -> None:
    assert lint(definition()) == []


def _set(getter: Callable[[dict[str, Any]], dict[str, Any]], *path: str | int, value: Any) -> Mutation:
    def apply(d: dict[str, Any]) -> None:
        node: Any = getter(d)
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value

    return apply


CASES: list[tuple[str, Mutation, str, str]] = [
    # (case, mutation, expected code, expected field suffix)
    (
        "typo'd field",
        _set(root, "scaleDefinition", "replicasPath", value=".spec.replica // 1"),
        "LINT001",
        "replicasPath",
    ),
    (
        "typo deep in a template",
        _set(root, "specDefinition", "podTemplateSpecPath", value=".spec.templat"),
        "LINT001",
        "podTemplateSpecPath",
    ),
    (
        "field below a string",
        _set(root, "scaleDefinition", "replicasPath", value=".spec.name.count"),
        "LINT002",
        "replicasPath",
    ),
    (
        "iterating a string",
        _set(root, "scaleDefinition", "replicasPath", value=".spec.name[] | length"),
        "LINT002",
        "replicasPath",
    ),
    (
        "replicas a string",
        _set(root, "scaleDefinition", "replicasPath", value=".spec.name"),
        "LINT003",
        "replicasPath",
    ),
    (
        "replicas an object",
        _set(worker, "scaleDefinition", "maxReplicasPath", value=".spec.worker"),
        "LINT003",
        "maxReplicasPath",
    ),
    (
        "template not a template",
        _set(root, "specDefinition", "podTemplateSpecPath", value=".spec.worker"),
        "LINT004",
        "podTemplateSpecPath",
    ),
    (
        "pod spec not a pod spec",
        _set(root, "specDefinition", value={"podSpecPath": ".spec.labels"}),
        "LINT005",
        "podSpecPath",
    ),
    (
        "metadata path a string",
        _set(
            root, "specDefinition", value={"podSpecPath": ".spec.template.spec", "metadataPath": ".spec.name"}
        ),
        "LINT006",
        "metadataPath",
    ),
    (
        "containersPath an object",
        _set(
            worker,
            "specDefinition",
            "fragmentedPodSpecDefinition",
            "containersPath",
            value=".spec.worker.main",
        ),
        "LINT007",
        "containersPath",
    ),
    (
        "containerPath an array",
        _set(
            worker,
            "specDefinition",
            "fragmentedPodSpecDefinition",
            "containerPath",
            value=".spec.worker.containers",
        ),
        "LINT007",
        "containerPath",
    ),
    (
        "resourcesPath without requests/limits",
        _set(
            worker,
            "specDefinition",
            "fragmentedPodSpecDefinition",
            "resourcesPath",
            value=".spec.worker.main",
        ),
        "LINT007",
        "resourcesPath",
    ),
    (
        "labels not a map of strings",
        _set(
            worker,
            "specDefinition",
            "fragmentedPodSpecDefinition",
            "labelsPath",
            value=".spec.worker.containers",
        ),
        "LINT007",
        "labelsPath",
    ),
    (
        "schedulerName an integer",
        _set(
            worker,
            "specDefinition",
            "fragmentedPodSpecDefinition",
            "schedulerNamePath",
            value=".spec.replicas",
        ),
        "LINT007",
        "schedulerNamePath",
    ),
    (
        "phase not a string",
        _set(root, "statusDefinition", "phaseDefinition", "path", value=".status.count"),
        "LINT008",
        "path",
    ),
    (
        "byPhase outside the enum",
        _set(root, "statusDefinition", "statusMappings", "initializing", 0, "byPhase", value="Waiting"),
        "LINT009",
        "byPhase",
    ),
    (
        "conditions not an array",
        _set(root, "statusDefinition", "conditionsDefinition", "path", value=".status.phase"),
        "LINT010",
        "path",
    ),
    (
        "conditions type field name wrong",
        _set(root, "statusDefinition", "conditionsDefinition", "typeFieldName", value="kind"),
        "LINT010",
        "path",
    ),
    (
        "reason matchers without a reason field",
        _set(root, "statusDefinition", "conditionsDefinition", "reasonFieldName", value="why"),
        "LINT011",
        "path",
    ),
    (
        "condition type outside the enum",
        _set(
            root,
            "statusDefinition",
            "statusMappings",
            "running",
            0,
            "byConditions",
            0,
            "type",
            value="Available",
        ),
        "LINT012",
        "byConditions[0]",
    ),
    (
        "condition status outside the enum",
        _set(
            root,
            "statusDefinition",
            "statusMappings",
            "running",
            0,
            "byConditions",
            0,
            "status",
            value="true",
        ),
        "LINT012",
        "byConditions[0]",
    ),
    (
        "non-assignable fragmented path",
        _set(
            worker,
            "specDefinition",
            "fragmentedPodSpecDefinition",
            "resourcesPath",
            value="{requests: .spec.worker.resources.requests}",
        ),
        "LINT013",
        "resourcesPath",
    ),
    (
        "non-assignable suspend path",
        _set(root, "suspendDefinition", "suspendActions", 0, "path", value=".spec.suspend // false"),
        "LINT014",
        "suspendActions[0].path",
    ),
    (
        "suspend value wrong type",
        _set(root, "suspendDefinition", "suspendActions", 0, "value", value='"yes"'),
        "LINT015",
        "suspendActions[0].path",
    ),
    (
        "suspend value outside the enum",
        _set(root, "suspendDefinition", "suspendActions", 1, "value", value='"Stopped"'),
        "LINT015",
        "suspendActions[1].path",
    ),
    (
        "suspend path missing",
        _set(root, "suspendDefinition", "resumeActions", 0, "path", value=".spec.suspended"),
        "LINT001",
        "resumeActions[0].path",
    ),
    (
        "pod selector reads a field pods lack",
        _set(
            worker,
            "podSelector",
            "componentTypeSelector",
            "keyPath",
            value='.metadata.label["example.com/role"]',
        ),
        "LINT016",
        "keyPath",
    ),
    (
        "byExpression reads a missing status field",
        _set(
            root,
            "statusDefinition",
            "statusMappings",
            "completed",
            0,
            "byExpression",
            "expression",
            value="(.status.done // 0) > 0",
        ),
        "LINT001",
        "expression",
    ),
]


@pytest.mark.parametrize(("case", "mutate", "code", "field"), CASES, ids=[c[0] for c in CASES])
def test_each_check_fires(case: str, mutate: Mutation, code: str, field: str) -> None:
    d = definition()
    mutate(d)
    findings = lint(d)
    assert [f.code for f in findings] == [code], [f.format() for f in findings]
    f = findings[0]
    assert f.field is not None and f.field.endswith(field)
    assert f.severity == CODES[code][0]
    assert f.definition == "example-com-widget-v1"
    assert f.expression is not None


def test_every_definition_code_has_a_case() -> None:
    covered = {c[2] for c in CASES}
    # LINT017 (an unserved version) and the limits LINT018/LINT019 have tests of their own.
    definition_codes = {
        c for c in CODES if c.startswith("LINT0") and c not in ("LINT017", "LINT018", "LINT019")
    }
    assert definition_codes <= covered


def test_finding_carries_schema_pointer_expression_and_location() -> None:
    d = definition()
    root(d)["scaleDefinition"]["replicasPath"] = ".spec.name"
    text = yaml.safe_dump(d, sort_keys=False)
    loaded = load_definitions_text(text, name="widget.yaml").definitions[0]
    (f,) = lint_definition(loaded.karta, SCHEMAS, source_map=loaded.source_map)
    assert f.code == "LINT003"
    assert f.schema == "widgets.yaml#/properties/spec/properties/name"
    assert f.expression == ".spec.name"
    assert f.field == "spec.structureDefinition.rootComponent.scaleDefinition.replicasPath"
    line = next(i for i, s in enumerate(text.splitlines(), 1) if "replicasPath: .spec.name" in s)
    assert f.location is not None and f.location.startswith(f"widget.yaml:{line}:")
    assert "did you mean" not in f.message
    assert f.format().splitlines()[1:] == [
        "    field: spec.structureDefinition.rootComponent.scaleDefinition.replicasPath",
        "    expression: .spec.name",
        "    schema: widgets.yaml#/properties/spec/properties/name",
    ]


def test_typo_suggests_the_close_field() -> None:
    d = definition()
    root(d)["scaleDefinition"]["replicasPath"] = ".spec.replica // 1"
    (f,) = lint(d)
    assert '.spec.replica: no field "replica" here (did you mean "replicas"?)' in f.message
    assert f.schema == "widgets.yaml#/properties/spec"


def test_preserve_unknown_fields_and_int_or_string_accept_anything_below() -> None:
    d = definition()
    root(d)["scaleDefinition"]["minReplicasPath"] = ".spec.extra.whatever.deep"
    worker(d)["scaleDefinition"]["replicasPath"] = ".spec.size"
    assert lint(d) == []


def test_metadata_is_object_meta_even_when_declared_bare() -> None:
    d = definition()
    root(d)["instanceIdPath"] = ".metadata.name"
    root(d)["podSelector"] = {"componentInstanceSelector": {"idPath": ".metadata.name"}}
    assert lint(d) == []
    root(d)["instanceIdPath"] = ".metadata.nam"
    assert [f.code for f in lint(d)] == ["LINT001"]


def test_no_schema_for_the_root_kind() -> None:
    d = definition()
    root(d)["kind"]["version"] = "v2"
    with pytest.raises(NoSchemaError, match=r"no schema for example.com/v2 Widget \(it has versions v1\)"):
        lint(d)


def test_one_kind_schema_can_be_passed_directly() -> None:
    (ks,) = crd_schemas(CRD, "w.yaml")
    assert isinstance(ks, KindSchema)
    assert lint_definition(Karta.model_validate(definition()), ks) == []


def test_unserved_version_is_reported() -> None:
    crd = {**CRD, "spec": {**CRD["spec"], "versions": [{**CRD["spec"]["versions"][0], "served": False}]}}
    findings = lint_definition(
        Karta.model_validate(definition()), SchemaSet().add(crd_schemas(crd, "w.yaml"))
    )
    assert [f.code for f in findings] == ["LINT017"]


@pytest.mark.parametrize(
    ("src", "expected"),
    [
        (".spec.replicas // 1", [("spec", "replicas")]),
        ("(.spec.a // 1) * (.spec.b // 1)", []),
        (".spec.x | if .a then .a else .b end", [("spec", "x", "a"), ("spec", "x", "b")]),
        (".spec.items[] | select(.on) | .t", [("spec", "items", "[]", "t")]),
        ("{requests: .spec.r}", []),
    ],
)
def test_output_paths(src: str, expected: list[tuple[str, ...]]) -> None:
    assert output_paths(src) == expected
