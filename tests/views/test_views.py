"""The view model and its renderers, without a cluster: the seed JobSet tree (exact text), pods,
limits, resources table, formats, and JSON checked against the published schemas."""

from __future__ import annotations

import copy
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.views.schema_check import check
from workload_map.model.loader import load_definition
from workload_map.resolve import compile_definition, resolve
from workload_map.resolve.pods import attribute_pods
from workload_map.views.format import age, columns, cpu_text, memory_text
from workload_map.views.machine import envelope, to_json, to_yaml
from workload_map.views.model import build_describe, build_view
from workload_map.views.table import render_table
from workload_map.views.tree import render_describe

DATA = Path(__file__).parents[1] / "cli" / "data"
NOW = datetime(2025, 1, 1, 12, 0, tzinfo=timezone.utc)


def definition(name: str) -> Any:
    return compile_definition(load_definition(DATA / "catalog" / f"{name}.yaml").karta)


def seed() -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load((DATA / "jobset-leader-workers.yaml").read_text())
    return obj


def pod(
    name: str,
    role: str,
    *,
    ready: bool = True,
    phase: str = "Running",
    node: str | None = "node-1",
    reason: str | None = None,
    gpus: int = 4,
) -> dict[str, Any]:
    conds: list[dict[str, Any]] = [{"type": "Ready", "status": "True" if ready else "False"}]
    if reason:
        conds.append({"type": "PodScheduled", "status": "False", "reason": reason})
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "resources": {"limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"cpu": "4"}}}
        ]
    }
    if node:
        spec["nodeName"] = node
    return {
        "metadata": {
            "name": name,
            "namespace": "ml-team",
            "labels": {"jobset.sigs.k8s.io/replicatedjob-name": role},
        },
        "spec": spec,
        "status": {"phase": phase, "conditions": conds},
    }


SEED_FILE_MODE = """\
JobSet/train   namespace: ml-team   definition: jobset-x-k8s-io-jobset-v1alpha2 (catalog)
Phase: Undefined (the manifest has no status; file mode: no pods)

`-- replicatedjob  replicas: 3   gpu: 12
    |-- leader     replicas: 1   gpu: 4
    `-- workers    replicas: 2   gpu: 8

Resources:
COMPONENT   REPLICAS   GPU   CPU   MEMORY
leader      1          4     4     16Gi
workers     2          8     8     32Gi
TOTAL       3          12    12    48Gi
"""


def test_seed_jobset_file_mode_tree_exact() -> None:
    cd = definition("jobset-x-k8s-io-jobset-v1alpha2")
    obj = seed()
    view = build_describe(resolve(cd, obj), obj, definition=cd.name, origin="catalog", file_mode=True)
    assert render_describe(view) == SEED_FILE_MODE
    data = view.to_dict()
    check(data, "describe-view.v1.json")
    assert data["fileMode"] is True and data["manifestStatus"] is False and data["resources"]["gpus"] == 12
    assert [c["name"] for c in data["components"][0]["children"]] == ["leader", "workers"]


SEED_LIVE = """\
JobSet/train   namespace: ml-team   definition: jobset-x-k8s-io-jobset-v1alpha2 (catalog)   age: 3h

`-- replicatedjob            2/3 ready                 gpu: 12   node-1,node-2
    |-- leader               1/1 ready                 gpu: 4    node-1
    |   `-- train-leader-0   Running                   gpu: 4    node-1
    `-- workers              1/2 ready                 gpu: 8    node-2
        |-- train-workers-0  Running                   gpu: 4    node-2
        `-- train-workers-1  Pending (Unschedulable)   gpu: 4    <none>

Phase: Running

Waiting on:
  workers: 1/2 ready
    train-workers-1   Pending   Unschedulable

Resources:
COMPONENT   REPLICAS   GPU   CPU   MEMORY
leader      1          4     4     16Gi
workers     2          8     8     32Gi
TOTAL       3          12    12    48Gi

Unattributed pods:
NAME    PHASE     NODE     REASON
stray   Running   node-3   query result is empty <nil>
"""


