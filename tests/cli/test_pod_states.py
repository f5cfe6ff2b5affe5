"""kube/podstatus.py against the real kubectl: for pods in the states a stuck workload shows
(CrashLoopBackOff with restarts and an OOMKilled last termination, ImagePullBackOff,
CreateContainerConfigError, Completed, Error, an init container waiting or failed, unschedulable,
evicted, terminating), ``kubectl get pods`` on the test API server prints the STATUS and RESTARTS
our functions give for the same objects. kubectl asks the server to print pods, so this is the
v1.20.2 printer; ``SchedulingGated`` (printed since Kubernetes 1.26) is checked on its own."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient
from workload_map.kube.podstatus import (
    containers,
    display_status,
    restarts,
    scheduling_message,
    status_and_restarts,
)

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed"),
]

NOW = "2026-12-01T10:00:00Z"


def _running() -> dict[str, Any]:
    return {"running": {"startedAt": NOW}}


def _status(
    name: str, state: dict[str, Any], restarts: int = 0, ready: bool = False, **extra: Any
) -> dict[str, Any]:
    return {
        "name": name,
        "image": "x",
        "imageID": "",
        "ready": ready,
        "restartCount": restarts,
        "state": state,
        **extra,
    }


def _conds(
    ready: bool, scheduled: bool = True, sched_reason: str = "", message: str = ""
) -> list[dict[str, Any]]:
    if not scheduled:
        return [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": sched_reason,
                "message": message,
                "lastTransitionTime": NOW,
            }
        ]
    flag = "True" if ready else "False"
    return [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": NOW},
        {"type": "Ready", "status": flag, "lastTransitionTime": NOW},
    ]


OOM = {"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": NOW, "finishedAt": NOW}}

#: name -> (init container names, status)
CASES: dict[str, tuple[list[str], dict[str, Any]]] = {
    "crashloop": (
        [],
        {
            "phase": "Running",
            "conditions": _conds(False),
            "containerStatuses": [
                _status(
                    "main",
                    {
                        "waiting": {
                            "reason": "CrashLoopBackOff",
                            "message": "back-off 5m0s restarting failed container",
                        }
                    },
                    restarts=7,
                    lastState=OOM,
                )
            ],
        },
    ),
    "imagepull": (
        [],
        {
            "phase": "Pending",
            "conditions": _conds(False),
            "containerStatuses": [
                _status(
                    "main", {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}
                )
            ],
        },
    ),
    "configerror": (
        [],
        {
            "phase": "Pending",
            "conditions": _conds(False),
            "containerStatuses": [
                _status(
                    "main",
                    {
                        "waiting": {
                            "reason": "CreateContainerConfigError",
                            "message": 'secret "hf-token" not found',
                        }
                    },
                )
            ],
        },
    ),
    "oomkilled-now": (
        [],
        {
            "phase": "Running",
            "conditions": _conds(False),
            "containerStatuses": [_status("main", OOM, restarts=2)],
        },
    ),
    "completed": (
        [],
        {
            "phase": "Succeeded",
            "conditions": _conds(False),
            "containerStatuses": [
                _status(
                    "main",
                    {
                        "terminated": {
                            "exitCode": 0,
                            "reason": "Completed",
                            "startedAt": NOW,
                            "finishedAt": NOW,
                        }
                    },
                )
            ],
        },
    ),
    "exitcode": (
        [],
        {
            "phase": "Failed",
            "conditions": _conds(False),
            "containerStatuses": [
                _status("main", {"terminated": {"exitCode": 3, "startedAt": NOW, "finishedAt": NOW}})
            ],
        },
    ),
    "one-of-two-crashing": (
        [],
        {
            "phase": "Running",
            "conditions": _conds(False),
            "containerStatuses": [
                _status("main", _running(), ready=True),
                _status("side", {"waiting": {"reason": "CrashLoopBackOff"}}, restarts=3),
            ],
        },
    ),
    "init-waiting": (
        ["fetch", "warm"],
        {
            "phase": "Pending",
            "conditions": _conds(False),
            "initContainerStatuses": [
                _status(
                    "fetch",
                    {
                        "terminated": {
                            "exitCode": 0,
                            "reason": "Completed",
                            "startedAt": NOW,
                            "finishedAt": NOW,
                        }
                    },
                ),
                _status("warm", {"running": {"startedAt": NOW}}),
            ],
            "containerStatuses": [_status("main", {"waiting": {"reason": "PodInitializing"}})],
        },
    ),
    "init-crashing": (
        ["fetch"],
        {
            "phase": "Pending",
            "conditions": _conds(False),
            "initContainerStatuses": [
                _status("fetch", {"waiting": {"reason": "CrashLoopBackOff"}}, restarts=4)
            ],
            "containerStatuses": [_status("main", {"waiting": {"reason": "PodInitializing"}})],
        },
    ),
    "init-error": (
        ["fetch"],
        {
            "phase": "Pending",
            "conditions": _conds(False),
            "initContainerStatuses": [
                _status(
                    "fetch",
                    {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": NOW, "finishedAt": NOW}},
                    restarts=1,
                )
            ],
        },
    ),
    "unschedulable": (
        [],
        {
            "phase": "Pending",
            "conditions": _conds(
                False,
                scheduled=False,
                sched_reason="Unschedulable",
                message="0/8 nodes are available: 8 Insufficient nvidia.com/gpu.",
            ),
        },
    ),
    "gated": (
        [],
        {
            "phase": "Pending",
            "conditions": _conds(
                False,
                scheduled=False,
                sched_reason="SchedulingGated",
                message="Scheduling is blocked due to non-empty scheduling gates",
            ),
        },
    ),
    "evicted": (
        [],
        {
            "phase": "Failed",
            "reason": "Evicted",
            "message": "The node was low on resource: memory.",
            "conditions": [],
        },
    ),
    "running": (
        [],
        {
            "phase": "Running",
            "conditions": _conds(True),
            "containerStatuses": [_status("main", _running(), ready=True, restarts=1)],
        },
    ),
}


def _create(
    kube: KubeTestClient, ns: str, name: str, init: list[str], status: dict[str, Any], finalizer: bool
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": "main", "image": "x"},
            *([{"name": "side", "image": "x"}] if name == "one-of-two-crashing" else []),
        ],
        "nodeName": None
        if status["conditions"] and status["conditions"][0].get("status") == "False"
        else "n1",
    }
    if init:
        spec["initContainers"] = [{"name": n, "image": "x"} for n in init]
    if spec["nodeName"] is None:
        del spec["nodeName"]
    meta: dict[str, Any] = {"name": name, "namespace": ns}
    if finalizer:
        meta["finalizers"] = ["example.com/hold"]
    pod = kube.create({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
    pod["status"] = status
    return kube.update_status(pod)


def _kubectl(cluster: TestCluster, kubeconfig: Path, ns: str) -> dict[str, tuple[str, str]]:
    out = subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), "get", "pods", "-n", ns, "--no-headers"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    rows = {}
    for line in out.splitlines():
        cols = line.split()
        rows[cols[0]] = (cols[2], cols[3])  # NAME READY STATUS RESTARTS [(ago)] AGE
    return rows


def test_status_and_restarts_as_kubectl_prints_them(
    cluster: TestCluster, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    made = {
        name: _create(kube, namespace, name, init, status, False) for name, (init, status) in CASES.items()
    }
    term = _create(kube, namespace, "terminating", [], CASES["running"][1], True)
    kube.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/terminating")
    made["terminating"] = kube.request("GET", f"/api/v1/namespaces/{namespace}/pods/terminating")
    assert term and made["terminating"]["metadata"].get("deletionTimestamp")
    try:
        printed = _kubectl(cluster, cluster.write_kubeconfig(tmp_path / "kc", user="admin"), namespace)
        ours = {name: (display_status(pod), str(restarts(pod))) for name, pod in made.items()}
        assert all(status_and_restarts(pod) == (ours[n][0], int(ours[n][1])) for n, pod in made.items())
        assert printed.pop("gated") == ("Pending", "0")  # the v1.20 printer predates gates
        assert {k: v for k, v in ours.items() if k != "gated"} == printed
    finally:
        kube.patch(made["terminating"], {"metadata": {"finalizers": None}})
    # The values the tests above pin (a kubectl upgrade that changed them would show here first).
    assert ours["crashloop"] == ("CrashLoopBackOff", "7")
    assert ours["init-waiting"] == ("Init:1/2", "0") and ours["init-error"] == ("Init:Error", "1")
    assert ours["gated"][0] == "SchedulingGated" and ours["terminating"][0] == "Terminating"


def test_container_details_and_scheduling_message() -> None:
    crash = {"status": CASES["crashloop"][1]}
    (c,) = containers(crash)
    assert (c.state, c.reason, c.restart_count, c.last_termination_reason, c.last_exit_code) == (
        "waiting",
        "CrashLoopBackOff",
        7,
        "OOMKilled",
        137,
    )
    assert c.to_dict()["message"] == "back-off 5m0s restarting failed container"
    pending = {"status": CASES["unschedulable"][1]}
    assert scheduling_message(pending) == "0/8 nodes are available: 8 Insufficient nvidia.com/gpu."
    assert scheduling_message(crash) is None
    init = containers({"status": CASES["init-crashing"][1]})
    assert [(x.name, x.init, x.reason) for x in init] == [
        ("fetch", True, "CrashLoopBackOff"),
        ("main", False, "PodInitializing"),
    ]


def test_readiness_gates_as_kubectl_wide_prints_them(
    cluster: TestCluster, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    """READINESS GATES of ``kubectl get pods -o wide`` (satisfied/total, ``<none>`` without
    gates), and the gate named as the reason a pod with ready containers is not ready."""
    from workload_map.kube.podstatus import not_ready_message, readiness_gates

    gates = ["target-health.example.com/lb", "example.com/warm"]
    made = {}
    for name, warm in (("gated-half", "False"), ("gated-all", "True"), ("no-gates", None)):
        spec: dict[str, Any] = {"containers": [{"name": "main", "image": "x"}], "nodeName": "n1"}
        conds = _conds(ready=warm == "True")
        if warm is not None:
            spec["readinessGates"] = [{"conditionType": g} for g in gates]
            conds += [
                {"type": gates[0], "status": "True", "lastTransitionTime": NOW},
                {"type": gates[1], "status": warm, "lastTransitionTime": NOW},
            ]
        pod = kube.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": namespace},
                "spec": spec,
            }
        )
        pod["status"] = {
            "phase": "Running",
            "conditions": conds,
            "startTime": NOW,
            "containerStatuses": [_status("main", _running(), ready=True)],
        }
        made[name] = kube.update_status(pod)
    kc = cluster.write_kubeconfig(tmp_path / "kc", user="admin")
    out = subprocess.run(
        ["kubectl", "--kubeconfig", str(kc), "get", "pods", "-n", namespace, "-o", "wide"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    lines = out.splitlines()
    col = lines[0].index("READINESS GATES")
    printed = {ln.split()[0]: ln[col:].split()[0] for ln in lines[1:]}
    ours = {n: (f"{r}/{t}" if t else "<none>") for n, p in made.items() for r, t, _ in [readiness_gates(p)]}
    assert ours == printed == {"gated-half": "1/2", "gated-all": "2/2", "no-gates": "<none>"}
    assert not_ready_message(made["gated-half"]) == "readiness gate example.com/warm not True"
    assert not_ready_message(made["gated-all"]) is None and not_ready_message(made["no-gates"]) is None
