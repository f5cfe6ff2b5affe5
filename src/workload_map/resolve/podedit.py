"""Pod-template edits through a definition: the one write-back behind ``wmap set``, ``wmap label``,
the REST API and the admission policy.

An edit (:class:`SetImage`, :class:`SetResources`, :class:`SetEnv`, :class:`SetSchedulerName`,
:class:`SetPriorityClassName`, :class:`SetNodeSelector`, :class:`SetTolerations`,
:class:`SetPodLabels`, :class:`SetPodAnnotations`, :class:`SetPodField`, and for the object's own
metadata :class:`SetLabels` / :class:`SetAnnotations`) says what to change in a pod, in pod
terms. :func:`apply_edits` applies a list of them, in order, to every pod location the definition
names (:func:`pod_locations`):

* ``podTemplateSpecPath``: under each template's ``spec`` and ``metadata``;
* ``podSpecPath``: on each pod spec; pod labels and annotations through ``metadataPath``;
* ``fragmentedPodSpecDefinition``: each edit goes to the fragment paths that can carry it
  (:data:`FRAGMENT_CARRIERS`); a pod field without a fragment path is refused, naming the
  component and the field, and nothing is written.

Locations the object does not have (an optional role that is not declared, a Milvus component of
the other mode) are skipped, never created. Every edit is idempotent: applying it twice changes
nothing more, so a location two components share (an LWS leader falling back to the worker
template) is written once. Values are checked with Kubernetes' own rules first (label syntax,
quantities, extended resources whose request must equal the limit...), so a template never holds
a value its controller would fail to create pods from.
"""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from workload_map.errors import ResolveError, WriteBackError
from workload_map.kube.validation import DEFAULT_SCHEDULER, is_extended_resource
from workload_map.resolve._jq import Path, getpath
from workload_map.resolve._writepaths import (
    Change,
    Target,
    compiled_for,
    make_change,
    plain,
    set_at,
    target_paths,
)
from workload_map.resolve.compiled import CompiledComponent, CompiledExpression, Definition
from workload_map.resolve.edits import (
    EDIT_TYPES,
    FRAGMENT_CARRIERS,
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
    edit_field,
)
from workload_map.resolve.extract import instance_ids
from workload_map.resolve.quantity import QuantityError, parse_quantity

_OBJECT_EDITS = (SetLabels, SetAnnotations)
_CONTAINER_EDITS = (SetImage, SetResources, SetEnv)


# --- where pods are ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FragmentPaths:
    """One fragment field of one instance: where it is written, or why it cannot be."""

    target: Target
    paths: tuple[Path, ...] = ()
    problem: WriteBackError | None = None


@dataclass(frozen=True)
class PodLocation:
    """One pod template, pod spec or fragmented spec of one component instance.

    ``spec``/``metadata`` are the paths of the pod spec and pod metadata (template and pod-spec
    shapes; ``metadata`` is ``None`` without ``metadataPath``); ``fragments`` maps fragment wire
    names (``schedulerName``) to their paths on a fragmented spec.
    """

    component: str
    instance: str
    shape: Literal["template", "spec", "fragmented"]
    target: Target
    spec: Path | None = None
    metadata: Path | None = None
    metadata_target: Target | None = None
    fragments: Mapping[str, FragmentPaths] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """``component`` or ``component/instance`` for messages."""
        return f"{self.component}/{self.instance}" if self.instance else self.component


_WIRE = {
    "scheduler_name_path": "schedulerName",
    "labels_path": "labels",
    "annotations_path": "annotations",
    "resources_path": "resources",
    "resource_claims_path": "resourceClaims",
    "pod_affinity_path": "podAffinity",
    "node_affinity_path": "nodeAffinity",
    "containers_path": "containers",
    "container_path": "container",
    "priority_class_name_path": "priorityClassName",
    "image_path": "image",
}


def _ids(comp: CompiledComponent, dname: str, obj: Any) -> tuple[str, ...]:
    try:
        return instance_ids(comp, dname, obj)
    except ResolveError as exc:
        raise WriteBackError(f"component '{comp.name}': {exc}") from exc


