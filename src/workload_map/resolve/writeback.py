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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from workload_map.errors import DefinitionError, ExpressionError, PathError, ResolveError, WriteBackError
from workload_map.resolve._jq import Path, getpath, setpath
from workload_map.resolve.compiled import (
    CompiledAction,
    CompiledComponent,
    CompiledDefinition,
    CompiledExpression,
    Definition,
    as_compiled,
)
from workload_map.resolve.extract import instance_ids, parse_replicas
from workload_map.resolve.patch import JsonPatch, PatchError, json_patch, merge_patch
from workload_map.resolve.types import FragmentedPodSpec


class NotAssignableError(WriteBackError):
    """A definition path cannot be written (it reads fine but denotes no assignable location)."""

    def __init__(self, message: str, *, definition: str, component: str, field: str, path: str) -> None:
        super().__init__(message)
        self.definition = definition
        self.component = component
        self.field = field
        self.path = path


@dataclass(frozen=True)
class Change:
    """The result of a write: the new object and two patches from the old object to it.

    ``merge_patch`` is ``None`` when the change cannot be expressed as a merge patch (it sets an
    object member to ``null``, e.g. a resume action whose value is ``"null"``); use ``json_patch``.
    """

    new_object: dict[str, Any]
    json_patch: JsonPatch
    merge_patch: Any | None

    @property
    def changed(self) -> bool:
        return bool(self.json_patch)

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.new_object, "jsonPatch": self.json_patch, "mergePatch": self.merge_patch}


def make_change(old: Mapping[str, Any], new: dict[str, Any]) -> Change:
    """A :class:`Change` between two objects (exposed for callers composing several writes)."""
    try:
        mp: Any | None = merge_patch(old, new)
    except PatchError:
        mp = None
    return Change(new_object=new, json_patch=json_patch(old, new), merge_patch=mp)


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


def _plain(value: Any) -> Any:
    """A deep, plain-JSON copy (mapping proxies and tuples become dicts and lists)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return copy.deepcopy(value)


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


@dataclass(frozen=True)
class _Target:
    """Where a write goes: ``field`` is the label used in messages, ``ce`` the definition's
    compiled expression for it."""

    definition: str
    component: str
    field: str
    ce: CompiledExpression

    @property
    def source(self) -> str:
        return self.ce.source


def _not_assignable(t: _Target, detail: str = "", prefix: str = "") -> NotAssignableError:
    msg = f"cannot write {t.field} of component '{t.component}': '{t.source}' is not an assignable path"
    if detail:
        msg += f" ({detail})"
    msg += f" (definition '{t.definition}')"
    return NotAssignableError(
        prefix + msg, definition=t.definition, component=t.component, field=t.field, path=t.source
    )


def _paths(obj: Any, t: _Target, prefix: str = "") -> list[Path]:
    """The locations ``t``'s expression denotes in ``obj`` (it must be an assignable path)."""
    if not t.ce.expr.is_assignable:
        raise _not_assignable(t, prefix=prefix)
    try:
        return t.ce.expr.paths(obj)
    except PathError as exc:
        raise _not_assignable(t, exc.message, prefix) from exc
    except ExpressionError as exc:
        raise WriteBackError(
            f"{prefix}cannot write {t.field} of component '{t.component}': {exc.message}"
        ) from exc


def _write_values(
    obj: Any,
    comp: CompiledComponent,
    t: _Target,
    values: Sequence[Any],
    write: Sequence[bool] | None = None,
    prefix: str = "",
) -> Any:
    """Write one value per instance (``instanceIdPath``) or the single value to every path."""
    paths = _paths(obj, t, prefix)
    if comp.instance_id is not None:
        if len(paths) != len(values):
            raise WriteBackError(
                f"{prefix}array length mismatch: expected {len(paths)} values but got {len(values)}"
            )
        for i, (p, v) in enumerate(zip(paths, values, strict=True)):
            if write is None or write[i]:
                obj = _set(obj, p, _plain(v), t, prefix)
        return obj
    if len(values) != 1:
        raise WriteBackError(
            f"{prefix}expected exactly one value for component '{t.component}', got {len(values)}"
        )
    if write is not None and not write[0]:
        return obj
    for p in paths:
        obj = _set(obj, p, _plain(values[0]), t, prefix)
    return obj


def _set(obj: Any, path: Path, value: Any, t: _Target, prefix: str) -> Any:
    try:
        return setpath(obj, path, value)
    except ExpressionError as exc:
        raise WriteBackError(
            f"{prefix}cannot write {t.field} of component '{t.component}' at {list(path)}: {exc.message}"
        ) from exc


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


def _definition(definition: Definition, obj: Mapping[str, Any]) -> tuple[CompiledDefinition, str]:
    if not isinstance(obj, Mapping):
        raise WriteBackError(f"workload object must be a JSON object, got {type(obj).__name__}")
    cd = as_compiled(definition)
    return cd, cd.name or "<unnamed>"