def live_view() -> Any:
    cd = definition("jobset-x-k8s-io-jobset-v1alpha2")
    obj = seed()
    obj["metadata"].update(uid="u1", creationTimestamp="2025-01-01T09:00:00Z")
    obj["status"] = {"replicatedJobsStatus": [{"name": "leader", "active": 1, "ready": 1}]}
    pods = [
        pod("train-leader-0", "leader"),
        pod("train-workers-0", "workers", node="node-2"),
        pod("train-workers-1", "workers", ready=False, phase="Pending", node=None, reason="Unschedulable"),
    ]
    stray = pod("stray", "leader", node="node-3")
    del stray["metadata"]["labels"]
    pods.append(stray)
    attribution = attribute_pods(cd, obj, pods, check_ownership=False)
    by_name = {p["metadata"]["name"]: p for p in pods}
    return build_describe(
        resolve(cd, obj),
        obj,
        definition=cd.name,
        origin="catalog",
        attribution=attribution,
        unattributed_pods=by_name,
    )


def test_seed_jobset_live_tree_exact() -> None:
    view = live_view()
    text = render_describe(view, now=NOW)
    assert text == SEED_LIVE
    data = view.to_dict()
    check(data, "describe-view.v1.json")
    pods = data["components"][0]["children"][1]["pods"]
    assert pods[1] == {
        "name": "train-workers-1",
        "phase": "Pending",
        "ready": False,
        "node": None,
        "reason": "Unschedulable",
        "status": "Pending",
        "restarts": 0,
        "resources": {"gpus": 4, "cpuMillis": 4000, "memoryBytes": 0, "extended": {"nvidia.com/gpu": 4}},
    }
    assert data["unattributed"][0]["name"] == "stray"


def test_stuck_pods_say_why() -> None:
    """A crash-looping pod shows kubectl's status and restarts, not "Running (ContainersNotReady)",
    in the tree and in JSON, with each container's state and last termination."""
    cd = definition("jobset-x-k8s-io-jobset-v1alpha2")
    obj = seed()
    obj["metadata"].update(uid="u1", creationTimestamp="2025-01-01T09:00:00Z")
    crash = pod("train-workers-0", "workers", ready=False, node="node-2")
    crash["status"]["containerStatuses"] = [
        {
            "name": "main",
            "ready": False,
            "restartCount": 7,
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}},
            "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
        }
    ]
    pending = pod(
        "train-workers-1", "workers", ready=False, phase="Pending", node=None, reason="Unschedulable"
    )
    pending["status"]["conditions"][1]["message"] = "0/8 nodes are available: 8 Insufficient nvidia.com/gpu."
    pods = [pod("train-leader-0", "leader"), crash, pending]
    view = build_describe(
        resolve(cd, obj),
        obj,
        definition=cd.name,
        origin="catalog",
        attribution=attribute_pods(cd, obj, pods, check_ownership=False),
        unattributed_pods={p["metadata"]["name"]: p for p in pods},
    )
    text = " ".join(render_describe(view, now=NOW).split())
    assert "train-workers-0 CrashLoopBackOff, 7 restarts gpu: 4 node-2" in text
    assert "train-workers-1 Pending (Unschedulable) gpu: 4 <none>" in text
    data = view.to_dict()
    check(data, "describe-view.v1.json")
    crashed, unscheduled = data["components"][0]["children"][1]["pods"]
    assert (crashed["status"], crashed["restarts"]) == ("CrashLoopBackOff", 7)
    assert crashed["containers"] == [
        {
            "name": "main",
            "state": "waiting",
            "ready": False,
            "restartCount": 7,
            "reason": "CrashLoopBackOff",
            "message": "back-off 5m0s",
            "lastTerminationReason": "OOMKilled",
            "lastExitCode": 137,
        }
    ]
    assert unscheduled["message"] == "0/8 nodes are available: 8 Insufficient nvidia.com/gpu."


def test_pod_limit_shows_unhealthy_first() -> None:
    text = render_describe(live_view(), pod_limit=1, now=NOW)
    assert "`-- train-workers-1  Pending (Unschedulable)" in text.replace("      ", "  ").replace(
        "    ", "  "
    ) or ("train-workers-1" in text)
    lines = text.splitlines()
    workers = next(i for i, line in enumerate(lines) if "-- workers" in line)
    assert "train-workers-1" in lines[workers + 1]
    assert "...  " in lines[workers + 2] or lines[workers + 2].strip().startswith("`-- ...")
    assert "and 1 more (1 unhealthy shown)" in lines[workers + 2]
    assert "train-workers-0" not in text


