"""The shipped cost rules on the exporter's REAL output: a JobSet, a LeaderWorkerSet and a RayJob
seeded on the test API server as their controllers leave them (tests/support/seed.py, after
framework-shapes.md), and a pod a DaemonSet owns (no definition covers DaemonSets, so the
catalog's Pod definition makes it a workload of its own); the exporter (``-n`` that namespace)
scraped, its ``wmap_pod_workload_info`` lines as Prometheus stores them (empty labels dropped,
the ServiceMonitor's target labels added); OpenCost's allocation series written for every pod
from its spec (one series per container, as pkg/costmodel/metrics.go emits them), also for a pod
in a namespace the exporter does not watch; then ``promtool test rules`` runs
deploy/prometheus/wmap-rules.yaml on them. Expected: each workload is one series holding the cost
of the pods its seed created (the JobSet, not its Jobs; the LWS, not its StatefulSets; the
RayJob, not its RayCluster or submitter Job), the unwatched pod is the unclaimed share, and the
two add up to every pod's cost."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.exporter.conftest import ExporterProcess
from tests.support.kube import KubeTestClient
from tests.support.seed import create_jobset_tree, create_rayjob_tree, lws_chain

pytestmark = pytest.mark.cluster

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "wmap-rules.yaml"
PROMTOOL = shutil.which("promtool")
Factory = Callable[..., ExporterProcess]

#: Node prices per hour (binary fractions: sums are exact): CPU core, GiB, GPU.
PRICES = {"node-a": (0.0625, 0.0078125, 2.5), "node-b": (0.125, 0.015625, 4.0)}
UNITS = {"m": 0.001, "Gi": 1.0, "Mi": 1 / 1024}


def _quantity(text: str) -> float:
    for suffix, scale in UNITS.items():
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * scale
    return float(text)


def _series(name: str, labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items() if v != "")
    return f"{name}{{{inner}}}"


def _opencost(pod: dict[str, Any]) -> tuple[list[dict[str, str]], dict[str, float]]:
    """OpenCost's container_* series of a pod (request as allocation) and the pod's cost per
    resource at PRICES."""
    meta, spec = pod["metadata"], pod["spec"]
    node = spec["nodeName"]
    cpu_price, ram_price, gpu_price = PRICES[node]
    out: list[dict[str, str]] = []
    cost = {"cpu": 0.0, "memory": 0.0, "gpu": 0.0}
    for c in spec["containers"]:
        req = c.get("resources", {}).get("requests", {})
        base = {
            "namespace": meta["namespace"],
            "pod": meta["name"],
            "container": c["name"],
            "instance": node,
            "node": node,
            "uid": meta["uid"],
            "job": "opencost",
        }
        cpu, mem, gpus = (
            _quantity(req.get("cpu", "0")),
            _quantity(req.get("memory", "0")),
            float(req.get("nvidia.com/gpu", "0")),
        )
        out.append({"series": _series("container_cpu_allocation", base), "values": f"{cpu!r}x60"})
        out.append(
            {"series": _series("container_memory_allocation_bytes", base), "values": f"{mem * 2**30!r}x60"}
        )
        if gpus:
            out.append({"series": _series("container_gpu_allocation", base), "values": f"{gpus!r}x60"})
        cost["cpu"] += cpu * cpu_price
        cost["memory"] += mem * ram_price
        cost["gpu"] += gpus * gpu_price
    return out, cost


@pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed (Debian's prometheus package)")
def test_rules_on_the_exporters_real_output(
    exporter_factory: Factory, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    _, js_pods = create_jobset_tree(kube, "train", namespace, (("leader", 1), ("workers", 2)), gpus=2)
    _, lws_pods = lws_chain(kube, "llm", namespace, replicas=1, size=3, gpus=4, node="node-b")
    _, rj_pods = create_rayjob_tree(kube, "tune", namespace, workers=1, gpus=1)
    ds = kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "node-agent", "namespace": namespace},
            "spec": {
                "selector": {"matchLabels": {"app": "node-agent"}},
                "template": {
                    "metadata": {"labels": {"app": "node-agent"}},
                    "spec": {"containers": [{"name": "agent", "image": "registry.invalid/agent:1"}]},
                },
            },
        }
    )
    agent = kube.make_pod(
        "node-agent-x7k2p",
        namespace,
        owner=ds,
        cpu="250m",
        memory="512Mi",
        node="node-b",
        containers=("agent", "log"),
    )
    elsewhere = kube.create_namespace("wmap-unwatched")
    stray = kube.make_pod("stray", elsewhere, cpu="1", memory="1Gi", node="node-a")
    owned = {
        ("JobSet", "train"): js_pods,
        ("LeaderWorkerSet", "llm"): lws_pods,
        ("RayJob", "tune"): rj_pods,
        ("Pod", "node-agent-x7k2p"): [agent],
    }
    groups = {
        "JobSet": "jobset.x-k8s.io",
        "LeaderWorkerSet": "leaderworkerset.x-k8s.io",
        "RayJob": "ray.io",
        "Pod": "",  # the core group: no workload_group label
    }
    all_pods = [p for pods in owned.values() for p in pods] + [stray]

    exporter = exporter_factory("-n", namespace)
    exporter.wait_ready()
    wanted = sorted(p["metadata"]["name"] for p in all_pods if p is not stray)
    exp = exporter.wait_for(
        lambda e: (
            sorted(s.labels["pod"] for s in e.find("wmap_pod_workload_info", namespace=namespace)) == wanted
        ),
        what=f"an info series for each owned pod ({wanted})",
    )
    inputs: list[dict[str, str]] = []
    for s in exp.find("wmap_pod_workload_info", namespace=namespace):
        # as Prometheus stores it: empty labels dropped; the ServiceMonitor adds job and the
        # exporter's own container (the info series has no container label)
        inputs.append(
            {
                "series": _series(s.name, {**s.labels, "job": "wmap-exporter", "container": "exporter"}),
                "values": "1x60",
            }
        )
    pod_cost: dict[str, dict[str, float]] = {}
    for pod in all_pods:
        series, cost = _opencost(kube.get_obj(pod))
        inputs += series
        pod_cost[pod["metadata"]["name"]] = cost
    for node, (cpu, ram, gpu) in PRICES.items():
        labels = {
            "instance": node,
            "node": node,
            "instance_type": "x",
            "job": "opencost",
            "namespace": "opencost",
            "pod": "opencost-0",
        }
        for metric, value in (
            ("node_cpu_hourly_cost", cpu),
            ("node_ram_hourly_cost", ram),
            ("node_gpu_hourly_cost", gpu),
        ):
            inputs.append({"series": _series(metric, labels), "values": f"{value!r}x60"})

    expected = []
    for (kind, name), pods in owned.items():
        for resource in ("cpu", "memory", "gpu"):
            value = sum(pod_cost[p["metadata"]["name"]][resource] for p in pods)
            if resource == "gpu" and not value:
                continue
            labels = {
                "namespace": namespace,
                "workload_group": groups[kind],
                "workload_kind": kind,
                "workload_name": name,
                "resource": resource,
            }
            expected.append({"labels": _series("workload:wmap_cost_per_hour:sum", labels), "value": value})
    stray_cost = pod_cost[stray["metadata"]["name"]]
    total = sum(sum(c.values()) for c in pod_cost.values())
    sel = f'{{namespace=~"{namespace}|{elsewhere}"}}'
    test = {
        "rule_files": [str(RULES)],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": inputs,
                "promql_expr_test": [
                    {
                        "expr": f"workload:wmap_cost_per_hour:sum{sel}",
                        "eval_time": "10m",
                        "exp_samples": expected,
                    },
                    {
                        "expr": f"namespace:wmap_unclaimed_cost_per_hour:sum{sel}",
                        "eval_time": "10m",
                        "exp_samples": [
                            {
                                "labels": _series(
                                    "namespace:wmap_unclaimed_cost_per_hour:sum",
                                    {"namespace": elsewhere, "resource": r},
                                ),
                                "value": stray_cost[r],
                            }
                            for r in ("cpu", "memory")
                        ],
                    },
                    {
                        "expr": f"sum(workload:wmap_cost_per_hour:sum{sel})"
                        f" + sum(namespace:wmap_unclaimed_cost_per_hour:sum{sel})",
                        "eval_time": "10m",
                        "exp_samples": [{"value": total}],
                    },
                    {
                        "expr": f"sum(pod:wmap_cost_per_hour:sum{sel})",
                        "eval_time": "10m",
                        "exp_samples": [{"value": total}],
                    },
                ],
            }
        ],
    }
    path = tmp_path / "exporter-cost.test.yaml"
    path.write_text(yaml.safe_dump(test, sort_keys=False))
    assert PROMTOOL is not None
    done = subprocess.run([PROMTOOL, "test", "rules", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "SUCCESS" in done.stdout, done.stdout + done.stderr
    # the test above can fail: one workload's expected cost changed
    test["tests"][0]["promql_expr_test"][0]["exp_samples"][0]["value"] += 1  # type: ignore[index]
    path.write_text(yaml.safe_dump(test, sort_keys=False))
    done = subprocess.run([PROMTOOL, "test", "rules", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "FAILED" in done.stdout + done.stderr