def _start(definition: Definition, obj: Mapping[str, Any], component: str) -> tuple[CompiledComponent, str]:
    cd, dname = _definition(definition, obj)
    try:
        comp = cd.component(component)
    except DefinitionError as exc:
        raise WriteBackError(str(exc)) from exc
    return comp, dname


def _whole(
    definition: Definition,
    obj: Mapping[str, Any],
    component: str,
    values: Mapping[str, Mapping[str, Any]],
    attr: str,
    label: str,
) -> Change:
    comp, dname = _start(definition, obj, component)
    ce: CompiledExpression | None = getattr(comp, attr)
    if ce is None:
        raise WriteBackError(f"component '{component}' of definition '{dname}' has no {label}")
    ordered = _ordered_values(comp, dname, obj, values)
    for v in ordered:
        if not isinstance(v, Mapping):
            raise WriteBackError(f"{label} value for component '{component}' must be an object, got {v!r}")
    t = _Target(dname, component, label, ce)
    new = _write_values(copy.deepcopy(dict(obj)), comp, t, ordered)
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
    comp, dname = _start(definition, obj, component)
    if comp.fragmented is None:
        raise WriteBackError(
            f"component '{component}' of definition '{dname}' has no fragmentedPodSpecDefinition"
        )
    frag_exprs = dict(comp.fragmented)
    ordered = _ordered_values(comp, dname, obj, values)
    frags = [as_fragments(v) for v in ordered]
    new: Any = copy.deepcopy(dict(obj))
    for wire, attr, path_attr, label in FRAGMENT_WRITE_ORDER:
        prefix = f"failed to update {wire}: "
        field_values = [getattr(f, attr) for f in frags]
        non_empty = [not _is_empty(v) for v in field_values]
        ce = frag_exprs.get(path_attr)
        if not any(non_empty):
            continue
        if ce is None:
            raise WriteBackError(f"{prefix}path is not defined and values are not empty")
        t = _Target(dname, component, label, ce)
        new = _write_values(new, comp, t, field_values, non_empty, prefix)
    return make_change(obj, new)


# --- suspend / resume ------------------------------------------------------------------------


def _apply_actions(
    definition: Definition, obj: Mapping[str, Any], component: str | None, which: str
) -> Change:
    cd, dname = _definition(definition, obj)
    if component is not None:
        comp = cd.components.get(component)
        if comp is None:
            raise WriteBackError(f"component {component!r} not found in definition {dname!r}")
        comps: Iterable[CompiledComponent] = (comp,)
    else:
        comps = cd.components.values()
    new: Any = copy.deepcopy(dict(obj))
    applied = False
    for comp in comps:
        actions: tuple[CompiledAction, ...] = (
            comp.suspend_actions if which == "suspendActions" else comp.resume_actions
        )
        for i, action in enumerate(actions):
            applied = True
            prefix = f"failed to apply {which}[{i}] of component '{comp.name}': "
            t = _Target(dname, comp.name, f"{which}[{i}].path", action.path)
            for p in _paths(new, t, prefix):
                new = _set(new, p, copy.deepcopy(action.value), t, prefix)
    if not applied:
        where = f"component '{component}'" if component is not None else "any component"
        raise WriteBackError(f"definition '{dname}' defines no {which} for {where}")
    return make_change(obj, new)


def suspend(definition: Definition, obj: Mapping[str, Any], component: str | None = None) -> Change:
    """Apply the suspend actions (JSON-decoded values, in order). With ``component=None`` every
    component's actions are applied, root first. No actions at all is an error."""
    return _apply_actions(definition, obj, component, "suspendActions")


def resume(definition: Definition, obj: Mapping[str, Any], component: str | None = None) -> Change:
    """Apply the resume actions; see :func:`suspend`."""
    return _apply_actions(definition, obj, component, "resumeActions")


# --- scale ------------------------------------------------------------------------------------


