"""The compact forms the exporter keeps pods and workloads in (exporter/compact.py): they read as
the trimmed dicts did, share what pods of one template share, and cost far less memory."""

from __future__ import annotations

import copy
import sys
from typing import Any

import orjson
import pytest

from workload_map.exporter import compact
from workload_map.exporter.compact import CompactObject, CompactPod, as_dict, compact_workload
from workload_map.exporter.trim import trim_pod, trim_workload
from workload_map.kube.objects import meta, name_of, owner_uids, uid_of


def running_pod(name: str = "train-workers-0-0", node: str = "gpu-node-1") -> dict[str, Any]:
    """A running pod as the API server sends it: shaped like the last state of
    shared/upstream-recordings/pod/v1.34.0/core-pod-v1/running.yaml (a kubelet-run pod, its
    conditions and container statuses), owned by a Job as a JobSet's pods are."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": "train-workers-0-",
            "namespace": "ml",
            "uid": f"uid-{name}",
            "resourceVersion": "622431",
            "creationTimestamp": "2026-09-16T10:57:47Z",
            "labels": {"jobset.sigs.k8s.io/jobset-name": "train", "batch.kubernetes.io/job-name": "train-w"},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "train-w",
                    "uid": "job-uid",
                    "controller": True,
                }
            ],
            "managedFields": [{"manager": "kube-controller-manager", "fieldsV1": {"f:spec": {}}}],
        },
        "spec": {
            "containers": [
                {
                    "name": "worker",
                    "image": "busybox:1.36",
                    "command": ["sh", "-c", "sleep infinity"],
                    "resources": {"limits": {"cpu": "100m", "memory": "2Gi"}, "requests": {"cpu": "50m"}},
                }
            ],
            "nodeName": node,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Never",
            "schedulerName": "default-scheduler",
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists"}
            ],
        },
        "status": {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": "2026-09-16T10:57:56Z",
                    "status": "True",
                    "type": t,
                }
                for t in (
                    "PodReadyToStartContainers",
                    "Initialized",
                    "Ready",
                    "ContainersReady",
                    "PodScheduled",
                )
            ],
            "containerStatuses": [
                {
                    "containerID": "containerd://4c7d6b0e0f",
                    "image": "docker.io/library/busybox:1.36",
                    "name": "worker",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": "2026-09-16T10:57:56Z"}},
                }
            ],
            "hostIP": "172.18.0.3",
            "phase": "Running",
            "podIP": "10.244.1.7",
            "qosClass": "Burstable",
            "startTime": "2026-09-16T10:57:47Z",
        },
    }


def expected_trim(pod: dict[str, Any]) -> dict[str, Any]:
    """The trimmed projection (exporter/trim.py's rules), written out as plain dicts."""
    spec = pod["spec"]
    status = pod["status"]
    metadata = {k: v for k, v in pod["metadata"].items() if k != "managedFields"}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "nodeName": spec["nodeName"],
            "schedulerName": "default-scheduler",
            "priority": 0,
            "preemptionPolicy": "PreemptLowerPriority",
            "restartPolicy": "Never",
            "containers": [{"name": "worker", "resources": spec["containers"][0]["resources"]}],
        },
        "status": {
            k: status[k] for k in ("phase", "conditions", "startTime", "containerStatuses", "qosClass")
        },
    }


def test_a_compact_pod_reads_as_the_trimmed_dict() -> None:
    pod = running_pod()
    want = expected_trim(copy.deepcopy(pod))
    got = trim_pod(pod)
    assert isinstance(got, CompactPod)
    assert got == want and as_dict(got) == want and dict(got) == want
    assert list(got) == ["apiVersion", "kind", "metadata", "spec", "status"] and len(got) == 5
    assert list(got["spec"]) == list(want["spec"])  # nodeName first, as trimmed
    assert got.get("missing") is None and "missing" not in got
    with pytest.raises(KeyError):
        got["missing"]
    # What the owner walk and the owner index read, straight from the kept metadata dict.
    assert (
        meta(got) is got["metadata"]
        and name_of(got) == "train-workers-0-0"
        and uid_of(got) == "uid-train-workers-0-0"
    )
    assert owner_uids(got) == ["job-uid"]


