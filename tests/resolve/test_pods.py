"""Pod attribution: ownership first, then component / instance / replica selectors, with an
explicit unattributed bucket instead of failing the workload."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.resolve.builders import definition, jobset_definition, lws_definition
from workload_map.errors import WorkloadMapError
from workload_map.resolve.pods import (
    OwnerResolver,
    PodAttribution,
    PodInfo,
    attribute_pods,
    belongs_to,
    pod_status,
)
from workload_map.resolve.resources import EMPTY_TOTALS

UID = "uid-root"


def pod(
    name: str,
    labels: dict[str, str] | None = None,
    *,
    owner_uid: str | None = UID,
    controller: dict[str, Any] | None = None,
    ready: bool = True,
    node: str | None = "node-a",
    status: dict[str, Any] | None = None,
    gpus: int = 0,
) -> dict[str, Any]:
    refs = []
    if owner_uid:
        refs.append({"apiVersion": "x/v1", "kind": "X", "name": "x", "uid": owner_uid})
    if controller:
        refs.append({**controller, "controller": True})
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "resources": {"requests": {"cpu": "500m"}, "limits": {"nvidia.com/gpu": gpus}}}
        ]
    }
    if node:
        spec["nodeName"] = node
    st_: dict[str, Any] = status or {
        "phase": "Running" if ready else "Pending",
        "conditions": [
            {"type": "Ready", "status": "True" if ready else "False", "reason": "ContainersNotReady"}
        ],
    }
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": labels or {}, "ownerReferences": refs},
        "spec": spec,
        "status": st_,
    }


PYTORCH = definition(
    "pytorch",
    {"name": "pytorchjob", "kind": {"group": "kubeflow.org", "version": "v1", "kind": "PyTorchJob"}},
    *[
        {
            "name": comp,
            "ownerRef": "pytorchjob",
            "specDefinition": {"podTemplateSpecPath": f".spec.pytorchReplicaSpecs.{role}.template"},
            "scaleDefinition": {"replicasPath": f".spec.pytorchReplicaSpecs.{role}.replicas // 1"},
            "podSelector": {
                "componentTypeSelector": {
                    "keyPath": '.metadata.labels["training.kubeflow.org/replica-type"]',
                    "value": comp,
                }
            },
        }
        for comp, role in (("master", "Master"), ("worker", "Worker"))
    ],
)
PT_OBJ = {
    "metadata": {"name": "job", "namespace": "ns", "uid": UID},
    "spec": {
        "pytorchReplicaSpecs": {
            "Master": {"replicas": 1, "template": {}},
            "Worker": {"replicas": 3, "template": {}},
        }
    },
}
RT = "training.kubeflow.org/replica-type"


def test_pytorch_attribution_counts_and_reasons() -> None:
    unsched = pod(
        "job-worker-2",
        {RT: "worker"},
        node=None,
        status={
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
        },
    )
    pods = [
        pod("job-master-0", {RT: "master"}, gpus=1),
        pod("job-worker-1", {RT: "worker"}, ready=False, node="node-b"),
        pod("job-worker-0", {RT: "worker"}),
        unsched,
        pod("stray", {RT: "evaluator"}),
        pod("other-job-worker-0", {RT: "worker"}, owner_uid="someone-else"),
    ]
    att = attribute_pods(PYTORCH, PT_OBJ, pods)
    master = att.component("master")
    worker = att.component("worker")
    root = att.component("pytorchjob")
    assert master is not None and worker is not None and root is not None
    assert (master.desired, master.current, master.ready) == (1, 1, 1)
    assert (worker.desired, worker.current, worker.ready) == (3, 3, 1)
    assert (root.desired, root.current, root.ready) == (4, 4, 2)
    assert root.nodes == ("node-a", "node-b")
    names = [p.name for p in worker.instances[0].pods]
    assert names == ["job-worker-0", "job-worker-1", "job-worker-2"]
    w1, w2 = worker.instances[0].pods[1], worker.instances[0].pods[2]
    assert (w1.ready, w1.reason, w1.node) == (False, "ContainersNotReady", "node-b")
    assert (w2.phase, w2.reason, w2.node) == ("Pending", "Unschedulable", None)
    assert master.instances[0].pods[0].resources.gpus == 1
    assert master.instances[0].pods[0].resources.cpu_millis == 500
    assert att.resources.cpu_millis == 2000
    assert [(u.name, "no component" in u.reason) for u in att.unattributed] == [("stray", True)]
    assert att.not_owned == ("other-job-worker-0",)
    d = att.to_dict()
    assert d["components"][2]["instances"][0]["pods"][2]["node"] is None


def test_ownership_through_controllers_with_cache() -> None:
    deploy = {
        "metadata": {"name": "web", "namespace": "ns", "uid": UID},
        "spec": {"replicas": 2, "template": {}},
    }
    rs = {
        "metadata": {
            "name": "web-abc",
            "uid": "rs-uid",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": UID, "controller": True}
            ],
        }
    }
    calls: list[tuple[str, str, str, str]] = []

    def lookup(ns: str, api: str, kind: str, name: str) -> dict[str, Any] | None:
        calls.append((ns, api, kind, name))
        return rs if name == "web-abc" else None

    via_rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "uid": "rs-uid"}
    orphan_rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "gone", "uid": "x"}
    d = definition(
        "deploy",
        {
            "name": "deployment",
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "specDefinition": {"podTemplateSpecPath": ".spec.template"},
            "scaleDefinition": {"replicasPath": ".spec.replicas // 1"},
        },
        {
            "name": "replicaset",
            "ownerRef": "deployment",
            "kind": {"group": "apps", "version": "v1", "kind": "ReplicaSet"},
        },
    )
    pods = [
        pod("web-abc-1", owner_uid=None, controller=via_rs),
        pod("web-abc-2", owner_uid=None, controller=via_rs),
        pod("web-old", owner_uid=None, controller=orphan_rs),
        pod("bare", owner_uid=None),
    ]
    att = attribute_pods(d, deploy, pods, owner_lookup=lookup)
    comp = att.component("deployment")
    assert comp is not None and (comp.desired, comp.current) == (2, 2)
    assert att.not_owned == ("bare", "web-old")
    assert calls.count(("ns", "apps/v1", "ReplicaSet", "web-abc")) == 1  # cached
    assert belongs_to(pods[0], deploy, lookup)
    assert not belongs_to(pods[0], deploy)  # no lookup: cannot climb


def test_owner_depth_limit_and_failing_lookup() -> None:
    def chain(ns: str, api: str, kind: str, name: str) -> dict[str, Any]:
        i = int(name)
        return {
            "metadata": {
                "name": name,
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "K",
                        "name": str(i + 1),
                        "uid": f"u{i + 1}",
                        "controller": True,
                    }
                ],
            }
        }

    start = pod("p", owner_uid=None, controller={"apiVersion": "v1", "kind": "K", "name": "0", "uid": "u0"})
    # depth 1 checks the pod, depth 2 its owner "0" (refs to "1") ...
    assert OwnerResolver(chain).owned_by(start, "u5")
    assert not OwnerResolver(chain).owned_by(start, "u6")

    def boom(*_: str) -> dict[str, Any]:
        raise RuntimeError("forbidden")

    assert not OwnerResolver(boom).owned_by(start, "u5")


JOBSET = jobset_definition()
JS_OBJ = {
    "metadata": {"name": "js", "uid": UID},
    "spec": {
        "replicatedJobs": [
            {"name": "leader", "replicas": 1, "template": {"spec": {"parallelism": 1, "template": {}}}},
            {"name": "workers", "replicas": 2, "template": {"spec": {"parallelism": 2, "template": {}}}},
        ]
    },
}
RJ = "jobset.sigs.k8s.io/replicatedjob-name"


def test_instances_and_missing_label_goes_to_unattributed() -> None:
    pods = [
        pod("l-0", {RJ: "leader"}),
        pod("w-0", {RJ: "workers"}),
        pod("w-1", {RJ: "workers"}),
        pod("nolabel"),
        pod("odd", {RJ: "evaluator"}),
    ]
    att = attribute_pods(JOBSET, JS_OBJ, pods)
    rj = att.component("replicatedjob")
    assert rj is not None
    assert [(i.instance_id, i.desired, i.current) for i in rj.instances] == [
        ("leader", 1, 1),
        ("workers", 4, 2),
    ]
    reasons = {u.name: u.reason for u in att.unattributed}
    assert reasons["nolabel"] == "query result is empty <nil>"
    assert reasons["odd"] == 'could not match instance id "evaluator". existing instance ids [leader workers]'


def test_replica_key_inherited_from_grouping_component() -> None:
    lws = lws_definition("lws", group_scale=False)
    obj = {
        "metadata": {"name": "l", "uid": UID},
        "spec": {"replicas": 2, "leaderWorkerTemplate": {"size": 3}},
    }
    gi, wi = "leaderworkerset.sigs.k8s.io/group-index", "leaderworkerset.sigs.k8s.io/worker-index"
    worker = pod("l-1-1", {gi: "1", wi: "1"})
    worker["metadata"]["annotations"] = {"leaderworkerset.sigs.k8s.io/leader-name": "l-1"}
    att = attribute_pods(
        lws, obj, [pod("l-1", {gi: "1", wi: "0"}), worker, pod("l-0", {wi: "0"})], check_ownership=False
    )
    leader = att.component("leader")
    w = att.component("worker")
    group = att.component("group")
    assert leader is not None and w is not None and group is not None
    assert leader.instances[0].pods[0].replica_key == "1"
    assert w.instances[0].pods[0].replica_key == "1"
    assert (group.desired, group.current) == (6, 2)
    assert [u.name for u in att.unattributed] == ["l-0"]


def test_only_pod_bearing_component_without_selector_claims_all() -> None:
    job = definition(
        "job",
        {
            "name": "job",
            "kind": {"group": "batch", "version": "v1", "kind": "Job"},
            "specDefinition": {"podTemplateSpecPath": ".spec.template"},
            "scaleDefinition": {"replicasPath": ".spec.parallelism // 1"},
        },
    )
    att = attribute_pods(
        job, {"metadata": {"uid": UID}, "spec": {"parallelism": 2}}, [pod("a"), pod("b", ready=False)]
    )
    c = att.component("job")
    assert c is not None and (c.desired, c.current, c.ready) == (2, 2, 1)


def test_pod_status_reason_order() -> None:
    assert pod_status({"status": {"phase": "Failed", "reason": "Evicted"}}) == (
        "Failed",
        False,
        "Evicted",
        None,
    )
    assert pod_status({}) == (None, False, None, None)


_labels = st.dictionaries(
    st.sampled_from([RT, RJ, "x"]),
    st.one_of(st.sampled_from(["master", "worker", "leader", "workers", ""]), st.text(max_size=3)),
    max_size=3,
)
_random_pods = st.lists(
    st.one_of(
        st.builds(
            lambda n, lab, uid: pod(n, lab, owner_uid=uid),
            st.text(max_size=4),
            _labels,
            st.sampled_from([UID, None, "z"]),
        ),
        st.one_of(
            st.none(),
            st.integers(),
            st.just({"metadata": None}),
            st.just({"metadata": {"ownerReferences": "x"}}),
        ),
    ),
    max_size=6,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pods=_random_pods, which=st.booleans(), check=st.booleans())
def test_random_pods_never_fail_the_workload(pods: list[Any], which: bool, check: bool) -> None:
    d, obj = (PYTORCH, PT_OBJ) if which else (JOBSET, JS_OBJ)
    try:
        att = attribute_pods(d, obj, pods, check_ownership=check)
    except WorkloadMapError as exc:  # pragma: no cover - would be a bug: pods must never fail it
        raise AssertionError(f"a pod failed the workload: {exc}") from exc
    assert len(att.pods) + len(att.unattributed) + len(att.not_owned) == len(pods)


def _without_detail(att: PodAttribution) -> tuple[Any, ...]:
    """``att`` with every pod's display fields at their defaults (what ``detail=False`` gives)."""

    def lean(p: PodInfo) -> PodInfo:
        return replace(
            p,
            resources=EMPTY_TOTALS,
            status="",
            restarts=0,
            message=None,
            readiness_gates=None,
            containers=(),
        )

    components = tuple(
        replace(
            c,
            instances=tuple(replace(i, pods=tuple(lean(p) for p in i.pods)) for i in c.instances),
        )
        for c in att.components
    )
    return components, att.unattributed, att.not_owned


