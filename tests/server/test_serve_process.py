"""``wmap serve`` as a separate process over HTTP: readiness, auth and the SSE stream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.cli.helpers import RUNNING_JOBSET_STATUS, jobset
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient
from tests.support.processes import start_wmap


@pytest.fixture(scope="module")
def served(cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("serve")
    kc = cluster.write_kubeconfig(tmp / "kubeconfig", user="admin")
    with start_wmap("serve", ["--enable-writes"], tmp / "serve.log", kubeconfig=kc) as proc:
        yield proc.url


def test_http_auth_and_openapi(served: str, cluster: TestCluster) -> None:
    assert httpx.get(served + "/api/v1/workloads").status_code == 401
    r = httpx.get(served + "/api/v1/whoami", headers={"Authorization": f"Bearer {cluster.token('admin')}"})
    assert r.status_code == 200 and r.json()["username"] == "admin" and r.json()["writesEnabled"] is True
    doc = httpx.get(served + "/openapi.json").json()
    assert doc["openapi"].startswith("3.1")


def _events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    kind = ""
    for line in lines:
        if line.startswith("event: "):
            kind = line[len("event: ") :]
        elif line.startswith("data: ") and kind:
            yield kind, json.loads(line[len("data: ") :])
            kind = ""


def test_sse_stream_sees_status_change(
    served: str, cluster: TestCluster, kube: KubeTestClient, namespace: str
) -> None:
    js = kube.create(jobset("live", namespace))
    js = kube.set_status(js, RUNNING_JOBSET_STATUS)
    headers = {"Authorization": f"Bearer {cluster.token('admin')}"}
    params = {"type": "jobsets", "namespace": namespace, "timeoutSeconds": "30"}
    seen: list[tuple[str, dict[str, Any]]] = []
    with httpx.stream(
        "GET", served + "/api/v1/watch/workloads", params=params, headers=headers, timeout=40
    ) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = _events(r.iter_lines())
        for kind, data in events:
            seen.append((kind, data))
            if kind == "synced":
                break
        assert [(k, d["object"]["name"]) for k, d in seen if k == "added"] == [("added", "live")]
        assert seen[0][1]["object"]["primaryPhase"] == "Running"
        failed = {
            **RUNNING_JOBSET_STATUS,
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "FailedJobs",
                    "message": "a job failed",
                    "lastTransitionTime": "2024-01-01T00:00:00Z",
                }
            ],
            "terminalState": "Failed",
        }
        kube.set_status(kube.get_obj(js), failed)
        for kind, data in events:
            if (
                kind == "modified"
                and data["object"]["name"] == "live"
                and "Failed" in data["object"]["phases"]
            ):
                break
        else:
            raise AssertionError("no modified event with phase Failed")


def test_sse_stream_sees_pod_becoming_ready(
    served: str, cluster: TestCluster, kube: KubeTestClient, namespace: str
) -> None:
    """The workload object does not change: only its pod turns Running/Ready, and the stream
    sends the workload again with one more ready pod."""
    js = kube.create(jobset("podwatch", namespace))
    js = kube.set_status(js, RUNNING_JOBSET_STATUS)
    labels = {"jobset.sigs.k8s.io/replicatedjob-name": "leader", "jobset.sigs.k8s.io/jobset-name": "podwatch"}
    pod = kube.make_pod("podwatch-leader-0", namespace, owner=js, labels=labels, phase="Pending", node="n1")
    headers = {"Authorization": f"Bearer {cluster.token('admin')}"}
    params = {"type": "jobsets", "namespace": namespace, "timeoutSeconds": "60"}
    with httpx.stream(
        "GET", served + "/api/v1/watch/workloads", params=params, headers=headers, timeout=70
    ) as r:
        assert r.status_code == 200
        events = _events(r.iter_lines())
        added: dict[str, Any] = {}
        for kind, data in events:
            if kind == "added" and data["object"]["name"] == "podwatch":
                added = data["object"]
            if kind == "synced":
                break
        assert added["pods"] == {"ready": 0, "total": 1}
        now = "2024-01-01T00:00:00Z"
        ready_status = {
            "phase": "Running",
            "conditions": [
                {"type": t, "status": "True", "lastTransitionTime": now}
                for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
            ],
            "containerStatuses": [
                {
                    "name": c["name"],
                    "image": c["image"],
                    "imageID": "",
                    "ready": True,
                    "started": True,
                    "restartCount": 0,
                    "state": {"running": {"startedAt": now}},
                }
                for c in pod["spec"]["containers"]
            ],
        }
        kube.set_status(pod, ready_status)
        for kind, data in events:
            if kind == "modified" and data["object"]["name"] == "podwatch":
                assert data["object"]["pods"] == {"ready": 1, "total": 1}
                # the workload object itself did not change
                assert data["object"]["resourceVersion"] == added["resourceVersion"]
                break
        else:
            raise AssertionError("no modified event after the pod became ready")