def test_fields_rebuilt_on_access_are_fresh() -> None:
    """spec and status are new dicts on each access: a reader changing one changes nothing kept."""
    got = trim_pod(running_pod())
    spec, status = got["spec"], got["status"]
    spec["nodeName"] = "elsewhere"
    status["phase"] = "Failed"
    status["conditions"].clear()
    assert got["spec"]["nodeName"] == "gpu-node-1"
    assert got["status"]["phase"] == "Running" and len(got["status"]["conditions"]) == 5
    plain = as_dict(got)
    plain["status"]["phase"] = "Failed"
    assert got["status"]["phase"] == "Running"


def test_pods_of_one_template_share_their_spec_and_equal_statuses() -> None:
    a = trim_pod(running_pod("w-0", node="n1"))
    b = trim_pod(running_pod("w-1", node="n2"))
    assert a["spec"]["nodeName"] == "n1" and b["spec"]["nodeName"] == "n2"
    assert a["spec"]["containers"] is b["spec"]["containers"]
    assert a._spec is b._spec  # everything but the node: one dict for the template
    pending = [running_pod(f"p-{i}") for i in range(3)]
    for p in pending:  # not scheduled yet: every such pod's status is the same short text
        p["status"] = {"phase": "Pending", "qosClass": "Burstable"}
    kept = [trim_pod(p) for p in pending]
    assert kept[0]._status is kept[1]._status is kept[2]._status
    other = running_pod("w-2")
    other["status"] = {"phase": "Failed", "qosClass": "Burstable"}
    c = trim_pod(other)
    assert c._status is not kept[0]._status and c["status"]["phase"] == "Failed"


def test_missing_and_odd_parts_stay_as_they_were() -> None:
    bare = trim_pod({"metadata": {"name": "p", "namespace": "ns"}})
    assert bare == {"metadata": {"name": "p", "namespace": "ns"}} and "spec" not in bare
    no_node = running_pod()
    del no_node["spec"]["nodeName"]
    assert "nodeName" not in trim_pod(no_node)["spec"]
    null_node = running_pod()
    null_node["spec"]["nodeName"] = None
    assert trim_pod(null_node)["spec"]["nodeName"] is None
    odd = trim_pod({"metadata": {"name": "p"}, "spec": "not an object", "status": ["x"]})
    assert odd == {"metadata": {"name": "p"}}


def test_status_sharing_is_bounded() -> None:
    for i in range(compact.STATUS_SHARED_MAX + 10):
        compact.packed_status({"phase": f"P{i}"})
    assert len(compact._STATUSES) <= compact.STATUS_SHARED_MAX
    long = {"message": "m" * (compact.STATUS_SHARED_KEY_MAX + 1)}
    assert compact.packed_status(long) is not compact.packed_status(dict(long))  # too long to remember


def jobset() -> dict[str, Any]:
    """A JobSet as the API server returns it (framework-shapes: replicatedJobs with Job templates)."""
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "w", "image": "img:1"}]}}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "train", "namespace": "ml", "uid": "js-uid", "resourceVersion": "7"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": 2,
                    "template": {"spec": {"parallelism": 4, "template": template}},
                }
            ]
        },
        "status": {"replicatedJobsStatus": [{"name": "workers", "ready": 2, "active": 2}]},
    }


