"""``wmap serve`` as a separate process over HTTP: readiness, auth and the SSE stream."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import workload_map.catalog
from tests.cli.helpers import RUNNING_JOBSET_STATUS, jobset
from tests.server.sse import sse_events
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient
from tests.support.processes import start_wmap
from tests.support.seed import jobset_pods
from workload_map.cli import exit_codes


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
        events = sse_events(r.iter_lines())
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
    (pod,) = jobset_pods(kube, js, [("podwatch-leader-0", "leader", "n1")], phase="Pending")
    headers = {"Authorization": f"Bearer {cluster.token('admin')}"}
    params = {"type": "jobsets", "namespace": namespace, "timeoutSeconds": "60"}
    with httpx.stream(
        "GET", served + "/api/v1/watch/workloads", params=params, headers=headers, timeout=70
    ) as r:
        assert r.status_code == 200
        events = sse_events(r.iter_lines())
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


def test_definitions_flag_is_served(cluster: TestCluster, tmp_path: Path) -> None:
    """``wmap serve --definitions FILE``: the file's definition wins over the catalog's for its type."""
    catalog = Path(workload_map.catalog.__file__).parent / "data" / "jobset-x-k8s-io-jobset-v1alpha2.yaml"
    text = catalog.read_text().replace("name: jobset-x-k8s-io-jobset-v1alpha2", "name: my-jobsets", 1)
    local = tmp_path / "mine.yaml"
    local.write_text(text)
    kc = cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin")
    with start_wmap("serve", ["--definitions", str(local)], tmp_path / "serve.log", kubeconfig=kc) as proc:
        headers = {"Authorization": f"Bearer {cluster.token('admin')}"}
        answer = httpx.get(proc.url + "/api/v1/workload-types", headers=headers)
        assert answer.status_code == 200, answer.text
        types = answer.json()["items"]
        jobsets = [t for t in types if t["kind"] == "JobSet"]
        assert [(t["name"], t["origin"]) for t in jobsets] == [("my-jobsets", "local")]
        assert f"definitions from {local}" in proc.tail()


def _serve(args: list[str], tmp_path: Path, kubeconfig: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "WMAP_CATALOG_DIR")}
    env["HOME"] = str(tmp_path)
    return subprocess.run(
        [sys.executable, "-m", "workload_map.cli.main", "serve", "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_a_port_in_use_is_an_error_before_listening(cluster: TestCluster, tmp_path: Path) -> None:
    kc = cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        done = _serve(["--listen", f"127.0.0.1:{port}"], tmp_path, kc)
    assert done.returncode == exit_codes.ERROR, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in done.stderr
    assert "listening on" not in done.stderr


def test_a_bad_definitions_file_stops_serve_naming_it(cluster: TestCluster, tmp_path: Path) -> None:
    kc = cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin")
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: run.ai/v1alpha1\nkind: Karta\nmetadata: {name: x}\nspec: {}\n")
    done = _serve(["--listen", "127.0.0.1:0", "--definitions", str(bad)], tmp_path, kc)
    assert done.returncode == exit_codes.USAGE, done.stderr
    assert f"--definitions {bad}" in done.stderr and "listening on" not in done.stderr
