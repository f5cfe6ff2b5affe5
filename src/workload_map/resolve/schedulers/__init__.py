"""One gang plan (:mod:`workload_map.resolve.gang_plan`), rendered per scheduler.

``render(plan, "volcano")`` gives the objects that scheduler needs for the workload (PodGroups,
Workloads...), the pod-template changes that link its pods to them and the workload change,
as data (:class:`Rendered`); applying them is the write-back's job. Schedulers:

* ``kai``: KAI Scheduler's external PodGroups (``scheduling.run.ai/v2alpha2``);
* ``volcano``: ``scheduling.volcano.sh/v1beta1`` PodGroups;
* ``coscheduling``: scheduler-plugins' ``scheduling.x-k8s.io/v1alpha1`` PodGroups;
* ``workload-api``: the Kubernetes ``scheduling.k8s.io/v1beta1`` Workload and PodGroups
  (``v1alpha3`` CompositePodGroups for nested gangs);
* ``kueue``: a ``kueue.x-k8s.io/v1beta2`` Workload, for workloads the definition can suspend.

See docs/gangs.md for what each produces per catalog type.
"""

from __future__ import annotations

from collections.abc import Callable

from workload_map.kube.schedulers import SCHEDULERS as SCHEDULER_NAMES
from workload_map.resolve.gang_plan import GangPlan
from workload_map.resolve.schedulers import _coscheduling, _kai, _kueue, _volcano, _workload_api
from workload_map.resolve.schedulers._common import (
    DisruptionMode,
    Links,
    PriorityValue,
    Rendered,
    RenderOptions,
    TemplateChange,
    WorkloadChange,
    conflicts,
    quantities,
)
from workload_map.resolve.schedulers._kueue import KueueLimitError
from workload_map.resolve.schedulers._workload_api import WorkloadApiLimitError

Renderer = Callable[[GangPlan, RenderOptions], Rendered]

#: Scheduler name (as ``--scheduler`` takes it, :data:`workload_map.kube.schedulers.SCHEDULERS`)
#: -> renderer, in that order.
SCHEDULERS: dict[str, Renderer] = dict(
    zip(
        SCHEDULER_NAMES,
        (_kai.render, _volcano.render, _coscheduling.render, _workload_api.render, _kueue.render),
        strict=True,
    )
)


def render(plan: GangPlan, scheduler: str, options: RenderOptions | None = None) -> Rendered:
    """``plan`` rendered for ``scheduler`` (a key of :data:`SCHEDULERS`; others: ``KeyError``)."""
    return SCHEDULERS[scheduler](plan, options or RenderOptions())


__all__ = [
    "SCHEDULERS",
    "DisruptionMode",
    "KueueLimitError",
    "Links",
    "PriorityValue",
    "RenderOptions",
    "Rendered",
    "Renderer",
    "TemplateChange",
    "WorkloadApiLimitError",
    "WorkloadChange",
    "conflicts",
    "quantities",
    "render",
]