def test_a_compact_workload_is_the_whole_object() -> None:
    obj = jobset()
    got = compact_workload(trim_workload(copy.deepcopy(obj)))
    assert isinstance(got, CompactObject)
    assert got == obj and as_dict(got) == obj and list(got) == list(obj)
    assert got["metadata"] is got.metadata and got["spec"]["replicatedJobs"][0]["replicas"] == 2
    assert "status" in got and "__wmapShardStub" not in got and got.get("__wmapShardStub") is None
    got["spec"]["replicatedJobs"].clear()  # a decoded copy: the kept object does not change
    assert got["spec"]["replicatedJobs"][0]["name"] == "workers"
    with pytest.raises(KeyError):
        got["missing"]
    # An object JSON cannot hold (only a hand-made one) is kept as it is.
    odd = {"metadata": {"name": "x"}, "spec": {1: object()}}
    assert compact_workload(odd) is odd


def deep_size(obj: Any, seen: set[int]) -> int:
    """Bytes of ``obj`` and everything it references (each object once, across calls)."""
    total = 0
    stack = [obj]
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        total += sys.getsizeof(o)
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, tuple)):
            stack.extend(o)
        elif isinstance(o, (CompactPod, CompactObject)):
            stack.extend(getattr(o, s) for s in type(o).__slots__)
    return total


def test_compact_forms_cost_far_less_memory() -> None:
    """1,000 running pods of one template and 100 JobSets, each kept as dicts (the trimmed
    projection) and compact: the compact pods take under half, the workloads under 60%."""
    pods_dicts = [expected_trim(running_pod(f"w-{i}", node=f"n{i % 50}")) for i in range(1000)]
    for p in pods_dicts:  # as trim.py kept them: equal parts shared
        p["metadata"]["labels"] = pods_dicts[0]["metadata"]["labels"]
        p["metadata"]["ownerReferences"] = pods_dicts[0]["metadata"]["ownerReferences"]
        p["spec"]["containers"] = pods_dicts[0]["spec"]["containers"]
    as_dicts = deep_size(pods_dicts, set())
    compact_pods = [trim_pod(running_pod(f"w-{i}", node=f"n{i % 50}")) for i in range(1000)]
    assert compact_pods == pods_dicts
    as_compact = deep_size(compact_pods, set())
    assert as_compact < 0.5 * as_dicts, (as_compact, as_dicts)
    workloads = [orjson.loads(orjson.dumps(jobset())) for _ in range(100)]
    kept = [compact_workload(orjson.loads(orjson.dumps(jobset()))) for _ in range(100)]
    assert kept == workloads
    assert deep_size(kept, set()) < 0.6 * deep_size(workloads, set())


def test_the_cached_slim_workload_renders_the_same_lines() -> None:
    """The exporter caches a workload's resolution without its instances (their pod templates
    point into the decoded object): rendering from it must give the very same lines."""
    from pathlib import Path

    import yaml

    from workload_map.catalog.registry import get_definition
    from workload_map.exporter import metrics as m
    from workload_map.exporter.collector import _slim
    from workload_map.resolve.compiled import compile_definition
    from workload_map.resolve.pods import attribute_pods
    from workload_map.resolve.resolver import resolve

    example = Path(__file__).resolve().parents[2] / "examples" / "jobset-leader-workers.yaml"
    obj = next(d for d in yaml.safe_load_all(example.read_text()) if d and d.get("kind") == "JobSet")
    obj["metadata"].setdefault("uid", "js-uid")
    karta = get_definition(obj["apiVersion"], obj["kind"])
    assert karta is not None
    compiled = compile_definition(karta)
    full = resolve(compiled, obj)
    slim = _slim(full)
    assert slim is not None and all(not c.instances for c in slim.components.values())
    assert any(c.instances for c in full.components.values())
    attribution = attribute_pods(compiled, obj, [], check_ownership=False)
    base = [("namespace", "ml"), ("group", "jobset.x-k8s.io"), ("kind", "JobSet"), ("name", "x")]
    args = (base, [("uid", "js-uid")])
    lines = m.render_workload(*args, full, attribution, {}, [("workload_name", "x")])
    assert lines == m.render_workload(*args, slim, attribution, {}, [("workload_name", "x")])
    assert b"wmap_workload_component_resource_requests" in b"".join(lines.values())