def _aligned(
    comp: CompiledComponent, ids: tuple[str, ...], found: list[Path], t: Target
) -> list[tuple[str, Path]]:
    """Paths paired with instance ids: one per id with ``instanceIdPath``, else all for ``""``."""
    if comp.instance_id is None:
        return [("", p) for p in found]
    if len(found) != len(ids):
        raise WriteBackError(
            f"cannot write {t.field} of component '{t.component}': '{t.source}' gives {len(found)} "
            f"locations for {len(ids)} instances (definition '{t.definition}')"
        )
    return list(zip(ids, found, strict=True))


def _whole_locations(
    obj: Any, comp: CompiledComponent, dname: str, ids: tuple[str, ...]
) -> list[PodLocation]:
    out: list[PodLocation] = []
    if comp.pod_template_spec is not None:
        t = Target(dname, comp.name, "podTemplateSpecPath", comp.pod_template_spec)
        for iid, p in _aligned(comp, ids, target_paths(obj, t), t):
            if isinstance(getpath(obj, p), dict):
                out.append(PodLocation(comp.name, iid, "template", t, (*p, "spec"), (*p, "metadata"), t))
        return out
    assert comp.pod_spec is not None
    t = Target(dname, comp.name, "podSpecPath", comp.pod_spec)
    specs = _aligned(comp, ids, target_paths(obj, t), t)
    metas: list[tuple[str, Path]] = []
    mt: Target | None = None
    if comp.metadata is not None:
        mt = Target(dname, comp.name, "metadataPath", comp.metadata)
        metas = _aligned(comp, ids, target_paths(obj, mt), mt)
        if len(metas) != len(specs):
            metas = metas[:1] * len(specs) if len(metas) == 1 else []
    for i, (iid, p) in enumerate(specs):
        if isinstance(getpath(obj, p), dict):
            meta = metas[i][1] if i < len(metas) else None
            out.append(PodLocation(comp.name, iid, "spec", t, p, meta, mt))
    return out


def _common_prefix(paths: Sequence[Path]) -> Path:
    if len(paths) == 1:
        return paths[0][:-1]
    first = paths[0]
    n = 0
    while all(len(p) > n and p[n] == first[n] for p in paths):
        n += 1
    return first[:n]


def _fragment_locations(
    obj: Any, comp: CompiledComponent, dname: str, ids: tuple[str, ...]
) -> list[PodLocation]:
    per_id: dict[str, dict[str, FragmentPaths]] = {iid: {} for iid in ids}
    spec_ce: CompiledExpression | None = None
    for attr, ce in comp.fragmented or ():
        wire = _WIRE[attr]
        spec_ce = spec_ce or ce
        t = Target(dname, comp.name, f"{wire}Path", ce)
        try:
            pairs = _aligned(comp, ids, target_paths(obj, t), t)
        except WriteBackError as exc:
            for iid in ids:
                per_id[iid][wire] = FragmentPaths(t, problem=exc)
            continue
        grouped: dict[str, list[Path]] = {iid: [] for iid in ids}
        for iid, p in pairs:
            grouped[iid].append(p)
        for iid in ids:
            per_id[iid][wire] = FragmentPaths(t, tuple(grouped[iid]))
    out: list[PodLocation] = []
    if spec_ce is None:
        return out
    t = Target(dname, comp.name, "fragmentedPodSpecDefinition", spec_ce)
    for iid in ids:
        frags = per_id[iid]
        written = [p for f in frags.values() for p in f.paths]
        if written and not isinstance(getpath(obj, _common_prefix(written)), dict):
            continue  # the object does not hold this component (instance)
        out.append(PodLocation(comp.name, iid, "fragmented", t, fragments=frags))
    return out


def pod_locations(
    definition: Definition, obj: Mapping[str, Any], components: Iterable[str] | None = None
) -> list[PodLocation]:
    """Every pod location the definition names that the object holds, components in definition
    order, instances in instance order. ``components`` limits them (an unknown name, or one
    without a pod definition, is an error listing the candidates)."""
    cd, dname = compiled_for(definition, obj)
    pod_components = [c for c in cd.components.values() if c.has_pod_definition]
    if components is not None:
        wanted = list(dict.fromkeys(components))
        names = [c.name for c in pod_components]
        for name in wanted:
            if name not in cd.components:
                raise WriteBackError(
                    f"component '{name}' not found in definition '{dname}' "
                    f"(components with pods: {', '.join(names)})"
                )
            if name not in names:
                raise WriteBackError(
                    f"component '{name}' of definition '{dname}' has no pod definition "
                    f"(components with pods: {', '.join(names)})"
                )
        pod_components = [c for c in pod_components if c.name in wanted]
    out: list[PodLocation] = []
    for comp in pod_components:
        ids = _ids(comp, dname, obj)
        if comp.fragmented is not None:
            out.extend(_fragment_locations(obj, comp, dname, ids))
        else:
            out.extend(_whole_locations(obj, comp, dname, ids))
    return out