def scale(
    definition: Definition,
    obj: Mapping[str, Any],
    component: str,
    replicas: int | Mapping[str, int],
) -> Change:
    """Set a component's replica count through its ``scaleDefinition.replicasPath``.

    ``replicas`` is one count for every instance, or ``{instance_id: count}`` naming each
    instance (a component without ``instanceIdPath`` has the single id ``""``). A component with
    no replicas path, or whose path is computed (``.spec.size - 1``, ``//``...), cannot be scaled:
    :class:`WriteBackError` / :class:`NotAssignableError` naming the component and expression.
    Counts are validated as the resolver reads them (non-negative, at most 2**31-1).
    """
    comp, dname = _start(definition, obj, component)
    ce = comp.replicas
    if ce is None:
        raise WriteBackError(
            f"component '{component}' of definition '{dname}' cannot be scaled: it has no "
            "scaleDefinition.replicasPath"
        )
    if isinstance(replicas, Mapping):
        ordered = _ordered_values(comp, dname, obj, replicas)
    else:
        try:
            ids = instance_ids(comp, dname, obj)
        except ResolveError as exc:
            raise WriteBackError(f"component '{component}': {exc}") from exc
        ordered = [replicas] * len(ids) if comp.instance_id is not None else [replicas]
    for i, value in enumerate(ordered):
        if isinstance(value, bool) or not isinstance(value, int):
            raise WriteBackError(f"replicas for component '{component}' must be an integer, got {value!r}")
        try:
            parse_replicas(value, i)
        except ValueError as exc:
            raise WriteBackError(f"replicas for component '{component}': {exc}") from None
    t = _Target(dname, component, "scaleDefinition.replicasPath", ce)
    new = _write_values(copy.deepcopy(dict(obj)), comp, t, ordered)
    return make_change(obj, new)


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
    cd, dname = _definition(definition, obj)
    if components is None:
        targets = [c for c in cd.components.values() if c.has_pod_definition]
    else:
        targets = []
        for name in components:
            c = cd.components.get(name)
            if c is None:
                raise WriteBackError(f"component {name!r} not found in definition {dname!r}")
            if not c.has_pod_definition:
                raise WriteBackError(f"component '{name}' of definition '{dname}' has no pod definition")
            targets.append(c)
    names = {"schedulerName": scheduler_name, "priorityClassName": priority_class_name}
    maps = {"labels": labels, "annotations": annotations}
    new: Any = copy.deepcopy(dict(obj))
    for comp in targets:
        if comp.pod_template_spec is not None:
            t = _Target(dname, comp.name, "podTemplateSpecPath", comp.pod_template_spec)
            for p in _existing(new, t):
                new = _apply_pod_fields(new, (*p, "spec"), (*p, "metadata"), names, maps, t)
        elif comp.pod_spec is not None:
            t = _Target(dname, comp.name, "podSpecPath", comp.pod_spec)
            for p in _existing(new, t):
                new = _apply_pod_fields(new, p, None, names, {}, t)
            if any(v is not None for v in maps.values()):
                if comp.metadata is None:
                    raise WriteBackError(
                        f"cannot write labels/annotations of component '{comp.name}': it has podSpecPath "
                        f"but no metadataPath (definition '{dname}')"
                    )
                mt = _Target(dname, comp.name, "metadataPath", comp.metadata)
                for p in _existing(new, mt):
                    new = _apply_pod_fields(new, None, p, {}, maps, mt)
        elif comp.fragmented is not None:
            new = _patch_fragmented(new, comp, dname, names, maps)
    return make_change(obj, new)


def _existing(obj: Any, t: _Target) -> list[Path]:
    return [p for p in _paths(obj, t) if isinstance(getpath(obj, p), dict)]


def _merged(current: Any, extra: Mapping[str, str]) -> dict[str, Any]:
    base = dict(current) if isinstance(current, dict) else {}
    base.update({str(k): v for k, v in extra.items()})
    return base


def _apply_pod_fields(
    obj: Any,
    spec_path: Path | None,
    meta_path: Path | None,
    names: Mapping[str, str | None],
    maps: Mapping[str, Mapping[str, str] | None],
    t: _Target,
) -> Any:
    if spec_path is not None:
        for key, value in names.items():
            if value is not None:
                obj = _set(obj, (*spec_path, key), value, t, "")
    if meta_path is not None:
        for key, extra in maps.items():
            if extra is not None:
                p = (*meta_path, key)
                obj = _set(obj, p, _merged(getpath(obj, p), extra), t, "")
    return obj


_PATCHABLE_FRAGMENTS = {
    "schedulerName": ("scheduler_name_path", "schedulerNamePath"),
    "priorityClassName": ("priority_class_name_path", "priorityClassNamePath"),
    "labels": ("labels_path", "labelsPath"),
    "annotations": ("annotations_path", "annotationsPath"),
}


def _patch_fragmented(
    obj: Any,
    comp: CompiledComponent,
    dname: str,
    names: Mapping[str, str | None],
    maps: Mapping[str, Mapping[str, str] | None],
) -> Any:
    frag = dict(comp.fragmented or ())
    requested: dict[str, Any] = {k: v for k, v in {**names, **maps}.items() if v is not None}
    for key, value in requested.items():
        path_attr, label = _PATCHABLE_FRAGMENTS[key]
        ce = frag.get(path_attr)
        if ce is None:
            raise WriteBackError(
                f"cannot write {key} of component '{comp.name}': its fragmentedPodSpecDefinition has no "
                f"{label} (definition '{dname}')"
            )
        t = _Target(dname, comp.name, label, ce)
        for p in _paths(obj, t):
            new_value = _merged(getpath(obj, p), value) if key in maps else value
            obj = _set(obj, p, new_value, t, "")
    return obj


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
    "Change",
    "NotAssignableError",
    "as_fragments",
    "make_change",
    "patch_all_pod_specs",
    "resume",
    "scale",
    "set_scheduler_name",
    "suspend",
    "update_fragmented",
    "update_pod_metadata",
    "update_pod_spec",
    "update_pod_template",
]
