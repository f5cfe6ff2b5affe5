"""Kueue's pod-set rules through a definition (:mod:`workload_map.operator.kueue_podsets`), each
case translated from Kueue's own tests (inputs and asserted values; the source is named per case)
onto a JobSet shaped as users create it (catalog lifecycle fixture)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import get_definition
from workload_map.model.definition import Karta
from workload_map.operator.kueue_podsets import (
    FlavorNotFoundError,
    KueueAdmissionError,
    admit,
    assigned_counts,
    phase,
    pod_set_infos,
    stop,
)
from workload_map.resolve.gang_plan import plan_gangs
from workload_map.resolve.schedulers import render

FIXTURE = (
    Path(__file__).parents[1] / "catalog" / "lifecycles" / "jobset-x-k8s-io-jobset-v1alpha2" / "created.yaml"
)
_FOUND = get_definition("jobset.x-k8s.io/v1alpha2", "JobSet")
assert _FOUND is not None
KARTA = _FOUND

# kueue pkg/podset/podset_test.go TestFromAssignment: flavor1, flavor2 and their tolerations.
T1 = {"key": "t1k", "operator": "Equal", "value": "t1v", "effect": "NoExecute"}
T2 = {"key": "t2k", "operator": "Exists", "effect": "NoSchedule"}
T3 = {"key": "t3k", "operator": "Equal", "value": "t3v", "effect": "PreferNoSchedule"}
FLAVORS = {
    "flavor1": {"spec": {"nodeLabels": {"f1l1": "f1v1", "f1l2": "f1v2"}, "tolerations": [T1, T2]}},
    "flavor2": {"spec": {"nodeLabels": {"f2l1": "f2v1", "f2l2": "f2v2"}, "tolerations": [T3]}},
}
# TestMergeRestore's basePodSet: nodeSelector ns0, labels l0, annotations a0, toleration t0.
T0 = {"key": "t0", "operator": "Equal", "value": "t0v", "effect": "NoSchedule"}


def _jobset(workers_spec: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = copy.deepcopy(yaml.safe_load(FIXTURE.read_text())["object"])
    obj["spec"]["suspend"] = True
    obj["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-a"}
    tpl = obj["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]
    tpl.setdefault("metadata", {}).update(labels={"l0": "l0v"}, annotations={"a0": "a0v"})
    tpl["spec"].update(workers_spec or {"nodeSelector": {"ns0": "ns0v"}, "tolerations": [T0]})
    return obj


def _admitted(obj: dict[str, Any], flavors: dict[str, dict[str, str]]) -> dict[str, Any]:
    wl = render(plan_gangs(KARTA, obj), "kueue").objects[0]
    # A full admission: each assignment's count is its podSet's (Kueue's flavorassigner).
    counts = {ps["name"]: ps["count"] for ps in wl["spec"]["podSets"]}
    wl["status"] = {
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {"name": n, "flavors": f, "count": counts.get(n, 1)} for n, f in flavors.items()
            ],
        },
        "conditions": [{"type": "QuotaReserved", "status": "True"}, {"type": "Admitted", "status": "True"}],
    }
    return wl


def _workers(obj: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = obj["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
    return spec


def _leader(obj: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = obj["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    return spec


def test_single_flavor() -> None:  # TestFromAssignment "single flavor"
    wl = _admitted(_jobset(), {"leader": {"cpu": "flavor1"}, "workers": {"cpu": "flavor1"}})
    info = pod_set_infos(wl, FLAVORS)["leader"]
    assert dict(info.node_selector) == {"f1l1": "f1v1", "f1l2": "f1v2"}
    assert list(info.tolerations) == [T1, T2]


def test_multiple_flavors() -> None:  # TestFromAssignment "multiple flavors"
    wl = _admitted(
        _jobset(), {"leader": {"cpu": "flavor1", "memory": "flavor2"}, "workers": {"cpu": "flavor1"}}
    )
    info = pod_set_infos(wl, FLAVORS)["leader"]
    assert dict(info.node_selector) == {"f1l1": "f1v1", "f1l2": "f1v2", "f2l1": "f2v1", "f2l2": "f2v2"}
    assert sorted(info.tolerations, key=lambda t: t["key"]) == [T1, T2, T3]


def test_duplicate_flavor() -> None:  # TestFromAssignment "duplicate flavor"
    wl = _admitted(
        _jobset(), {"leader": {"cpu": "flavor1", "memory": "flavor1"}, "workers": {"cpu": "flavor1"}}
    )
    info = pod_set_infos(wl, FLAVORS)["leader"]
    assert dict(info.node_selector) == {"f1l1": "f1v1", "f1l2": "f1v2"}
    assert list(info.tolerations) == [T1, T2]


def test_flavor_not_found() -> None:  # TestFromAssignment "flavor not found"
    wl = _admitted(_jobset(), {"leader": {"cpu": "flavor1"}, "workers": {"cpu": "flavor1"}})
    with pytest.raises(FlavorNotFoundError, match='ResourceFlavor "flavor1", which does not exist'):
        pod_set_infos(wl, {})


def test_no_conflicts_merge_then_restore() -> None:  # TestMergeRestore "no conflicts"
    obj = _jobset()
    flavors = {
        "f": {"spec": {"nodeLabels": {"ns1": "ns1v"}, "tolerations": [{**T0, "key": "t1", "value": "t1v"}]}}
    }
    wl = _admitted(obj, {"leader": {"cpu": "f"}, "workers": {"cpu": "f"}})
    run = admit(KARTA, obj, plan_gangs(KARTA, obj), wl, flavors).new_object
    assert run["spec"]["suspend"] is False
    assert _workers(run)["nodeSelector"] == {"ns0": "ns0v", "ns1": "ns1v"}
    assert _workers(run)["tolerations"] == [T0, {**T0, "key": "t1", "value": "t1v"}]
    assert _leader(run)["nodeSelector"] == {"ns1": "ns1v"}
    # wantRestoreChanges: true, and the restore gives the pod set back as it was.
    back = stop(KARTA, run, plan_gangs(KARTA, run), wl)
    assert back.changed and back.new_object == obj


def test_dont_duplicate_tolerations() -> None:  # TestMergeRestore "don't duplicate tolerations"
    obj = _jobset()
    flavors = {"f": {"spec": {"nodeLabels": {"ns1": "ns1v"}, "tolerations": [T0]}}}
    wl = _admitted(obj, {"leader": {"cpu": "f"}, "workers": {"cpu": "f"}})
    run = admit(KARTA, obj, plan_gangs(KARTA, obj), wl, flavors).new_object
    assert _workers(run)["tolerations"] == [T0]


@pytest.mark.parametrize(
    ("template", "flavor"),
    [
        # TestMergeRestore "don't duplicate tolerations that differ only by empty vs Equal Operator"
        (T0, {k: v for k, v in T0.items() if k != "operator"}),
        # ... "that differ only by Equal vs empty Operator"
        ({k: v for k, v in T0.items() if k != "operator"}, T0),
    ],
)
def test_empty_operator_is_equal(template: dict[str, str], flavor: dict[str, str]) -> None:
    obj = _jobset({"nodeSelector": {"ns0": "ns0v"}, "tolerations": [template]})
    wl = _admitted(obj, {"leader": {"cpu": "f"}, "workers": {"cpu": "f"}})
    run = admit(KARTA, obj, plan_gangs(KARTA, obj), wl, {"f": {"spec": {"tolerations": [flavor]}}}).new_object
    assert _workers(run)["tolerations"] == [template]


def test_conflicting_node_selector() -> None:  # TestMergeRestore "conflicting node selector"
    obj = _jobset()
    wl = _admitted(obj, {"leader": {"cpu": "f"}, "workers": {"cpu": "f"}})
    with pytest.raises(KueueAdmissionError, match='conflict for nodeSelector key "ns0"'):
        admit(KARTA, obj, plan_gangs(KARTA, obj), wl, {"f": {"spec": {"nodeLabels": {"ns0": "ns0v1"}}}})


def test_podset_not_in_plan_and_podset_not_assigned() -> None:
    # kueue jobframework: RunWithPodSetsInfo refuses infos that do not match the job's podSets
    # (podset.BadPodSetsInfoLenError "expecting N podset").
    obj = _jobset()
    wl = _admitted(obj, {"leader": {"cpu": "flavor1"}, "launcher": {"cpu": "flavor1"}})
    with pytest.raises(
        KueueAdmissionError, match='assigns podSet "launcher", which JobSet ml/train-llama does not'
    ):
        admit(KARTA, obj, plan_gangs(KARTA, obj), wl, FLAVORS)
    wl = _admitted(obj, {"leader": {"cpu": "flavor1"}})
    with pytest.raises(KueueAdmissionError, match="not assigned: workers"):
        admit(KARTA, obj, plan_gangs(KARTA, obj), wl, FLAVORS)


def test_bad_flavor_values_are_refused() -> None:
    obj = _jobset()
    wl = _admitted(obj, {"leader": {"cpu": "f"}, "workers": {"cpu": "f"}})
    with pytest.raises(KueueAdmissionError, match="ResourceFlavor f: node label"):
        pod_set_infos(wl, {"f": {"spec": {"nodeLabels": {"bad key!": "x"}}}})
    with pytest.raises(KueueAdmissionError, match="ResourceFlavor f: toleration"):
        pod_set_infos(wl, {"f": {"spec": {"tolerations": [{"key": "k", "operator": "Sometimes"}]}}})


def test_restore_puts_back_labels_and_gates() -> None:
    # podset.RestorePodSpec restores annotations, labels, nodeSelector, tolerations, schedulingGates.
    obj = _jobset()
    wl = _admitted(obj, {"leader": {"cpu": "flavor1"}, "workers": {"cpu": "flavor1"}})
    changed = copy.deepcopy(obj)
    changed["spec"]["suspend"] = False
    tpl = changed["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]
    tpl["metadata"]["labels"]["added"] = "x"
    tpl["metadata"]["annotations"] = {}
    tpl["spec"]["schedulingGates"] = [{"name": "kueue.x-k8s.io/topology"}]
    tpl["spec"]["nodeSelector"] = {"ns0": "ns0v", "f1l1": "f1v1"}
    assert stop(KARTA, changed, plan_gangs(KARTA, changed), wl).new_object == obj


@pytest.mark.parametrize(
    ("conditions", "admission", "want"),
    [
        # job_controller_test.go "when workload is evicted, suspend, reset startTime and restore
        # node affinity": Admitted(true) and Evicted true -> evicted wins.
        ([("QuotaReserved", "True"), ("Admitted", "True"), ("Evicted", "True")], True, "evicted"),
        ([("QuotaReserved", "True"), ("Admitted", "True")], True, "admitted"),
        # Quota reserved while an admission check is pending: not admitted yet.
        ([("QuotaReserved", "True"), ("Admitted", "False")], True, "pending"),
        ([("QuotaReserved", "True"), ("Admitted", "True")], False, "pending"),
        ([], False, "pending"),
    ],
)
def test_phase(conditions: list[tuple[str, str]], admission: bool, want: str) -> None:
    status: dict[str, Any] = {"conditions": [{"type": t, "status": s} for t, s in conditions]}
    if admission:
        status["admission"] = {"clusterQueue": "cq", "podSetAssignments": []}
    assert phase({"status": status}) == want


@pytest.mark.parametrize(
    ("admission", "message"),
    [
        ({"podSetAssignments": "x"}, "must be a list of at most 18 entries"),
        (
            {"podSetAssignments": [{"name": f"p{i}"} for i in range(19)]},
            "must be a list of at most 18 entries",
        ),
        ({"podSetAssignments": [{"flavors": {}}]}, r"podSetAssignments\[0\] has no name"),
        ({"podSetAssignments": [{"name": "leader", "flavors": ["f"]}]}, "must map at most 256 resources"),
        (
            {"podSetAssignments": [{"name": "leader", "flavors": {"cpu": 3}}]},
            r"flavors\[cpu\] is not a ResourceFlavor name",
        ),
    ],
)
def test_hostile_admissions_are_refused(admission: dict[str, Any], message: str) -> None:
    """A Workload's status is API-server input like any other: bounded and checked, naming the field."""
    wl = {"metadata": {"name": "w", "namespace": "ml"}, "status": {"admission": admission}}
    with pytest.raises(KueueAdmissionError, match=message):
        pod_set_infos(wl, FLAVORS)


