"""The PromQL behind a workload's cost and how its answers become :class:`WorkloadCost` values.

The queries read the recording rules of ``deploy/prometheus/wmap-rules.yaml`` (group
``wmap.cost``), the one place where OpenCost's and DCGM's series are joined to workloads; here
they are only selected and summed over a window. A listing (``get``) runs one query per measure
for all its rows and gives each row the same query narrowed to it; ``describe`` runs the narrowed
queries themselves. Queries run in parallel under one deadline; one failing leaves its number
unknown with a warning, never an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from workload_map import messages
from workload_map.cost._client import PrometheusClient, Sample
from workload_map.cost._model import ComponentCost, CostQuery, WorkloadCost, WorkloadRef
from workload_map.cost._settings import PrometheusSettings, parse_duration
from workload_map.errors import PrometheusError

__all__ = ["RULES", "CostReport", "fetch_costs", "selector"]

BY = "namespace, workload_group, workload_kind, workload_name"

#: The recording rules read (name -> rule); a missing one is diagnosed once.
RULES = {
    "cost": "workload:wmap_cost_per_hour:sum",
    "gpus": "workload:wmap_gpus_allocated:sum",
    "idle": "workload:wmap_idle_gpu_cost_per_hour:sum",
    "utilization": "workload:wmap_gpu_utilization:avg",
    "components": "workload_component:wmap_cost_per_hour:sum",
}
#: Queries in flight at once.
PARALLEL = 4


def _quote(value: str) -> str:
    """A PromQL string literal (Go's escapes for backslash, quote and line breaks)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def selector(namespace: str | None, group: str | None, kind: str | None, name: str | None) -> str:
    """``{namespace="ml",workload_group="jobset.x-k8s.io",...}`` for the parts given."""
    parts = [
        f"{label}={_quote(value)}"
        for label, value in (
            ("namespace", namespace),
            ("workload_group", group),
            ("workload_kind", kind),
            ("workload_name", name),
        )
        if value is not None
    ]
    return "{" + ",".join(parts) + "}"


def _over_window(rule: str, sel: str, window: str) -> str:
    """Sum over ``window`` of a per-hour rate sampled each step: GPU-hours from GPUs held,
    cost from cost per hour. One-minute steps up to a day, then 1440 steps (whole minutes)."""
    minutes = max(1, math.ceil(parse_duration(window, "cost window") / 86400))
    scale = "/ 60" if minutes == 1 else f"* {minutes} / 60"
    return f"sum by ({BY}) (sum_over_time({rule}{sel}[{window}:{minutes}m])) {scale}"


@dataclass(frozen=True)
class _Measure:
    """One query: its name in the output, how to build it for a selector, and the extra
    labels its series carry besides the workload's."""

    name: str
    build: Callable[[str, str], str]
    extra: tuple[str, ...] = ()


_GPU_HOURS = _Measure("gpuHours", lambda s, w: _over_window(RULES["gpus"], s, w))
_COST = _Measure("cost", lambda s, w: _over_window(RULES["cost"], s, w))
_PER_HOUR = _Measure(
    "costPerHour", lambda s, w: f"sum by ({BY}, resource) ({RULES['cost']}{s})", ("resource",)
)
_GPUS = _Measure("gpusAllocated", lambda s, w: f"sum by ({BY}) ({RULES['gpus']}{s})")
_IDLE = _Measure("idleGpuCostPerHour", lambda s, w: f"sum by ({BY}) ({RULES['idle']}{s})")
_UTIL = _Measure("gpuUtilization", lambda s, w: f"avg by ({BY}) ({RULES['utilization']}{s})")
_COMPONENTS = _Measure(
    "components",
    lambda s, w: f"sum by ({BY}, component, instance) ({RULES['components']}{s})",
    ("component", "instance"),
)

#: What a listing shows per row, and what describe and the web UI show of one workload.
LIST_MEASURES = (_GPU_HOURS, _COST, _PER_HOUR)
DETAIL_MEASURES = (_GPU_HOURS, _COST, _PER_HOUR, _GPUS, _IDLE, _UTIL, _COMPONENTS)

_Key = tuple[str, str, str, str]
#: workload -> [(extra label values, value)]
_Values = dict[_Key, list[tuple[tuple[str, ...], float]]]


@dataclass
class CostReport:
    """The cost of each asked-for workload and the warnings to show once."""

    costs: dict[WorkloadRef, WorkloadCost] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _key(labels: Mapping[str, str]) -> _Key:
    return (
        labels.get("namespace", ""),
        labels.get("workload_group", ""),
        labels.get("workload_kind", ""),
        labels.get("workload_name", ""),
    )


def _common(values: Iterable[str]) -> str | None:
    found = set(values)
    return found.pop() if len(found) == 1 else None


def fetch_costs(
    settings: PrometheusSettings,
    refs: Sequence[WorkloadRef],
    *,
    detail: bool = False,
    client: PrometheusClient | None = None,
) -> CostReport:
    """The cost of ``refs`` (one query per measure for all of them; ``detail``: every measure,
    for one workload's page). Never raises for Prometheus' sake: failures become warnings and
    ``error`` on the costs."""
    report = CostReport()
    if not refs:
        return report
    own = client is None
    prom = client or settings.client()
    try:
        _fetch(prom, settings, refs, DETAIL_MEASURES if detail else LIST_MEASURES, report)
    finally:
        if own:
            prom.close()
    return report


def _fetch(
    prom: PrometheusClient,
    settings: PrometheusSettings,
    refs: Sequence[WorkloadRef],
    measures: Sequence[_Measure],
    report: CostReport,
) -> None:
    one = refs[0] if len(refs) == 1 else None
    sel = selector(
        _common(r.namespace for r in refs),
        _common(r.group for r in refs),
        _common(r.kind for r in refs),
        one.name if one is not None else None,
    )
    window = settings.window
    deadline = prom._clock() + settings.timeout
    values: dict[str, _Values] = {}
    failures: list[str] = []

    def run(m: _Measure) -> tuple[_Measure, list[Sample] | PrometheusError, list[str]]:
        try:
            samples, warnings = prom.query(m.build(sel, window), deadline=deadline)
        except PrometheusError as exc:
            return m, exc, []
        return m, samples, warnings

    with ThreadPoolExecutor(max_workers=min(PARALLEL, len(measures)), thread_name_prefix="wmap-cost") as pool:
        for m, result, warnings in pool.map(run, measures):
            report.warnings.extend(messages.prometheus_warning(settings.shown, w) for w in warnings)
            if isinstance(result, PrometheusError):
                failures.append(str(result))
                continue
            by_key: _Values = {}
            for s in result:
                by_key.setdefault(_key(s.labels), []).append(
                    (tuple(s.labels.get(x, "") for x in m.extra), s.value)
                )
            values[m.name] = by_key
    error = None
    if failures:
        error = failures[0]
        report.warnings.append(messages.cost_not_shown(sorted(set(failures))))
    for ref in refs:
        report.costs[ref] = _cost_of(ref, settings, measures, values, error)
    if not failures and not any(c.found for c in report.costs.values()):
        hint = _diagnose(prom, deadline)
        if hint:
            report.warnings.append(hint)


def _cost_of(
    ref: WorkloadRef,
    settings: PrometheusSettings,
    measures: Sequence[_Measure],
    values: dict[str, _Values],
    error: str | None,
) -> WorkloadCost:
    key = (ref.namespace, ref.group, ref.kind, ref.name)
    own_sel = selector(ref.namespace, ref.group, ref.kind, ref.name)
    queries = tuple(CostQuery(m.name, m.build(own_sel, settings.window)) for m in measures)

    def rows(name: str) -> list[tuple[tuple[str, ...], float]] | None:
        """The workload's series of a measure; ``None`` when the measure failed or was not run."""
        if name not in values:
            return None
        return values[name].get(key, [])

    def total(name: str) -> float | None:
        found = rows(name)
        return sum(v for _, v in found) if found else None

    by_resource = tuple(sorted((extra[0], v) for extra, v in rows("costPerHour") or []))
    found = bool(by_resource) or total("cost") is not None
    gpu_hours = total("gpuHours")
    gpus = total("gpusAllocated")
    if found:  # cost series but no GPU series: the workload holds no GPUs
        gpu_hours = 0.0 if gpu_hours is None and rows("gpuHours") is not None else gpu_hours
        gpus = 0.0 if gpus is None and rows("gpusAllocated") is not None else gpus
    return WorkloadCost(
        prometheus=settings.shown,
        window=settings.window,
        gpu_hours=gpu_hours,
        cost=total("cost"),
        cost_per_hour=sum(v for _, v in by_resource) if by_resource else None,
        by_resource=by_resource,
        gpus_allocated=gpus,
        idle_gpu_cost_per_hour=total("idleGpuCostPerHour"),
        gpu_utilization=total("gpuUtilization"),
        components=tuple(
            ComponentCost(extra[0], extra[1], v) for extra, v in sorted(rows("components") or [])
        ),
        queries=queries,
        error=error if not found else None,
    )


def _diagnose(prom: PrometheusClient, deadline: float) -> str | None:
    """Why no workload had any cost series: the rules not installed, OpenCost or the exporter
    not scraped (one query counting each); ``None`` when all are there (no data for these
    workloads yet)."""
    names = (RULES["cost"], "container_cpu_allocation", "wmap_pod_workload_info")
    pattern = "|".join(names)
    try:
        samples, _ = prom.query(f'count by (__name__) ({{__name__=~"{pattern}"}})', deadline=deadline)
    except PrometheusError:
        return None
    present = {s.labels.get("__name__", "") for s in samples}
    missing = [n for n in names if n not in present]
    return messages.cost_series_missing(prom.shown, missing) if missing else None
