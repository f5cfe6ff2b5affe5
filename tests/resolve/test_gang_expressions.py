"""``gangScheduling.expressions``: every result is checked before it is used, and a definition
without the extension keeps its old meaning."""

from __future__ import annotations

import json

import pytest

from workload_map.errors import WorkloadMapError
from workload_map.model.definition import Karta
from workload_map.model.loader import load_definitions_text
from workload_map.model.validator import validate_definition
from workload_map.resolve.gangs import group_pod

OWNER = {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w", "uid": "u"}, "spec": {"n": 3}}
POD = {"metadata": {"name": "p", "labels": {"role": "a"}}}


def _karta(**expressions: str) -> Karta:
    lines = "".join(f"        {k}: {json.dumps(v)}\n" for k, v in expressions.items())
    text = f"""apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {{name: w}}
spec:
  structureDefinition:
    rootComponent:
      name: w
      kind: {{group: example.com, version: v1, kind: W}}
      specDefinition: {{podTemplateSpecPath: .spec.template}}
  optimizationInstructions:
    gangScheduling:
      expressions:
{lines}"""
    return _load(text)


def _load(text: str) -> Karta:
    return load_definitions_text(text, name="w.yaml").definitions[0].karta


def test_values_replace_the_default_grouper() -> None:
    k = _karta(
        minSubGroup=".spec.n - 1",
        subGroups=(
            '[{name: "a", minMember: .spec.n}, {name: "b", minSubGroup: 1},'
            ' {name: "c", parent: "b", minMember: 0}]'
        ),
        podSubGroup="$pod.metadata.labels.role",
    )
    plan = group_pod(k, OWNER, POD)
    assert plan.name == "pg-w-u" and plan.format == "expressions"
    assert plan.min_sub_group == 2 and plan.min_member is None
    assert [(s.name, s.parent, s.min_member, s.min_sub_group, s.pod_is_member) for s in plan.sub_groups] == [
        ("a", None, 3, None, True),
        ("b", None, 0, 1, False),
        ("c", "b", 0, None, False),
    ]


def test_null_keeps_the_default() -> None:
    plan = group_pod(_karta(minMember="null", name="null"), OWNER, POD)
    assert plan.name == "pg-w-u" and plan.min_member == 1


@pytest.mark.parametrize(
    ("field", "source", "message"),
    [
        ("minMember", '"3"', "expected an integer"),
        ("minMember", "-1", "out of range"),
        ("minMember", "2147483648", "out of range"),
        ("minMember", "1, 2", "yielded 2 values"),
        ("name", '"Not_A_Name"', "DNS-1123"),
        ("subGroups", "{}", "expected an array"),
        ("subGroups", '[{name: "a"}, {name: "a"}]', "duplicate subgroup"),
        ("subGroups", '[{name: "a", parent: "x"}]', "no subgroup named"),
        ("subGroups", '[{name: "a", parent: "b"}, {name: "b", parent: "a"}]', "cycle"),
        ("subGroups", '[{name: "a", minMember: 1, minSubGroup: 1}]', "mutually exclusive"),
        ("subGroups", '[{name: "a", typo: 1}]', "unknown keys typo"),
        ("subGroups", '[{name: "UPPER"}]', "DNS-1123 label"),
        ("subGroups", '"x" * 10001 | explode | map({name: "s\\(.)"})', "at most 10000"),
        ("podSubGroup", '"nope"', "not one of the subgroups"),
        ("minMember", 'error("boom")', "boom"),
    ],
)
@pytest.mark.usefixtures("no_wall_deadline")
def test_bad_results_are_errors_naming_the_field(field: str, source: str, message: str) -> None:
    with pytest.raises(WorkloadMapError) as info:
        group_pod(_karta(**{field: source}), OWNER, POD)
    assert message in str(info.value)
    if "failed to evaluate" in str(info.value) or field != "podSubGroup":
        assert field in str(info.value) or message == "DNS-1123"


@pytest.mark.usefixtures("no_wall_deadline")
def test_a_long_parent_chain_is_checked_in_linear_time() -> None:
    chain = (
        '"x" * 10000 | explode | keys'
        ' | map({name: "s\\(.)", parent: (if . > 0 then "s\\(. - 1)" else null end)})'
    )
    plan = group_pod(_karta(subGroups=chain), OWNER, POD)
    assert len(plan.sub_groups) == 10000 and plan.sub_groups[-1].parent == "s9998"


def test_pod_is_only_visible_to_the_extension() -> None:
    k = _karta(minMember="$pod.spec.x // 1")
    assert not [f for f in validate_definition(k) if "$pod" in f.message]
    bad = _load(
        """apiVersion: run.ai/v1alpha1
kind: Karta
metadata: {name: w}
spec:
  structureDefinition:
    rootComponent:
      name: w
      kind: {group: example.com, version: v1, kind: W}
      specDefinition: {podTemplateSpecPath: $pod.spec}
"""
    )
    assert any("$pod" in f.message for f in validate_definition(bad))


def test_gang_expressions_compile_when_the_gang_plan_first_asks_for_them() -> None:
    """Resolving a workload (``describe``, ``get``) never compiles the gang expressions; the gang
    plan does, once, and a bad one is the same DefinitionError naming its field as before."""
    from workload_map.catalog import get_definition
    from workload_map.errors import DefinitionError
    from workload_map.resolve import compile_definition, resolve

    jobset = compile_definition(get_definition("jobset.x-k8s.io/v1alpha2", "JobSet"))  # type: ignore[arg-type]
    obj = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "j", "namespace": "ns", "uid": "u"},
        "spec": {"replicatedJobs": [{"name": "w", "replicas": 2, "template": {"spec": {}}}]},
    }
    resolve(jobset, obj)
    assert "gang_expressions" not in vars(jobset)
    assert jobset.gang_expressions is not None and jobset.gang_expressions.sub_groups is not None
    assert jobset.gang_expressions is jobset.gang_expressions  # compiled once

    # Not validated (a Karta built directly, as a library user may): only the gang plan fails.
    wire = _karta(minMember=".spec.n").to_wire()
    wire["spec"]["optimizationInstructions"]["gangScheduling"]["expressions"]["minMember"] = ".spec.n |"
    bad = compile_definition(Karta.model_validate(wire))
    with pytest.raises(DefinitionError, match=r"gangScheduling\.expressions\.minMember: invalid jq"):
        _ = bad.gang_expressions
    with pytest.raises(WorkloadMapError, match=r"gangScheduling\.expressions\.minMember: invalid jq"):
        group_pod(bad.karta, OWNER, POD)