# --- containers of a location ------------------------------------------------------------------


@dataclass(frozen=True)
class _Container:
    """A container a container edit can reach: its name (``None``: a fragmented spec's unnamed
    main container) and where its image, resources and env live (a problem when the definition
    names the place but it cannot be written; ``None`` when it names none)."""

    name: str | None
    label: str
    target: Target
    image: tuple[Path, ...] | WriteBackError | None
    resources: tuple[Path, ...] | WriteBackError | None
    bases: tuple[Path, ...] | WriteBackError | None


def _containers(obj: Any, loc: PodLocation) -> list[_Container]:
    out: list[_Container] = []
    if loc.shape != "fragmented":
        assert loc.spec is not None
        spec = getpath(obj, loc.spec)
        for key in ("initContainers", "containers"):
            items = spec.get(key) if isinstance(spec, dict) else None
            for i, c in enumerate(items if isinstance(items, list) else []):
                if not isinstance(c, dict):
                    continue
                base = (*loc.spec, key, i)
                name = c.get("name") if isinstance(c.get("name"), str) else None
                out.append(
                    _Container(
                        name, f"{key}[{i}]", loc.target, ((*base, "image"),), ((*base, "resources"),), (base,)
                    )
                )
        return out
    frags = loc.fragments
    listed = frags.get("containers")
    if listed is not None:
        if listed.problem is not None:
            out.append(
                _Container(
                    "*", "containersPath", listed.target, listed.problem, listed.problem, listed.problem
                )
            )
        for p in listed.paths:
            items = getpath(obj, p)
            for i, c in enumerate(items if isinstance(items, list) else []):
                if isinstance(c, dict):
                    base = (*p, i)
                    name = c.get("name") if isinstance(c.get("name"), str) else None
                    label = f"containersPath[{i}]"
                    out.append(
                        _Container(
                            name, label, listed.target, ((*base, "image"),), ((*base, "resources"),), (base,)
                        )
                    )
    main = frags.get("container")
    if main is not None and main.problem is None and not main.paths:
        main = None  # containerPath finds nothing in this object
    image, resources = frags.get("image"), frags.get("resources")
    holder = main or image or resources
    if holder is None:
        return out
    main_name: str | None = None
    if main is not None and main.problem is None:
        value = getpath(obj, main.paths[0])
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            main_name = value["name"]

    def place(frag: FragmentPaths | None, leaf: str | None) -> tuple[Path, ...] | WriteBackError | None:
        """Where a main-container field lives: its own fragment path, else under containerPath."""
        if frag is not None:
            return frag.problem or frag.paths or None
        if main is None:
            return None
        if main.problem is not None:
            return main.problem
        return tuple(p if leaf is None else (*p, leaf) for p in main.paths)

    out.append(
        _Container(
            main_name,
            "main container",
            holder.target,
            place(image, "image"),
            place(resources, "resources"),
            place(None, None),
        )
    )
    return out


def _matches(selector: str, c: _Container, component: str) -> bool:
    if c.name is None:
        return selector in ("*", component)
    return fnmatch.fnmatchcase(c.name, selector)


# --- applying -----------------------------------------------------------------------------------


class _Refusals:
    """Edits a location cannot carry: collected, then raised as one error (nothing written)."""

    def __init__(self, dname: str) -> None:
        self.dname = dname
        self.items: list[str] = []
        self.refused: set[str] = set()

    def add(self, loc: PodLocation, edit: PodEdit, why: str) -> None:
        text = f"cannot set {edit_field(edit)} on component '{loc.name}': {why}"
        self.refused.add(loc.component)
        if text not in self.items:
            self.items.append(text)

    def raise_if_any(self, components: Iterable[str]) -> None:
        """Raise the collected refusals, naming the components that could take every edit."""
        if not self.items:
            return
        more = f" (and {len(self.items) - 5} more)" if len(self.items) > 5 else ""
        able = [c for c in dict.fromkeys(components) if c not in self.refused]
        hint = f" with --component {','.join(able)}" if able else ""
        raise WriteBackError(
            "; ".join(self.items[:5]) + more + f" (definition '{self.dname}'); nothing was changed. "
            f"Name the components that can take it{hint}."
        )


