"""Workload rows, lists (filters, RBAC filtering, sorting, pages) and details for the API."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from workload_map.errors import WorkloadMapError
from workload_map.server.errors import HttpError

if TYPE_CHECKING:
    from workload_map.cluster.claims import ClaimReader
    from workload_map.cluster.owners import OwnerLookup
    from workload_map.quarantine import Quarantine
    from workload_map.resolve.dra import ClaimLookup
    from workload_map.resolve.pods import PodAttribution
    from workload_map.resolve.types import Workload
    from workload_map.server.auth import AccessReviewer, User
    from workload_map.server.state import ClusterState, TypeRef

__all__ = ["Query", "claim_reader", "list_workloads", "row_for", "visible"]

Obj = dict[str, Any]
#: Claims one request may look up in the cache (each a dict lookup; a list names one per workload).
MAX_CLAIM_LOOKUPS = 65536


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, Mapping) else {}


def age_seconds(created: str | None, now: datetime | None = None) -> int | None:
    if not created:
        return None
    try:
        at = datetime.fromisoformat(created.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0, int(((now or datetime.now(timezone.utc)) - at).total_seconds()))


def with_object(t: TypeRef, obj: Obj) -> Obj:
    """List items carry no apiVersion/kind: add them (a shallow copy)."""
    out = dict(obj)
    out.setdefault("apiVersion", t.resource.group_version)
    out.setdefault("kind", t.resource.kind)
    return out


def row_for(
    t: TypeRef,
    obj: Obj,
    pods: Sequence[Mapping[str, Any]] | None,
    quarantine: Quarantine | None = None,
    claims: ClaimLookup | None = None,
) -> Obj:
    """The API row of one workload; ``pods`` already scoped to it; ``claims`` finds the DRA
    claims its pod specs name (their GPUs count, as in the CLI). A workload that cannot be
    resolved (or whose definition is quarantined) is a row too, marked with ``error``."""
    from workload_map.resolve import resolve
    from workload_map.resolve.pods import attribute_pods
    from workload_map.views.model import build_view, error_view

    obj = with_object(t, obj)

    def evaluate() -> tuple[Workload, PodAttribution | None]:
        workload = resolve(t.compiled, obj, claims=claims)
        attribution = None
        if pods is not None:
            attribution = attribute_pods(t.compiled, obj, pods, check_ownership=False)
        return workload, attribution

    try:
        workload, attribution = quarantine.run(t.entry.name, evaluate) if quarantine else evaluate()
        view = build_view(
            workload, obj, definition=t.entry.name, origin=t.entry.origin, attribution=attribution
        )
    except WorkloadMapError as exc:
        view = error_view(obj, definition=t.entry.name, origin=t.entry.origin, error=str(exc))
    out = view.to_dict()
    meta = _meta(obj)
    out["uid"] = view.uid
    out["ageSeconds"] = age_seconds(view.created_at)
    out["resourceVersion"] = str(meta.get("resourceVersion") or "") or None
    return out


def visible(reviewer: AccessReviewer, user: User, t: TypeRef, namespace: str, verb: str = "list") -> bool:
    """May ``user`` ``verb`` ``t``'s resource in ``namespace`` (cluster-wide permission counts)?"""
    res = t.resource
    if reviewer.allowed(user, verb, group=res.group, resource=res.name):
        return True
    return bool(namespace) and reviewer.allowed(
        user, verb, group=res.group, resource=res.name, namespace=namespace
    )


def claim_reader(state: ClusterState, reviewer: AccessReviewer, user: User) -> ClaimReader:
    """The DRA claims and templates ``user`` may get, from the server's cache (read with the
    server's identity, shown only as far as the user could read them, as the CLI reads them):
    what could not be counted is in its ``warnings()``, in the CLI's words."""
    from workload_map.cluster.claims import GROUP, PLURALS, ClaimReader
    from workload_map.errors import ForbiddenError

    cache = state.claims()

    def read(kind: str, namespace: str, name: str) -> Mapping[str, Any]:
        if not reviewer.allowed(user, "get", group=GROUP, resource=PLURALS[kind], namespace=namespace):
            raise ForbiddenError(403, "Forbidden", f"{PLURALS[kind]}.{GROUP} in {namespace}")
        return cache.read(kind, namespace, name)

    return ClaimReader.over(read, MAX_CLAIM_LOOKUPS)


