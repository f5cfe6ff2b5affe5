"""Helpers for live workloads shared by the CLI (``wmap describe``, ``wmap group``, ``wmap get``) and
the HTTP server: owner references, the pod -> top owner climb, the definitions covering an object's
type, pods indexed by workload, and the live ``describe`` view (workload + its pods).

Nothing here talks to the API directly: callers pass the objects they fetched and an owner
``lookup(namespace, api_version, kind, name) -> dict | None`` (e.g.
:func:`workload_map.cluster.owners.make_owner_lookup`); each caller maps errors to its own (a
CLI error, an HTTP status).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workload_map.errors import WorkloadMapError

if TYPE_CHECKING:
    from workload_map.cluster.owners import OwnerLookup
    from workload_map.definitions_source import DefinitionEntry, DefinitionSet
    from workload_map.resolve.compiled import CompiledDefinition
    from workload_map.resolve.gangs import PodGroupPlan
    from workload_map.views.model import DescribeView

__all__ = [
    "MAX_KAI_OWNER_DEPTH",
    "MAX_OWNER_DEPTH",
    "DefinitionConflictError",
    "KaiPodGroup",
    "Lookup",
    "OwnerChainError",
    "controller_ref",
    "definitions_for",
    "describe_live",
    "index_pods_by_workload",
    "kai_pod_group",
    "kai_top_owner",
    "pod_group_document",
    "split_api_version",
    "top_owner",
]

#: How many controller owner references are followed from a pod at most.
MAX_OWNER_DEPTH = 6

#: ``lookup(namespace, api_version, kind, name) -> object | None`` (``None``: no such owner).
Lookup = Callable[[str, str, str, str], Mapping[str, Any] | None]


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` -> ``("apps", "v1")``; ``v1`` -> ``("", "v1")``."""
    group, _, version = api_version.rpartition("/")
    return group, version


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The one owner reference with ``controller: true`` (``None`` if none or several)."""
    refs = _meta(obj).get("ownerReferences")
    if not isinstance(refs, list):
        return None
    ctrl = [r for r in refs if isinstance(r, Mapping) and r.get("controller") is True]
    return ctrl[0] if len(ctrl) == 1 else None


def top_owner(
    obj: Mapping[str, Any],
    lookup: Lookup,
    *,
    on_error: Callable[[Mapping[str, Any], Exception], None] | None = None,
) -> Mapping[str, Any] | None:
    """The last object reached by following controller references up from ``obj`` (at most
    :data:`MAX_OWNER_DEPTH` levels, in ``obj``'s namespace); ``None`` when ``obj`` has no readable
    controller. A failing ``lookup`` is passed to ``on_error(ref, exc)`` (which should raise the
    caller's error); the exception is re-raised if it returns or there is none."""
    ns = str(_meta(obj).get("namespace") or "")
    top: Mapping[str, Any] | None = None
    current = obj
    for _ in range(MAX_OWNER_DEPTH):
        ref = controller_ref(current)
        if ref is None:
            break
        try:
            owner = lookup(ns, str(ref.get("apiVersion")), str(ref.get("kind")), str(ref.get("name")))
        except Exception as exc:
            if on_error is not None:
                on_error(ref, exc)
            raise
        if owner is None:
            break
        top = current = owner
    return top


class OwnerChainError(WorkloadMapError):
    """The owner chain cannot be followed the way KAI's pod-grouper follows it."""


#: How many owners :func:`kai_top_owner` follows at most (KAI has no limit; real chains are <= 6).
MAX_KAI_OWNER_DEPTH = 16


def kai_top_owner(pod: Mapping[str, Any], lookup: Lookup) -> Mapping[str, Any]:
    """The top owner KAI Scheduler's pod-grouper finds for ``pod``: its *first* owner reference
    (``controller`` not required), then each owner's only reference, until an owner has none.
    A pod without owner references is its own top owner; an owner with several references, one
    that does not exist or has another UID (recreated under the same name) is an
    :class:`OwnerChainError`. A lookup the API forbids (:class:`~workload_map.errors.
    ForbiddenError`) ends the walk at the last owner read, or the pod, as KAI does."""
    from workload_map.errors import ForbiddenError

    ns = str(_meta(pod).get("namespace") or "")
    refs = _meta(pod).get("ownerReferences")
    if not isinstance(refs, list) or not refs:
        return pod
    ref = refs[0]
    last: Mapping[str, Any] = pod
    for _ in range(MAX_KAI_OWNER_DEPTH):
        if not isinstance(ref, Mapping):
            raise OwnerChainError(f"{_describe(last)}: owner reference is not an object")
        kind, name = str(ref.get("kind")), str(ref.get("name"))
        try:
            owner = lookup(ns, str(ref.get("apiVersion")), kind, name)
        except ForbiddenError:
            return last
        if owner is None:
            raise OwnerChainError(f"failed to find {kind}: <{ns}/{name}>, uid: <{ref.get('uid')}>")
        if ref.get("uid") is not None and _meta(owner).get("uid") != ref.get("uid"):
            raise OwnerChainError(f"owner {kind} {ns}/{name} with uid {ref.get('uid')} not found")
        next_refs = _meta(owner).get("ownerReferences")
        if not isinstance(next_refs, list) or not next_refs:
            return owner
        if len(next_refs) > 1:
            raise OwnerChainError(f"found {kind} <{name} in namespace {ns}> with multiple owners")
        last, ref = owner, next_refs[0]
    raise OwnerChainError(f"{_describe(pod)}: owner chain longer than {MAX_KAI_OWNER_DEPTH}")


def _describe(obj: Mapping[str, Any]) -> str:
    return f"{obj.get('kind')} {_meta(obj).get('namespace')}/{_meta(obj).get('name')}"


def definitions_for(defs: DefinitionSet, obj: Mapping[str, Any]) -> tuple[list[DefinitionEntry], str]:
    """The definitions covering ``obj``'s type (exact GVK, else its group and kind at any version)
    and the type as text (``group/version, Kind=kind``) for messages."""
    group, version = split_api_version(str(obj.get("apiVersion")))
    kind = str(obj.get("kind"))
    found = defs.for_gvk(group, version, kind) or defs.for_group_kind(group, kind)
    return list(found), f"{group}/{version}, Kind={kind}"


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


def kai_pod_group(
    pod: Mapping[str, Any],
    lookup: Lookup,
    defs: DefinitionSet,
    *,
    priority_class_exists: Callable[[str], bool] | None = None,
) -> KaiPodGroup:
    """The PodGroup KAI's Karta fallback gives ``pod``: top owner by :func:`kai_top_owner`; the
    definition whose group/version/kind equals the top owner's exactly (KAI's Karta hub is keyed
    by GVK), else the default grouper. Raises :class:`OwnerChainError`,
    :class:`DefinitionConflictError` or the gang rules' :class:`~workload_map.errors.ResolveError`."""
    from workload_map.resolve.gangs import default_plan, group_pod
    from workload_map.resolve.kai_podgroup import pod_group_object

    top = kai_top_owner(pod, lookup)
    group, version = split_api_version(str(top.get("apiVersion")))
    found = defs.for_gvk(group, version, str(top.get("kind")))
    if len(found) > 1:
        names = ", ".join(f'"{e.name}"' for e in found)
        raise DefinitionConflictError(
            f"{len(found)} Karta definitions claim {group}/{version}, Kind={top.get('kind')}: {names}"
        )
    entry = found[0] if found else None
    plan = group_pod(entry.karta, top, pod) if entry is not None else default_plan(top)
    obj = pod_group_object(plan, top, pod, priority_class_exists=priority_class_exists)
    return KaiPodGroup(pod, top, entry, plan, obj)


def pod_group_document(answer: KaiPodGroup) -> dict[str, Any]:
    """The REST answer (``GET .../pods/{name}/podgroup``): the pod, its top owner, the
    definition (``null``: KAI's default grouper), the plan and the PodGroup ``object``."""
    top_meta = _meta(answer.top)
    pod_meta = _meta(answer.pod)
    return {
        "pod": pod_meta.get("name"),
        "namespace": pod_meta.get("namespace"),
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


def index_pods_by_workload(
    pods: Iterable[Mapping[str, Any]],
    workload_uids: set[str],
    lookup: Lookup | None,
) -> dict[str, list[Mapping[str, Any]]]:
    """Pods grouped by the workload (UID in ``workload_uids``) that owns them: any owner
    reference with the UID at some level, following controller references (through ``lookup``,
    at most 6 levels). Unreadable owners mean "not owned"."""
    out: dict[str, list[Mapping[str, Any]]] = {}
    for pod in pods:
        current: Mapping[str, Any] = pod
        ns = str(_meta(pod).get("namespace") or "")
        for _ in range(MAX_OWNER_DEPTH):
            refs = _meta(current).get("ownerReferences")
            refs = [r for r in refs if isinstance(r, Mapping)] if isinstance(refs, list) else []
            hit = next((r["uid"] for r in refs if r.get("uid") in workload_uids), None)
            if hit is not None:
                out.setdefault(str(hit), []).append(pod)
                break
            ctrl = controller_ref(current)
            if ctrl is None or lookup is None:
                break
            try:
                owner = lookup(ns, str(ctrl.get("apiVersion")), str(ctrl.get("kind")), str(ctrl.get("name")))
            except Exception:
                owner = None
            if owner is None:
                break
            current = owner
    return out


def describe_live(
    compiled: CompiledDefinition,
    entry: DefinitionEntry,
    obj: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]] | None,
    lookup: Callable[[], OwnerLookup],
) -> DescribeView:
    """The ``describe`` view of a live workload ``obj`` with its ``pods`` (``None``: not readable).

    The controllers of the pods not owned by ``obj`` directly are prefetched through ``lookup()``
    (called only when there are pods) before the pods are attributed. Raises
    :class:`~workload_map.errors.WorkloadMapError` when the definition cannot resolve ``obj``."""
    from workload_map.resolve import resolve
    from workload_map.resolve.pods import attribute_pods
    from workload_map.views.model import build_describe

    workload = resolve(compiled, obj)
    attribution = None
    if pods is not None:
        owners = lookup()
        meta = _meta(obj)
        ns = str(meta.get("namespace") or "")
        uid = meta.get("uid")
        keys = []
        for pod in pods:
            ref = controller_ref(pod)
            if ref is not None and ref.get("uid") != uid:
                keys.append((ns, str(ref.get("apiVersion")), str(ref.get("kind")), str(ref.get("name"))))
        if keys:
            owners.prefetch(keys)
        attribution = attribute_pods(compiled, obj, pods, owner_lookup=owners)
    by_name = {str(_meta(p).get("name")): p for p in pods or []}
    return build_describe(
        workload,
        obj,
        definition=entry.name,
        origin=entry.origin,
        attribution=attribution,
        unattributed_pods=by_name,
    )
