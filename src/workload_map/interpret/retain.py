"""``Retain``: the fields a member cluster's controllers own, kept from the member's object when
Karmada applies the resource template again.

Karmada's convention (its native Deployment interpreter) is that replicas belong to the member
cluster (an HPA, an autoscaler there) when the template carries the label
``resourcetemplate.karmada.io/retain-replicas: "true"``. We extend it to every definition: with
that label, the *replica fields* of every component keep the member's values. The replica fields
of a component are the input fields its ``scaleDefinition.replicasPath`` yields
(:func:`workload_map.expr.output_paths`: ``.spec.replicas // 1`` -> ``spec.replicas``) and the
fields named ``replicas`` it reads (a RayCluster worker group's ``replicas`` inside its clamping
arithmetic). ``[]`` in such a path stands for every index (or key) both objects have.

Without the label nothing is retained: the template is the truth.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from workload_map.expr import output_paths, read_paths
from workload_map.resolve.compiled import CompiledDefinition

RETAIN_REPLICAS_LABEL = "resourcetemplate.karmada.io/retain-replicas"
RETAIN_REPLICAS_VALUE = "true"
ITERATE = "[]"

FieldPath = tuple[str, ...]


def replica_fields(cd: CompiledDefinition) -> list[FieldPath]:
    """Every component's replica fields, in component order, without duplicates."""
    out: dict[FieldPath, None] = {}
    for comp in cd.components.values():
        if comp.replicas is None:
            continue
        source = comp.replicas.source
        for path in output_paths(source):
            out.setdefault(tuple(path), None)
        for path in read_paths(source):
            if path and path[-1] == "replicas":
                out.setdefault(tuple(path), None)
    return list(out)


def wants_retain(desired: Mapping[str, Any]) -> bool:
    labels = (desired.get("metadata") or {}).get("labels")
    return isinstance(labels, Mapping) and labels.get(RETAIN_REPLICAS_LABEL) == RETAIN_REPLICAS_VALUE


def _copy(desired: Any, observed: Any, path: Sequence[str]) -> None:
    """Copy the value at ``path`` from ``observed`` into ``desired`` (in place) where both hold the
    containers on the way and ``observed`` holds the value."""
    key, rest = path[0], path[1:]
    if key == ITERATE:
        if isinstance(desired, list) and isinstance(observed, list):
            keys: list[Any] = list(range(min(len(desired), len(observed))))
        elif isinstance(desired, dict) and isinstance(observed, dict):
            keys = [k for k in desired if k in observed]
        else:
            return
        for k in keys:
            if rest:
                _copy(desired[k], observed[k], rest)
            else:
                desired[k] = copy.deepcopy(observed[k])
        return
    if not isinstance(desired, dict) or not isinstance(observed, dict) or key not in observed:
        return
    if rest:
        if key in desired:
            _copy(desired[key], observed[key], rest)
    else:
        desired[key] = copy.deepcopy(observed[key])


def retain(
    cd: CompiledDefinition, desired: Mapping[str, Any], observed: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The retained object, or None when nothing is retained."""
    if not wants_retain(desired):
        return None
    new = copy.deepcopy(dict(desired))
    for path in replica_fields(cd):
        if path:
            _copy(new, observed, path)
    return new
