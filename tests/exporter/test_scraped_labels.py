"""The exporter scraped by a real Prometheus (Debian's package), as docs/metrics.md "Label
collisions and honor_labels" describes it: with ``honor_labels: true`` the info series keep the
workload pod's ``namespace`` and ``pod`` (the cost rules' join keys) and an empty ``instance``
stays absent, not the target's address (so an LWS's component row is not split by scrape target);
with ``honor_labels: false`` and the target labels a ServiceMonitor adds (the exporter pod's
namespace, pod and container), Prometheus renames them ``exported_namespace``/``exported_pod``,
which the expression of the alert ``WmapJoinLabelsRenamed`` finds. A JobSet (instances: its replicated
jobs) and an LWS (no instance) seeded as their controllers leave them (tests/support/seed.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.exporter.conftest import ExporterProcess
from tests.support.kube import KubeTestClient
from tests.support.prometheus import PROMETHEUS, query, running_prometheus
from tests.support.seed import create_jobset_tree, lws_chain

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian's prometheus package)"),
]

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "wmap-rules.yaml"
Factory = Callable[..., ExporterProcess]


def _alert_expr(name: str) -> str:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    (expr,) = [r["expr"] for g in groups for r in g["rules"] if r.get("alert") == name]
    return str(expr)


def test_honor_labels_keeps_the_join_keys(
    exporter_factory: Factory, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    _, js_pods = create_jobset_tree(kube, "train", namespace, (("leader", 1), ("workers", 2)))
    _, lws_pods = lws_chain(kube, "llm", namespace, replicas=1, size=2)
    pods = {p["metadata"]["name"] for p in js_pods + lws_pods}
    exporter = exporter_factory("-n", namespace)
    exporter.wait_ready(timeout=180)  # lists every kind of the catalog first: slow on a loaded machine
    exporter.wait_for(
        lambda e: {s.labels["pod"] for s in e.find("wmap_pod_workload_info", namespace=namespace)} == pods,
        what="an info series per seeded pod",
    )
    target = exporter.url.removeprefix("http://")

    # the target labels a ServiceMonitor (kubernetes_sd with the operator's relabelling) gives
    # every series scraped from the exporter's pod
    pod_target = {"namespace": "wmap-system", "pod": "wmap-exporter-7d9c-x2k4q", "container": "exporter"}

    def job(name: str, honor: bool) -> dict[str, object]:
        return {
            "job_name": name,
            "honor_labels": honor,
            "scrape_interval": "1s",
            "static_configs": [{"targets": [target], "labels": pod_target}],
        }

    config = {"scrape_configs": [job("wmap", True), job("wmap-renamed", False)]}
    # both jobs scraped (each on its own 1 s schedule): the first alone raced the second in CI
    ready = (
        f'count(wmap_pod_workload_info{{job="wmap",namespace="{namespace}"}}) == {len(pods)} and '
        f'count(wmap_pod_workload_info{{job="wmap-renamed",exported_namespace="{namespace}"}}) == {len(pods)}'
    )
    with running_prometheus(tmp_path, config, ready) as url:
        honored = query(url, f'wmap_pod_workload_info{{job="wmap",namespace="{namespace}"}}')
        rows = {(s["metric"]["pod"], s["metric"].get("instance")) for s in honored}
        want = {(p["metadata"]["name"], None) for p in lws_pods}  # no instance, not the target's
        want |= {(p["metadata"]["name"], p["metadata"]["name"].split("-")[1]) for p in js_pods}
        assert rows == want
        assert all(s["metric"]["workload_name"] in ("train", "llm") for s in honored)
        assert target not in {s["metric"].get("instance") for s in honored}
        assert {s["metric"]["container"] for s in honored} == {"exporter"}  # absent: the target's
        renamed = query(url, f'wmap_pod_workload_info{{job="wmap-renamed",exported_namespace="{namespace}"}}')
        assert {s["metric"]["exported_pod"] for s in renamed} == pods
        assert {(s["metric"]["namespace"], s["metric"]["pod"]) for s in renamed} == {
            (pod_target["namespace"], pod_target["pod"])
        }
        fired = query(url, _alert_expr("WmapJoinLabelsRenamed"))
        assert {(s["metric"]["job"], s["metric"]["metric"]) for s in fired} == {
            ("wmap-renamed", "wmap_pod_workload_info")
        }
