"""``InterpretStatus``, ``AggregateStatus`` and ``InterpretHealth`` from the definition's phases.

* ``InterpretStatus`` reflects the member object's whole ``.status`` (``{}`` when it has none), as
  Karmada's default interpreter does for kinds without a customization: whatever the definition's
  status rules read there reaches the control plane.
* ``AggregateStatus`` gives the resource template the status of its member in the most severe
  phase: each member's reflected status is put on the template and resolved through the
  definition's status rules (so rules that read ``.spec``, e.g. ``suspend``, see the template's); the
  member whose primary phase comes first in the severity order (Failed, Degraded, Suspending,
  Resuming, Suspended, Initializing, Running, Completed, Undefined; the first such member on ties)
  gives its status. The template's phase is then the worst of its members': Completed only when
  every member completed, Failed as soon as one failed. Members without a status are skipped; a
  member status that does not resolve counts as Undefined; none left: the template is unchanged.
  A status rule stopped by the expression engine's guards (step budget, deadline) fails the whole
  request at once instead: it would stop every member the same way, one deadline each.
* ``InterpretHealth``: healthy when the primary phase is Running or Completed (see
  :data:`HEALTHY_PHASES`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from workload_map.errors import ExpressionLimitError, WorkloadMapError
from workload_map.model.definition import STATUS_SEVERITY_ORDER, ResourceStatus
from workload_map.resolve.compiled import CompiledDefinition
from workload_map.resolve.resolver import resolve_status

#: The phases Karmada is told are healthy. Running and Completed are the workload doing, or having
#: done, what it was asked to. Initializing, Resuming and Undefined are not (yet): Karmada's own
#: customizations call a job waiting or initializing unhealthy too, and failover only acts after
#: its toleration time. Failed and Degraded are not. Suspended and Suspending are not either: the
#: workload runs no pods, as Karmada's RayJob interpreter judges a stopped job.
HEALTHY_PHASES: frozenset[ResourceStatus] = frozenset({ResourceStatus.RUNNING, ResourceStatus.COMPLETED})


def reflect(observed: Mapping[str, Any]) -> dict[str, Any]:
    """``InterpretStatus``: the observed object's status."""
    status = observed.get("status")
    return copy.deepcopy(status) if isinstance(status, dict) else {}


def healthy(cd: CompiledDefinition, observed: Mapping[str, Any]) -> bool:
    """``InterpretHealth``."""
    return resolve_status(cd, observed).primary_phase in HEALTHY_PHASES


def _severity(phase: ResourceStatus) -> int:
    return STATUS_SEVERITY_ORDER.index(phase)


def member_phase(
    cd: CompiledDefinition, template: Mapping[str, Any], status: Mapping[str, Any]
) -> ResourceStatus:
    """The primary phase of ``template`` carrying one member's ``status`` (Undefined when that
    does not resolve)."""
    member = {**template, "status": status}
    try:
        return resolve_status(cd, member).primary_phase
    except WorkloadMapError as exc:
        if _over_limit(exc):
            raise
        return ResourceStatus.UNDEFINED


def _over_limit(exc: BaseException | None) -> bool:
    """Whether the engine's guards stopped the evaluation (the error, or one it wraps)."""
    for _ in range(8):  # the resolver wraps an engine error once or twice
        if exc is None:
            return False
        if isinstance(exc, ExpressionLimitError):
            return True
        exc = exc.__cause__
    return False


def aggregate(
    cd: CompiledDefinition, template: Mapping[str, Any], items: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """``AggregateStatus``: the template with its new status, or None when no member has one."""
    best: Mapping[str, Any] | None = None
    best_rank = len(STATUS_SEVERITY_ORDER)
    for item in items:
        status = item.get("status")
        if not isinstance(status, dict):
            continue
        rank = _severity(member_phase(cd, template, status))
        if best is None or rank < best_rank:
            best, best_rank = status, rank
    if best is None:
        return None
    return {**template, "status": copy.deepcopy(best)}
