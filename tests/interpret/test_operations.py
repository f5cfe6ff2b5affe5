"""The interpreter operations on a definition built for them (tests/interpret/defs.py) and on
catalog types: rules of docs/multicluster.md ("What each operation answers")."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.interpret.defs import template, widget, widget_definition
from workload_map.catalog import get_definition
from workload_map.errors import InterpretError
from workload_map.interpret import Request, interpret
from workload_map.interpret.dependencies import dependencies
from workload_map.interpret.requirements import MAX_COMPONENT_NAME, component_names
from workload_map.interpret.revise import share
from workload_map.resolve import compile_definition
from workload_map.resolve.patch import apply_json_patch

CD = compile_definition(widget_definition())


def _answer(operation: str, obj: dict[str, Any], **kw: Any) -> Any:
    return interpret(CD, Request(operation, obj, **kw))


def _patched(obj: dict[str, Any], answer: Any) -> dict[str, Any]:
    patched: dict[str, Any] = apply_json_patch(obj, answer.patch or [])
    return patched


# --- replicas and components -------------------------------------------------------------------


def test_replicas_sum_the_pods_and_take_the_largest_request_per_resource() -> None:
    obj = widget([("a", 2), ("b", 3)])
    obj["spec"]["groups"][1]["template"] = template("500m", "8Gi", nodeSelector={"pool": "gpu"})
    answer = _answer("InterpretReplica", obj)
    assert answer.replicas == 6
    assert answer.replica_requirements == {
        "resourceRequest": {"cpu": "2", "memory": "8Gi"},
        "namespace": "ml",
    }


def test_components_one_per_declared_pod_template_with_its_own_requirements() -> None:
    obj = widget([("a", 2), ("b", 0)])
    tol = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                ]
            }
        }
    }
    obj["spec"]["groups"][0]["template"] = template(
        "1500m", "1536Mi", tolerations=tol, affinity=affinity, priorityClassName="high"
    )
    answer = _answer("InterpretComponent", obj)
    assert answer.components == [
        {
            "name": "leader",
            "replicas": 1,
            "replicaRequirements": {"resourceRequest": {"cpu": "2", "memory": "4Gi"}},
        },
        {
            "name": "a",
            "replicas": 2,
            "replicaRequirements": {
                "nodeClaim": {
                    "hardNodeAffinity": affinity["nodeAffinity"][
                        "requiredDuringSchedulingIgnoredDuringExecution"
                    ],
                    "tolerations": tol,
                },
                "resourceRequest": {"cpu": "1500m", "memory": "1536Mi"},
                "priorityClassName": "high",
            },
        },
        {
            "name": "b",
            "replicas": 0,
            "replicaRequirements": {"resourceRequest": {"cpu": "1", "memory": "1Gi"}},
        },
    ]


def test_an_undeclared_role_is_not_a_component() -> None:
    # A PyTorchJob without Master: the catalog counts 0 master pods and there is no template.
    obj = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "p"},
        "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 3, "template": template()}}},
    }
    karta = get_definition("kubeflow.org/v1", "PyTorchJob")
    assert karta is not None
    answer = interpret(compile_definition(karta), Request("InterpretComponent", obj))
    assert [(c["name"], c["replicas"]) for c in answer.components or ()] == [("worker", 3)]


def test_component_names_are_unique_and_within_karmadas_limit() -> None:
    long = "g" * 40
    names = component_names(["leader", "a", "a", long, long, "a-1"])
    assert names[:2] == ["leader", "a"]
    assert names[2] == "a-2"
    assert names[3] == "g" * 30 + "-3" and names[4] == "g" * 30 + "-4"
    assert names[5] == "a-1"
    assert len(set(names)) == len(names) and all(len(n) <= MAX_COMPONENT_NAME for n in names)
    # a natural name equal to an earlier cut one gets its own position
    clash = component_names(["x", "x", "x-1"])
    assert clash == ["x", "x-1", "x-1-2"]


def test_ten_thousand_components_are_refused_by_the_result_bound() -> None:
    # The expression engine yields at most MAX_RESULTS (1,000) results per expression: an object
    # with 10,000 worker groups is refused at once, naming the field and the bound.
    with pytest.raises(InterpretError, match=r"instanceIdPath.*exceed the allowed number 1000"):
        _answer("InterpretComponent", widget([(f"g{i}", 1) for i in range(10_000)]))
    answer = _answer("InterpretComponent", widget([(f"g{i}", 1) for i in range(999)]))
    assert len(answer.components) == 1_000


def test_more_pods_than_int32_are_refused() -> None:
    obj = widget([("a", 2**31 - 1), ("b", 2**31 - 1)])
    with pytest.raises(InterpretError, match="int32"):
        _answer("InterpretReplica", obj)


# --- ReviseReplica -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("total", "weights", "expected"),
    [
        (12, [1, 2, 3], [2, 4, 6]),
        (8, [4, 0], [8, 0]),
        (6, [0, 0], [3, 3]),
        (7, [0, 0, 0], [3, 2, 2]),
        (2, [1, 1, 1, 1], [1, 1, 0, 0]),  # Karmada's rounding would give the last group -1
        (10, [3, 3, 3], [4, 3, 3]),
        (0, [5, 1], [0, 0]),
    ],
)
def test_share_is_proportional_by_largest_remainder(
    total: int, weights: list[int], expected: list[int]
) -> None:
    assert share(total, weights) == expected
    assert sum(share(total, weights)) == total


def test_revise_keeps_fixed_pods_and_shares_the_rest() -> None:
    obj = widget([("a", 1), ("b", 2), ("c", 3)])
    answer = _answer("ReviseReplica", obj, desired_replicas=13)
    revised = _patched(obj, answer)
    assert [g["replicas"] for g in revised["spec"]["groups"]] == [2, 4, 6]
    assert _answer("InterpretReplica", revised).replicas == 13


def test_revise_to_the_current_count_changes_nothing() -> None:
    obj = widget([("a", 1), ("b", 2)])
    assert _answer("ReviseReplica", obj, desired_replicas=4).patch is None


def test_revise_below_the_fixed_pods_is_refused() -> None:
    obj = widget([("a", 1)])
    with pytest.raises(InterpretError, match="1 pods belong to components that cannot be scaled: leader"):
        _answer("ReviseReplica", obj, desired_replicas=0)


def test_revise_without_a_scalable_component_names_each_one() -> None:
    karta = get_definition("ray.io/v1", "RayService")
    assert karta is not None
    cd = compile_definition(karta)
    obj = {
        "apiVersion": "ray.io/v1",
        "kind": "RayService",
        "metadata": {"name": "r"},
        "spec": {"rayClusterConfig": {"headGroupSpec": {"template": template()}}},
    }
    with pytest.raises(
        InterpretError, match=r"no component can be scaled: head \(.*'1' is not an assignable path"
    ):
        interpret(cd, Request("ReviseReplica", obj, desired_replicas=3))
    # the count it already has is fine: Karmada revises every cluster, duplicated ones included
    assert interpret(cd, Request("ReviseReplica", obj, desired_replicas=1)).patch is None


def test_revise_needs_a_count() -> None:
    with pytest.raises(InterpretError, match=r"needs request\.replicas"):
        _answer("ReviseReplica", widget([("a", 1)]))


# --- Retain ------------------------------------------------------------------------------------


def test_retain_keeps_the_members_replicas_only_with_karmadas_label() -> None:
    desired = widget([("a", 1), ("b", 2)])
    observed = widget([("a", 5), ("b", 7)])
    assert _answer("Retain", desired, observed=observed).patch is None
    labelled = widget(
        [("a", 1), ("b", 2)],
        metadata={"name": "w", "labels": {"resourcetemplate.karmada.io/retain-replicas": "true"}},
    )
    retained = _patched(labelled, _answer("Retain", labelled, observed=observed))
    assert [g["replicas"] for g in retained["spec"]["groups"]] == [5, 7]
    assert retained["spec"]["leader"] == labelled["spec"]["leader"]


def test_retain_needs_the_observed_object() -> None:
    with pytest.raises(InterpretError, match="observedObject"):
        _answer("Retain", widget([("a", 1)]))


# --- status, aggregation, health ---------------------------------------------------------------


def _cond(t: str, s: str = "True") -> dict[str, str]:
    return {"type": t, "status": s}


def test_aggregate_takes_the_member_in_the_worst_phase() -> None:
    obj = widget([("a", 1)], status={"conditions": [_cond("Running")]})
    items = [
        {"clusterName": "m1", "status": {"conditions": [_cond("Done")]}},
        {"clusterName": "m2", "status": {"conditions": [_cond("Running")], "ready": 1}},
        {"clusterName": "m3"},
        {"clusterName": "m4", "status": {"conditions": [_cond("Done")]}},
    ]
    aggregated = _patched(obj, _answer("AggregateStatus", obj, aggregated_status=items))
    assert aggregated["status"] == {"conditions": [_cond("Running")], "ready": 1}
    items.append({"clusterName": "m5", "status": {"conditions": [_cond("Failed")]}})
    failed = _patched(obj, _answer("AggregateStatus", obj, aggregated_status=items))
    assert failed["status"] == {"conditions": [_cond("Failed")]}
    assert _answer("AggregateStatus", obj, aggregated_status=[{"clusterName": "m3"}]).patch is None


def test_aggregate_reads_the_templates_spec() -> None:
    # The suspend rule reads .spec: every member is judged with the template's spec.
    obj = widget([("a", 1)], spec={"suspend": True, "groups": []})
    items = [{"clusterName": "m1", "status": {"conditions": [_cond("Done")]}}]
    answer = _answer("AggregateStatus", obj, aggregated_status=items)
    assert _patched(obj, answer)["status"] == {"conditions": [_cond("Done")]}


@pytest.mark.parametrize(
    ("conditions", "healthy"),
    [
        ([_cond("Running")], True),
        ([_cond("Done")], True),
        ([_cond("Running"), _cond("Degraded")], False),
        ([_cond("Failed")], False),
        ([], False),  # Initializing
    ],
)
def test_health_from_the_primary_phase(conditions: list[dict[str, str]], healthy: bool) -> None:
    obj = widget([("a", 1)], status={"conditions": conditions})
    assert _answer("InterpretHealth", obj).healthy is healthy


def test_health_and_status_need_no_structure() -> None:
    # An object whose groups do not resolve still has a status (and health).
    obj = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"groups": 5}}
    obj["status"] = {"conditions": [_cond("Running")]}
    assert _answer("InterpretHealth", obj).healthy is True
    assert _answer("InterpretStatus", obj).raw_status == obj["status"]
    with pytest.raises(InterpretError, match="Cannot iterate over number"):
        _answer("InterpretComponent", obj)


# --- dependencies ------------------------------------------------------------------------------


def test_dependencies_follow_karmadas_pod_visitors() -> None:
    spec = {
        "serviceAccountName": "trainer",
        "imagePullSecrets": [{"name": "pull"}, {"name": ""}],
        "initContainers": [{"name": "i", "envFrom": [{"configMapRef": {"name": "init-cm"}}]}],
        "containers": [
            {
                "name": "c",
                "env": [
                    {"name": "A", "valueFrom": {"secretKeyRef": {"name": "api", "key": "k"}}},
                    {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "conf", "key": "k"}}},
                ],
            }
        ],
        "ephemeralContainers": [{"name": "e", "envFrom": [{"secretRef": {"name": "debug"}}]}],
        "volumes": [
            {"name": "v1", "secret": {"secretName": "tls"}},
            {"name": "v2", "configMap": {"name": "files"}},
            {"name": "v3", "persistentVolumeClaim": {"claimName": "data"}},
            {
                "name": "v4",
                "projected": {"sources": [{"secret": {"name": "p-s"}}, {"configMap": {"name": "p-c"}}]},
            },
            {"name": "v5", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "csi"}}},
            # one source per volume: projected wins over a second source, as Karmada's switch
            {"name": "v6", "projected": {"sources": []}, "secret": {"secretName": "ignored"}},
            {"name": "v7", "cephfs": {"monitors": ["m"]}},
        ],
    }
    deps = dependencies([spec, {"serviceAccountName": "default"}], "ml")
    names = [(d["kind"], d["name"]) for d in deps]
    assert names == [
        ("ConfigMap", "conf"),
        ("ConfigMap", "files"),
        ("ConfigMap", "init-cm"),
        ("ConfigMap", "p-c"),
        ("PersistentVolumeClaim", "data"),
        ("Secret", "api"),
        ("Secret", "csi"),
        ("Secret", "debug"),
        ("Secret", "p-s"),
        ("Secret", "pull"),
        ("Secret", "tls"),
        ("ServiceAccount", "trainer"),
    ]
    assert {d["namespace"] for d in deps} == {"ml"} and {d["apiVersion"] for d in deps} == {"v1"}
    assert dependencies([{"serviceAccountName": "x"}], None)[0]["namespace"] == "default"


def test_dependencies_of_every_pod_template_of_the_object() -> None:
    obj = widget([("a", 1), ("b", 1)])
    obj["spec"]["groups"][1]["template"] = template(serviceAccountName="worker-sa")
    obj["spec"]["leader"]["template"] = template(serviceAccountName="leader-sa")
    deps = _answer("InterpretDependency", obj).dependencies
    assert [d["name"] for d in deps] == ["leader-sa", "worker-sa"]


# --- the response ------------------------------------------------------------------------------


def test_responses_carry_only_their_operations_fields() -> None:
    obj = widget([("a", 1), ("b", 2)])
    revise = _answer("ReviseReplica", obj, desired_replicas=7).response("u1")
    assert revise["patchType"] == "JSONPatch" and revise["uid"] == "u1" and revise["successful"] is True
    ops = json.loads(base64.b64decode(revise["patch"]))
    assert {op["path"] for op in ops} == {"/spec/groups/0/replicas", "/spec/groups/1/replicas"}
    same = _answer("ReviseReplica", obj, desired_replicas=4).response("u2")
    assert "patch" not in same and "patchType" not in same
    assert set(_answer("InterpretHealth", obj).response("u")) == {"uid", "successful", "healthy"}
    assert _answer("InterpretStatus", obj).response("u")["rawStatus"] == {}


def test_an_unknown_operation_is_refused() -> None:
    with pytest.raises(InterpretError, match="is not one of"):
        _answer("Prune", widget([("a", 1)]))
