"""Answers about live workloads shared by the CLI (``wmap describe``, ``wmap group``) and the
HTTP server: the definitions covering an object's type, the PodGroup KAI Scheduler creates for
a pod, a workload's gang objects for every scheduler (``wmap gang``, ``GET .../gangs``) with the
warnings about the objects the cluster already holds, and the live ``describe`` view (workload +
its pods). Owner references and the owner walk
are :mod:`workload_map.kube`.

Nothing here talks to the API directly: callers pass the objects they fetched, the reads to make
(``get(path)``, :data:`GangObjectReader`: the server checks its caller's RBAC in them) and an owner
``lookup(namespace, api_version, kind, name) -> dict | None`` (e.g.
:func:`workload_map.cluster.owners.make_owner_lookup`); each caller maps errors to its own (a
CLI error, an HTTP status).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workload_map.errors import WorkloadMapError
from workload_map.kube.objects import (
    controller_ref,
    gvk_text,
    meta,
    name_of,
    namespace_of,
    ref_key,
    split_api_version,
    uid_of,
)
from workload_map.kube.owners import OwnerChainError, kai_top_owner
from workload_map.kube.owners import OwnerLookup as Lookup

if TYPE_CHECKING:
    from workload_map.cluster.owners import OwnerLookup
    from workload_map.definitions_source import DefinitionEntry, DefinitionSet
    from workload_map.resolve.compiled import CompiledDefinition
    from workload_map.resolve.dra import ClaimLookup
    from workload_map.resolve.gang_plan import GangPlan, PlanOptions
    from workload_map.resolve.gangs import PodGroupPlan
    from workload_map.resolve.pods import PodAttribution
    from workload_map.resolve.schedulers import Rendered, RenderOptions, TemplateChange
    from workload_map.views.model import DescribeView

__all__ = [
    "DefinitionConflictError",
    "GangAnswer",
    "GangObjectReader",
    "KaiPodGroup",
    "NotServedError",
    "OwnerChainError",
    "PodGangAnswer",
    "PodLister",
    "definitions_for",
    "describe_live",
    "gang_objects",
    "gang_warnings",
    "kai_pod_group",
    "pod_gang_objects",
    "pod_group_document",
    "priority_class_exists",
    "priority_values",
]


def definitions_for(defs: DefinitionSet, obj: Mapping[str, Any]) -> tuple[list[DefinitionEntry], str]:
    """The definitions covering ``obj``'s type (exact GVK, else its group and kind at any version)
    and the type as text (``group/version, Kind=kind``) for messages."""
    group, version = split_api_version(str(obj.get("apiVersion")))
    kind = str(obj.get("kind"))
    found = defs.for_gvk(group, version, kind) or defs.for_group_kind(group, kind)
    return list(found), gvk_text(group, version, kind)


class DefinitionConflictError(WorkloadMapError):
    """More than one definition claims a type exactly."""


@dataclass(frozen=True)
class KaiPodGroup:
    """What KAI Scheduler's pod-grouper does for one pod: its top owner, the definition used
    (``None``: none covers the type exactly, so KAI's default grouper), the gang plan and the
    PodGroup object KAI creates."""

    pod: Mapping[str, Any]
    top: Mapping[str, Any]
    entry: DefinitionEntry | None
    plan: PodGroupPlan
    object: dict[str, Any]


#: ``list_pods(namespace, labels)``: the pods of ``namespace`` carrying every one of ``labels``
#: (live: a labelSelector list; offline: the pods among the objects given).
PodLister = Callable[[str, Mapping[str, str]], Sequence[Mapping[str, Any]]]


def kai_pod_group(
    pod: Mapping[str, Any],
    lookup: Lookup,
    defs: DefinitionSet,
    *,
    priority_class_exists: Callable[[str], bool] | None = None,
    list_pods: PodLister | None = None,
) -> KaiPodGroup:
    """The PodGroup KAI's Karta fallback gives ``pod``: top owner by :func:`kai_top_owner`; the
    definition whose group/version/kind equals the top owner's exactly (KAI's Karta hub is keyed
    by GVK), else the default grouper. When the definition's gang rules read other pods (KAI's
    MPIJob grouper: the launcher pods), ``list_pods`` gives them (``None``: unknown, the rules
    then count as if they existed). Raises :class:`OwnerChainError`,
    :class:`DefinitionConflictError` or the gang rules' :class:`~workload_map.errors.ResolveError`."""
    from workload_map.resolve.gangs import default_plan, group_pod, pods_wanted
    from workload_map.resolve.kai_podgroup import pod_group_object

    top = kai_top_owner(pod, lookup)
    group, version = split_api_version(str(top.get("apiVersion")))
    found = defs.for_gvk(group, version, str(top.get("kind")))
    if len(found) > 1:
        names = ", ".join(f'"{e.name}"' for e in found)
        raise DefinitionConflictError(
            f"{len(found)} Karta definitions claim {gvk_text(group, version, str(top.get('kind')))}: {names}"
        )
    entry = found[0] if found else None
    if entry is None:
        plan = default_plan(top)
    else:
        wanted = pods_wanted(entry.karta, top, pod) if list_pods is not None else None
        others = list_pods(namespace_of(top), wanted) if list_pods is not None and wanted else None
        plan = group_pod(entry.karta, top, pod, others)
    obj = pod_group_object(plan, top, pod, priority_class_exists=priority_class_exists)
    return KaiPodGroup(pod, top, entry, plan, obj)


