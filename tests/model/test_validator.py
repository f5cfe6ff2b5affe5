"""The validator: upstream rules with exact text and order, then every extra check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.model.conftest import base, children, needs_engine, root
from workload_map.model.definition import Karta
from workload_map.model.findings import CODES, Finding
from workload_map.model.loader import load_definitions, load_definitions_text
from workload_map.model.validator import expression_fields, validate_definition


def run(d: dict[str, Any]) -> list[Finding]:
    return validate_definition(Karta.model_validate(d))


def msgs(d: dict[str, Any]) -> list[str]:
    return [f.message for f in run(d)]


def codes(d: dict[str, Any]) -> list[str]:
    return [f.code for f in run(d)]


def test_valid_base_has_no_findings() -> None:
    assert run(base()) == []


def test_sample_files_are_valid() -> None:
    result = load_definitions(Path(__file__).parent / "data" / "valid")
    assert result.definitions
    for d in result.definitions:
        assert d.validate() == [], d.origin


# --- upstream rules -------------------------------------------------------------------


def test_nil() -> None:
    [f] = validate_definition(None)
    assert (f.code, f.message) == ("KARTA001", "karta is nil")


def test_duplicate_names_stop_validation() -> None:
    d = base()
    children(d).append({"name": "worker", "ownerRef": "nowhere"})
    del root(d)["statusDefinition"]
    found = run(d)
    assert [(f.code, f.message) for f in found] == [("KARTA002", "component name worker is not unique")]
    assert found[0].field == "spec.structureDefinition.childComponents[1].name"


def test_root_with_child_name_duplicate() -> None:
    d = base()
    children(d)[0]["name"] = "root"
    assert msgs(d) == ["component name root is not unique"]


@pytest.mark.parametrize(
    "kind",
    [
        None,
        {"group": "example.com", "version": "", "kind": "Job"},
        {"group": "example.com", "version": "v1", "kind": ""},
        {"group": "", "version": "v1", "kind": "Job"},
    ],
)
def test_root_full_kind(kind: dict[str, str] | None) -> None:
    d = base()
    if kind is None:
        del root(d)["kind"]
    else:
        root(d)["kind"] = kind
    assert msgs(d) == ["root component must have full kind (group, version, kind)"]


def test_root_core_pod_may_have_empty_group() -> None:
    d = base()
    root(d)["kind"] = {"group": "", "version": "v1", "kind": "Pod"}
    assert run(d) == []


def test_root_owner_ref_and_status() -> None:
    d = base()
    root(d)["ownerRef"] = "x"
    del root(d)["statusDefinition"]
    assert msgs(d) == ["root component cannot have owner ref", "root component must have status definition"]


def test_child_owner_refs() -> None:
    d = base()
    children(d).append({"name": "a"})
    children(d).append({"name": "b", "ownerRef": ""})
    children(d).append({"name": "c", "ownerRef": "ghost"})
    assert msgs(d) == [
        "child component 'a' has no owner ref",
        "child component 'b' has no owner ref",
        "child component 'c' has owner ref to non-existing component 'ghost'",
    ]
    assert [f.code for f in run(d)] == ["KARTA006", "KARTA006", "KARTA007"]


def test_component_rules_in_order() -> None:
    d = base()
    children(d).append(
        {
            "name": "",
            "ownerRef": "root",
        }
    )
    w = children(d)[0]
    w["specDefinition"]["podSpecPath"] = ".spec.template.spec"
    w["podSelector"] = {"componentTypeSelector": {"value": "x"}}
    w["instanceIdPath"] = ".spec.items[].name"
    root(d)["podSelector"] = {"componentInstanceSelector": {"idPath": ".metadata.labels.x"}}
    assert msgs(d) == [
        "component 'root' has pod component instance selector but no instance id path",
        "component 'worker' has multiple pod spec definitions",
        "component 'worker' has component type selector with neither keyPath nor matchLabels",
        "component 'worker' has component type selector value without keyPath",
        "component 'worker' has instance id path but no pod component instance selector",
        "component name is empty",
    ]
    assert codes(d) == ["KARTA013", "KARTA009", "KARTA010", "KARTA011", "KARTA012", "KARTA008"]


def test_fragmented_counts_as_pod_spec_shape() -> None:
    d = base()
    children(d)[0]["specDefinition"]["fragmentedPodSpecDefinition"] = {"imagePath": ".spec.image"}
    assert msgs(d) == ["component 'worker' has multiple pod spec definitions"]


def test_cycle_detected_only_without_other_findings() -> None:
    d = base()
    children(d).extend([{"name": "a", "ownerRef": "b"}, {"name": "b", "ownerRef": "a"}])
    assert [(f.code, f.message) for f in run(d)] == [
        ("KARTA014", "ownership cycle detected involving component a")
    ]
    d2 = base()
    children(d2).extend([{"name": "a", "ownerRef": "b"}, {"name": "b", "ownerRef": "a"}])
    root(d2)["ownerRef"] = "a"
    assert codes(d2) == ["KARTA004"]


def test_self_cycle() -> None:
    d = base()
    children(d).append({"name": "loop", "ownerRef": "loop"})
    assert msgs(d) == ["ownership cycle detected involving component loop"]


def test_pod_group_member_undefined() -> None:
    d = base()
    d["spec"]["optimizationInstructions"] = {
        "gangScheduling": {
            "podGroups": [
                {
                    "name": "g",
                    "members": [
                        {"componentName": "worker", "groupByKeyPaths": [".a"]},
                        {"componentName": "ghost", "groupByKeyPaths": [".a"]},
                    ],
                }
            ]
        }
    }
    [f] = run(d)
    assert f.code == "KARTA015"
    assert (
        f.message == "pod-group member component 'ghost' is not defined (should be a root or child component)"
    )
    assert f.field == "spec.optimizationInstructions.gangScheduling.podGroups[0].members[1].componentName"


def test_all_findings_joined_across_rules() -> None:
    d = base()
    root(d)["ownerRef"] = "x"
    children(d)[0]["specDefinition"]["podSpecPath"] = ".a"
    assert codes(d) == ["KARTA004", "KARTA009"]


def test_jq_findings_name_the_field_as_every_other_finding_does() -> None:
    """Issue 24: the jq messages named Go fields (Spec.StructureDefinition...) where every other
    finding, and the finding's own ``field``, use the camelCase path of the file."""
    d = base()
    children(d)[0]["scaleDefinition"]["replicasPath"] = ".spec.replicas |"
    children(d)[0]["scaleDefinition"]["maxReplicasPath"] = "del(.a)"
    found = run(d)
    assert [f.code for f in found] == ["KARTA016", "KARTA017"]
    for f in found:
        assert f"at '{f.field}'" in f.message
        assert "Spec." not in f.message and "ScaleDefinition" not in f.message