def test_component_limit_keeps_unhealthy_and_closes() -> None:
    text = render_describe(live_view(), component_limit=1, now=NOW)
    assert "-- workers" in text and "-- leader" not in text
    assert "and 1 more component(s)" in text
    # the resources table is never truncated
    assert "leader      1          4" in text


def test_get_row_and_table() -> None:
    cd = definition("jobset-x-k8s-io-jobset-v1alpha2")
    obj = seed()
    obj["metadata"].update(uid="u1", creationTimestamp="2025-01-01T11:30:00Z")
    view = build_view(resolve(cd, obj), obj, definition=cd.name, origin="catalog")
    check(view.to_dict(), "view.v1.json")
    check(envelope([view.to_dict()]), "view.v1.json")
    check(envelope([]), "view.v1.json")
    assert view.to_dict()["components"] == [
        {"name": "leader", "ready": None, "desired": 1},
        {"name": "workers", "ready": None, "desired": 2},
    ]
    table = render_table([view], now=NOW)
    assert table == (
        "NAME    PHASE       COMPONENTS           GPU   AGE\n"
        "train   Undefined   leader:1,workers:2   12    30m\n"
    )
    across = render_table([view], now=NOW, show_namespace=True)  # -A: NAMESPACE first, as kubectl
    assert across.splitlines()[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert across.splitlines()[1].split()[:2] == ["ml-team", "train"]
    wide = render_table([view], wide=True, now=NOW)
    assert wide.splitlines()[0].split() == [
        "NAME",
        "PHASE",
        "COMPONENTS",
        "READY",
        "GPU",
        "CPU",
        "MEMORY",
        "AGE",
        "ORIGIN",
    ]
    assert wide.splitlines()[1].split()[-5:] == ["12", "12", "48Gi", "30m", "catalog"]


def test_machine_formats_round_trip() -> None:
    data = live_view().to_dict()
    assert yaml.safe_load(to_yaml(data)) == data
    assert to_json({"a": [1]}) == '{\n  "a": [\n    1\n  ]\n}\n'


def test_non_pod_root_dropped_and_empty_components() -> None:
    cd = definition("leaderworkerset-x-k8s-io-leaderworkerset-v1")
    obj = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm", "namespace": "serve"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 4,
                "leaderTemplate": {
                    "spec": {"containers": [{"name": "l", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}
                },
                "workerTemplate": {
                    "spec": {"containers": [{"name": "w", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}
                },
            },
        },
    }
    view = build_describe(
        resolve(cd, copy.deepcopy(obj)), obj, definition=cd.name, origin="catalog", file_mode=True
    )
    text = render_describe(view)
    assert "`-- group" in text and "|-- leader" in text and "`-- worker" in text
    assert "TOTAL       8          64" in text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (5, "5s"),
        (119, "119s"),
        (150, "2m30s"),
        (600, "10m"),
        (3 * 3600 + 60, "3h1m"),
        (9 * 3600, "9h"),
        (3 * 86400 + 3600, "3d1h"),
        (10 * 86400, "10d"),
        (800 * 86400, "2y70d"),
        (0, "0s"),
        (-5, "<invalid>"),
    ],
)
def test_age(seconds: int, text: str) -> None:
    created = datetime.fromtimestamp(NOW.timestamp() - seconds, tz=timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    assert age(created, NOW) == text


def test_quantities_and_columns() -> None:
    assert [cpu_text(4000), cpu_text(500), cpu_text(0)] == ["4", "500m", "0"]
    assert [memory_text(16 << 30), memory_text(70_000_000), memory_text(1001), memory_text(0)] == [
        "16Gi",
        "70M",
        "1001",
        "0",
    ]
    assert age(None) == "<unknown>"
    assert columns([["a", "bb"], ["ccc", ""]]) == ["a     bb", "ccc"]


def lws_pod(
    name: str, group: int, worker: int, *, ready: bool = True, node: str | None = "node-1"
) -> dict[str, Any]:
    labels = {
        "leaderworkerset.sigs.k8s.io/name": "vllm",
        "leaderworkerset.sigs.k8s.io/group-index": str(group),
        "leaderworkerset.sigs.k8s.io/worker-index": str(worker),
    }
    annotations = {} if worker == 0 else {"leaderworkerset.sigs.k8s.io/leader-name": f"vllm-{group}"}
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}
    if node:
        spec["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": "serve", "labels": labels, "annotations": annotations},
        "spec": spec,
        "status": {
            "phase": "Running" if ready else "Pending",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


LWS_LIVE = """\
`-- group                 4/6 ready   gpu: 48   node-1,node-2,node-3
    |-- group[0]          3/3 ready   gpu: 24   node-1,node-2
    |   |-- leader        1/1 ready   gpu: 8    node-1
    |   |   `-- vllm-0    Running     gpu: 8    node-1
    |   `-- worker        2/2 ready   gpu: 16   node-1,node-2
    |       |-- vllm-0-1  Running     gpu: 8    node-1
    |       `-- vllm-0-2  Running     gpu: 8    node-2
    `-- group[1]          1/3 ready   gpu: 24   node-3
        |-- leader        1/1 ready   gpu: 8    node-3
        |   `-- vllm-1    Running     gpu: 8    node-3
        `-- worker        0/2 ready   gpu: 16
            `-- vllm-1-1  Pending     gpu: 8    <none>

Phase: Initializing
  Initializing: leaderworkerset rule: `((.status.conditions // []) | length) == 0` gives true

Waiting on:
  group[1]/worker: 0/2 ready, 1 not created
    vllm-1-1   Pending

Resources:
COMPONENT   REPLICAS   GPU   CPU   MEMORY
leader      2          16    0     0
worker      4          32    0     0
TOTAL       6          48    0     0
"""


def test_lws_pods_split_per_replica() -> None:
    from workload_map.catalog import get_by_name

    karta = get_by_name("leaderworkerset-x-k8s-io-leaderworkerset-v1")
    assert karta is not None
    cd = compile_definition(karta)
    obj = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm", "namespace": "serve", "uid": "u1"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 3,
                "workerTemplate": {
                    "spec": {"containers": [{"name": "w", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}
                },
            },
        },
    }
    pods = [
        lws_pod("vllm-0", 0, 0),
        lws_pod("vllm-0-1", 0, 1),
        lws_pod("vllm-0-2", 0, 2, node="node-2"),
        lws_pod("vllm-1", 1, 0, node="node-3"),
        lws_pod("vllm-1-1", 1, 1, ready=False, node=None),
    ]
    attribution = attribute_pods(cd, obj, pods, check_ownership=False)
    assert attribution.unattributed == ()
    assert attribution.replica_keys("group") == ("0", "1")
    view = build_describe(
        resolve(cd, copy.deepcopy(obj)), obj, definition=cd.name, origin="catalog", attribution=attribution
    )
    text = render_describe(view, now=NOW)
    assert text.split("\n", 2)[2] == LWS_LIVE
    data = view.to_dict()
    check(data, "describe-view.v1.json")
    group = data["components"][0]
    assert group["name"] == "group" and "replicaKey" not in group
    assert group["replicas"] == {"desired": 6, "current": 5, "ready": 4}
    assert [(c["name"], c["replicaKey"]) for c in group["children"]] == [("group[0]", "0"), ("group[1]", "1")]
    one = group["children"][1]
    assert [c["name"] for c in one["children"]] == ["leader", "worker"]
    assert [p["name"] for c in one["children"] for p in c["pods"]] == ["vllm-1", "vllm-1-1"]
    assert one["children"][1]["replicas"] == {"desired": 2, "current": 1, "ready": 0}

    # Without pods (file mode) the component is not split.
    file_view = build_describe(
        resolve(cd, copy.deepcopy(obj)), obj, definition=cd.name, origin="catalog", file_mode=True
    )
    assert [c.name for c in file_view.components[0].children] == ["leader", "worker"]


def test_replica_keys_sort_numbers_numerically() -> None:
    from workload_map.catalog import get_by_name

    karta = get_by_name("leaderworkerset-x-k8s-io-leaderworkerset-v1")
    assert karta is not None
    cd = compile_definition(karta)
    obj = {"metadata": {"name": "vllm", "uid": "u1"}, "spec": {"replicas": 11}}
    pods = [lws_pod(f"vllm-{g}", g, 0) for g in (10, 2, 0)]
    attribution = attribute_pods(cd, obj, pods, check_ownership=False)
    assert attribution.replica_keys("group") == ("0", "2", "10")
    assert attribution.replica_keys("leader") == ()