def may_list_pods(reviewer: AccessReviewer, user: User, namespace: str) -> bool:
    if reviewer.allowed(user, "list", group="", resource="pods"):
        return True
    return bool(namespace) and reviewer.allowed(user, "list", group="", resource="pods", namespace=namespace)


def pods_by_workload(
    state: ClusterState,
    reviewer: AccessReviewer,
    user: User,
    namespaces: Iterable[str],
    uids: set[str],
    lookup: OwnerLookup | None,
) -> dict[str, list[Mapping[str, Any]]] | None:
    """Pods (from the pod cache) of the namespaces the user may list pods in, by owning workload
    UID; ``None`` for namespaces where the user may not (their rows then have no ready counts)."""
    from workload_map.kube.owners import index_by_owner

    store = state.pods().store
    pods: list[Mapping[str, Any]] = []
    for ns in sorted(set(namespaces)):
        if may_list_pods(reviewer, user, ns):
            pods.extend(store.by_index("namespace", ns))
    return index_by_owner(pods, uids, lookup)


@dataclass(frozen=True)
class Query:
    types: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()
    label_selector: str = ""
    sort: str = "-createdAt"

    def fingerprint(self) -> str:
        data = json.dumps([self.types, self.namespaces, self.phases, self.label_selector, self.sort])
        return hashlib.sha256(data.encode()).hexdigest()[:16]


def select_types(state: ClusterState, tokens: Sequence[str]) -> list[TypeRef]:
    if not tokens:
        return state.served_types()
    out: list[TypeRef] = []
    for token in tokens:
        found = state.resolve_token(token)
        if not found:
            raise HttpError(
                404,
                "no_definition_for_type",
                f'no Karta definition covers "{token}", or the cluster does not serve it',
                "GET /api/v1/workload-types lists the types; register one with POST.",
                type=token,
            )
        out.extend(t for t in found if t not in out)
    return out


_PHASE_ORDER = {
    p: i
    for i, p in enumerate(
        ("Failed", "Degraded", "Initializing", "Running", "Resuming", "Suspending", "Suspended", "Completed")
    )
}


def _sort_key(key: str) -> Callable[[Obj], Any]:
    if key == "name":
        return lambda r: r["name"]
    if key == "namespace":
        return lambda r: r["namespace"]
    if key == "kind":
        return lambda r: r["kind"]
    if key == "createdAt":
        return lambda r: r["createdAt"] or ""
    if key == "phase":
        return lambda r: _PHASE_ORDER.get(r["primaryPhase"], 99)
    if key == "gpus":
        return lambda r: r["resources"]["gpus"]
    raise HttpError(400, "invalid_request", f'unknown sort key "{key}"')


def sort_rows(rows: list[Obj], sort: str) -> list[Obj]:
    desc = sort.startswith("-")
    key = _sort_key(sort.lstrip("-"))
    rows.sort(key=lambda r: (r["kind"], r["namespace"], r["name"]))
    rows.sort(key=key, reverse=desc)
    return rows


def encode_continue(offset: int, query: Query) -> str:
    raw = json.dumps({"o": offset, "q": query.fingerprint()}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_continue(token: str, query: Query) -> int:
    bad = HttpError(
        400,
        "invalid_request",
        "the continue token is not valid for this query",
        "Use the token from the previous page with the same filters and sort, or start over.",
    )
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError) as exc:
        raise bad from exc
    if not isinstance(data, dict) or data.get("q") != query.fingerprint():
        raise bad
    offset = data.get("o")
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise bad
    return offset


