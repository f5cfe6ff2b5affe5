"""fetch_costs (workload_map.cost) against a fake Prometheus on loopback that plays the cost
recording rules (tests/support/fake_prometheus.py RuleSeries): the queries a listing and a
workload page run, the values they give each workload, and failures as warnings, never errors."""

from __future__ import annotations

import math

import pytest

from tests.support.fake_prometheus import (
    TRAIN_MEASURES,
    FakePrometheus,
    RuleSeries,
    error,
    jobset_labels,
    success,
)
from workload_map.cost import PrometheusSettings, WorkloadRef, fetch_costs, parse_window, selector
from workload_map.errors import PrometheusError

TRAIN = jobset_labels("ml", "train")
SMALL = jobset_labels("ml", "small")
WEB = {"namespace": "ml", "workload_group": "apps", "workload_kind": "Deployment", "workload_name": "web"}
POD = {"namespace": "ml", "workload_kind": "Pod", "workload_name": "debug"}  # core group: no label
TRAIN_REF = WorkloadRef("ml", "jobset.x-k8s.io", "JobSet", "train")
SMALL_REF = WorkloadRef("ml", "jobset.x-k8s.io", "JobSet", "small")
WEB_REF = WorkloadRef("ml", "apps", "Deployment", "web")
POD_REF = WorkloadRef("ml", "", "Pod", "debug")


def rules() -> RuleSeries:
    r = RuleSeries()
    r.add(TRAIN, **TRAIN_MEASURES)
    r.add(SMALL, cost=1.5, costPerHour={"cpu": 0.0625})  # a CPU-only workload: no GPU series
    return r


def test_listing_runs_one_query_per_measure() -> None:
    with FakePrometheus(rules().answer) as prom:
        report = fetch_costs(PrometheusSettings(prom.url, window="7d"), [TRAIN_REF, SMALL_REF])
    assert report.warnings == []
    sel = '{namespace="ml",workload_group="jobset.x-k8s.io",workload_kind="JobSet"}'
    by = "namespace, workload_group, workload_kind, workload_name"
    assert sorted(q["query"] for q in prom.queries) == sorted(
        [
            f"sum by ({by}) (sum_over_time(workload:wmap_gpus_allocated:sum{sel}[7d:7m])) * 7 / 60",
            f"sum by ({by}) (sum_over_time(workload:wmap_cost_per_hour:sum{sel}[7d:7m])) * 7 / 60",
            f"sum by ({by}, resource) (workload:wmap_cost_per_hour:sum{sel})",
        ]
    )
    train = report.costs[TRAIN_REF]
    assert (train.gpu_hours, train.cost, train.cost_per_hour) == (72.0, 190.5, 8.25)
    assert train.by_resource == (("cpu", 0.5), ("gpu", 7.5), ("memory", 0.25))
    assert train.window == "7d" and train.prometheus == prom.url and train.error is None
    # each row carries the listing's queries narrowed to it
    assert [q.name for q in train.queries] == ["gpuHours", "cost", "costPerHour"]
    assert 'workload_name="train"}[7d:7m]' in train.queries[0].query
    small = report.costs[SMALL_REF]
    assert small.gpu_hours == 0.0 and small.cost == 1.5  # cost series, no GPU series: no GPUs held


def test_workload_page_runs_every_measure_for_one_workload() -> None:
    with FakePrometheus(rules().answer) as prom:
        report = fetch_costs(PrometheusSettings(prom.url), [TRAIN_REF], detail=True)
    cost = report.costs[TRAIN_REF]
    asked = sorted(q["query"] for q in prom.queries)
    assert asked == sorted(q.query for q in cost.queries)  # the queries shown are the ones run
    assert all('workload_name="train"' in q for q in asked) and len(asked) == 7
    assert "[24h:1m])) / 60" in cost.queries[0].query
    assert (cost.gpus_allocated, cost.idle_gpu_cost_per_hour, cost.gpu_utilization) == (3, 1.25, 62.5)
    assert [(c.component, c.instance, c.cost_per_hour) for c in cost.components] == [
        ("replicatedjob", "leader", 2.75),
        ("replicatedjob", "workers", 5.5),
    ]
    d = cost.to_dict()
    assert d["costPerHourByResource"] == {"cpu": 0.5, "gpu": 7.5, "memory": 0.25}
    assert d["queries"][0] == {"name": "gpuHours", "query": cost.queries[0].query}


