"""Linking a workload's pods to its gang objects: the renderer's pod-template changes
(:class:`~workload_map.resolve.schedulers.TemplateChange`) and workload change, applied through
the one write-back (:func:`~workload_map.resolve.podedit.apply_edits`) with ``existing="keep"``:
a value the workload already has (its own scheduler name, group annotation or label) is never
overwritten, only what the template lacks is added."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from workload_map.resolve.compiled import Definition
from workload_map.resolve.edits import (
    PodEdit,
    SetAnnotations,
    SetLabels,
    SetPodAnnotations,
    SetPodField,
    SetPodLabels,
    SetSchedulerName,
)
from workload_map.resolve.podedit import apply_edits, pod_locations
from workload_map.resolve.schedulers import Rendered, TemplateChange


def template_edits(change: TemplateChange) -> tuple[PodEdit, ...]:
    """The edits that put a pod of ``change``'s template into its object, keeping set values."""
    edits: list[PodEdit] = []
    if change.labels:
        edits.append(SetPodLabels(dict(change.labels), existing="keep"))
    if change.annotations:
        edits.append(SetPodAnnotations(dict(change.annotations), existing="keep"))
    if change.scheduler_name is not None:
        edits.append(SetSchedulerName(change.scheduler_name, existing="keep"))
    if change.pod_group_name is not None:
        edits.append(SetPodField(("schedulingGroup", "podGroupName"), change.pod_group_name, existing="keep"))
    return tuple(edits)


def linked(
    definition: Definition, obj: Mapping[str, Any], rendered: Rendered
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``obj`` with every template change and the workload change applied (only what is missing),
    and the warnings: values kept because the workload already chose otherwise, places the
    definition cannot write. Templates with the same edits are written in one pass."""
    groups: dict[str, tuple[tuple[PodEdit, ...], list[tuple[str, str]]]] = {}
    present = {(loc.component, loc.instance) for loc in pod_locations(definition, obj)}
    warnings: list[str] = []
    for change in rendered.template_changes:
        edits = template_edits(change)
        if edits and (change.component, change.instance_id) not in present:
            # e.g. a RayJob's submitter: its operator makes that template, there is none to write
            where = change.component + (f"/{change.instance_id}" if change.instance_id else "")
            warnings.append(f"the workload holds no pod template for {where}: its pods are not linked")
        elif edits:
            what = {k: v for k, v in change.to_dict().items() if k not in ("component", "instanceId")}
            key = orjson.dumps(what, option=orjson.OPT_SORT_KEYS).decode()
            groups.setdefault(key, (edits, []))[1].append((change.component, change.instance_id))
    current: dict[str, Any] = dict(obj)
    for edits, instances in groups.values():
        result = apply_edits(definition, current, edits, instances=instances, unsupported="warn")
        current = result.new_object
        warnings.extend(result.warnings)
    wc = rendered.workload_change
    own: list[PodEdit] = []
    if wc.labels:
        own.append(SetLabels(dict(wc.labels), existing="keep"))
    if wc.annotations:
        own.append(SetAnnotations(dict(wc.annotations), existing="keep"))
    if own:
        result = apply_edits(definition, current, own)
        current = result.new_object
        warnings.extend(result.warnings)
    return current, tuple(dict.fromkeys(warnings))