def pod_group_document(answer: KaiPodGroup) -> dict[str, Any]:
    """The REST answer (``GET .../pods/{name}/podgroup``): the pod, its top owner, the
    definition (``null``: KAI's default grouper), the plan and the PodGroup ``object``."""
    top_meta = meta(answer.top)
    pod_meta = meta(answer.pod)
    return {
        "pod": pod_meta.get("name"),
        "namespace": pod_meta.get("namespace"),
        "scheduler": "kai",
        "topOwner": {
            "apiVersion": answer.top.get("apiVersion"),
            "kind": answer.top.get("kind"),
            "name": top_meta.get("name"),
            "uid": top_meta.get("uid"),
        },
        "definition": answer.entry.name if answer.entry is not None else None,
        "origin": answer.entry.origin if answer.entry is not None else None,
        "podGroup": answer.plan.to_dict(),
        "object": answer.object,
    }


@dataclass(frozen=True)
class GangAnswer:
    """A workload's gang objects for one scheduler: the definition used, the plan and what it
    renders to (objects, pod-template and workload changes, notes)."""

    entry: DefinitionEntry
    workload: Mapping[str, Any]
    plan: GangPlan
    rendered: Rendered

    def to_dict(self) -> dict[str, Any]:
        """The whole answer (``wmap gang -o json``, ``GET .../workloads/{type}/{name}/gangs``)."""
        return self.rendered.to_dict(self.plan)


def gang_objects(
    entry: DefinitionEntry,
    obj: Mapping[str, Any],
    scheduler: str,
    plan_options: PlanOptions | None = None,
    render_options: RenderOptions | None = None,
    claims: ClaimLookup | None = None,
) -> GangAnswer:
    """``obj``'s gang plan through ``entry``'s definition, rendered for ``scheduler``; ``claims``
    reads the DRA claims the pod specs name (their GPUs count in the gangs' minimum resources).
    Raises the gang rules' :class:`~workload_map.errors.ResolveError` (limits included)."""
    from workload_map.resolve.gang_plan import plan_gangs
    from workload_map.resolve.schedulers import render

    plan = plan_gangs(entry.karta, obj, plan_options, claims=claims)
    return GangAnswer(entry, obj, plan, render(plan, scheduler, render_options))