def test_expression_fields_cover_every_jq_field() -> None:
    d = base()
    c = children(d)[0]
    c["specDefinition"] = {
        "podSpecPath": ".p",
        "metadataPath": ".m",
    }
    c["instanceIdPath"] = ".ids[]"
    c["podSelector"] = {
        "componentTypeSelector": {"keyPath": ".k"},
        "componentInstanceSelector": {"idPath": ".i"},
        "replicaSelector": {"keyPath": ".r"},
    }
    c["scaleDefinition"] = {"replicasPath": ".a", "minReplicasPath": ".b", "maxReplicasPath": ".c"}
    c["suspendDefinition"] = {
        "suspendActions": [{"path": ".s", "value": "true"}],
        "resumeActions": [{"path": ".s", "value": "false"}],
    }
    root(d)["statusDefinition"]["conditionsDefinition"] = {"path": ".status.conditions"}
    root(d)["statusDefinition"]["statusMappings"]["failed"] = [
        {"byExpression": {"expression": ".x", "expectedResult": "true"}}
    ]
    children(d).append(
        {
            "name": "frag",
            "ownerRef": "root",
            "specDefinition": {
                "fragmentedPodSpecDefinition": {
                    k: f".{k}"
                    for k in (
                        "schedulerNamePath",
                        "labelsPath",
                        "annotationsPath",
                        "resourcesPath",
                        "resourceClaimsPath",
                        "podAffinityPath",
                        "nodeAffinityPath",
                        "containersPath",
                        "containerPath",
                        "priorityClassNamePath",
                        "imagePath",
                    )
                }
            },
        }
    )
    d["spec"]["optimizationInstructions"] = {
        "gangScheduling": {
            "podGroups": [
                {
                    "name": "g",
                    "members": [
                        {"componentName": "worker", "groupByKeyPaths": [".g0", ".g1"], "filters": [".f"]}
                    ],
                }
            ]
        }
    }
    fields = dict(expression_fields(Karta.model_validate(d)))
    assert len(fields) == 3 + 11 + 11 + 3
    assert (
        fields[
            "spec.structureDefinition.rootComponent.statusDefinition.statusMappings.failed[0]"
            ".byExpression.expression"
        ]
        == ".x"
    )
    assert (
        fields["spec.optimizationInstructions.gangScheduling.podGroups[0].members[0].groupByKeyPaths[1]"]
        == ".g1"
    )
    assert (
        fields["spec.structureDefinition.childComponents[0].suspendDefinition.resumeActions[0].path"] == ".s"
    )
    assert fields[
        "spec.structureDefinition.childComponents[1].specDefinition.fragmentedPodSpecDefinition.imagePath"
    ]