@dataclass
class _Run:
    obj: Any
    dname: str
    refusals: _Refusals
    warnings: list[str] = field(default_factory=list)
    #: container edits (by index) that found at least one container
    matched: set[int] = field(default_factory=set)
    #: containers seen per container edit (for the "no such container" message)
    seen: dict[int, list[str]] = field(default_factory=dict)
    #: resources blocks written (path, target), checked once at the end
    resources_written: list[tuple[Path, Target, str]] = field(default_factory=list)

    def write(self, path: Path, value: Any, t: Target) -> None:
        self.obj = set_at(self.obj, path, plain(value), t)

    def decide(self, existing: Existing, current: Any, wanted: Any, what: str, where: str) -> bool:
        """Whether to write ``wanted`` over ``current`` (kubectl's --overwrite rule)."""
        if current is None or current == wanted:
            return bool(current != wanted)
        if existing == "overwrite":
            return True
        if existing == "error":
            place = f" ({where})" if where else ""
            raise WriteBackError(f"'{what}' already has a value ({current}), and --overwrite is false{place}")
        self.warnings.append(
            f"{where or 'the workload'}: {what} is already {current!r}, kept (not {wanted!r})"
        )
        return False


def _map_edit(
    run: _Run,
    path: Path,
    t: Target,
    values: Mapping[str, str],
    unset: Sequence[str],
    existing: Existing,
    where: str,
) -> None:
    current = getpath(run.obj, path)
    base = dict(current) if isinstance(current, dict) else {}
    new = dict(base)
    for k, v in values.items():
        if k in new and new[k] != v and not run.decide(existing, new[k], v, k, where):
            continue
        new[k] = v
    for k in unset:
        new.pop(k, None)
    if new != base:
        run.write(path, new, t)


def _scalar_edit(
    run: _Run, path: Path, t: Target, value: Any, existing: Existing, what: str, where: str
) -> None:
    current = getpath(run.obj, path)
    if what == "schedulerName" and current == DEFAULT_SCHEDULER:
        current = None  # the API server's default (set before admission), not a choice to keep
    if run.decide(existing, current, value, what, where):
        run.write(path, value, t)


def _remove_key(run: _Run, path: Path, t: Target) -> None:
    parent = getpath(run.obj, path[:-1])
    if isinstance(parent, dict) and path[-1] in parent:
        new = dict(parent)
        del new[path[-1]]
        run.write(path[:-1], new, t)


def _tolerations(current: Any, edit: SetTolerations) -> list[Any]:
    items = [dict(x) if isinstance(x, dict) else x for x in (current if isinstance(current, list) else [])]
    for spec in edit.remove:
        key, _, effect = spec.partition(":")
        items = [
            x
            for x in items
            if not (
                isinstance(x, dict)
                and x.get("key", "") == key
                and (not effect or x.get("effect", "") == effect)
            )
        ]
    for tol in edit.add:
        wanted = tol.to_dict()
        if wanted in items:
            continue
        slot = next((i for i, x in enumerate(items) if isinstance(x, dict) and tol.same_slot(x)), None)
        if slot is None:
            items.append(wanted)
        else:
            items[slot] = wanted
    return items


