"""What ``get``, ``describe`` and the web UI show of a workload's cost: the numbers read from the
recording rules of ``deploy/prometheus/wmap-rules.yaml`` and the PromQL that read them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["ComponentCost", "CostQuery", "WorkloadCost", "WorkloadRef"]


@dataclass(frozen=True, order=True)
class WorkloadRef:
    """A workload as the rules label it: ``namespace``, ``workload_group`` (``""`` for core),
    ``workload_kind``, ``workload_name``."""

    namespace: str
    group: str
    kind: str
    name: str


@dataclass(frozen=True)
class CostQuery:
    """One PromQL query behind a number (paste it into Prometheus to see the same)."""

    name: str
    query: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "query": self.query}


@dataclass(frozen=True)
class ComponentCost:
    """Cost per hour of one component row (``instance`` set for multi-instance components)."""

    component: str
    instance: str
    cost_per_hour: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "instance": self.instance,
            "costPerHour": _json(self.cost_per_hour),
        }


@dataclass(frozen=True)
class WorkloadCost:
    """A workload's cost as Prometheus knows it. Amounts are in the currency of OpenCost's prices
    (USD unless configured otherwise); ``window`` is the Prometheus duration that ``gpu_hours``
    and ``cost`` cover, ending now. ``None``: not known (``error`` says why when Prometheus
    failed; otherwise no series exist for the workload)."""

    prometheus: str
    window: str
    gpu_hours: float | None = None
    cost: float | None = None
    cost_per_hour: float | None = None
    by_resource: tuple[tuple[str, float], ...] = ()
    gpus_allocated: float | None = None
    idle_gpu_cost_per_hour: float | None = None
    gpu_utilization: float | None = None
    components: tuple[ComponentCost, ...] = ()
    queries: tuple[CostQuery, ...] = ()
    error: str | None = None

    @property
    def found(self) -> bool:
        """Whether Prometheus had any cost series for the workload."""
        return self.cost_per_hour is not None or self.cost is not None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "prometheus": self.prometheus,
            "window": self.window,
            "gpuHours": _json(self.gpu_hours),
            "cost": _json(self.cost),
            "costPerHour": _json(self.cost_per_hour),
            "costPerHourByResource": {r: _json(v) for r, v in self.by_resource},
            "gpusAllocated": _json(self.gpus_allocated),
            "idleGpuCostPerHour": _json(self.idle_gpu_cost_per_hour),
            "gpuUtilizationPercent": _json(self.gpu_utilization),
            "components": [c.to_dict() for c in self.components],
            "queries": [q.to_dict() for q in self.queries],
        }
        if self.error is not None:
            out["error"] = self.error
        return out


def _json(value: float | None) -> float | None:
    """JSON has no NaN or infinity: those are unknown values."""
    return value if value is not None and math.isfinite(value) else None