@needs_engine
def test_jq_parse_error_exact_format() -> None:
    d = base()
    children(d)[0]["scaleDefinition"]["replicasPath"] = ".spec.replicas |"
    [f] = run(d)
    assert f.code == "KARTA016"
    assert f.message.startswith(
        "failed to parse JQ expression '.spec.replicas |' at "
        "'spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath': "
    )
    assert f.field == "spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath"


@needs_engine
@pytest.mark.parametrize(
    ("expr", "detail"),
    [
        (".spec.replicas = 3", "modifying operator '=' is not allowed"),
        (".spec.replicas |= 3", "modifying operator '|=' is not allowed"),
        ("del(.spec)", "del function is not allowed"),
        ("..", "recursive descent operator '..' is not allowed"),
        ("[range(1e9)]", "function 'range' may produce excessive output and is not allowed"),
        ("def f: range(10); [f]", "function 'range' may produce excessive output and is not allowed"),
        ("[paths]", "function 'paths' may produce excessive output and is not allowed"),
    ],
)
def test_jq_forbidden_constructs(expr: str, detail: str) -> None:
    d = base()
    children(d)[0]["scaleDefinition"]["replicasPath"] = expr
    [f] = run(d)
    assert f.code == "KARTA017"
    assert f.message == (
        f"JQ expression '{expr}' at "
        "'spec.structureDefinition.childComponents[0].scaleDefinition.replicasPath' "
        f"failed validation: {detail}"
    )


@needs_engine
def test_jq_recursive_def_is_statically_fine() -> None:
    d = base()
    children(d)[0]["scaleDefinition"]["replicasPath"] = "def f: f; f"
    assert run(d) == []


@needs_engine
def test_jq_undefined_function_is_an_error() -> None:
    d = base()
    children(d)[0]["scaleDefinition"]["replicasPath"] = "nosuchfn(1)"
    [f] = run(d)
    assert f.code == "KARTA017"


@needs_engine
def test_jq_findings_come_after_structural_ones_in_field_order() -> None:
    d = base()
    root(d)["ownerRef"] = "x"
    children(d)[0]["scaleDefinition"]["maxReplicasPath"] = "del(.a)"
    children(d)[0]["specDefinition"]["podTemplateSpecPath"] = ".."
    found = run(d)
    assert [f.code for f in found] == ["KARTA004", "KARTA017", "KARTA017"]
    assert "podTemplateSpecPath" in found[1].message and "maxReplicasPath" in found[2].message


@needs_engine
def test_jq_in_gang_and_suspend_fields() -> None:
    d = base()
    root(d)["suspendDefinition"] = {
        "suspendActions": [{"path": ".spec.x |", "value": "true"}],
        "resumeActions": [{"path": ".spec.x", "value": "false"}],
    }
    d["spec"]["optimizationInstructions"] = {
        "gangScheduling": {
            "podGroups": [
                {
                    "name": "g",
                    "members": [{"componentName": "worker", "groupByKeyPaths": [".a"], "filters": ["..|."]}],
                }
            ]
        }
    }
    found = run(d)
    assert [f.code for f in found] == ["KARTA016", "KARTA017"]
    assert (
        "'spec.structureDefinition.rootComponent.suspendDefinition.suspendActions[0].path'"
        in found[0].message
    )
    assert (
        "'spec.optimizationInstructions.gangScheduling.podGroups[0].members[0].filters[0]'"
        in found[1].message
    )


