"""Cost per logical workload, read from Prometheus: GPU-hours and cost over a window, cost per
hour now (per resource and per component), idle GPU cost and GPU utilisation, each with the
PromQL that gave it. The numbers come from the recording rules of
``deploy/prometheus/wmap-rules.yaml`` (OpenCost's allocation series and DCGM's utilisation joined
to ``wmap_pod_workload_info``; docs/metrics.md). The HTTP client is bounded like the Kubernetes
client and every failure is a :class:`~workload_map.errors.PrometheusError`, which
:func:`fetch_costs` turns into warnings."""

from workload_map.cost._client import DEFAULT_TIMEOUT, PrometheusClient, Sample, display_url
from workload_map.cost._model import ComponentCost, CostQuery, WorkloadCost, WorkloadRef
from workload_map.cost._queries import RULES, CostReport, fetch_costs, selector
from workload_map.cost._settings import (
    DEFAULT_WINDOW,
    PrometheusSettings,
    parse_duration,
    parse_timeout,
    parse_window,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "DEFAULT_WINDOW",
    "RULES",
    "ComponentCost",
    "CostQuery",
    "CostReport",
    "PrometheusClient",
    "PrometheusSettings",
    "Sample",
    "WorkloadCost",
    "WorkloadRef",
    "display_url",
    "fetch_costs",
    "parse_duration",
    "parse_timeout",
    "parse_window",
    "selector",
]