_states = st.sampled_from(
    [
        None,  # pod()'s own Ready condition
        {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
        },
        {"phase": "Failed", "reason": "Evicted"},
        {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "False"}],
            "containerStatuses": [
                {"name": "c", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
            ],
        },
    ]
)
_status_pods = st.lists(
    st.builds(
        lambda n, lab, uid, ready, node, state: pod(
            n, lab, owner_uid=uid, ready=ready, node=node, status=state, gpus=1
        ),
        st.text(max_size=4),
        _labels,
        st.sampled_from([UID, None, "z"]),
        st.booleans(),
        st.sampled_from([None, "node-a", "node-b"]),
        _states,
    ),
    max_size=8,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pods=_status_pods, which=st.booleans(), check=st.booleans())
def test_attribution_without_detail_claims_and_counts_as_the_full_one(
    pods: list[Any], which: bool, check: bool
) -> None:
    """The exporter's ``detail=False``: the same components, instances, counts, nodes, pods (name,
    readiness, reason, node, replica key...), unattributed and not-owned pods; only the display
    fields are left unset, and the requests it did not read are refused rather than summed as 0."""
    d, obj = (PYTORCH, PT_OBJ) if which else (JOBSET, JS_OBJ)
    full = attribute_pods(d, obj, pods, check_ownership=check)
    lean = attribute_pods(d, obj, pods, check_ownership=check, detail=False)
    assert _without_detail(lean) == _without_detail(full)
    assert _without_detail(lean) == (lean.components, lean.unattributed, lean.not_owned)
    assert full.detailed and not lean.detailed
    assert full.resources.gpus == len(full.pods)
    with pytest.raises(ValueError):
        _ = lean.resources


def test_attribution_without_detail_leaves_kubectl_status_and_requests_unread() -> None:
    crashing = pod(
        "job-worker-0",
        {RT: "worker"},
        status={
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}],
            "containerStatuses": [
                {"name": "c", "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
            ],
        },
        gpus=1,
    )
    full = attribute_pods(PYTORCH, PT_OBJ, [crashing]).pods[0]
    lean = attribute_pods(PYTORCH, PT_OBJ, [crashing], detail=False).pods[0]
    assert (full.status, full.restarts, full.resources.gpus, len(full.containers)) == (
        "CrashLoopBackOff",
        4,
        1,
        1,
    )
    assert (lean.status, lean.restarts, lean.resources, lean.containers) == ("", 0, EMPTY_TOTALS, ())
    assert (lean.name, lean.ready, lean.reason, lean.node) == (
        full.name,
        False,
        "ContainersNotReady",
        "node-a",
    )
