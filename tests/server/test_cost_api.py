"""``GET .../workloads/{type}/{name}/cost`` of wmap serve, in process against the real test API
server, with a fake Prometheus on loopback answering as Prometheus's HTTP API does
(tests/support/fake_prometheus.py): authorised as SAR get on the workload, the cost with the
queries that gave it, answers reused for cost_ttl, ``{"configured": false}`` without a
Prometheus, and a Prometheus that is down or slow an answer with ``error`` (200), never a 5xx."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.cli.helpers import RUNNING_JOBSET_STATUS, jobset
from tests.support.fake_prometheus import FakePrometheus, RuleSeries
from tests.support.kube import KubeTestClient, rule
from workload_map.cluster.kubeconfig import ConnectionOptions, load_cluster_config
from workload_map.cost import PrometheusSettings
from workload_map.server.app import ServerSettings, create_app
from workload_map.server.state import ClusterState

Headers = Callable[[str], dict[str, str]]


def app(kubeconfig: Path, prometheus: PrometheusSettings | None) -> TestClient:
    config = load_cluster_config(ConnectionOptions(kubeconfig=str(kubeconfig)))
    state = ClusterState(config, definitions_ttl=1.0, sync_timeout=60.0)
    settings = ServerSettings(token_ttl=5.0, access_ttl=1.0, prometheus=prometheus)
    return TestClient(create_app(state, settings), raise_server_exceptions=False)


@pytest.fixture(scope="module")
def seeded(kube: KubeTestClient, karta_crd: str) -> str:
    ns = kube.create_namespace("wmap-cost-api")
    for name in ("train", "other"):
        kube.set_status(kube.create(jobset(name, ns)), RUNNING_JOBSET_STATUS)
    return ns


@pytest.fixture(scope="module")
def prom(seeded: str) -> Iterator[FakePrometheus]:
    rules = RuleSeries()
    labels = {"namespace": seeded, "workload_group": "jobset.x-k8s.io", "workload_kind": "JobSet"}
    rules.add({**labels, "workload_name": "train"}, gpuHours=12.0, cost=30.0, costPerHour={"gpu": 1.25})
    with FakePrometheus(rules.answer) as fake:
        yield fake


def test_cost_answer_rbac_and_reuse(
    seeded: str, prom: FakePrometheus, admin_kubeconfig: Path, bearer: Headers, kube: KubeTestClient
) -> None:
    url = f"/api/v1/namespaces/{seeded}/workloads/jobsets/train/cost"
    with app(admin_kubeconfig, PrometheusSettings(prom.url)) as client:
        assert client.get(url, headers=bearer("nobody")).status_code == 403
        assert len(prom.queries) == 0  # nothing asked of Prometheus for a refused request
        kube.grant("reader", [rule(["jobset.x-k8s.io"], ["jobsets"], ["get"])], seeded)
        body = client.get(url, headers=bearer("reader")).json()
        assert body["configured"] is True and body["warnings"] == []
        assert (body["gpuHours"], body["cost"], body["costPerHour"]) == (12.0, 30.0, 1.25)
        assert sorted(q["query"] for q in body["queries"]) == sorted(q["query"] for q in prom.queries)
        asked = len(prom.queries)
        assert asked == 7
        # the page reloads on every pod change: the answer is reused, Prometheus not asked again
        assert client.get(url, headers=bearer("reader")).json() == body and len(prom.queries) == asked
        other = client.get(url.replace("/train/", "/other/"), headers=bearer("reader")).json()
        assert other["configured"] is True and other["cost"] is None and "error" not in other
        assert client.get(url.replace("jobsets", "nopes"), headers=bearer("reader")).status_code == 404


def test_no_prometheus_and_prometheus_down(seeded: str, admin_kubeconfig: Path, bearer: Headers) -> None:
    url = f"/api/v1/namespaces/{seeded}/workloads/jobsets/train/cost"
    admin = bearer("admin")
    with app(admin_kubeconfig, None) as client:
        assert client.get(url, headers=admin).json() == {"configured": False}
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()
    with app(admin_kubeconfig, PrometheusSettings(dead, timeout=2)) as client:
        r = client.get(url, headers=admin)
    assert r.status_code == 200
    body = r.json()
    assert body["error"] == f"cannot reach Prometheus at {dead}: connection refused"
    assert body["cost"] is None and body["queries"] and body["warnings"]
    with (
        FakePrometheus(RuleSeries().answer, delay=3) as slow,
        app(admin_kubeconfig, PrometheusSettings(slow.url, timeout=0.3)) as client,
    ):
        body = client.get(url, headers=admin).json()
    assert body["error"] == f"Prometheus at {slow.url} did not answer within 0.3s"
