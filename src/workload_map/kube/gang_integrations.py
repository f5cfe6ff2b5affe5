"""Where a workload's own operator already integrates with a batch scheduler: the one table the
gang controller (:mod:`workload_map.operator.gangs`) reads to stand aside instead of creating a
second set of gang objects (KAI's precedence rule: the operator's own integration wins).

Data only: each :class:`OwnIntegration` names the workload kinds, the schedulers, the signal on
the workload object (always, a label, or a field) and the source of the fact. The controller
evaluates every row the same way (:func:`own_integration`); no kind has code of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Signal = Literal["always", "label", "field"]


@dataclass(frozen=True)
class OwnIntegration:
    """``operator`` creates the gang objects of ``kinds`` (API ``group``) for ``schedulers`` when
    the workload shows ``signal``: ``always``; ``label`` ``key`` present (with one of ``values``,
    compared case-insensitively, when given); ``field`` ``key`` (a dotted path) present and not
    null (with one of ``values`` when given). ``source`` says where the fact was read."""

    group: str
    kinds: tuple[str, ...]
    schedulers: tuple[str, ...]
    signal: Signal
    operator: str
    source: str
    key: str = ""
    values: tuple[str, ...] = ()

    def applies(self, obj: Mapping[str, Any]) -> bool:
        if self.signal == "always":
            return True
        if self.signal == "label":
            labels = (obj.get("metadata") or {}).get("labels") or {}
            value = labels.get(self.key) if isinstance(labels, Mapping) else None
        else:
            value = _field(obj, self.key)
        if value is None:
            return False
        return not self.values or str(value).lower() in self.values

    def why(self) -> str:
        """Why the controller stands aside, for events and logs."""
        if self.signal == "always":
            shown = "always"
        elif self.values:
            shown = f"{self.signal} {self.key} is {' or '.join(self.values)}"
        else:
            shown = f"{self.signal} {self.key} is set"
        return f"{self.operator} creates these gang objects itself ({shown}; {self.source})"


def _field(obj: Mapping[str, Any], path: str) -> Any:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, Mapping):
            return None
        cur = cur.get(part)
    return cur


_TRAINING_KINDS = ("PyTorchJob", "TFJob", "XGBoostJob", "JAXJob", "PaddleJob", "MPIJob")

#: Every known operator integration, by kind and scheduler (controller scheduler names).
OWN_INTEGRATIONS: tuple[OwnIntegration, ...] = (
    OwnIntegration(
        "ray.io",
        ("RayCluster", "RayJob"),
        ("volcano",),
        "label",
        "KubeRay's volcano batch scheduler",
        "ray docs kubernetes/k8s-ecosystem/volcano.md",
        key="ray.io/scheduler-name",
        values=("volcano",),
    ),
    OwnIntegration(
        "ray.io",
        ("RayCluster",),
        ("coscheduling",),
        "label",
        "KubeRay's scheduler-plugins batch scheduler",
        "shared docs/engines.md, KubeRay batch-scheduler opt-ins",
        key="ray.io/gang-scheduling-enabled",
    ),
    OwnIntegration(
        "ray.io",
        ("RayCluster", "RayJob"),
        ("workload-api",),
        "label",
        "KubeRay's Workload API batch scheduler",
        "shared docs/engines.md, KubeRay batch-scheduler opt-ins",
        key="ray.io/gang-scheduling-enabled",
        values=("true",),
    ),
    OwnIntegration(
        "kubeflow.org",
        _TRAINING_KINDS,
        ("volcano", "coscheduling"),
        "field",
        "The Kubeflow training / MPI operator's gang scheduling",
        "shared docs/framework-shapes-extra.md, runPolicy.schedulingPolicy",
        key="spec.runPolicy.schedulingPolicy",
    ),
    OwnIntegration(
        "sparkoperator.k8s.io",
        ("SparkApplication",),
        ("volcano",),
        "field",
        "The Spark operator's Volcano batch scheduler",
        "shared docs/engines.md, spec.batchScheduler",
        key="spec.batchScheduler",
        values=("volcano",),
    ),
    OwnIntegration(
        "batch.volcano.sh",
        ("Job",),
        ("volcano",),
        "always",
        "Volcano's job controller",
        "shared docs/framework-shapes-extra.md, Volcano Job: PodGroup <job>-<uid>",
    ),
    OwnIntegration(
        "jobset.x-k8s.io",
        ("JobSet",),
        ("workload-api",),
        "always",
        "JobSet's own Workload API support",
        "shared docs/engines.md, JobSet KEP-969: per-ReplicatedJob PodGroups",
    ),
)


def own_integration(group: str, kind: str, scheduler: str, obj: Mapping[str, Any]) -> OwnIntegration | None:
    """The first row saying the workload's own operator integrates with ``scheduler`` (``None``:
    the gang controller acts)."""
    for row in OWN_INTEGRATIONS:
        if row.group == group and kind in row.kinds and scheduler in row.schedulers and row.applies(obj):
            return row
    return None


__all__ = ["OWN_INTEGRATIONS", "OwnIntegration", "own_integration"]
