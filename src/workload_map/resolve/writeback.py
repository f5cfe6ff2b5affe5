"""Writing pod templates, pod specs, pod fields and suspend state back into a workload object.

Every function takes the raw workload object (a JSON ``dict``), never mutates it, and returns a
:class:`Change`: the new object plus an RFC 6902 JSON patch and an RFC 7386 merge patch taking the
old object to the new one, ready for ``kubectl patch`` or a PATCH request.

What is written is exactly the value given: dicts are written as-is (deep-copied), never
round-tripped through typed structs, so fields this library does not know survive, and nothing is
written as ``null`` unless the caller asks for ``null``. Upstream rules (spec 3.3) with one
deliberate difference:

* instance values are ordered by the component's instance ids; a missing id is an error
  (``value not found for instance id: <id>``), and so is an id the component does not have;
* with ``instanceIdPath`` the expression's paths are set one per instance (counts must agree:
  ``array length mismatch: expected N values but got M``); without it every path the expression
  denotes gets the single value (jq ``(expr) = value``);
* fragmented fields are written in upstream's order, skipped when every instance's value is
  empty; a field whose path is undefined but has a non-empty value is an error. **Unlike
  upstream**, when some instances have a value and others are empty, the empty instances' fields
  are left untouched (upstream writes ``null`` into them, which Kubernetes rejects);
* a path that is not assignable (``//``, object construction, ``as`` bindings...) raises
  :class:`NotAssignableError` naming the definition, component and field.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields
from typing import Any

from workload_map.errors import ResolveError, WriteBackError
from workload_map.resolve._jq import getpath
from workload_map.resolve._writepaths import (
    Change,
    NotAssignableError,
    Target,
    compiled_for,
    component_of,
    make_change,
    plain,
    set_at,
    target_paths,
)
from workload_map.resolve.compiled import (
    CompiledAction,
    CompiledComponent,
    CompiledExpression,
    Definition,
)
from workload_map.resolve.edits import (
    EnvFrom,
    Existing,
    InvalidEditError,
    PodEdit,
    SetAnnotations,
    SetEnv,
    SetImage,
    SetLabels,
    SetNodeSelector,
    SetPodAnnotations,
    SetPodField,
    SetPodLabels,
    SetPriorityClassName,
    SetResources,
    SetSchedulerName,
    SetTolerations,
    Toleration,
)
from workload_map.resolve.extract import instance_ids
from workload_map.resolve.podedit import PodLocation, apply_edits, pod_locations
from workload_map.resolve.scaling import CannotScaleError, replica_targets, scale
from workload_map.resolve.types import FragmentedPodSpec

# --- fragmented fields: upstream's write order ------------------------------------------------

# (wire name, FragmentedPodSpec attribute, FragmentedPodSpecDefinition attribute, path label)
FRAGMENT_WRITE_ORDER: tuple[tuple[str, str, str, str], ...] = (
    ("schedulerName", "scheduler_name", "scheduler_name_path", "schedulerNamePath"),
    ("priorityClassName", "priority_class_name", "priority_class_name_path", "priorityClassNamePath"),
    ("image", "image", "image_path", "imagePath"),
    ("labels", "labels", "labels_path", "labelsPath"),
    ("annotations", "annotations", "annotations_path", "annotationsPath"),
    ("resources", "resources", "resources_path", "resourcesPath"),
    ("podAffinity", "pod_affinity", "pod_affinity_path", "podAffinityPath"),
    ("nodeAffinity", "node_affinity", "node_affinity_path", "nodeAffinityPath"),
    ("container", "container", "container_path", "containerPath"),
    ("resourceClaims", "resource_claims", "resource_claims_path", "resourceClaimsPath"),
    ("containers", "containers", "containers_path", "containersPath"),
)
_WIRE_TO_ATTR = {wire: attr for wire, attr, _, _ in FRAGMENT_WRITE_ORDER}
_ATTRS = {f.name for f in fields(FragmentedPodSpec)}


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, (Mapping, list, tuple)) and len(value) == 0)


def as_fragments(value: FragmentedPodSpec | Mapping[str, Any]) -> FragmentedPodSpec:
    """Accept a :class:`FragmentedPodSpec` or a mapping keyed by wire names (``schedulerName``)
    or attribute names (``scheduler_name``)."""
    if isinstance(value, FragmentedPodSpec):
        return value
    if not isinstance(value, Mapping):
        raise WriteBackError(f"fragmented pod spec value must be a mapping, got {type(value).__name__}")
    kwargs: dict[str, Any] = {}
    for key, v in value.items():
        attr = _WIRE_TO_ATTR.get(key, key)
        if attr not in _ATTRS:
            raise WriteBackError(f"unknown fragmented pod spec field {key!r}")
        kwargs[attr] = v
    return FragmentedPodSpec(**kwargs)


# --- the write machinery ---------------------------------------------------------------------


def _write_values(
    obj: Any,
    comp: CompiledComponent,
    t: Target,
    values: Sequence[Any],
    write: Sequence[bool] | None = None,
    prefix: str = "",
) -> Any:
    """Write one value per instance (``instanceIdPath``) or the single value to every path."""
    paths = target_paths(obj, t, prefix)
    if comp.instance_id is not None:
        if len(paths) != len(values):
            raise WriteBackError(
                f"{prefix}array length mismatch: expected {len(paths)} values but got {len(values)}"
            )
        for i, (p, v) in enumerate(zip(paths, values, strict=True)):
            if write is None or write[i]:
                obj = set_at(obj, p, plain(v), t, prefix)
        return obj
    if len(values) != 1:
        raise WriteBackError(
            f"{prefix}expected exactly one value for component '{t.component}', got {len(values)}"
        )
    if write is not None and not write[0]:
        return obj
    for p in paths:
        obj = set_at(obj, p, plain(values[0]), t, prefix)
    return obj


def _ordered_values(
    comp: CompiledComponent, dname: str, obj: Mapping[str, Any], values: Mapping[str, Any]
) -> list[Any]:
    component = comp.name
    try:
        ids = instance_ids(comp, dname, obj)
    except ResolveError as exc:
        raise WriteBackError(f"component '{component}': {exc}") from exc
    known = set(ids)
    for iid in values:
        if iid not in known:
            raise WriteBackError(
                f"instance id {iid!r} is not an instance of component '{component}' (instances: {list(ids)})"
            )
    ordered: list[Any] = []
    for iid in ids:
        if iid not in values:
            raise WriteBackError(f"value not found for instance id: {iid}")
        ordered.append(values[iid])
    return ordered


def _whole(
    definition: Definition,
    obj: Mapping[str, Any],
    component: str,
    values: Mapping[str, Mapping[str, Any]],
    attr: str,
    label: str,
) -> Change:
    comp, dname = component_of(definition, obj, component)
    ce: CompiledExpression | None = getattr(comp, attr)
    if ce is None:
        raise WriteBackError(f"component '{component}' of definition '{dname}' has no {label}")
    ordered = _ordered_values(comp, dname, obj, values)
    for v in ordered:
        if not isinstance(v, Mapping):
            raise WriteBackError(f"{label} value for component '{component}' must be an object, got {v!r}")
    t = Target(dname, component, label, ce)
    new = _write_values(dict(obj), comp, t, ordered)
    return make_change(obj, new)


def update_pod_template(
    definition: Definition,
    obj: Mapping[str, Any],
    component: str,
    values: Mapping[str, Mapping[str, Any]],
) -> Change:
    """Replace the PodTemplateSpec of each instance (``{instance_id: template}``; the single
    instance of a component without ``instanceIdPath`` has id ``""``). Templates are written as
    given (unknown fields kept)."""
    return _whole(definition, obj, component, values, "pod_template_spec", "podTemplateSpecPath")


def update_pod_spec(
    definition: Definition,
    obj: Mapping[str, Any],
    component: str,
    values: Mapping[str, Mapping[str, Any]],
) -> Change:
    """Replace the PodSpec of each instance (components using ``podSpecPath``)."""
    return _whole(definition, obj, component, values, "pod_spec", "podSpecPath")


def update_pod_metadata(
    definition: Definition,
    obj: Mapping[str, Any],
    component: str,
    values: Mapping[str, Mapping[str, Any]],
) -> Change:
    """Replace the pod ObjectMeta of each instance (components using ``metadataPath``).

    Note that with KServe-style definitions ``metadataPath`` and ``podSpecPath`` can point at the
    same object; replacing the metadata then replaces that whole object.
    """
    return _whole(definition, obj, component, values, "metadata", "metadataPath")


def update_fragmented(
    definition: Definition,
    obj: Mapping[str, Any],
    component: str,
    values: Mapping[str, FragmentedPodSpec | Mapping[str, Any]],
) -> Change:
    """Write the fields of a fragmented pod spec, per instance, in upstream's order.

    Empty values (``None``, ``""``, ``{}``, ``[]``) mean "leave this field alone" for that
    instance. Errors are prefixed ``failed to update <field>: ``.
    """
    comp, dname = component_of(definition, obj, component)
    if comp.fragmented is None:
        raise WriteBackError(
            f"component '{component}' of definition '{dname}' has no fragmentedPodSpecDefinition"
        )
    frag_exprs = dict(comp.fragmented)
    ordered = _ordered_values(comp, dname, obj, values)
    frags = [as_fragments(v) for v in ordered]
    new: Any = dict(obj)
    for wire, attr, path_attr, label in FRAGMENT_WRITE_ORDER:
        prefix = f"failed to update {wire}: "
        field_values = [getattr(f, attr) for f in frags]
        non_empty = [not _is_empty(v) for v in field_values]
        ce = frag_exprs.get(path_attr)
        if not any(non_empty):
            continue
        if ce is None:
            raise WriteBackError(f"{prefix}path is not defined and values are not empty")
        t = Target(dname, component, label, ce)
        new = _write_values(new, comp, t, field_values, non_empty, prefix)
    return make_change(obj, new)


# --- suspend / resume ------------------------------------------------------------------------


def _actions(
    definition: Definition, obj: Mapping[str, Any], component: str | None, which: str
) -> list[tuple[str, Target, CompiledAction]]:
    """(error prefix, target, action) of ``which`` actions, root first; none is an error."""
    cd, dname = compiled_for(definition, obj)
    if component is not None:
        comp = cd.components.get(component)
        if comp is None:
            raise WriteBackError(f"component {component!r} not found in definition {dname!r}")
        comps: Iterable[CompiledComponent] = (comp,)
    else:
        comps = cd.components.values()
    found = []
    for comp in comps:
        actions: tuple[CompiledAction, ...] = (
            comp.suspend_actions if which == "suspendActions" else comp.resume_actions
        )
        for i, action in enumerate(actions):
            prefix = f"failed to apply {which}[{i}] of component '{comp.name}': "
            found.append((prefix, Target(dname, comp.name, f"{which}[{i}].path", action.path), action))
    if not found:
        where = f"component '{component}'" if component is not None else "any component"
        raise WriteBackError(f"definition '{dname}' defines no {which} for {where}")
    return found


def _apply_actions(
    definition: Definition, obj: Mapping[str, Any], component: str | None, which: str
) -> Change:
    actions = _actions(definition, obj, component, which)
    new: Any = dict(obj)
    for prefix, t, action in actions:
        for p in target_paths(new, t, prefix):
            new = set_at(new, p, copy.deepcopy(action.value), t, prefix)
    return make_change(obj, new)


def actions_not_kept(
    definition: Definition, obj: Mapping[str, Any], component: str | None, verb: str
) -> list[str]:
    """The ``verb`` (``suspend`` or ``resume``) actions whose value ``obj``, the API server's
    answer to the write, does not hold, as ``path (definition field)`` texts. A server whose
    schema lacks the field drops it without an error (batch/v1 Job ``spec.suspend`` before
    Kubernetes 1.21, a CRD version without it), so a write that was accepted may still not
    suspend anything."""
    missing = []
    for prefix, t, action in _actions(definition, obj, component, f"{verb}Actions"):
        for p in target_paths(obj, t, prefix):
            if getpath(obj, p) != action.value:
                missing.append(f"{t.source} = {json.dumps(plain(action.value))} ({t.component}: {t.field})")
    return missing


def set_replica_fields(
    definition: Definition, obj: Mapping[str, Any], component: str, replicas: Mapping[str, int]
) -> Change:
    """Write each instance's count into the field ``scaleDefinition.replicasPath`` names, as it
    is: no inversion of a computed count (that is :func:`scale`). A count that is not a field
    (``.spec.size - 1``, ``//``, a constant) is :class:`NotAssignableError` naming the component
    and the expression. Karmada's ``ReviseReplica`` uses this: its exported Lua can only assign
    fields, and the webhook must answer as the Lua does."""
    comp, dname = component_of(definition, obj, component)
    ce = comp.replicas
    if ce is None:
        raise WriteBackError(
            f"component '{component}' of definition '{dname}' cannot be scaled: it has no "
            "scaleDefinition.replicasPath"
        )
    ordered = replica_targets(comp, dname, obj, replicas)
    t = Target(dname, component, "scaleDefinition.replicasPath", ce)
    return make_change(obj, _write_values(dict(obj), comp, t, ordered))


def suspend(definition: Definition, obj: Mapping[str, Any], component: str | None = None) -> Change:
    """Apply the suspend actions (JSON-decoded values, in order). With ``component=None`` every
    component's actions are applied, root first. No actions at all is an error."""
    return _apply_actions(definition, obj, component, "suspendActions")


def resume(definition: Definition, obj: Mapping[str, Any], component: str | None = None) -> Change:
    """Apply the resume actions; see :func:`suspend`."""
    return _apply_actions(definition, obj, component, "resumeActions")


# --- shape-blind pod field updates (the consumer front door) ---------------------------------


def patch_all_pod_specs(
    definition: Definition,
    obj: Mapping[str, Any],
    *,
    scheduler_name: str | None = None,
    priority_class_name: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    components: Iterable[str] | None = None,
) -> Change:
    """Set the scheduler name and priority class, and merge labels/annotations, on every pod
    template of the workload, whatever the definition's spec shape.

    * ``podTemplateSpecPath``: ``spec.schedulerName``/``spec.priorityClassName`` and
      ``metadata.labels``/``metadata.annotations`` under each template;
    * ``podSpecPath`` (+ ``metadataPath``): the names on each pod spec, labels/annotations on each
      metadata object (a definition without ``metadataPath`` cannot take labels: error);
    * fragmented: through ``schedulerNamePath``, ``priorityClassNamePath``, ``labelsPath``,
      ``annotationsPath`` (a requested field whose path is missing is an error).

    Labels and annotations are merged into the existing maps (existing keys not named are kept).
    Templates/specs that are absent in the object (an optional role that is not declared, e.g.
    a PyTorchJob without ``Worker``) are skipped rather than created. ``components`` limits the
    update to the named components (default: every component with a pod definition).
    Non-assignable paths raise :class:`NotAssignableError`.
    """
    edits: list[PodEdit] = []
    if scheduler_name is not None:
        edits.append(SetSchedulerName(scheduler_name))
    if priority_class_name is not None:
        edits.append(SetPriorityClassName(priority_class_name))
    if labels is not None:
        edits.append(SetPodLabels(labels))
    if annotations is not None:
        edits.append(SetPodAnnotations(annotations))
    if not edits:
        compiled_for(definition, obj)
        return make_change(obj, dict(obj))
    return apply_edits(definition, obj, edits, components=components)


def set_scheduler_name(
    definition: Definition,
    obj: Mapping[str, Any],
    scheduler_name: str,
    *,
    priority_class_name: str | None = None,
) -> Change:
    """Point every pod template of the workload at ``scheduler_name`` (e.g. ``kai-scheduler``)."""
    return patch_all_pod_specs(
        definition, obj, scheduler_name=scheduler_name, priority_class_name=priority_class_name
    )


__all__ = [
    "FRAGMENT_WRITE_ORDER",
    "CannotScaleError",
    "Change",
    "EnvFrom",
    "Existing",
    "InvalidEditError",
    "NotAssignableError",
    "PodEdit",
    "PodLocation",
    "SetAnnotations",
    "SetEnv",
    "SetImage",
    "SetLabels",
    "SetNodeSelector",
    "SetPodAnnotations",
    "SetPodField",
    "SetPodLabels",
    "SetPriorityClassName",
    "SetResources",
    "SetSchedulerName",
    "SetTolerations",
    "Toleration",
    "actions_not_kept",
    "apply_edits",
    "as_fragments",
    "make_change",
    "patch_all_pod_specs",
    "pod_locations",
    "resume",
    "scale",
    "set_replica_fields",
    "set_scheduler_name",
    "suspend",
    "update_fragmented",
    "update_pod_metadata",
    "update_pod_spec",
    "update_pod_template",
]