# --- partial admission (kueue keps/420-partial-admission) -----------------------------------------
# A PyTorchJob as users create it (catalog lifecycle fixture) with an elasticPolicy: its workers
# podSet gets count 3 and minCount 1, the master podSet count 1 and no minCount.
PYTORCH_FIXTURE = FIXTURE.parents[1] / "kubeflow-org-pytorchjob-v1" / "created.yaml"
_PT = get_definition("kubeflow.org/v1", "PyTorchJob")
assert _PT is not None
PYTORCH = _PT


def _pytorchjob() -> dict[str, Any]:
    obj: dict[str, Any] = copy.deepcopy(yaml.safe_load(PYTORCH_FIXTURE.read_text())["object"])
    obj["spec"]["runPolicy"]["suspend"] = True
    obj["spec"]["elasticPolicy"] = {"minReplicas": 1, "maxReplicas": 3}
    obj["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "team-a"}
    return obj


def _partially_admitted(obj: dict[str, Any], counts: dict[str, Any]) -> dict[str, Any]:
    wl = render(plan_gangs(PYTORCH, obj), "kueue").objects[0]
    assert [(p["name"], p["count"], p.get("minCount")) for p in wl["spec"]["podSets"]] == [
        ("master", 1, None),
        ("worker", 3, 1),
    ]
    rows = []
    for ps in wl["spec"]["podSets"]:
        row: dict[str, Any] = {"name": ps["name"], "flavors": {"cpu": "flavor1"}}
        if ps["name"] in counts:
            row["count"] = counts[ps["name"]]
        rows.append(row)
    wl["status"] = {
        "admission": {"clusterQueue": "cq", "podSetAssignments": rows},
        "conditions": [{"type": "QuotaReserved", "status": "True"}, {"type": "Admitted", "status": "True"}],
    }
    return wl


def _replicas(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v.get("replicas") for k, v in obj["spec"]["pytorchReplicaSpecs"].items()}


def test_partial_admission_runs_with_the_admitted_count_and_stop_restores_it() -> None:
    # KEP-420 Proposal: "the jobframework reconciler should provide the admitted pod counts to the
    # parent job before unsuspending it ... In case the job gets suspended, the original pod counts
    # should be restored"; Scenario A/B: a count between minCount and count is admitted.
    obj = _pytorchjob()
    wl = _partially_admitted(obj, {"master": 1, "worker": 2})
    new = admit(PYTORCH, obj, plan_gangs(PYTORCH, obj), wl, FLAVORS).new_object
    assert _replicas(new) == {"Master": 1, "Worker": 2}
    assert new["spec"]["runPolicy"]["suspend"] is False
    worker_spec = new["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert worker_spec["nodeSelector"] == {"f1l1": "f1v1", "f1l2": "f1v2"}  # flavors in the same write
    assert [(m.task, m.desired_pods) for m in plan_gangs(PYTORCH, new).pod_sets] == [
        ("master", 1),
        ("worker", 2),
    ]
    # Admitting again while already at the admitted count writes the same object (idempotent).
    again = copy.deepcopy(new)
    again["spec"]["runPolicy"]["suspend"] = True
    assert admit(PYTORCH, again, plan_gangs(PYTORCH, again), wl, FLAVORS).new_object == new

    evicted = copy.deepcopy(wl)
    evicted["status"]["conditions"].append({"type": "Evicted", "status": "True"})
    back = stop(PYTORCH, new, plan_gangs(PYTORCH, new), evicted).new_object
    assert _replicas(back) == {"Master": 1, "Worker": 3}
    assert back == obj  # suspended, count and templates as the Workload's podSets hold them


def test_an_assignment_without_count_admits_the_podset_count() -> None:
    # KEP-420 Workload API, PodSetAssignment.count: "Value could be missing ... in that case
    # spec.podSets[*].count value will be used".
    obj = _pytorchjob()
    wl = _partially_admitted(obj, {})
    assert assigned_counts(wl) == {}
    assert _replicas(admit(PYTORCH, obj, plan_gangs(PYTORCH, obj), wl, FLAVORS).new_object) == {
        "Master": 1,
        "Worker": 3,
    }


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        # KEP-420 Scenario C: a podSet is not shrunk below its minCount.
        ({"worker": 0}, 'podSet "worker" is admitted with count 0, below its minCount 1'),
        # KEP-420 Workload API, PodSet.minCount: "If not provided, partial admission for the
        # current PodSet is not enabled".
        (
            {"master": 0},
            r'podSet "master" is admitted with count 0, below its count 1 \(it has no minCount\)',
        ),
        # Partial admission only lowers a count (Kueue's flavorassigner searches below count).
        ({"worker": 4}, 'podSet "worker" is admitted with count 4, above its count 3'),
        # Hostile status values: checked, naming the field.
        ({"worker": "2"}, r"podSetAssignments\[1\]\.count is not a whole number"),
        ({"worker": -1}, r"podSetAssignments\[1\]\.count is not a whole number"),
    ],
)
def test_refused_partial_admissions_write_nothing(counts: dict[str, Any], message: str) -> None:
    obj = _pytorchjob()
    before = copy.deepcopy(obj)
    wl = _partially_admitted(obj, counts)
    with pytest.raises(KueueAdmissionError, match=message):
        admit(PYTORCH, obj, plan_gangs(PYTORCH, obj), wl, FLAVORS)
    assert obj == before


