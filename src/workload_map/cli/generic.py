"""``get --generic`` and ``describe --generic``: a type no definition covers, read generically
(views.generic: kstatus phase, pods through the owner chain). The type word is resolved the way
kubectl resolves it (discovery), since no definition names it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workload_map.cli.errors import CommandError, WorkloadNotFoundError

if TYPE_CHECKING:
    from workload_map.cli.common import Session
    from workload_map.cluster.discovery import APIResource
    from workload_map.views.model import DescribeView, WorkloadView

__all__ = ["generic_detail", "generic_rows", "owned_pods"]

#: Objects listed at most for one generic listing (pages of 500).
MAX_OBJECTS = 20_000


def _resource(session: Session, token: str) -> APIResource:
    from workload_map.errors import WorkloadMapError

    try:
        return session.discovery().resolve_one(token)
    except WorkloadMapError as exc:
        raise CommandError(str(exc), 4) from exc


def owned_pods(
    session: Session, namespace: str | None, uids: set[str], unknown: str
) -> dict[str, list[Any]] | None:
    """The pods of ``namespace`` (all when ``None``) by the owner in ``uids`` their chain reaches;
    ``None`` (after warning that ``unknown``) when the user may not list pods."""
    from workload_map.cluster.owners import make_owner_lookup
    from workload_map.errors import ForbiddenError
    from workload_map.kube.objects import api_path
    from workload_map.kube.owners import index_by_owner

    try:
        pods = session.client().list_all(api_path("v1", "pods", namespace or None))
    except ForbiddenError as exc:
        session.state.warn(f"not allowed to list pods, so {unknown}: {exc}")
        return None
    if not pods:
        return {}
    return index_by_owner(pods, uids, make_owner_lookup(session.client(), session.discovery()))


def generic_rows(
    session: Session, token: str, *, namespace: str | None, selector: str, fields: str
) -> list[WorkloadView]:
    """Every object of ``token``'s type (in ``namespace``, or all), each with its pods."""
    from workload_map.kube.objects import uid_of
    from workload_map.views.generic import generic_view

    res = _resource(session, token)
    client = session.client()
    objects: list[dict[str, Any]] = []
    for page in client.list(
        res.path(namespace), label_selector=selector or None, field_selector=fields or None, limit=500
    ):
        for obj in page.get("items") or ():
            obj.setdefault("apiVersion", res.group_version)
            obj.setdefault("kind", res.kind)
            objects.append(obj)
        if len(objects) >= MAX_OBJECTS:
            session.state.warn(f"more than {MAX_OBJECTS} {res.name}: the first {MAX_OBJECTS} are shown")
            break
    owned = owned_pods(
        session, namespace, {uid_of(o) for o in objects if uid_of(o)}, "pods and requests are unknown"
    )
    return [generic_view(o, None if owned is None else owned.get(uid_of(o), []))[0] for o in objects]


def generic_detail(session: Session, token: str, name: str) -> DescribeView:
    from workload_map.errors import NotFoundError
    from workload_map.kube.objects import namespace_of, uid_of
    from workload_map.views.generic import generic_describe

    res = _resource(session, token)
    namespace = session.namespace() if res.namespaced else None
    client = session.client()
    try:
        obj = client.get(res.path(namespace, name))
    except NotFoundError as exc:
        where = f" in namespace {namespace}" if namespace else ""
        raise WorkloadNotFoundError(f'{res.kind} "{name}" not found{where}') from exc
    obj.setdefault("apiVersion", res.group_version)
    obj.setdefault("kind", res.kind)
    owned = owned_pods(session, namespace_of(obj) or None, {uid_of(obj)}, "the pods are not shown")
    mine = None if owned is None else owned.get(uid_of(obj), [])
    return generic_describe(obj, mine)[0]