def _node_affinity(current: Any, edit: SetNodeSelector) -> Any:
    """A node affinity that requires ``edit``'s labels (see :class:`SetNodeSelector`)."""
    affinity = copy.deepcopy(current) if isinstance(current, dict) else {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    required = dict(required) if isinstance(required, dict) else {}
    terms = [dict(t) for t in required.get("nodeSelectorTerms") or [] if isinstance(t, dict)]
    touched = set(edit.values) | set(edit.unset)

    def ours(expr: Any) -> bool:
        return isinstance(expr, dict) and expr.get("key") in touched and expr.get("operator") == "In"

    if edit.values and not terms:
        terms = [{}]
    new_terms = []
    for term in terms:
        exprs = [e for e in term.get("matchExpressions") or [] if not ours(e)]
        exprs += [{"key": k, "operator": "In", "values": [v]} for k, v in edit.values.items()]
        term = (
            {**term, "matchExpressions": exprs}
            if exprs
            else {k: v for k, v in term.items() if k != "matchExpressions"}
        )
        if term:
            new_terms.append(term)
    if new_terms:
        required["nodeSelectorTerms"] = new_terms
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    else:
        affinity.pop("requiredDuringSchedulingIgnoredDuringExecution", None)
    return affinity


def _env(container: Mapping[str, Any], edit: SetEnv) -> tuple[Any, Any]:
    env = [dict(e) if isinstance(e, dict) else e for e in container.get("env") or []]
    names = set(edit.values) | set(edit.unset)
    kept = [e for e in env if not (isinstance(e, dict) and e.get("name") in names)]
    # A variable that is set keeps its place in the list; new ones go at the end (kubectl's order).
    positions = {e.get("name"): i for i, e in enumerate(env) if isinstance(e, dict)}
    out = list(kept)
    for name, value in edit.values.items():
        entry = {"name": name, "value": value}
        if name in positions:
            out.insert(min(positions[name], len(out)), entry)
        else:
            out.append(entry)
    env_from = list(container.get("envFrom") or [])
    for source in edit.env_from:
        wanted = source.to_dict()
        if wanted not in env_from:
            env_from.append(wanted)
    return out, env_from


def _container_edit(run: _Run, loc: PodLocation, index: int, edit: SetImage | SetResources | SetEnv) -> None:
    for c in _containers(run.obj, loc):
        run.seen.setdefault(index, []).append(f"{loc.name}/{c.name or '*'}")
        if not _matches(edit.container, c, loc.component):
            continue
        run.matched.add(index)
        if isinstance(edit, SetImage):
            place: Any = c.image
            what = "imagePath"
        elif isinstance(edit, SetResources):
            place = c.resources
            what = "resourcesPath"
        else:
            place = c.bases
            what = "containerPath or containersPath"
        if isinstance(place, WriteBackError):
            raise place
        if place is None:
            run.refusals.add(
                loc, edit, f"its fragmentedPodSpecDefinition has no {what} for container '{c.name or '*'}'"
            )
            continue
        if isinstance(edit, SetImage):
            for p in place:
                if getpath(run.obj, p) != edit.image:
                    run.write(p, edit.image, c.target)
        elif isinstance(edit, SetResources):
            for p in place:
                current = getpath(run.obj, p)
                new = copy.deepcopy(current) if isinstance(current, dict) else {}
                for key, values in (("requests", edit.requests), ("limits", edit.limits)):
                    if values:
                        block = dict(new.get(key) or {}) if isinstance(new.get(key), dict) else {}
                        block.update(values)
                        new[key] = block
                if new != current:
                    run.write(p, new, c.target)
                run.resources_written.append((p, c.target, f"{loc.name}/{c.name or '*'}"))
        else:
            for p in place:
                current = getpath(run.obj, p)
                current = current if isinstance(current, dict) else {}
                env, env_from = _env(current, edit)
                if env != (current.get("env") or []):
                    if env:
                        run.write((*p, "env"), env, c.target)
                    else:
                        _remove_key(run, (*p, "env"), c.target)
                if env_from != (current.get("envFrom") or []):
                    run.write((*p, "envFrom"), env_from, c.target)


def _fragment(loc: PodLocation, wire: str) -> FragmentPaths | None:
    frag = loc.fragments.get(wire)
    if frag is not None and frag.problem is not None:
        raise frag.problem
    return frag


def _pod_edit(run: _Run, loc: PodLocation, edit: PodEdit) -> None:
    where = f"component '{loc.name}'"
    if loc.shape != "fragmented":
        assert loc.spec is not None
        spec, t = loc.spec, loc.target
        if isinstance(edit, SetSchedulerName):
            _scalar_edit(run, (*spec, "schedulerName"), t, edit.name, edit.existing, "schedulerName", where)
        elif isinstance(edit, SetPriorityClassName):
            _scalar_edit(
                run, (*spec, "priorityClassName"), t, edit.name, edit.existing, "priorityClassName", where
            )
        elif isinstance(edit, SetNodeSelector):
            _map_edit(run, (*spec, "nodeSelector"), t, edit.values, edit.unset, edit.existing, where)
        elif isinstance(edit, SetTolerations):
            current = getpath(run.obj, (*spec, "tolerations"))
            new = _tolerations(current, edit)
            if new != (current or []):
                run.write((*spec, "tolerations"), new, t)
        elif isinstance(edit, SetPodField):
            path = (*spec, *edit.path)
            if edit.remove:
                _remove_key(run, path, t)
            else:
                _scalar_edit(run, path, t, edit.value, edit.existing, "spec." + ".".join(edit.path), where)
        elif isinstance(edit, (SetPodLabels, SetPodAnnotations)):
            key = "labels" if isinstance(edit, SetPodLabels) else "annotations"
            if loc.metadata is None or loc.metadata_target is None:
                run.refusals.add(loc, edit, "it has podSpecPath but no metadataPath")
                return
            _map_edit(
                run, (*loc.metadata, key), loc.metadata_target, edit.values, edit.unset, edit.existing, where
            )
        return
    # fragmented
    if isinstance(edit, (SetSchedulerName, SetPriorityClassName)):
        wire = "schedulerName" if isinstance(edit, SetSchedulerName) else "priorityClassName"
        frag = _fragment(loc, wire)
        if frag is None:
            run.refusals.add(loc, edit, f"its fragmentedPodSpecDefinition has no {wire}Path")
            return
        for p in frag.paths:
            _scalar_edit(run, p, frag.target, edit.name, edit.existing, wire, where)
    elif isinstance(edit, (SetPodLabels, SetPodAnnotations)):
        wire = "labels" if isinstance(edit, SetPodLabels) else "annotations"
        frag = _fragment(loc, wire)
        if frag is None:
            run.refusals.add(loc, edit, f"its fragmentedPodSpecDefinition has no {wire}Path")
            return
        for p in frag.paths:
            _map_edit(run, p, frag.target, edit.values, edit.unset, edit.existing, where)
    elif isinstance(edit, SetNodeSelector):
        frag = _fragment(loc, "nodeAffinity")
        if frag is None:
            run.refusals.add(loc, edit, "its fragmentedPodSpecDefinition has no nodeAffinityPath to carry it")
            return
        for p in frag.paths:
            current = getpath(run.obj, p)
            new = _node_affinity(current, edit)
            if new != (current or {}):
                run.write(p, new, frag.target)
    elif isinstance(edit, SetTolerations):
        run.refusals.add(loc, edit, "its fragmentedPodSpecDefinition has no path for tolerations")
    elif isinstance(edit, SetPodField):
        carrier = next(
            ((prefix, wire) for prefix, wire in FRAGMENT_CARRIERS if edit.path[: len(prefix)] == prefix), None
        )
        frag = _fragment(loc, carrier[1]) if carrier is not None else None
        if carrier is None or frag is None:
            run.refusals.add(loc, edit, "its fragmentedPodSpecDefinition has no path for this pod field")
            return
        rest = edit.path[len(carrier[0]) :]
        for p in frag.paths:
            if edit.remove:
                if rest:
                    _remove_key(run, (*p, *rest), frag.target)
                elif getpath(run.obj, p) is not None:
                    _remove_key(run, p, frag.target)
            else:
                _scalar_edit(
                    run, (*p, *rest), frag.target, edit.value, edit.existing, edit_field(edit), where
                )


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _check_resources(run: _Run) -> None:
    """Kubernetes' container resource rules, on every requirements block an edit wrote."""
    for path, _t, where in run.resources_written:
        block = getpath(run.obj, path)
        if not isinstance(block, dict):
            continue
        requests = _dict(block.get("requests"))
        limits = _dict(block.get("limits"))
        for name, req in requests.items():
            try:
                r = parse_quantity(req)
                lim = parse_quantity(limits[name]) if name in limits else None
            except (QuantityError, ValueError):
                continue  # a value the edit did not write; the server judges it
            if is_extended_resource(name):
                if lim is None or lim != r:
                    raise InvalidEditError(
                        f"container {where}: {name} is an extended resource, so Kubernetes needs its "
                        f"limit set and equal to the request (request {req}, "
                        f"limit {limits.get(name, 'unset')})",
                        field=f"limits[{name}]",
                    )
            elif lim is not None and r > lim:
                raise InvalidEditError(
                    f"container {where}: the {name} request ({req}) must be less than or equal to the {name} "
                    f"limit ({limits[name]})",
                    field=f"requests[{name}]",
                )


def _object_edit(run: _Run, edit: SetLabels | SetAnnotations, t: Target | None) -> None:
    key = "labels" if isinstance(edit, SetLabels) else "annotations"
    meta = run.obj.get("metadata") if isinstance(run.obj, dict) else None
    current = meta.get(key) if isinstance(meta, dict) else None
    base = dict(current) if isinstance(current, dict) else {}
    new = dict(base)
    for k, v in edit.values.items():
        if k in new and new[k] != v and not run.decide(edit.existing, new[k], v, k, ""):
            continue
        new[k] = v
    for k in edit.unset:
        new.pop(k, None)
    if new != base:
        run.obj = {**run.obj, "metadata": {**(meta if isinstance(meta, dict) else {}), key: new}}
    del t


def apply_edits(
    definition: Definition,
    obj: Mapping[str, Any],
    edits: Sequence[PodEdit],
    *,
    components: Iterable[str] | None = None,
    unsupported: Literal["refuse", "warn"] = "refuse",
    instances: Iterable[tuple[str, str]] | None = None,
) -> Change:
    """Apply ``edits`` in order to every pod location of ``obj`` (limited to ``components``, and
    to the ``(component, instance id)`` pairs of ``instances``) and the object's own metadata;
    returns the :class:`Change` (``obj`` is not mutated).

    Raises :class:`WriteBackError` (nothing written) when a container name matches no container,
    when a location cannot carry an edit (a fragmented spec without the path, a pod spec without
    ``metadataPath`` for labels: every such place is named; ``unsupported="warn"`` skips those
    places with a warning instead), when a path the definition names
    cannot be written (:class:`NotAssignableError`), when an edit would leave an invalid
    template (:class:`InvalidEditError`), or when no pod location is present at all.
    """
    cd, dname = compiled_for(definition, obj)
    edits = list(edits)
    for e in edits:
        if not isinstance(e, EDIT_TYPES):
            raise WriteBackError(f"not an edit: {e!r}")
    pod_edits = [e for e in edits if not isinstance(e, _OBJECT_EDITS)]
    run = _Run(dict(obj), dname, _Refusals(dname))
    scope = components
    for e in pod_edits:
        if isinstance(e, _CONTAINER_EDITS) and e.component is not None and e.component not in cd.components:
            raise WriteBackError(
                f"component '{e.component}' not found in definition '{dname}' "
                f"(components: {', '.join(cd.components)})"
            )
    locations = pod_locations(cd, obj, scope) if pod_edits else []
    if instances is not None:
        wanted = set(instances)
        locations = [loc for loc in locations if (loc.component, loc.instance) in wanted]
    if pod_edits and not locations:
        raise WriteBackError(
            f"the object holds no pod template that definition '{dname}' locates; nothing to edit"
        )
    done: set[tuple[Any, ...]] = set()
    for loc in locations:
        # Two components naming the same place (an LWS leader falling back to the worker
        # template) are one location: each edit is applied to it once.
        key = (loc.shape, loc.spec, tuple(sorted((w, f.paths) for w, f in loc.fragments.items())))
        for i, e in enumerate(pod_edits):
            if isinstance(e, _CONTAINER_EDITS) and e.component not in (None, loc.component):
                continue
            if (key, i) in done:
                continue
            done.add((key, i))
            if isinstance(e, _CONTAINER_EDITS):
                _container_edit(run, loc, i, e)
            else:
                _pod_edit(run, loc, e)
    for i, e in enumerate(pod_edits):
        if isinstance(e, _CONTAINER_EDITS) and i not in run.matched:
            scope_text = f" of component '{e.component}'" if e.component else ""
            seen = sorted(set(run.seen.get(i, [])))
            listing = f" (containers: {', '.join(seen[:20])})" if seen else " (no containers found)"
            raise WriteBackError(f'unable to find container named "{e.container}"{scope_text}{listing}')
    if unsupported == "warn":  # the admission policy: apply what can be, say what cannot
        run.warnings += [f"{item} (definition '{dname}'): skipped" for item in run.refusals.items]
    else:
        run.refusals.raise_if_any(loc.component for loc in locations)
    _check_resources(run)
    for e in edits:
        if isinstance(e, _OBJECT_EDITS):
            _object_edit(run, e, None)
    return make_change(obj, run.obj, tuple(dict.fromkeys(run.warnings)))


__all__ = [
    "FragmentPaths",
    "PodLocation",
    "apply_edits",
    "pod_locations",
]
