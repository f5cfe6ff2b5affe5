"""``wmap get`` and ``describe`` with a Prometheus (--prometheus, $WMAP_PROMETHEUS_URL, the config
file) on the real test API server: GPU-hours and cost columns, describe's Cost section with the
queries it ran, -o json carrying them; a Prometheus that is down, slow or empty gives a warning
and <unknown>/<none> cells, never a failed command. The Prometheus is a fake on loopback that
answers as Prometheus's HTTP API does, playing the cost recording rules
(tests/support/fake_prometheus.py)."""

from __future__ import annotations

import socket
from pathlib import Path

import orjson
import pytest

from tests.cli.helpers import RUNNING_JOBSET_STATUS, jobset, wmap
from tests.support.cluster import TestCluster
from tests.support.fake_prometheus import TRAIN_MEASURES, FakePrometheus, RuleSeries, jobset_labels
from tests.support.kube import KubeTestClient
from tests.views.schema_check import check

pytestmark = pytest.mark.cluster


@pytest.fixture
def kc(cluster: TestCluster, karta_crd: str, namespace: str, tmp_path: Path) -> str:
    return str(cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin", namespace=namespace))


@pytest.fixture
def seeded(kube: KubeTestClient, namespace: str) -> str:
    for name in ("train", "small"):
        kube.set_status(kube.create(jobset(name, namespace)), RUNNING_JOBSET_STATUS)
    return namespace


def rules(namespace: str) -> RuleSeries:
    """The recording rules' series for the JobSet train (3 GPUs) and small (no GPU series)."""
    r = RuleSeries()
    r.add(jobset_labels(namespace, "train"), **TRAIN_MEASURES)
    r.add(jobset_labels(namespace, "small"), cost=1.5, costPerHour={"cpu": 0.0625})
    return r


def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


def cells(out: str) -> dict[str, dict[str, str]]:
    lines = out.splitlines()
    header = lines[0].split()
    return {row.split()[0]: dict(zip(header, row.split(), strict=True)) for row in lines[1:]}


def test_get_shows_gpu_hours_and_cost(seeded: str, kc: str) -> None:
    with FakePrometheus(rules(seeded).answer) as prom:
        rc, out, err = wmap("get", "jobsets", "--kubeconfig", kc, "--prometheus", prom.url)
        assert rc == 0 and err == "", err
        table = cells(out)
        assert table["train"]["GPU-HOURS(24h)"] == "72.0" and table["train"]["COST(24h)"] == "190.50"
        assert table["small"]["GPU-HOURS(24h)"] == "0.0" and table["small"]["COST(24h)"] == "1.50"
        # one query per measure for the whole listing, narrowed to the namespace and the type
        assert len(prom.queries) == 3
        assert all(
            f'{{namespace="{seeded}",workload_group="jobset.x-k8s.io",workload_kind="JobSet"}}' in q["query"]
            for q in prom.queries
        )

        rc, out, _ = wmap(
            "get",
            "jobsets",
            "--kubeconfig",
            kc,
            "--prometheus",
            prom.url,
            "-o",
            "wide",
            "--cost-window",
            "7d",
        )
        assert rc == 0
        table = cells(out)
        assert table["train"]["COST/H"] == "8.25" and "GPU-HOURS(7d)" in table["train"]
        assert any("[7d:7m]" in q["query"] for q in prom.queries[3:])

        rc, out, _ = wmap("get", "jobsets", "--kubeconfig", kc, "--prometheus", prom.url, "-o", "json")
        assert rc == 0
        doc = orjson.loads(out)
        check(doc, "view.v1.json")
        cost = {i["name"]: i["cost"] for i in doc["items"]}
        assert cost["train"]["gpuHours"] == 72.0 and cost["train"]["costPerHourByResource"]["gpu"] == 7.5
        assert cost["train"]["prometheus"] == prom.url and cost["train"]["window"] == "24h"
        assert [q["name"] for q in cost["train"]["queries"]] == ["gpuHours", "cost", "costPerHour"]
        assert all('workload_name="train"' in q["query"] for q in cost["train"]["queries"])

        # kubectl's output habits reach the cost too
        rc, out, _ = wmap(
            "get", "jobsets", "--kubeconfig", kc, "--prometheus", prom.url,
            "-o", "custom-columns=NAME:.name,GPUH:.cost.gpuHours", "--sort-by", ".cost.cost",
        )  # fmt: skip
        assert rc == 0 and out.split() == ["NAME", "GPUH", "small", "0.0", "train", "72.0"]


def test_describe_shows_cost_and_the_queries_it_ran(seeded: str, kc: str) -> None:
    with FakePrometheus(rules(seeded).answer) as prom:
        rc, out, err = wmap("describe", "jobset/train", "--kubeconfig", kc, "--prometheus", prom.url)
        assert rc == 0 and err == "", err
        asked = [q["query"] for q in prom.queries]
        section = out[out.index("Cost (last 24h") :]
        assert section.startswith(f"Cost (last 24h, Prometheus {prom.url}):\n")
        assert "  GPU-hours:  72.0   (3 GPUs allocated now)\n" in section
        assert "  Cost:       190.50   (now 8.25 per hour: cpu 0.50, gpu 7.50, memory 0.25)\n" in section
        assert "  Idle GPUs:  1.25 per hour   (GPU utilisation 62.5%)\n" in section
        assert "  replicatedjob   workers    5.50" in section
        shown = [
            ln.split(": ", 1)[1]
            for ln in section.split("  Queries:\n")[1].splitlines()
            if ln.startswith("    ")
        ]
        assert sorted(shown) == sorted(asked) and len(asked) == 7

        rc, out, _ = wmap(
            "describe", "jobset/train", "--kubeconfig", kc, "--prometheus", prom.url, "-o", "json"
        )
        assert rc == 0
        doc = orjson.loads(out)
        check(doc, "describe-view.v1.json")
        assert doc["cost"]["idleGpuCostPerHour"] == 1.25
        assert sorted(q["query"] for q in doc["cost"]["queries"]) == sorted(asked)
        assert doc["cost"]["components"][0] == {
            "component": "replicatedjob",
            "instance": "leader",
            "costPerHour": 2.75,
        }


def test_prometheus_down_is_a_warning(seeded: str, kc: str) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    rc, out, err = wmap("get", "jobsets", "--kubeconfig", kc, "--prometheus", url)
    assert rc == 0
    assert cells(out)["train"]["COST(24h)"] == "<unknown>"
    assert (
        err
        == f"warning: GPU-hours and cost not shown: cannot reach Prometheus at {url}: connection refused\n"
    )
    rc, out, err = wmap("describe", "jobset/train", "--kubeconfig", kc, "--prometheus", url)
    assert rc == 0 and "Resources:" in out
    assert f"  unknown: cannot reach Prometheus at {url}: connection refused\n" in out
    assert "warning: GPU-hours and cost not shown" in err


def test_slow_prometheus_is_cut_at_the_config_timeout(seeded: str, kc: str, tmp_path: Path) -> None:
    with FakePrometheus(rules(seeded).answer, delay=5) as prom:
        cfg = tmp_path / "config.yaml"
        cfg.write_text(f"prometheus:\n  url: {prom.url}\n  timeout: 500ms\n")
        rc, out, err = wmap("get", "jobsets", "--kubeconfig", kc, "--config", str(cfg))
    assert rc == 0 and cells(out)["train"]["GPU-HOURS(24h)"] == "<unknown>"
    assert (
        err == f"warning: GPU-hours and cost not shown: Prometheus at {prom.url} did not answer within 0.5s\n"
    )


def test_environment_and_turning_it_off(seeded: str, kc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakePrometheus(rules(seeded).answer) as prom:
        monkeypatch.setenv("WMAP_PROMETHEUS_URL", prom.url)
        monkeypatch.setenv("WMAP_COST_WINDOW", "90m")
        rc, out, _ = wmap("get", "jobsets", "--kubeconfig", kc)
        assert rc == 0 and cells(out)["train"]["COST(90m)"] == "190.50"
        rc, out, _ = wmap("get", "jobsets", "--kubeconfig", kc, "--prometheus", "")
        assert rc == 0 and "COST" not in out and len(prom.queries) == 3
        rc, out, _ = wmap("get", "jobsets", "--kubeconfig", kc, "-o", "name")
        assert rc == 0 and len(prom.queries) == 3  # names only: nothing priced


def test_no_cost_data_says_why(seeded: str, kc: str) -> None:
    with FakePrometheus(RuleSeries().answer) as prom:
        rc, out, err = wmap("get", "jobsets", "--kubeconfig", kc, "--prometheus", prom.url)
    assert rc == 0 and cells(out)["train"]["COST(24h)"] == "<none>"
    assert err.startswith(
        f"warning: no cost data: Prometheus at {prom.url} has no workload:wmap_cost_per_hour:sum"
    )


def test_bad_window_is_a_usage_error(seeded: str, kc: str) -> None:
    rc, _, err = wmap(
        "get", "jobsets", "--kubeconfig", kc, "--prometheus", "http://127.0.0.1:1", "--cost-window", "1y"
    )
    assert rc == 2 and 'error: --cost-window: invalid cost window "1y": between 1m and 90d' in err