# --- extra checks -------------------------------------------------------------------------


def test_by_conditions_without_definition() -> None:
    d = base()
    root(d)["statusDefinition"]["statusMappings"]["failed"] = [
        {"byConditions": [{"type": "Failed", "status": "True"}]}
    ]
    [f] = run(d)
    assert (f.code, f.severity) == ("KARTA201", "warning")
    assert f.field.endswith("statusMappings.failed[0].byConditions")


def test_by_phase_without_definition() -> None:
    d = base()
    del root(d)["statusDefinition"]["phaseDefinition"]
    root(d)["statusDefinition"]["conditionsDefinition"] = {"path": ".status.conditions"}
    assert codes(d) == ["KARTA202"]


def test_reason_without_reason_field() -> None:
    d = base()
    sd = root(d)["statusDefinition"]
    sd["conditionsDefinition"] = {"path": ".status.conditions", "reasonFieldName": ""}
    sd["statusMappings"]["failed"] = [{"byConditions": [{"type": "Failed", "reason": "Backoff"}]}]
    assert codes(d) == ["KARTA203"]
    sd["conditionsDefinition"] = {"path": ".status.conditions"}  # default "reason"
    assert codes(d) == []


def test_empty_matcher_is_an_error() -> None:
    d = base()
    root(d)["statusDefinition"]["statusMappings"]["completed"] = [{}]
    [f] = run(d)
    assert (f.code, f.severity) == ("KARTA204", "error")
    root(d)["statusDefinition"]["statusMappings"]["completed"] = [{"byConditions": []}]
    assert codes(d) == ["KARTA204"]


def test_condition_without_status_or_reason() -> None:
    d = base()
    sd = root(d)["statusDefinition"]
    sd["conditionsDefinition"] = {"path": ".status.conditions"}
    sd["statusMappings"]["degraded"] = [{"byConditions": [{"type": "Degraded"}]}]
    assert codes(d) == ["KARTA205"]


def test_duplicate_condition_type() -> None:
    d = base()
    sd = root(d)["statusDefinition"]
    sd["conditionsDefinition"] = {"path": ".status.conditions"}
    sd["statusMappings"]["failed"] = [
        {"byConditions": [{"type": "A", "status": "True"}, {"type": "A", "status": "False"}]}
    ]
    assert codes(d) == ["KARTA206"]


def test_duplicate_matchers() -> None:
    d = base()
    sm = root(d)["statusDefinition"]["statusMappings"]
    sm["running"] = [{"byPhase": "Running"}, {"byPhase": "Running"}]
    assert codes(d) == ["KARTA207"]
    sm["running"] = [{"byPhase": "Running"}]
    sm["degraded"] = [{"byPhase": "Running"}]
    [f] = run(d)
    assert f.code == "KARTA208" and "Running and Degraded" in f.message


def test_sub_group_unknown_component_and_topology() -> None:
    d = base()
    d["spec"]["optimizationInstructions"] = {
        "gangScheduling": {
            "podGroup": {
                "name": "pg",
                "topology": {
                    "topologyName": "",
                    "preferredTopologyLevel": "rack",
                    "requiredTopologyLevel": "",
                },
                "subGroups": [
                    {"componentName": "worker"},
                    {"componentName": "ghost"},
                    {"componentName": "worker"},
                ],
            }
        }
    }
    assert codes(d) == ["KARTA222", "KARTA221", "KARTA209"]
    f = next(f for f in run(d) if f.code == "KARTA222")
    assert "topologyName, requiredTopologyLevel" in f.message


@needs_engine
def test_fragmented_path_not_assignable_is_a_warning() -> None:
    d = base()
    children(d)[0]["specDefinition"] = {
        "fragmentedPodSpecDefinition": {
            "imagePath": ".spec.image // .spec.defaultImage",
            "labelsPath": ".spec.labels",
        }
    }
    [f] = run(d)
    assert (f.code, f.severity) == ("KARTA210", "warning")
    assert f.field.endswith("fragmentedPodSpecDefinition.imagePath")