def _constant_worker_count() -> Karta:
    """PyTorchJob's definition with a worker count no field can change (the constant 3)."""
    data = PYTORCH.model_dump(by_alias=True, exclude_none=True)
    worker = next(c for c in data["spec"]["structureDefinition"]["childComponents"] if c["name"] == "worker")
    worker["scaleDefinition"]["replicasPath"] = "3"
    return Karta.model_validate(data)


def test_a_component_the_definition_cannot_scale_is_refused() -> None:
    # The count is written through the definition's scale write-back: a count expression that no
    # field can make read the admitted number refuses, naming the podSet; nothing is written.
    karta = _constant_worker_count()
    obj = _pytorchjob()
    wl = _partially_admitted(obj, {"worker": 2})
    with pytest.raises(KueueAdmissionError, match=r'cannot scale podSet "worker" to 2: .*constant 3'):
        admit(karta, obj, plan_gangs(karta, obj), wl, FLAVORS)


def test_stop_suspends_even_when_the_count_cannot_be_restored() -> None:
    # jobframework stopJob suspends first: eviction is never held up by the count. Here the
    # Workload's worker count (5) is one the definition cannot write (its count is the constant 3).
    karta = _constant_worker_count()
    obj = _pytorchjob()
    obj["spec"]["runPolicy"]["suspend"] = False
    wl = _partially_admitted(_pytorchjob(), {})
    wl["spec"]["podSets"][1]["count"] = 5
    new = stop(karta, obj, plan_gangs(karta, obj), wl).new_object
    assert new["spec"]["runPolicy"]["suspend"] is True
    assert _replicas(new) == _replicas(obj)
