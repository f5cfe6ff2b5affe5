"""``describe`` explains why a workload is stuck, compared with kubectl on the test API server:
the Events section merges the events of the workload, its ReplicaSet and its pods with the same
Type, Reason, Age, From and Message cells ``kubectl describe`` prints for each object, oldest
first, nothing about other objects; ``--show-events=false`` hides them as kubectl's flag does;
conditions with their reasons; and the pods holding a component, with kubectl's STATUS."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.cli.helpers import kubectl_out, wmap
from tests.support.kube import KubeTestClient
from tests.support.seed import SCHEDULING, seed_event, stuck_deployment, stuck_events

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.usefixtures("bundled_catalog"),
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed"),
]


def _events_rows(text: str) -> list[list[str]]:
    """The rows of an Events: section, split on 2+ spaces (cells contain single spaces)."""
    import re

    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Events:"))
    out = []
    for ln in lines[start + 3 :]:
        if not ln.startswith("  "):
            break
        out.append(re.split(r"\s{2,}", ln.strip()))
    return out


def test_events_match_kubectl_describe_per_object(kube: KubeTestClient, namespace: str, kc: str) -> None:
    dep, rs, pods = stuck_deployment(kube, namespace)
    stuck_events(kube, dep, rs, pods)
    other = kube.make_pod("stranger", namespace, labels={"app": "other"})
    seed_event(
        kube,
        {**other, "apiVersion": "v1"},
        "stranger.1",
        "Pulled",
        "not about web",
        kind="Pod",
        first=23,
        last=23,
    )

    rc, out, err = wmap("describe", "deploy/web", "-n", namespace, "--kubeconfig", kc)
    assert rc == 0, err
    ours = _events_rows(out)
    theirs: dict[str, list[list[str]]] = {}
    for kind, name in (
        ("pod", "web-5d9f7c-crash"),
        ("pod", "web-5d9f7c-wait"),
        ("rs", "web-5d9f7c"),
        ("deploy", "web"),
    ):
        theirs[name] = _events_rows(kubectl_out(kc, "describe", kind, name, "-n", namespace))
    objects = {
        "web-5d9f7c-crash": "Pod",
        "web-5d9f7c-wait": "Pod",
        "web-5d9f7c": "ReplicaSet",
        "web": "Deployment",
    }
    for row in ours:
        typ, reason, age, source, obj, message = row
        kind, _, name = obj.partition("/")
        assert objects[name] == kind, row
        assert [typ, reason, age, source, message] in theirs[name], (row, theirs[name])
    assert sorted(r[4] for r in ours) == sorted(f"{k}/{n}" for n, k in objects.items())
    assert [r[1] for r in ours] == ["ScalingReplicaSet", "SuccessfulCreate", "FailedScheduling", "BackOff"]
    assert "stranger" not in out

    rc, out, _ = wmap("describe", "deploy/web", "-n", namespace, "--show-events=false", "--kubeconfig", kc)
    assert "Events:" not in out
    assert "Events:" not in kubectl_out(
        kc, "describe", "pod", "web-5d9f7c-crash", "-n", namespace, "--show-events=false"
    )
    rc, out, _ = wmap("describe", "deploy/web", "-n", namespace, "-o", "json", "--kubeconfig", kc)
    doc = json.loads(out)
    assert [e["reason"] for e in doc["events"]][-1] == "BackOff" and doc["events"][-1]["count"] == 7


def test_conditions_and_the_pods_holding_the_workload(kube: KubeTestClient, namespace: str, kc: str) -> None:
    stuck_deployment(kube, namespace)
    rc, out, err = wmap("describe", "deploy/web", "-n", namespace, "--kubeconfig", kc)
    assert rc == 0, err
    lines = out.splitlines()
    kubectl_conditions = kubectl_out(kc, "describe", "deploy", "web", "-n", namespace)
    k = kubectl_conditions.splitlines()
    start = next(i for i, ln in enumerate(k) if ln.startswith("Conditions:"))
    theirs = [ln.split()[:3] for ln in k[start + 3 : start + 5]]
    start = next(i for i, ln in enumerate(lines) if ln == "Conditions:")
    ours = [ln.split()[:3] for ln in lines[start + 2 : start + 4]]
    assert (
        sorted(ours)
        == sorted(theirs)
        == sorted(
            [
                ["Available", "False", "MinimumReplicasUnavailable"],
                ["Progressing", "True", "ReplicaSetUpdated"],
            ]
        )
    )
    assert any(
        ln.startswith("  Available ") and ln.endswith("Deployment does not have minimum availability.")
        for ln in lines
    )
    held = out[out.index("Waiting on:") :]
    assert "deployment: 1/3 ready" in held
    pod_status = {
        ln.split()[0]: ln.split()[2]
        for ln in kubectl_out(kc, "get", "pods", "-n", namespace).splitlines()[1:]
    }
    crash = next(ln for ln in held.splitlines() if "web-5d9f7c-crash" in ln)
    wait = next(ln for ln in held.splitlines() if "web-5d9f7c-wait" in ln)
    assert crash.split()[1] == pod_status["web-5d9f7c-crash"] == "CrashLoopBackOff"
    assert wait.split()[1] == pod_status["web-5d9f7c-wait"] == "Pending" and wait.endswith(SCHEDULING)
    rule = next(ln for ln in lines if ln.startswith("  Degraded:") or ln.startswith("  Initializing:"))
    _, explained, _ = wmap("explain", "deploy")
    assert rule.split(" rule: ", 1)[1] in explained, (rule, explained)
    rc, out, _ = wmap("describe", "deploy/web", "-n", namespace, "-o", "json", "--kubeconfig", kc)
    doc = json.loads(out)
    assert doc["waitingOn"][0]["ready"] == 1 and {p["name"] for p in doc["waitingOn"][0]["pods"]} == {
        "web-5d9f7c-crash",
        "web-5d9f7c-wait",
    }
    assert doc["phaseReasons"][0]["component"] == "deployment"