@needs_engine
def test_suspend_path_not_assignable_is_an_error() -> None:
    d = base()
    root(d)["suspendDefinition"] = {
        "suspendActions": [{"path": "{a: .spec.suspend}", "value": "true"}],
        "resumeActions": [{"path": ".spec.suspend", "value": "false"}],
    }
    assert [(f.code, f.severity) for f in run(d)] == [("KARTA211", "error")]


def test_suspend_values_must_be_json_and_lists_non_empty() -> None:
    d = base()
    root(d)["suspendDefinition"] = {
        "suspendActions": [{"path": ".spec.suspend", "value": "yes"}],
        "resumeActions": [],
    }
    assert codes(d) == ["KARTA212", "KARTA213"]
    for ok in ("true", "0", '"Suspended"', "null", '{"a": [1]}'):
        root(d)["suspendDefinition"] = {
            "suspendActions": [{"path": ".spec.suspend", "value": ok}],
            "resumeActions": [{"path": ".spec.suspend", "value": "false"}],
        }
        assert codes(d) == [], ok


def test_additional_child_kinds() -> None:
    d = base()
    d["spec"]["structureDefinition"]["additionalChildKinds"] = [
        {"group": "", "version": "v1", "kind": "Service"},
        {"group": "serving.knative.dev", "version": "v1", "kind": "Service"},
        {"group": "", "version": "v1", "kind": "Service"},
    ]
    found = run(d)
    assert [f.code for f in found] == ["KARTA215", "KARTA214"]
    assert found[1].message == "additionalChildKinds lists /v1, Kind=Service more than once"


def test_selectors_cannot_distinguish() -> None:
    d = base()
    children(d).append({"name": "other", "ownerRef": "root", "specDefinition": {"podSpecPath": ".spec.x"}})
    [f] = run(d)
    assert f.code == "KARTA216" and "neither has a componentTypeSelector" in f.message
    children(d)[0]["podSelector"] = {
        "componentTypeSelector": {"keyPath": ".metadata.labels.role", "value": "a"}
    }
    children(d)[1]["podSelector"] = {
        "componentTypeSelector": {"keyPath": ".metadata.labels.role", "value": "a"}
    }
    [f] = run(d)
    assert "identical" in f.message
    children(d)[1]["podSelector"]["componentTypeSelector"]["value"] = "b"
    assert run(d) == []


def test_metadata_path_without_pod_spec_path() -> None:
    d = base()
    children(d)[0]["specDefinition"]["metadataPath"] = ".spec.template.metadata"
    assert codes(d) == ["KARTA217"]


def test_instance_id_path_on_root() -> None:
    d = base()
    root(d)["instanceIdPath"] = ".spec.items[].name"
    root(d)["podSelector"] = {"componentInstanceSelector": {"idPath": ".metadata.labels.x"}}
    assert codes(d) == ["KARTA218"]


def test_type_selector_empty_key_path_or_labels() -> None:
    d = base()
    children(d)[0]["podSelector"] = {"componentTypeSelector": {"keyPath": "", "matchLabels": {"a": "b"}}}
    assert codes(d) == ["KARTA219"]
    children(d)[0]["podSelector"] = {"componentTypeSelector": {"keyPath": ".k", "matchLabels": {}}}
    assert codes(d) == ["KARTA219"]
    children(d)[0]["podSelector"] = {"componentTypeSelector": {"keyPath": ""}}
    assert codes(d) == ["KARTA010"]  # upstream's rule covers it; no double report


def test_member_without_group_keys_and_duplicates() -> None:
    d = base()
    d["spec"]["optimizationInstructions"] = {
        "gangScheduling": {
            "podGroups": [
                {"name": "g", "members": [{"componentName": "worker", "filters": [".a", ".a"]}]},
                {
                    "name": "g",
                    "members": [
                        {"componentName": "root", "groupByKeyPaths": [".x"]},
                        {"componentName": "root", "groupByKeyPaths": [".x"]},
                    ],
                },
            ]
        }
    }
    assert codes(d) == ["KARTA221", "KARTA220", "KARTA221", "KARTA221"]


