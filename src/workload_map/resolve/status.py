"""Status evaluation (spec 3.4).

* phase: the first result of ``phaseDefinition.path``; strings as they are, other non-null
  values stringified as jq ``tostring`` does (``3`` -> ``"3"``, ``true`` -> ``"true"``); no
  result or ``null`` = no phase;
* conditions: the path's results, arrays flattened (an object result counts as one
  condition); each element read with the configured field names. Elements without a
  non-empty string type are skipped; a non-string status reads as ``""``; reason and message
  only when their field names are set, and only string values;
* matchers: ``byPhase`` equals the phase; every ``byConditions`` entry's type exists (the last
  condition of that type counts) and its non-empty ``status``/``reason`` equal the actual ones;
  ``byExpression``: the first result of the expression, ``null``/none = no match, otherwise
  jq ``tostring`` of it compared with ``expectedResult``. The parts of one matcher are ANDed in
  that order and evaluation stops at the first failing part; an empty matcher matches;
* statuses in :data:`~workload_map.model.definition.STATUS_MATCH_ORDER`; every match is
  reported; ``[Undefined]`` when none.
"""

from __future__ import annotations

from typing import Any

from workload_map.model.definition import ResourceStatus
from workload_map.resolve._fast import build
from workload_map.resolve._support import ResolveFieldError, jq_tostring, wrap_error
from workload_map.resolve.compiled import CompiledComponent, CompiledMatcher, CompiledStatus
from workload_map.resolve.extract import evaluate
from workload_map.resolve.types import UNDEFINED_STATUS, Condition, WorkloadStatus

_UNDEFINED = (ResourceStatus.UNDEFINED,)


def read_phase(status: CompiledStatus, definition: str, component: str, data: Any) -> str | None:
    if status.phase is None:
        return None
    ce = status.phase
    try:
        value = ce.expr.first(data)
    except Exception as exc:
        raise ResolveFieldError(
            definition,
            component,
            "statusDefinition.phaseDefinition.path",
            f"failed to evaluate {ce.source!r}: {wrap_error(exc)}",
        ) from exc
    if value is None:
        return None
    return jq_tostring(value)


def read_conditions(
    status: CompiledStatus, definition: str, component: str, data: Any
) -> tuple[Condition, ...]:
    if status.conditions is None:
        return ()
    out: list[Condition] = []
    tf, sf, rf, mf = status.type_field, status.status_field, status.reason_field, status.message_field
    for result in evaluate(definition, component, status.conditions, data):
        if isinstance(result, list):
            items = result
        elif isinstance(result, dict):
            items = [result]
        else:
            continue
        for item in items:
            if not isinstance(item, dict):
                continue
            ctype = item.get(tf)
            if not isinstance(ctype, str) or not ctype:
                continue
            cstatus = item.get(sf)
            reason = item.get(rf) if rf else None
            message = item.get(mf) if mf else None
            out.append(
                build(
                    Condition,
                    {
                        "type": ctype,
                        "status": cstatus if cstatus.__class__ is str else "",
                        "reason": reason if reason.__class__ is str else None,
                        "message": message if message.__class__ is str else None,
                    },
                )
            )
    return tuple(out)


def _matches(
    m: CompiledMatcher,
    phase: str | None,
    index: dict[str, Condition],
    definition: str,
    component: str,
    data: Any,
) -> bool:
    if m.by_phase and m.by_phase != phase:
        return False
    for cm in m.by_conditions:
        cond = index.get(cm.type)
        if cond is None:
            return False
        if cm.status and cm.status != cond.status:
            return False
        if cm.reason and cm.reason != (cond.reason or ""):
            return False
    ce = m.by_expression
    if ce is not None:
        try:
            value = ce.expr.first(data)
        except Exception as exc:
            raise ResolveFieldError(
                definition,
                component,
                ce.field or ce.location,
                f"failed to match status: failed to evaluate matcher: {wrap_error(exc)}",
            ) from exc
        if value is None:
            return False
        if value is True:  # the usual result of a boolean matcher expression
            return m.expected_result == "true"
        if value is False:
            return m.expected_result == "false"
        return jq_tostring(value) == m.expected_result
    return True


def evaluate_status(comp: CompiledComponent, definition: str, data: Any) -> WorkloadStatus | None:
    """The component's status, or ``None`` when it has no status definition."""
    status = comp.status
    if status is None:
        return None
    phase = read_phase(status, definition, comp.name, data)
    conditions = read_conditions(status, definition, comp.name, data)
    index = {c.type: c for c in conditions}
    matched: list[ResourceStatus] = []
    matched_by: list[int] = []
    name = comp.name
    for rs, matchers in status.mappings:
        for i, m in enumerate(matchers):
            if _matches(m, phase, index, definition, name, data):
                matched.append(rs)
                matched_by.append(i)
                break
    if not matched and phase is None and not conditions:
        return UNDEFINED_STATUS
    return build(
        WorkloadStatus,
        {
            "phases": tuple(matched) if matched else _UNDEFINED,
            "phase": phase,
            "conditions": conditions,
            "matched_by": tuple(matched_by),
        },
    )