def _covered_ref(covered: set[tuple[str, str]]) -> Callable[[Mapping[str, Any]], bool]:
    from workload_map.kube.objects import group_of

    def is_covered(ref: Mapping[str, Any]) -> bool:
        return (group_of(ref.get("apiVersion")), str(ref.get("kind") or "")) in covered

    return is_covered


def list_workloads(
    state: ClusterState, reviewer: AccessReviewer, user: User, query: Query
) -> tuple[list[Obj], list[str]]:
    """Every matching workload the user may list, as rows (unsorted), and warnings."""
    from workload_map.kube.owners import under_covered_kind
    from workload_map.views.filters import SelectorError, parse_selector

    try:
        match_labels = parse_selector(query.label_selector)
    except SelectorError as exc:
        raise HttpError(400, "invalid_request", f"invalid labelSelector: {exc}") from exc
    types = select_types(state, query.types)
    covered = {(t.resource.group, t.resource.kind) for t in state.all_types().values()}
    is_covered = _covered_ref(covered)
    lookup = state.owner_lookup()

    def ignore(_ref: Mapping[str, Any], _exc: Exception) -> None:
        """An owner the server cannot read leaves the object a row of its own."""

    wanted_ns = set(query.namespaces)
    warnings: list[str] = []
    picked: list[tuple[TypeRef, Obj]] = []
    denied: list[str] = []
    for t in types:
        store = state.informer(t).store
        by_ns: dict[str, list[Obj]] = {}
        for obj in store.list():
            ns = str(_meta(obj).get("namespace") or "")
            if wanted_ns and ns not in wanted_ns:
                continue
            labels = _meta(obj).get("labels")
            if not match_labels(labels if isinstance(labels, Mapping) else {}):
                continue
            if not query.types and under_covered_kind(obj, is_covered, lookup, on_error=ignore):
                continue  # part of a bigger workload (a Deployment's pod): that one is the row
            by_ns.setdefault(ns, []).append(obj)
        for ns, objs in by_ns.items():
            if visible(reviewer, user, t, ns):
                picked.extend((t, o) for o in objs)
            elif query.types:
                denied.append(f"{t.resource.qualified_name} in {ns or 'cluster scope'}")
    if denied and not picked:
        raise HttpError(
            403,
            "forbidden",
            f'user "{user.username}" may not list {", ".join(sorted(set(denied))[:5])}',
            "Ask a cluster administrator for list permission on the workload resource.",
        )
    uids = {str(_meta(o).get("uid")) for _, o in picked if _meta(o).get("uid")}
    namespaces = {str(_meta(o).get("namespace") or "") for _, o in picked}
    pods_index: dict[str, list[Mapping[str, Any]]] | None = None
    pod_ns_ok: set[str] = set()
    if picked:
        pod_ns_ok = {ns for ns in namespaces if may_list_pods(reviewer, user, ns)}
        pods_index = pods_by_workload(state, reviewer, user, pod_ns_ok, uids, lookup)
        if namespaces - pod_ns_ok:
            warnings.append(
                "not allowed to list pods in "
                + ", ".join(sorted(n for n in namespaces - pod_ns_ok))
                + "; ready counts there are unknown"
            )
    rows: list[Obj] = []
    phases = set(query.phases)
    claims = claim_reader(state, reviewer, user) if picked else None
    for t, obj in picked:
        ns = str(_meta(obj).get("namespace") or "")
        pods = None
        if pods_index is not None and ns in pod_ns_ok:
            pods = pods_index.get(str(_meta(obj).get("uid")), [])
        row = row_for(t, obj, pods, state.quarantine, claims)
        if "error" in row:
            warnings.append(
                f"could not resolve {t.resource.kind} {ns}/{_meta(obj).get('name')}: {row['error']}"
            )
        if phases and not phases & set(row["phases"]):
            continue
        rows.append(row)
    warnings += claims.warnings() if claims is not None else []
    return rows, warnings
