"""The cost queries against a real Prometheus server (Debian's prometheus package, the same as
promtool): the rules test's synthetic OpenCost, DCGM and exporter series
(deploy/prometheus/wmap-rules.test.yaml, namespace ai) written into a tiny TSDB with ``promtool
tsdb create-blocks-from openmetrics`` for the last two hours, and the server evaluating the
shipped rules (deploy/prometheus/wmap-rules.yaml) on them every second. Two hours of history of
the two rules the windows sum over (GPUs allocated, cost per hour) are written beside them, as
if the rules had been running: the server evaluates rules from its start only.

What this adds to the fake server's tests: the real API's answers and errors, the ``timeout``
parameter in the form Prometheus parses, subqueries over real storage, an empty
``workload_group`` matching the label's absence, and the rules evaluated by the server itself."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support.prometheus import PROMETHEUS, PROMTOOL, running_prometheus
from workload_map.cost import PrometheusClient, PrometheusSettings, WorkloadRef, fetch_costs
from workload_map.errors import PrometheusError

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "wmap-rules.yaml"
RULES_TESTS = ROOT / "deploy" / "prometheus" / "wmap-rules.test.yaml"

pytestmark = pytest.mark.skipif(
    PROMETHEUS is None or PROMTOOL is None,
    reason="prometheus/promtool not installed (scripts/bootstrap.sh installs Debian's prometheus)",
)

HISTORY = 2 * 3600
STEP = 60
TRAIN = WorkloadRef("ai", "jobset.x-k8s.io", "JobSet", "train")
LLM = WorkloadRef("ai", "leaderworkerset.x-k8s.io", "LeaderWorkerSet", "llm")
TUNE = WorkloadRef("ai", "ray.io", "RayJob", "tune")
#: What the rules give per workload (the promtool test's expected samples): cost per hour by
#: resource, and GPUs allocated.
PER_HOUR = {
    TRAIN: {"cpu": 1.03125, "gpu": 9.0, "memory": 0.50390625},
    LLM: {"cpu": 3.0, "gpu": 24.0, "memory": 3.0},
    TUNE: {"cpu": 0.578125, "gpu": 2.5, "memory": 0.28515625},
}
GPUS = {TRAIN: 3.0, LLM: 6.0, TUNE: 1.0}


def _cost_inputs() -> list[tuple[str, float]]:
    """(series, constant value) of the rules test's cost group (the one with OpenCost series)."""
    tests = yaml.safe_load(RULES_TESTS.read_text())["tests"]
    (group,) = [t for t in tests if any("container_cpu_allocation" in s["series"] for s in t["input_series"])]
    out = []
    for s in group["input_series"]:
        m = re.fullmatch(r"([0-9.]+)x\d+", s["values"])
        assert m, s["values"]
        out.append((s["series"], float(m.group(1))))
    return out


def _labels(ref: WorkloadRef) -> str:
    group = f'workload_group="{ref.group}",' if ref.group else ""
    return f'namespace="{ref.namespace}",{group}workload_kind="{ref.kind}",workload_name="{ref.name}"'


def _openmetrics(now: int) -> str:
    """The inputs and the rules' history, per family, each series' samples in time order."""
    families: dict[str, list[tuple[str, float]]] = {}
    for series, value in _cost_inputs():
        families.setdefault(series.split("{", 1)[0], []).append((series, value))
    for ref, gpus in GPUS.items():
        families.setdefault("workload:wmap_gpus_allocated:sum", []).append(
            (f"workload:wmap_gpus_allocated:sum{{{_labels(ref)}}}", gpus)
        )
        for resource, v in PER_HOUR[ref].items():
            families.setdefault("workload:wmap_cost_per_hour:sum", []).append(
                (f'workload:wmap_cost_per_hour:sum{{{_labels(ref)},resource="{resource}"}}', v)
            )
    lines = []
    times = range(now - HISTORY, now - 30, STEP)
    for name, members in families.items():
        lines.append(f"# TYPE {name} gauge")
        for series, value in members:
            lines += [f"{series} {value!r} {t}" for t in times]
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    assert PROMTOOL is not None
    d = tmp_path_factory.mktemp("prometheus")
    data = d / "data.om"
    data.write_text(_openmetrics(int(time.time())))
    made = subprocess.run(
        [PROMTOOL, "tsdb", "create-blocks-from", "openmetrics", str(data), str(d / "tsdb")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    config = {"global": {"evaluation_interval": "1s"}, "rule_files": [str(RULES)]}
    # ready once both rule groups were evaluated on the stored inputs: the groups run on their
    # own timers, so the cost group can be ready a second before the utilization one
    ready = (
        "count(workload:wmap_idle_gpu_cost_per_hour:sum) and on() count(workload:wmap_gpu_utilization:avg)"
    )
    with running_prometheus(d, config, ready) as url:
        yield url


def test_workload_costs_from_a_real_server(prometheus: str) -> None:
    report = fetch_costs(PrometheusSettings(prometheus, window="1h"), [TRAIN, LLM, TUNE], detail=False)
    assert report.warnings == []
    for ref in (TRAIN, LLM, TUNE):
        cost = report.costs[ref]
        # the rules evaluated by the server now, on the stored OpenCost and exporter series
        assert dict(cost.by_resource) == PER_HOUR[ref], ref
        # an hour of a constant: 60 one-minute steps (61 where the range includes its start)
        assert GPUS[ref] <= cost.gpu_hours <= GPUS[ref] * 61 / 60, (ref, cost.gpu_hours)
        hourly = sum(PER_HOUR[ref].values())
        assert hourly <= cost.cost <= hourly * 61 / 60, (ref, cost.cost)


def test_one_workload_in_detail(prometheus: str) -> None:
    report = fetch_costs(PrometheusSettings(prometheus, window="2h"), [TUNE], detail=True)
    assert report.warnings == []
    cost = report.costs[TUNE]
    assert (cost.gpus_allocated, cost.idle_gpu_cost_per_hour, cost.gpu_utilization) == (1.0, 2.5, 0.0)
    assert [(c.component, c.instance, c.cost_per_hour) for c in cost.components] == [
        ("head", "", 0.09375),
        ("submitter", "", 0.01953125),
        ("worker", "gpu", 3.25),
    ]


def test_real_errors_and_bounds(prometheus: str) -> None:
    with PrometheusClient(prometheus, timeout=5) as client:
        with pytest.raises(PrometheusError, match=r"refused the query: bad_data: .*parse error"):
            client.query("sum by (")
        samples, _ = client.query("count(wmap_pod_workload_info)")
        assert [s.value for s in samples] == [10.0]
    with (
        PrometheusClient(prometheus, timeout=5, max_series=5) as client,
        pytest.raises(PrometheusError, match="returned 10 series, more than 5"),
    ):
        client.query("wmap_pod_workload_info")
    # no data for a workload the rules never saw: no warning, unknown numbers
    ghost = WorkloadRef("ai", "", "Pod", "ghost")
    report = fetch_costs(PrometheusSettings(prometheus), [ghost])
    assert report.warnings == [] and report.costs[ghost].cost is None and report.costs[ghost].error is None