def test_mixed_listing_and_core_group() -> None:
    r = rules()
    r.add(WEB, cost=3.0, costPerHour={"cpu": 0.125})
    r.add(POD, cost=0.5, costPerHour={"cpu": 0.03125})
    with FakePrometheus(r.answer) as prom:
        report = fetch_costs(PrometheusSettings(prom.url), [TRAIN_REF, WEB_REF, POD_REF])
    # three kinds: only the namespace narrows the listing's queries
    assert all('{namespace="ml"}' in q["query"] for q in prom.queries)
    assert report.costs[WEB_REF].cost == 3.0 and report.costs[TRAIN_REF].cost == 190.5
    assert 'workload_group="apps"' in report.costs[WEB_REF].queries[0].query
    # a core kind: the exporter's empty workload_group is no label; ="" matches that
    assert report.costs[POD_REF].cost == 0.5
    assert 'workload_group="",workload_kind="Pod"' in report.costs[POD_REF].queries[0].query


def test_one_measure_failing_leaves_the_others() -> None:
    r = rules()

    def answer(query: str) -> object:
        if "sum_over_time(workload:wmap_gpus_allocated:sum" in query:
            return error(503, "timeout", "query timed out in expression evaluation")
        return r.answer(query)

    with FakePrometheus(answer) as prom:  # type: ignore[arg-type]
        report = fetch_costs(PrometheusSettings(prom.url), [TRAIN_REF])
    cost = report.costs[TRAIN_REF]
    assert cost.gpu_hours is None and cost.cost == 190.5 and cost.error is None
    assert report.warnings == [
        f"GPU-hours and cost not shown: Prometheus at {prom.url} refused the query: timeout: "
        "query timed out in expression evaluation"
    ]


def test_prometheus_down_is_a_warning_and_unknown_costs() -> None:
    with FakePrometheus(rules().answer, delay=3) as prom:
        report = fetch_costs(PrometheusSettings(prom.url, timeout=0.3), [TRAIN_REF, SMALL_REF])
    assert report.warnings == [
        f"GPU-hours and cost not shown: Prometheus at {prom.url} did not answer within 0.3s"
    ]
    for cost in report.costs.values():
        assert cost.error == f"Prometheus at {prom.url} did not answer within 0.3s"
        assert cost.cost is None and cost.gpu_hours is None and cost.queries


def test_no_data_is_diagnosed_once() -> None:
    empty = RuleSeries()
    with FakePrometheus(empty.answer) as prom:
        report = fetch_costs(PrometheusSettings(prom.url), [TRAIN_REF])
    (hint,) = report.warnings
    assert hint.startswith(f"no cost data: Prometheus at {prom.url} has no workload:wmap_cost_per_hour:sum")
    assert "deploy/prometheus/wmap-rules.yaml" in hint and "container_cpu_allocation" in hint
    assert report.costs[TRAIN_REF].error is None and not report.costs[TRAIN_REF].found
    # data for other workloads, none for this one: nothing to diagnose
    with FakePrometheus(rules().answer) as prom:
        report = fetch_costs(
            PrometheusSettings(prom.url), [WorkloadRef("ml", "jobset.x-k8s.io", "JobSet", "new")]
        )
    assert (
        report.warnings == []
        and report.costs[WorkloadRef("ml", "jobset.x-k8s.io", "JobSet", "new")].cost is None
    )


def test_prometheus_warnings_are_passed_on_and_nan_is_unknown() -> None:
    def answer(query: str) -> object:
        return success(
            [{"metric": TRAIN, "value": [1, "NaN"]}], warnings=["PromQL info: metric might not be a counter"]
        )

    with FakePrometheus(answer) as prom:  # type: ignore[arg-type]
        report = fetch_costs(PrometheusSettings(prom.url), [TRAIN_REF])
    assert f"Prometheus at {prom.url} warns: PromQL info: metric might not be a counter" in report.warnings
    cost = report.costs[TRAIN_REF]
    assert cost.cost is not None and math.isnan(cost.cost) and cost.to_dict()["cost"] is None


def test_selector_escapes_label_values() -> None:
    assert (
        selector("ml", "", "Job", 'a"b\\c\nd')
        == '{namespace="ml",workload_group="",workload_kind="Job",workload_name="a\\"b\\\\c\\nd"}'
    )
    assert selector(None, None, None, None) == "{}"


@pytest.mark.parametrize("text", ["", "24", "1x", "-1h", "1h 2m", "59s", "91d", "1h" * 20])
def test_bad_windows(text: str) -> None:
    with pytest.raises(PrometheusError, match="cost window"):
        parse_window(text)


def test_windows() -> None:
    assert [parse_window(w) for w in ("1m", "90m", "1h30m", "7d", "2w", "90d")] == [
        "1m",
        "90m",
        "1h30m",
        "7d",
        "2w",
        "90d",
    ]