@dataclass(frozen=True)
class PodGangAnswer:
    """The object of ``scheduler`` a pod joins: the pod, its top owner and the workload's gang
    answer, the pod's component and instance, and that object (``None``: no gang holds the pod)."""

    pod: Mapping[str, Any]
    answer: GangAnswer
    component: str
    instance_id: str
    object: dict[str, Any] | None

    @property
    def template_change(self) -> TemplateChange | None:
        """The change that links the pod's template (component and instance) to :attr:`object`."""
        for c in self.answer.rendered.template_changes:
            if (c.component, c.instance_id) == (self.component, self.instance_id):
                return c
        return None

    def missing(self) -> str:
        """Why no object holds the pod (for when :attr:`object` is ``None``)."""
        plan, rendered = self.answer.plan, self.answer.rendered
        why = "; ".join([*plan.notes, *rendered.notes]) or "its component is in no gang"
        return (
            f"{plan.kind}/{plan.name} gives {rendered.scheduler} no object for component "
            f"{self.component!r}: {why}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The REST answer (``GET .../pods/{name}/podgroup?scheduler=S``, S other than kai): the
        pod, its top owner, the definition, the pod's component and instance, the ``object`` it
        joins (``wmap group --scheduler S -o json``) and its pod template's change."""
        plan, entry = self.answer.plan, self.answer.entry
        pod_meta = meta(self.pod)
        change = self.template_change
        return {
            "pod": pod_meta.get("name"),
            "namespace": pod_meta.get("namespace"),
            "scheduler": self.answer.rendered.scheduler,
            "topOwner": {
                "apiVersion": plan.api_version,
                "kind": plan.kind,
                "name": plan.name,
                "uid": plan.uid,
            },
            "definition": entry.name,
            "origin": entry.origin,
            "component": self.component,
            "instanceId": self.instance_id,
            "object": self.object,
            "podTemplateChange": change.to_dict() if change is not None else None,
        }


def pod_gang_objects(
    pod: Mapping[str, Any],
    lookup: Lookup,
    defs: DefinitionSet,
    scheduler: str,
    plan_options: PlanOptions | None = None,
    render_options: RenderOptions | None = None,
    claims: ClaimLookup | None = None,
) -> PodGangAnswer:
    """The ``scheduler`` object ``pod`` joins: its top owner (KAI's owner walk), the definition
    covering the owner's type (exact version, else the group and kind), the whole workload's gang
    objects and the one linked to the pod's component and instance. Raises
    :class:`OwnerChainError`, :class:`DefinitionConflictError`, or
    :class:`~workload_map.errors.ResolveError` (no definition covers the owner: a
    :class:`~workload_map.errors.ResolveError` naming its type)."""
    from workload_map.errors import ResolveError
    from workload_map.resolve.gangs import infer_pod_component, infer_pod_instance

    top = kai_top_owner(pod, lookup)
    found, gvk = definitions_for(defs, top)
    if not found:
        raise ResolveError(f"no Karta definition covers the pod's top owner {top.get('kind')} ({gvk})")
    if len(found) > 1:
        names = ", ".join(f'"{e.name}"' for e in found)
        raise DefinitionConflictError(f"{len(found)} Karta definitions claim {gvk}: {names}")
    answer = gang_objects(found[0], top, scheduler, plan_options, render_options, claims)
    component = infer_pod_component(pod, found[0].karta)
    instance = infer_pod_instance(pod, component, top, found[0].karta)
    return PodGangAnswer(pod, answer, component, instance, answer.rendered.object_for(component, instance))


#: ``read(api_version, kind, namespace, name)``: the object as the cluster holds it (``None``:
#: it does not exist); raises :class:`NotServedError` when the cluster serves no such kind and
#: :class:`~workload_map.errors.WorkloadMapError` when it cannot be read.
GangObjectReader = Callable[[str, str, str, str], "Mapping[str, Any] | None"]


class NotServedError(WorkloadMapError):
    """The cluster serves no resource of the kind (its scheduler's CRD is not installed)."""


def gang_warnings(answer: GangAnswer, read: GangObjectReader, max_reads: int | None = None) -> list[str]:
    """What a live ``wmap gang`` (and its REST route) warns about: one warning per object kind
    the cluster does not serve (nothing retried), one per object that could not be read, and
    the objects another controller already holds (:func:`~workload_map.resolve.schedulers.conflicts`).
    At most ``max_reads`` objects are read (``None``: every one); the rest are counted in a warning."""
    from workload_map.errors import ForbiddenError
    from workload_map.resolve.schedulers import conflicts

    warnings: list[str] = []
    existing: list[Mapping[str, Any]] = []
    missing: set[tuple[str, str]] = set()
    reads = 0
    for i, obj in enumerate(answer.rendered.objects):
        key = (str(obj.get("apiVersion")), str(obj.get("kind")))
        if key in missing:
            continue
        if max_reads is not None and reads >= max_reads:
            left = len(answer.rendered.objects) - i
            warnings.append(
                f"{left} more objects were not checked for another owner (at most {max_reads} are read)"
            )
            break
        reads += 1
        try:
            found = read(key[0], key[1], namespace_of(obj), name_of(obj))
        except NotServedError:
            missing.add(key)
            warnings.append(
                f"{key[1]} ({key[0]}) is not served by this cluster: install the scheduler's CRD "
                "before creating these objects"
            )
            continue
        except ForbiddenError:
            warnings.append(f"not allowed to read {key[1]} {name_of(obj)}: its owner was not checked")
            continue
        except WorkloadMapError as exc:
            warnings.append(f"could not read {key[1]} {name_of(obj)}: {exc}")
            continue
        if found is not None:
            existing.append(found)
    warnings.extend(conflicts(answer.plan, answer.rendered, existing))
    return warnings


def priority_class_exists(get: Callable[[str], Mapping[str, Any]]) -> Callable[[str], bool]:
    """Whether a PriorityClass exists, read with ``get(path)``, one read per name (KAI keeps a
    pod's priority class only if it exists). A class the reader may not read counts as existing:
    the name is what the user asked for."""
    from workload_map.errors import ForbiddenError, NotFoundError
    from workload_map.kube.objects import api_path

    cache: dict[str, bool] = {}

    def exists(name: str) -> bool:
        if name not in cache:
            try:
                get(api_path("scheduling.k8s.io/v1", "priorityclasses", name=name))
                cache[name] = True
            except NotFoundError:
                cache[name] = False
            except ForbiddenError:
                cache[name] = True
        return cache[name]

    return exists


def priority_values(get: Callable[[str], Mapping[str, Any]]) -> Callable[[str], int | None]:
    """PriorityClass values read with ``get(path)`` (a client's GET), one read per name; a class
    that cannot be read (missing, forbidden, unreachable) has an unknown value (``None``)."""
    from workload_map.kube.objects import api_path

    cache: dict[str, int | None] = {}

    def value(name: str) -> int | None:
        if name not in cache:
            try:
                obj = get(api_path("scheduling.k8s.io/v1", "priorityclasses", name=name))
                v = obj.get("value")
                cache[name] = v if isinstance(v, int) and not isinstance(v, bool) else None
            except WorkloadMapError:
                cache[name] = None
        return cache[name]

    return value


def describe_live(
    compiled: CompiledDefinition,
    entry: DefinitionEntry,
    obj: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]] | None,
    lookup: Callable[[], OwnerLookup],
    events: Sequence[Mapping[str, Any]] | None = None,
    claims: ClaimLookup | None = None,
) -> DescribeView:
    """The ``describe`` view of a live workload ``obj`` with its ``pods`` (``None``: not readable).

    The controllers of the pods not owned by ``obj`` directly are prefetched through ``lookup()``
    (called only when there are pods) before the pods are attributed. ``events`` (the
    namespace's, or ``None`` when not read) are kept when they are about the workload, the owners
    between it and its pods, or its pods. ``claims`` reads the DRA claims the pod specs name (their
    GPUs count). Raises :class:`~workload_map.errors.WorkloadMapError` when the definition cannot
    resolve ``obj``."""
    from workload_map.resolve import resolve
    from workload_map.resolve.pods import attribute_pods
    from workload_map.views.model import build_describe

    workload = resolve(compiled, obj, claims=claims)
    attribution = None
    owners: OwnerLookup | None = None
    if pods is not None:
        owners = lookup()
        ns, uid = namespace_of(obj), uid_of(obj)
        keys = []
        for pod in pods:
            ref = controller_ref(pod)
            if ref is not None and ref.get("uid") != uid:
                keys.append(ref_key(ns, ref))
        if keys:
            owners.prefetch(keys)
        attribution = attribute_pods(compiled, obj, pods, owner_lookup=owners)
    by_name = {name_of(p): p for p in pods or []}
    about = None
    if events is not None:
        from workload_map.kube.events import about as events_about

        about = events_about(events, _chain_uids(obj, attribution, by_name, owners))
    return build_describe(
        workload,
        obj,
        definition=entry.name,
        origin=entry.origin,
        attribution=attribution,
        unattributed_pods=by_name,
        events=about,
    )


def _chain_uids(
    obj: Mapping[str, Any],
    attribution: PodAttribution | None,
    pods: Mapping[str, Mapping[str, Any]],
    lookup: Lookup | None,
) -> set[str]:
    """The workload's uid, its attributed pods' and the owners between them (already cached by
    the attribution's climb)."""
    from workload_map.kube.owners import climb

    top = uid_of(obj)
    uids = {top} if top else set()
    for info in attribution.pods if attribution is not None else ():
        pod = pods.get(info.name)
        if pod is None:
            continue
        if uid_of(pod):
            uids.add(uid_of(pod))
        # The workload itself ends the climb unread: it is at hand, a GET would only repeat it.
        for step in climb(pod, lookup, until=lambda ref: ref.get("uid") == top):
            uid = step.ref.get("uid")
            if not isinstance(uid, str) or uid == top:
                break
            uids.add(uid)
    return uids