def test_empty_expression_warning() -> None:
    d = base()
    children(d)[0]["scaleDefinition"]["minReplicasPath"] = "   "
    [f] = run(d)
    assert (f.code, f.severity) == ("KARTA223", "warning")


def test_findings_carry_definition_and_location() -> None:
    text = yaml.safe_dump(_with_dup_pod_spec(), sort_keys=False)
    result = load_definitions_text(text, name="defs/x.yaml")
    [d] = result.definitions
    [f] = d.validate()
    assert f.definition == "t"
    assert f.location is not None and f.location.startswith("defs/x.yaml:")
    line = int(f.location.split(":")[1])
    assert text.splitlines()[line - 1].strip().startswith("specDefinition:")
    assert f.format().endswith("component 'worker' has multiple pod spec definitions [KARTA009]")


def _with_dup_pod_spec() -> dict[str, Any]:
    d = base()
    children(d)[0]["specDefinition"]["podSpecPath"] = ".spec.x"
    return d


def test_every_code_used_is_registered() -> None:
    import re

    src = (Path(__file__).parents[2] / "src/workload_map/model").glob("*.py")
    used = {m for p in src for m in re.findall(r'"(KARTA\d{3})"', p.read_text())}
    assert used <= set(CODES)
    assert set(CODES) <= used


def test_every_code_documented() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "validation.md").read_text()
    for code, info in CODES.items():
        assert f"| `{code}` | {info.severity}" in doc, code


@needs_engine
def test_jq_parse_error_points_into_the_expression() -> None:
    d = base()
    children(d)[0]["scaleDefinition"]["replicasPath"] = ".spec.replicas | ]"
    text = yaml.safe_dump(d, sort_keys=False)
    [loaded] = load_definitions_text(text, name="x.yaml").definitions
    [f] = loaded.validate()
    assert f.code == "KARTA016" and f.location is not None
    line, col = map(int, f.location.split(":")[1:])
    src_line = text.splitlines()[line - 1]
    value_col = src_line.index(".spec.replicas") + 1
    assert value_col <= col <= value_col + len(".spec.replicas | ]")


@needs_engine
def test_identity_pod_template_path_is_assignable() -> None:
    d = base()
    root(d)["kind"] = {"group": "", "version": "v1", "kind": "Pod"}
    root(d)["specDefinition"] = {"podTemplateSpecPath": "."}
    del children(d)[0]["specDefinition"]
    assert run(d) == []


@needs_engine
def test_jq_undefined_variable() -> None:
    d = base()
    children(d)[0]["scaleDefinition"]["replicasPath"] = "$nope"
    [f] = run(d)
    assert f.code == "KARTA017" and "$nope" in f.message


def test_read_only_paths_annotation_silences_karta210_only_for_the_listed_fields() -> None:
    from workload_map.model.loader import load_definitions_text
    from workload_map.model.validator import READ_ONLY_PATHS_ANNOTATION, validate_definition

    def codes(annotation: str | None) -> list[str]:
        meta = "metadata:\n  name: ro\n" + (
            f"  annotations:\n    {READ_ONLY_PATHS_ANNOTATION}: {annotation}\n"
            if annotation is not None
            else ""
        )
        text = (
            "apiVersion: run.ai/v1alpha1\nkind: Karta\n" + meta + "spec:\n  structureDefinition:\n"
            "    rootComponent:\n      name: root\n      kind: {group: example.com, version: v1, kind: W}\n"
            "      statusDefinition:\n        statusMappings:\n          running:\n"
            "          - byExpression: {expression: 'true', expectedResult: 'true'}\n"
            "      specDefinition:\n        podTemplateSpecPath: .spec.template\n"
            "        fragmentedPodSpecDefinition:\n          resourcesPath: '{requests: .spec.cpu}'\n"
        )
        (loaded,) = load_definitions_text(text, name="ro.yaml").definitions
        return [f.code for f in validate_definition(loaded.karta)]

    assert "KARTA210" in codes(None)
    assert "KARTA210" in codes("other.resourcesPath")
    assert "KARTA210" not in codes("root.resourcesPath")
    assert "KARTA210" not in codes(" root.podSpecPath , root.resourcesPath ")
