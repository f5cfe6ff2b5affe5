"""The one owner-reference walk, and what is built on it: KAI Scheduler's top owner, whether a
pod belongs to a workload, and pods indexed by the workload that owns them.

Bottom-up (:func:`climb`): from an object through controller references, one owner lookup per
level, at most :data:`MAX_OWNER_DEPTH` levels. A lookup ``(namespace, apiVersion, kind, name)
-> object | None`` is supplied by the caller: the CLI and server fetch from the API (cached,
:mod:`workload_map.cluster.owners`), the exporter reads its informer stores, offline commands a
file. A missing or unreadable owner ends the walk ("not owned", spec 3.8).

Top-down (:func:`descendants`): from a workload's UID through an owner-UID index, for consumers
that hold every object in memory (the exporter). Any object may own the next level: an LWS
leader *Pod* owns its group's worker StatefulSet (framework-shapes.md 2).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

from workload_map.errors import ForbiddenError, WorkloadMapError
from workload_map.kube.objects import (
    KubeObject,
    OwnerReference,
    controller_ref,
    meta,
    name_of,
    namespace_of,
    owner_refs,
    ref_key,
    split_api_version,
)

#: How many controller references are followed from an object at most.
MAX_OWNER_DEPTH = 6
#: How many owners :func:`kai_top_owner` follows at most (KAI has no limit; real chains are <= 6).
MAX_KAI_OWNER_DEPTH = 16

#: ``lookup(namespace, api_version, kind, name) -> object | None`` (``None``: no such owner).
OwnerLookup = Callable[[str, str, str, str], KubeObject | None]
#: ``on_error(ref, exc)``: told about a failing lookup (may raise the caller's own error).
LookupErrorHandler = Callable[[OwnerReference, Exception], None]


@dataclass(frozen=True)
class Step:
    """One level of a climb: the controller reference followed and the owner it names
    (``None`` when the owner could not be read, which ends the climb)."""

    ref: OwnerReference
    owner: KubeObject | None


def climb(
    obj: KubeObject,
    lookup: OwnerLookup | None,
    *,
    max_depth: int = MAX_OWNER_DEPTH,
    on_error: LookupErrorHandler | None = None,
    until: Callable[[OwnerReference], bool] | None = None,
) -> Iterator[Step]:
    """The controller-reference chain above ``obj`` (owners in ``obj``'s namespace), lazily.
    A reference that ``until`` accepts is yielded without its owner (no lookup) and ends the
    climb: a caller that knows the kind saves the request. No ``lookup`` yields the first
    reference with owner ``None``. A failing lookup goes to ``on_error`` and ends the climb
    like a missing owner."""
    namespace = namespace_of(obj)
    current = obj
    for _ in range(max_depth):
        ref = controller_ref(current)
        if ref is None:
            return
        if until is not None and until(ref):
            yield Step(ref, None)
            return
        owner: KubeObject | None = None
        if lookup is not None:
            try:
                owner = lookup(*ref_key(namespace, ref))
            except Exception as exc:  # any failure reads as "owner unknown" (spec 3.8)
                if on_error is not None:
                    on_error(ref, exc)
                owner = None
        yield Step(ref, owner if isinstance(owner, Mapping) else None)
        if not isinstance(owner, Mapping):
            return
        current = owner


def chain(
    obj: KubeObject, lookup: OwnerLookup | None, *, max_depth: int = MAX_OWNER_DEPTH
) -> Iterator[KubeObject]:
    """``obj`` and then each readable owner up its controller chain: at most ``max_depth``
    objects, ``obj`` included."""
    yield obj
    for step in climb(obj, lookup, max_depth=max_depth - 1):
        if step.owner is None:
            return
        yield step.owner


def owner_in(
    obj: KubeObject,
    uids: Callable[[str], bool],
    lookup: OwnerLookup | None,
    *,
    max_depth: int = MAX_OWNER_DEPTH,
) -> str | None:
    """The first UID, at any level of ``obj``'s chain, of an owner reference (controller or
    not) that ``uids`` accepts: the workload owning a pod. ``None`` when no level has one."""
    for level in chain(obj, lookup, max_depth=max_depth):
        for ref in owner_refs(level):
            uid = ref.get("uid")
            if isinstance(uid, str) and uid and uids(uid):
                return uid
    return None


def owned_by(
    obj: KubeObject, root_uid: str, lookup: OwnerLookup | None, *, max_depth: int = MAX_OWNER_DEPTH
) -> bool:
    """Whether ``obj`` is owned, directly or through controllers, by the object ``root_uid``."""
    return owner_in(obj, lambda uid: uid == root_uid, lookup, max_depth=max_depth) is not None


def under_covered_kind(
    obj: KubeObject,
    covered: Callable[[OwnerReference], bool],
    lookup: OwnerLookup | None,
    *,
    on_error: LookupErrorHandler | None = None,
) -> bool:
    """Whether a controller up ``obj``'s chain is of a kind ``covered`` accepts: then ``obj``
    is part of that workload, not a workload of its own (a Deployment's pods through their
    ReplicaSet, a JobSet's Jobs). The climb stops at the first covered reference without
    reading it; ``get --all-types`` and the server's list both keep only objects where this is
    false."""
    return any(covered(step.ref) for step in climb(obj, lookup, on_error=on_error, until=covered))


def lookup_in(objects: Iterable[KubeObject]) -> OwnerLookup:
    """An owner lookup over ``objects`` (a ``kubectl get -o yaml`` List read offline). Owners
    are matched by group, not version: a List holds each object at the version kubectl chose."""
    by_key: dict[tuple[str, str, str, str], KubeObject] = {}
    for o in objects:
        group, _ = split_api_version(str(o.get("apiVersion") or ""))
        by_key.setdefault((namespace_of(o), group, str(o.get("kind")), name_of(o)), o)

    def lookup(ns: str, api_version: str, kind: str, name: str) -> KubeObject | None:
        group, _ = split_api_version(api_version)
        return by_key.get((ns, group, kind, name))

    return lookup


def index_by_owner(
    objs: Iterable[KubeObject], owner_uids: set[str], lookup: OwnerLookup | None
) -> dict[str, list[KubeObject]]:
    """``objs`` (pods) grouped by the owner in ``owner_uids`` that owns each (see :func:`owner_in`)."""
    out: dict[str, list[KubeObject]] = {}
    for obj in objs:
        uid = owner_in(obj, owner_uids.__contains__, lookup)
        if uid is not None:
            out.setdefault(uid, []).append(obj)
    return out


def descendants(
    root_uid: str, children: Callable[[str], Iterable[KubeObject]], *, max_depth: int = MAX_OWNER_DEPTH
) -> Iterator[KubeObject]:
    """Every object below ``root_uid``, level by level: ``children(uid)`` are the objects with
    an owner reference to ``uid`` (an owner index). Each object is yielded once; at most
    ``max_depth`` levels."""
    frontier = [root_uid]
    seen = {root_uid}
    for _ in range(max_depth):
        nxt: list[str] = []
        for uid in frontier:
            for child in children(uid):
                cuid = meta(child).get("uid")
                if not isinstance(cuid, str) or not cuid or cuid in seen:
                    continue
                seen.add(cuid)
                nxt.append(cuid)
                yield child
        if not nxt:
            return
        frontier = nxt


class OwnerChainError(WorkloadMapError):
    """The owner chain cannot be followed the way KAI's pod-grouper follows it."""


def kai_top_owner(pod: KubeObject, lookup: OwnerLookup) -> KubeObject:
    """The top owner KAI Scheduler's pod-grouper finds for ``pod``: its *first* owner reference
    (``controller`` not required), then each owner's only reference, until an owner has none.
    A pod without owner references is its own top owner; an owner with several references, one
    that does not exist or has another UID (recreated under the same name) is an
    :class:`OwnerChainError`. A lookup the API forbids (:class:`~workload_map.errors.
    ForbiddenError`) ends the walk at the last owner read, or the pod, as KAI does."""
    ns = namespace_of(pod)
    refs = owner_refs(pod)
    if not refs:
        return pod
    ref = refs[0]
    last: KubeObject = pod
    for _ in range(MAX_KAI_OWNER_DEPTH):
        kind, name = str(ref.get("kind")), str(ref.get("name"))
        try:
            owner = lookup(*ref_key(ns, ref))
        except ForbiddenError:
            return last
        if owner is None:
            raise OwnerChainError(f"failed to find {kind}: <{ns}/{name}>, uid: <{ref.get('uid')}>")
        if ref.get("uid") is not None and meta(owner).get("uid") != ref.get("uid"):
            raise OwnerChainError(f"owner {kind} {ns}/{name} with uid {ref.get('uid')} not found")
        next_refs = owner_refs(owner)
        if not next_refs:
            return owner
        if len(next_refs) > 1:
            raise OwnerChainError(f"found {kind} <{name} in namespace {ns}> with multiple owners")
        last, ref = owner, next_refs[0]
    raise OwnerChainError(
        f"{pod.get('kind')} {ns}/{meta(pod).get('name')}: owner chain longer than {MAX_KAI_OWNER_DEPTH}"
    )


__all__ = [
    "MAX_KAI_OWNER_DEPTH",
    "MAX_OWNER_DEPTH",
    "LookupErrorHandler",
    "OwnerChainError",
    "OwnerLookup",
    "Step",
    "chain",
    "climb",
    "descendants",
    "index_by_owner",
    "kai_top_owner",
    "lookup_in",
    "owned_by",
    "owner_in",
]
