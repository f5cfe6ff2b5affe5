"""A workload's cost (workload_map.cost) as ``get`` columns and ``describe``'s Cost section.

Numbers: GPU-hours with one decimal, amounts with two (OpenCost's currency, no symbol). A number
Prometheus could not give is ``<unknown>`` (the query failed: a warning says why) or ``<none>``
(no series for the workload: its pods not running yet, or not priced by OpenCost)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from workload_map.logs import safe_text
from workload_map.views.format import columns

if TYPE_CHECKING:
    from workload_map.cost import WorkloadCost

__all__ = ["cost_cells", "cost_headers", "cost_lines"]


def cost_headers(window: str, wide: bool) -> list[str]:
    """``GPU-HOURS(24h)  COST(24h)`` (and ``COST/H`` with ``-o wide``)."""
    return [f"GPU-HOURS({window})", f"COST({window})", *(["COST/H"] if wide else [])]


def _cell(cost: WorkloadCost | None, value: float | None, fmt: Callable[[float], str]) -> str:
    if value is not None:
        return fmt(value)
    return "<unknown>" if cost is None or cost.error is not None else "<none>"


def _hours(x: float) -> str:
    return f"{x:.1f}"


def _money(x: float) -> str:
    return f"{x:.2f}"


def cost_cells(cost: WorkloadCost | None, wide: bool) -> list[str]:
    """The row's cells under :func:`cost_headers`."""
    cells = [
        _cell(cost, cost.gpu_hours if cost else None, _hours),
        _cell(cost, cost.cost if cost else None, _money),
    ]
    if wide:
        cells.append(_cell(cost, cost.cost_per_hour if cost else None, _money))
    return cells


def cost_lines(cost: WorkloadCost | None) -> list[str]:
    """``describe``'s Cost section: totals over the window, the rate now per resource and per
    component, idle GPU cost, then the queries that gave them; nothing without a Prometheus."""
    if cost is None:
        return []
    lines = ["", f"Cost (last {cost.window}, Prometheus {cost.prometheus}):"]
    if cost.error is not None:
        lines.append(f"  unknown: {cost.error}")
    elif not cost.found:
        lines.append("  no cost series for this workload (pods not running, or not priced by OpenCost yet)")
    else:
        lines += ["  " + ln for ln in columns(_totals(cost), pads=2)]
        if cost.components:
            table = [["COMPONENT", "INSTANCE", "COST/H"]]
            table += [
                [safe_text(c.component), safe_text(c.instance) or "-", _money(c.cost_per_hour)]
                for c in cost.components
            ]
            lines += ["  " + ln for ln in columns(table)]
    if cost.queries:
        lines.append("  Queries:")
        lines += [f"    {q.name}: {' '.join(q.query.split())}" for q in cost.queries]
    return lines


def _totals(cost: WorkloadCost) -> list[list[str]]:
    """``GPU-hours:``, ``Cost:`` and ``Idle GPUs:`` with what each is now."""
    hours = _cell(cost, cost.gpu_hours, _hours)
    if cost.gpus_allocated is not None:
        hours += f"   ({_number(cost.gpus_allocated)} GPUs allocated now)"
    amount = _cell(cost, cost.cost, _money)
    if cost.cost_per_hour is not None:
        per_resource = ", ".join(f"{r} {_money(v)}" for r, v in cost.by_resource)
        amount += f"   (now {_money(cost.cost_per_hour)} per hour: {per_resource})"
    rows = [["GPU-hours:", hours], ["Cost:", amount]]
    if cost.idle_gpu_cost_per_hour is not None or cost.gpu_utilization is not None:
        idle = f"{_cell(cost, cost.idle_gpu_cost_per_hour, _money)} per hour"
        if cost.gpu_utilization is not None:
            idle += f"   (GPU utilisation {cost.gpu_utilization:.1f}%)"
        rows.append(["Idle GPUs:", idle])
    return rows


def _number(x: float) -> str:
    return f"{x:g}"
