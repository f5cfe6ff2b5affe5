"""WorkloadPolicy: parsing with field-path errors, matching (operations, kinds, namespace and
workload selectors), values from labels, the defined order with conflicts reported, locations a
definition cannot carry skipped (never refused at admission), and bounds."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.model.definition import Karta
from workload_map.resolve.edits import InvalidEditError
from workload_map.resolve.policy import MAX_POLICIES, apply_policies, ordered, parse_policy

ROOT = Path(__file__).resolve().parents[2]


def load(slug: str) -> tuple[Karta, dict[str, Any]]:
    karta = Karta.model_validate(
        yaml.safe_load((ROOT / f"src/workload_map/catalog/data/{slug}.yaml").read_text())
    )
    obj = yaml.safe_load((ROOT / f"tests/catalog/lifecycles/{slug}/running.yaml").read_text())["object"]
    return karta, obj


def policy(name: str, **spec: Any) -> Any:
    return parse_policy(
        {
            "apiVersion": "workload-map.dev/v1alpha1",
            "kind": "WorkloadPolicy",
            "metadata": {"name": name},
            "spec": spec,
        }
    )


# The issue's example: in namespaces labelled team=ml, scheduler kai-scheduler, the queue label
# from the namespace's `queue` label, a GPU toleration, the priority class from a workload label.
ML = {
    "namespaceSelector": {"matchLabels": {"team": "ml"}},
    "set": {
        "schedulerName": "kai-scheduler",
        "podLabels": {"set": {"kai.scheduler/queue": {"fromNamespaceLabel": "queue"}}},
        "tolerations": {"add": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
        "priorityClassName": {"fromWorkloadLabel": "priority", "default": "train-normal"},
    },
}


def templates(js: dict[str, Any]) -> list[dict[str, Any]]:
    return [rj["template"]["spec"]["template"] for rj in js["spec"]["replicatedJobs"]]


def test_the_issue_example_on_a_jobset() -> None:
    karta, obj = load("jobset-x-k8s-io-jobset-v1alpha2")
    obj["metadata"].setdefault("labels", {})["priority"] = "train-high"
    before = copy.deepcopy(obj)
    result = apply_policies(
        karta, obj, [policy("ml", **ML)], namespace_labels={"team": "ml", "queue": "research"}
    )
    assert obj == before
    assert result.applied == ("ml",) and result.warnings == ()
    for tpl in templates(result.change.new_object):
        assert tpl["spec"]["schedulerName"] == "kai-scheduler"
        assert tpl["spec"]["priorityClassName"] == "train-high"
        assert tpl["metadata"]["labels"]["kai.scheduler/queue"] == "research"
        assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in tpl["spec"][
            "tolerations"
        ]


def test_matching() -> None:
    karta, obj = load("jobset-x-k8s-io-jobset-v1alpha2")
    ml = policy("ml", **ML)
    assert apply_policies(karta, obj, [ml], namespace_labels={"team": "web"}).applied == ()
    assert apply_policies(karta, obj, [ml], namespace_labels={"team": "ml"}, operation="UPDATE").applied == ()
    upd = policy("upd", operations=["UPDATE"], set={"schedulerName": "x"})
    assert apply_policies(karta, obj, [upd], operation="UPDATE").applied == ("upd",)
    kinds = policy("kinds", kinds=["LeaderWorkerSet", "jobset.x-k8s.io/JobSet"], set={"schedulerName": "x"})
    assert apply_policies(karta, obj, [kinds]).applied == ("kinds",)
    other = policy("other", kinds=["batch/Job"], set={"schedulerName": "x"})
    assert apply_policies(karta, obj, [other]).applied == ()
    wl = policy(
        "wl",
        workloadSelector={"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]}]},
        set={"schedulerName": "x"},
    )
    assert apply_policies(karta, obj, [wl]).applied == ()
    obj["metadata"]["labels"] = {"tier": "gpu"}
    assert apply_policies(karta, obj, [wl]).applied == ("wl",)


def test_missing_label_without_default_drops_that_value_only() -> None:
    karta, obj = load("jobset-x-k8s-io-jobset-v1alpha2")
    result = apply_policies(karta, obj, [policy("ml", **ML)], namespace_labels={"team": "ml"})
    assert result.applied == ("ml",)
    assert any(
        "podLabels.set[kai.scheduler/queue]: the namespace has no label 'queue'" in w for w in result.warnings
    )
    for tpl in templates(result.change.new_object):
        assert tpl["spec"]["schedulerName"] == "kai-scheduler"
        assert tpl["spec"]["priorityClassName"] == "train-normal"  # the default
        assert "kai.scheduler/queue" not in (tpl.get("metadata") or {}).get("labels", {})


def test_a_label_value_that_is_not_a_valid_name_skips_the_policy_with_a_warning() -> None:
    karta, obj = load("jobset-x-k8s-io-jobset-v1alpha2")
    p = policy("from-label", set={"schedulerName": {"fromNamespaceLabel": "scheduler"}})
    result = apply_policies(karta, obj, [p], namespace_labels={"scheduler": "Not_A_Name"})
    assert result.applied == () and not result.change.changed
    assert (
        "policy 'from-label' not applied: spec.set.schedulerName: invalid scheduler name"
        in result.warnings[0]
    )


def test_order_and_conflicts() -> None:
    karta, obj = load("jobset-x-k8s-io-jobset-v1alpha2")
    first = policy(
        "a-first", order=10, set={"schedulerName": "kai-scheduler", "podLabels": {"set": {"q": "1"}}}
    )
    later = policy(
        "b-later",
        order=20,
        overwrite=True,
        set={"schedulerName": "volcano", "podLabels": {"set": {"r": "2"}}},
    )
    result = apply_policies(karta, obj, [later, first])
    assert result.applied == ("a-first", "b-later")
    assert [t["spec"]["schedulerName"] for t in templates(result.change.new_object)] == ["volcano"] * 2
    assert [t["metadata"]["labels"] for t in templates(result.change.new_object)] == [
        {"q": "1", "r": "2"}
    ] * 2
    conflicts = [w for w in result.warnings if "both set" in w]
    assert len(conflicts) == 2 and all(
        "schedulerName" in w and "'b-later' comes later" in w for w in conflicts
    )
    # without overwrite the earlier value is kept, and that is said too
    keeper = policy("b-later", order=20, set={"schedulerName": "volcano"})
    kept = apply_policies(karta, obj, [keeper, first])
    assert [t["spec"]["schedulerName"] for t in templates(kept.change.new_object)] == ["kai-scheduler"] * 2
    assert any(
        "policy 'b-later'" in w and "schedulerName is already 'kai-scheduler', kept" in w
        for w in kept.warnings
    )
    # ties by name
    assert [
        p.name
        for p in ordered([policy("b", set={"schedulerName": "x"}), policy("a", set={"schedulerName": "y"})])
    ] == ["a", "b"]


def test_values_the_workload_already_has_are_kept_by_default() -> None:
    karta, obj = load("jobset-x-k8s-io-jobset-v1alpha2")
    for tpl in templates(obj):
        tpl["spec"]["schedulerName"] = "users-choice"
    result = apply_policies(karta, obj, [policy("p", set={"schedulerName": "kai-scheduler"})])
    assert not result.change.changed
    assert "is already 'users-choice', kept" in result.warnings[0]


def test_locations_without_the_field_are_skipped_not_refused() -> None:
    karta, obj = load("milvus-io-milvus-v1beta1")  # its in-cluster etcd/MinIO only locate resources
    result = apply_policies(karta, obj, [policy("p", set={"schedulerName": "kai-scheduler"})])
    assert result.applied == ("p",) and result.change.changed
    assert any(
        "cannot set schedulerName on component 'etcd'" in w and "skipped" in w for w in result.warnings
    )
    assert result.change.new_object["spec"]["components"]["proxy"]["schedulerName"] == "kai-scheduler"


def test_many_policies_are_bounded() -> None:
    karta, obj = load("jobset-x-k8s-io-jobset-v1alpha2")
    many = [
        policy(f"p{i:04}", order=i, set={"podAnnotations": {"set": {f"p{i}": "x"}}})
        for i in range(MAX_POLICIES + 5)
    ]
    result = apply_policies(karta, obj, many)
    assert len(result.applied) == MAX_POLICIES
    assert f"{MAX_POLICIES + 5} policies match; only the first {MAX_POLICIES}" in result.warnings[0]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "spec.set: is required"),
        ({"set": {}}, "spec.set: no change asked for"),
        ({"set": {"schedulerName": "x"}, "order": "1"}, "spec.order: must be a 32-bit integer"),
        (
            {"set": {"schedulerName": "x"}, "operations": ["DELETE"]},
            "spec.operations[0]: 'DELETE' is not one of",
        ),
        (
            {"set": {"schedulerName": "x"}, "kinds": ["jobsets"]},
            "spec.kinds[0]: 'jobsets' is not KIND or GROUP/KIND",
        ),
        ({"set": {"schedulerName": "x"}, "overwrite": "yes"}, "spec.overwrite: must be true or false"),
        (
            {"set": {"schedulerName": "x"}, "namespaceSelector": {"matchLabels": {"a": 1}}},
            "spec.namespaceSelector.matchLabels[a]",
        ),
        (
            {
                "set": {"schedulerName": "x"},
                "namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]},
            },
            "spec.namespaceSelector.matchExpressions[0]: for 'In' operator, values set can't be empty",
        ),
        ({"set": {"schedulerName": "x"}, "selector": {}}, "spec.selector: unknown field"),
        (
            {"set": {"tolerations": {"add": [{"key": "g", "effect": "Sometimes"}]}}},
            "spec.set.tolerations.add[0].effect",
        ),
        (
            {"set": {"schedulerName": {"fromNamespaceLabel": "q", "fallback": "x"}}},
            "spec.set.schedulerName.fallback: unknown field",
        ),
        ({"set": {"schedulerName": {"fromNamespaceLabel": "q", "fromWorkloadLabel": "r"}}}, "exactly one of"),
        (
            {"set": {"resources": [{"limits": {"cpu": {"fromNamespaceLabel": "c"}}}]}},
            "a value from a label may stand only",
        ),
        (
            {"set": {"podLabels": {"set": {"q": {"fromNamespaceLabel": "Bad Key"}}}}},
            "spec.set.podLabels.set.q.fromNamespaceLabel",
        ),
    ],
)
def test_invalid_policies_name_the_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidEditError) as info:  # InvalidPolicyError, or the edit's own
        parse_policy({"metadata": {"name": "bad"}, "spec": spec})
    assert message in str(info.value)
