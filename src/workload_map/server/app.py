"""The ASGI app of ``wmap serve`` (Starlette). Routes and behaviour: docs/server.md and
openapi/openapi.json. Handlers are plain functions (Starlette runs them in its thread pool) except
the server-sent events stream and the health probes, which never wait for that pool: ``/healthz``
answers on the event loop, ``/readyz`` runs its check on a thread of its own (one check at a time,
shared by the probes that arrive meanwhile).

Writes: every route is declared with :func:`route`; a method other than GET/HEAD/OPTIONS is a
write unless the route says ``read_only`` (the placement calculator), and a write, a dry run
included, is refused with 403 ``writes_disabled`` unless the server runs with ``--enable-writes``
(after the caller is authenticated, before the handler or its body is read). New write endpoints
get the rule by being routes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from workload_map.errors import ClusterError, NotFoundError, WorkloadMapError
from workload_map.kube.objects import KARTA_GROUP, KARTA_PLURAL, api_path
from workload_map.kube.owners import OwnerLookup
from workload_map.server.auth import AccessReviewer, Authenticator, User, _TTLCache
from workload_map.server.errors import HttpError, error_body, from_cluster_error
from workload_map.server.limits import BodyLimit, HeadLimit, Limits, RequestLimit, read_body
from workload_map.server.local import LoopbackOnly
from workload_map.server.openapi import DEFAULT_LIMIT, MAX_LIMIT, SORT_KEYS, openapi_document
from workload_map.server.state import ClusterState, TypeRef
from workload_map.server.workloads import (
    Query,
    claim_reader,
    decode_continue,
    encode_continue,
    list_workloads,
    may_list_pods,
    row_for,
    select_types,
    sort_rows,
    visible,
)
from workload_map.views.filters import UnknownPhaseError, parse_phases

if TYPE_CHECKING:
    from workload_map.cost import PrometheusClient, PrometheusSettings
    from workload_map.live import GangAnswer
    from workload_map.resolve.gang_plan import PlanOptions
    from workload_map.resolve.schedulers import RenderOptions

__all__ = ["ServerSettings", "create_app"]

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"


@dataclass
class ServerSettings:
    enable_writes: bool = False
    token_ttl: float = 10.0
    access_ttl: float = 10.0
    heartbeat: float = 15.0
    start_informers: bool = True
    #: SSE: a workload whose pods change is sent again at most once per this many seconds.
    pod_debounce: float = 0.2
    #: Request body, header, connection bounds (server/limits.py).
    limits: Limits = field(default_factory=Limits)
    #: ``--local``: who a request without a token is (the server's own kubeconfig user,
    #: server/local.py); ``None`` otherwise
    local_user: User | None = None
    #: ``--prometheus``: where a workload's GPU-hours and cost come from (``.../cost``); ``None``: off
    prometheus: PrometheusSettings | None = None
    #: A workload's cost is asked of Prometheus at most once per this many seconds (the workload
    #: page reloads on every change of its pods).
    cost_ttl: float = 30.0


class JSON(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def _err(exc: HttpError) -> JSON:
    # A caller without valid credentials keeps no connection open (it cannot hold keep-alive slots).
    headers = {"WWW-Authenticate": "Bearer", "Connection": "close"} if exc.status == 401 else None
    return JSON(exc.body(), status_code=exc.status, headers=headers)


# ------------------------------------------------------------------------------------ parsing


def _bool(request: Request, name: str) -> bool:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return False
    if raw.lower() in ("true", "1", "yes"):
        return True
    if raw.lower() in ("false", "0", "no"):
        return False
    raise HttpError(400, "invalid_request", f"{name} must be true or false")


#: The Kubernetes API's ``fieldValidation`` values -> the loader's modes.
_FIELD_VALIDATION = {"Strict": "strict", "Warn": "warn", "Ignore": "ignore"}


def _field_validation(request: Request) -> str:
    """``?fieldValidation=Strict|Warn|Ignore`` (the Kubernetes API's parameter and values); unknown
    fields and repeated keys of a registered Karta are errors unless it says otherwise."""
    raw = request.query_params.get("fieldValidation") or "Strict"
    mode = _FIELD_VALIDATION.get(raw)
    if mode is None:
        raise HttpError(
            400, "invalid_request", f'fieldValidation must be one of Strict, Warn, Ignore (got "{raw[:40]}")'
        )
    return mode


def _list(request: Request, name: str) -> tuple[str, ...]:
    out: list[str] = []
    for raw in request.query_params.getlist(name):
        out.extend(p.strip() for p in raw.split(",") if p.strip())
    return tuple(dict.fromkeys(out))


def _query(request: Request) -> Query:
    try:
        phases = parse_phases(_list(request, "phase"))
    except UnknownPhaseError as exc:
        raise HttpError(400, "invalid_request", str(exc)) from None
    sort = request.query_params.get("sort") or "-createdAt"
    if sort.lstrip("-") not in SORT_KEYS or sort.startswith("--"):
        raise HttpError(
            400, "invalid_request", f'invalid sort "{sort}": one of {", ".join(SORT_KEYS)} (- first: desc)'
        )
    return Query(
        types=_list(request, "type"),
        namespaces=_list(request, "namespace"),
        phases=phases,
        label_selector=request.query_params.get("labelSelector") or "",
        sort=sort,
    )


def _int(request: Request, name: str, default: int | None, low: int, high: int) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise HttpError(400, "invalid_request", f"{name} must be an integer") from exc
    if not low <= value <= high:
        raise HttpError(400, "invalid_request", f"{name} must be between {low} and {high}")
    return value


async def _json_body(request: Request, limits: Limits) -> Any:
    raw = await read_body(request, limits)
    if not raw:
        raise HttpError(400, "invalid_request", "a JSON body is required")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise HttpError(400, "invalid_request", f"the body is not valid JSON: {exc}") from exc


# ------------------------------------------------------------------------------------ the app


#: The namespace picker's choices at most; pods listed on a node page at most.
MAX_NAMESPACES = 2000
MAX_NODE_PODS = 500
#: Objects of one other type read generically at most.
MAX_GENERIC = 5000
#: Workloads whose cost is remembered (``cost_ttl``) at most.
MAX_COSTS_CACHED = 1000
#: Seconds a readiness answer is reused by the probes that follow it.
READINESS_TTL = 1.0
#: Existing gang objects read per request to find other owners at most (a plan may render
#: thousands of PodGroups; each read is a GET and an access review).
MAX_GANG_READS = 256
#: Methods that only read: any other is a write (see the module doc).
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class Api:
    def __init__(self, state: ClusterState, settings: ServerSettings) -> None:
        self.state = state
        self.settings = settings
        self.authn = Authenticator(state.client, token_ttl=settings.token_ttl)
        self.authz = AccessReviewer(state.client, ttl=settings.access_ttl)
        self.prometheus: PrometheusClient | None = (
            settings.prometheus.client() if settings.prometheus is not None else None
        )
        self.costs: _TTLCache[tuple[str, str, str, str], dict[str, Any]] = _TTLCache(
            MAX_COSTS_CACHED, time.monotonic
        )
        # /readyz's check (a request to the API server) runs here, never in the API handlers' pool.
        self._health_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wmap-readyz")
        self._readiness_lock = threading.Lock()
        self._readiness: tuple[float, tuple[bool, dict[str, Any]]] | None = None

    # helpers
    def user(self, request: Request) -> User:
        header = request.headers.get("authorization")
        if not header and self.settings.local_user is not None:
            return self.settings.local_user
        return self.authn.authenticate(header)

    async def require_writes(self, request: Request, path: str) -> None:
        """The one gate of every write (dry runs included): the caller is authenticated first (401
        otherwise), then 403 ``writes_disabled`` unless the server runs with ``--enable-writes``."""
        from starlette.concurrency import run_in_threadpool

        await run_in_threadpool(self.user, request)
        if not self.settings.enable_writes:
            raise HttpError(
                403,
                "writes_disabled",
                f"{request.method} {path} changes the cluster (a dry run too), and this server is read-only",
                "Start wmap serve with --enable-writes to allow it.",
            )

    def one_type(self, token: str) -> TypeRef:
        return select_types(self.state, [token])[0]

    # health: on the event loop and the health thread only (module doc)
    async def healthz(self, _request: Request) -> JSON:
        return JSON({"status": "ok"})

    async def readyz(self, _request: Request) -> JSON:
        loop = asyncio.get_running_loop()
        ok, checks = await loop.run_in_executor(self._health_pool, self._readiness_now)
        if ok:
            return JSON({"status": "ready", "checks": checks})
        body = error_body(503, "not_ready", "not ready", "", checks=checks)
        return JSON(body, status_code=503)

    def _readiness_now(self) -> tuple[bool, dict[str, Any]]:
        """The readiness check, reused for :data:`READINESS_TTL` seconds (probes queued behind a
        slow check get its answer instead of checking again)."""
        with self._readiness_lock:
            now = time.monotonic()
            if self._readiness is not None and now - self._readiness[0] < READINESS_TTL:
                return self._readiness[1]
            answer = self.state.readiness()
            self._readiness = (time.monotonic(), answer)
            return answer

    def close(self) -> None:
        self._health_pool.shutdown(wait=False, cancel_futures=True)

    def openapi(self, _request: Request) -> JSON:
        return JSON(openapi_document())

    def whoami(self, request: Request) -> JSON:
        user = self.user(request)
        local = self.settings.local_user is not None and not request.headers.get("authorization")
        return JSON({**user.to_dict(), "writesEnabled": self.settings.enable_writes, "local": local})

    # workload types
    def may_read_kartas(self, user: User, verb: str) -> bool:
        return self.authz.allowed(user, verb, group=KARTA_GROUP, resource=KARTA_PLURAL)

    def list_types(self, request: Request) -> JSON:
        from workload_map.server.types import type_info

        user = self.user(request)
        origin = request.query_params.get("origin")
        if origin not in (None, "", "catalog", "cluster", "local"):
            raise HttpError(400, "invalid_request", "origin must be catalog, cluster or local")
        served = _bool(request, "served") if request.query_params.get("served") else None
        defs = self.state.definitions()
        warnings = [w.message for w in defs.warnings]
        cluster_ok = self.may_read_kartas(user, "list")
        if not cluster_ok:
            warnings.append(f'user "{user.username}" may not list kartas.run.ai: cluster types are not shown')
        items = []
        for e in defs.entries:
            if e.origin == "cluster" and not cluster_ok:
                continue
            if origin and e.origin != origin:
                continue
            info = type_info(self.state, e)
            if served is not None and info["served"] != served:
                continue
            items.append(info)
        return JSON({"items": items, "count": len(items), "warnings": warnings})

    def get_type(self, request: Request) -> JSON:
        from workload_map.server.types import type_info

        user = self.user(request)
        name = request.path_params["name"]
        entry = next((e for e in self.state.definitions().entries if e.name == name), None)
        if entry is None or (entry.origin == "cluster" and not self.may_read_kartas(user, "get")):
            raise HttpError(404, "not_found", f'workload type "{name}" not found')
        return JSON(type_info(self.state, entry, with_karta=True))

    async def register_type(self, request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        from workload_map.server.types import register_type

        # Authenticate before reading the body: anonymous clients cannot make the server read one.
        user = await run_in_threadpool(self.user, request)
        body = await _json_body(request, self.settings.limits)
        dry_run = _bool(request, "dryRun")
        field_validation = _field_validation(request)

        def work() -> tuple[dict[str, Any], bool]:
            self.authz.require(user, "create", group=KARTA_GROUP, resource=KARTA_PLURAL)
            return register_type(self.state, body, dry_run=dry_run, field_validation=field_validation)

        info, created = await run_in_threadpool(work)
        return JSON(info, status_code=201 if created else 200)

    def delete_type(self, request: Request) -> JSON:
        from workload_map.server.types import delete_type

        user = self.user(request)
        name = request.path_params["name"]
        self.authz.require(user, "delete", group=KARTA_GROUP, resource=KARTA_PLURAL, name=name)
        return JSON(delete_type(self.state, name))

    # workloads
    def list_workloads(self, request: Request) -> JSON:
        user = self.user(request)
        query = _query(request)
        limit = _int(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        assert limit is not None
        token = request.query_params.get("continue")
        offset = decode_continue(token, query) if token else 0
        rows, warnings = list_workloads(self.state, self.authz, user, query)
        rows = sort_rows(rows, query.sort)
        page = rows[offset : offset + limit]
        nxt = encode_continue(offset + limit, query) if offset + limit < len(rows) else None
        return JSON(
            {"items": page, "count": len(page), "total": len(rows), "continue": nxt, "warnings": warnings}
        )

    def _get_workload(self, t: TypeRef, namespace: str, name: str) -> dict[str, Any]:
        where = f" in namespace {namespace}" if t.resource.namespaced else ""
        try:
            return self.state.client.get(t.resource.path(namespace, name))
        except NotFoundError as exc:
            raise HttpError(404, "not_found", f'{t.resource.kind} "{name}" not found{where}') from exc
        except ClusterError as exc:
            raise from_cluster_error(exc, f"get {t.resource.kind} {_ref(namespace, name)}") from exc

    def _workload_params(self, request: Request) -> tuple[str, TypeRef, str]:
        """``(namespace, type, name)`` of a workload route; ``namespace`` is ``""`` on the
        cluster-scoped routes, where a namespaced type is a 404."""
        ns = str(request.path_params.get("namespace") or "")
        token, name = request.path_params["type"], request.path_params["name"]
        t = self.one_type(token)
        res = t.resource
        if res.namespaced and not ns:
            raise HttpError(
                404,
                "not_found",
                f"{res.kind} is namespaced: use /api/v1/namespaces/{{namespace}}/workloads/{token}/{name}",
            )
        return ns, t, name

    def get_workload(self, request: Request) -> JSON:
        from workload_map.cluster.owners import make_owner_lookup
        from workload_map.live import describe_live
        from workload_map.server.workloads import age_seconds, with_object

        user = self.user(request)
        ns, t, name = self._workload_params(request)
        res = t.resource
        self.authz.require(user, "get", group=res.group, resource=res.name, namespace=ns, name=name)
        obj = with_object(t, self._get_workload(t, ns, name))
        meta = obj.get("metadata") or {}
        pods: list[dict[str, Any]] | None = None
        if may_list_pods(self.authz, user, ns):
            try:
                pods = self.state.client.list_all(f"/api/v1/namespaces/{ns}/pods" if ns else "/api/v1/pods")
            except ClusterError as exc:
                raise from_cluster_error(exc, f"list pods in {ns or 'all namespaces'}") from exc
        events: list[dict[str, Any]] | None = None
        if ns and self.authz.allowed(user, "list", group="", resource="events", namespace=ns):
            from workload_map.cluster.events import read_events

            try:
                events = read_events(self.state.client, ns)
            except ClusterError as exc:
                raise from_cluster_error(exc, f"list events in {ns}") from exc
        claims = claim_reader(self.state, self.authz, user)
        try:
            view = describe_live(
                t.compiled,
                t.entry,
                obj,
                pods,
                lambda: make_owner_lookup(self.state.client, self.state.discovery),
                events,
                claims,
            )
        except WorkloadMapError as exc:
            raise HttpError(422, "unprocessable", f'{res.kind} "{name}" cannot be resolved: {exc}') from exc
        out = view.to_dict()
        out["uid"] = view.view.uid
        out["ageSeconds"] = age_seconds(view.view.created_at)
        out["resourceVersion"] = meta.get("resourceVersion")
        out["warnings"] = claims.warnings()
        return JSON(out)

    def get_cost(self, request: Request) -> JSON:
        """The workload's GPU-hours, cost, idle GPU cost and the PromQL behind each (the page's
        Cost section): ``{"configured": false}`` without ``--prometheus``; a Prometheus that is
        down or slow gives ``error`` and ``warnings``, never an error status."""
        from workload_map.cost import WorkloadRef, fetch_costs

        user = self.user(request)
        ns, t, name = self._workload_params(request)
        res = t.resource
        self.authz.require(user, "get", group=res.group, resource=res.name, namespace=ns, name=name)
        settings = self.settings.prometheus
        if settings is None or self.prometheus is None:
            return JSON({"configured": False})
        ref = WorkloadRef(ns, res.group, res.kind, name)
        key = (ref.namespace, ref.group, ref.kind, ref.name)
        body = self.costs.get(key)
        if body is None:
            report = fetch_costs(settings, [ref], detail=True, client=self.prometheus)
            body = {"configured": True, **report.costs[ref].to_dict(), "warnings": report.warnings}
            self.costs.put(key, body, self.settings.cost_ttl)
        return JSON(body)

    def get_manifest(self, request: Request) -> JSON:
        """The workload object as the API server returns it, without ``managedFields`` (the UI's
        YAML view, labels and annotations)."""
        from workload_map.server.workloads import with_object

        user = self.user(request)
        ns, t, name = self._workload_params(request)
        res = t.resource
        self.authz.require(user, "get", group=res.group, resource=res.name, namespace=ns, name=name)
        obj = with_object(t, self._get_workload(t, ns, name))
        meta = obj.get("metadata")
        if isinstance(meta, dict):
            meta.pop("managedFields", None)
        return JSON(obj)

    def list_namespaces(self, request: Request) -> JSON:
        """The namespace picker's choices: every namespace when the user may list them
        (``source: cluster``), else none (``source: none``: the UI offers the namespaces of the
        workloads it could list)."""
        user = self.user(request)
        if not self.authz.allowed(user, "list", group="", resource="namespaces"):
            return JSON({"items": [], "source": "none"})
        try:
            items = self.state.client.list_all(api_path("v1", "namespaces"))
        except ClusterError as exc:
            raise from_cluster_error(exc, "list namespaces") from exc
        names = sorted(n for i in items if (n := (i.get("metadata") or {}).get("name")))
        kept = names[:MAX_NAMESPACES]
        return JSON({"items": kept, "source": "cluster", "truncated": len(names) > len(kept)})

    def get_node(self, request: Request) -> JSON:
        """A node as a pod's page links to it: capacity and allocatable, Ready and the other
        conditions, taints and labels, and the pods on it in namespaces where the user may list
        pods (from the pod cache; ``podsHidden`` counts the other namespaces)."""
        from workload_map.kube.podstatus import status_and_restarts

        user = self.user(request)
        name = request.path_params["name"]
        self.authz.require(user, "get", group="", resource="nodes", name=name)
        try:
            node = self.state.client.get(api_path("v1", "nodes", name=name))
        except NotFoundError as exc:
            raise HttpError(404, "not_found", f'node "{name}" not found') from exc
        except ClusterError as exc:
            raise from_cluster_error(exc, f"get node {name}") from exc
        status = node.get("status") or {}
        spec = node.get("spec") or {}
        pods = []
        allowed: dict[str, bool] = {}
        for pod in self.state.pods().store.list():
            if (pod.get("spec") or {}).get("nodeName") != name:
                continue
            ns = str((pod.get("metadata") or {}).get("namespace") or "")
            if ns not in allowed:
                allowed[ns] = may_list_pods(self.authz, user, ns)
            if not allowed[ns]:
                continue
            shown, restarts = status_and_restarts(pod)
            pod_name = (pod.get("metadata") or {}).get("name")
            pods.append({"name": pod_name, "namespace": ns, "status": shown, "restarts": restarts})
            if len(pods) >= MAX_NODE_PODS:
                break
        pods.sort(key=lambda p: (p["namespace"], str(p["name"])))
        return JSON(
            {
                "name": name,
                "labels": (node.get("metadata") or {}).get("labels") or {},
                "capacity": status.get("capacity") or {},
                "allocatable": status.get("allocatable") or {},
                "conditions": status.get("conditions") or [],
                "taints": spec.get("taints") or [],
                "unschedulable": bool(spec.get("unschedulable")),
                "pods": pods,
                "podsHidden": sum(1 for ok in allowed.values() if not ok),
            }
        )

    def other_types(self, request: Request) -> JSON:
        """Custom resource types (served by a CRD) that no definition covers, one version per group
        and kind, the most stable: the UI's "other types", read generically."""
        from workload_map.cluster.discovery import version_priority

        self.user(request)
        covered = {(t.resource.group, t.resource.kind) for t in self.state.all_types().values()}
        try:
            crds = self.state.client.list_all(
                api_path("apiextensions.k8s.io/v1", "customresourcedefinitions")
            )
        except ClusterError as exc:
            raise from_cluster_error(exc, "list customresourcedefinitions") from exc
        custom = set()
        for crd in crds:
            spec = crd.get("spec") or {}
            custom.add((str(spec.get("group") or ""), str((spec.get("names") or {}).get("kind") or "")))
        best: dict[tuple[str, str], Any] = {}
        for r in self.state.discovery.resources():
            gk = (r.group, r.kind)
            if gk not in custom or gk in covered or "list" not in r.verbs or "/" in r.name:
                continue
            cur = best.get((r.group, r.kind))
            if cur is None or version_priority(r.version) < version_priority(cur.version):
                best[(r.group, r.kind)] = r
        items = [
            {
                "kind": r.kind,
                "group": r.group,
                "version": r.version,
                "resource": r.name,
                "namespaced": r.namespaced,
            }
            for r in sorted(best.values(), key=lambda r: (r.kind, r.group))
        ]
        return JSON({"items": items})

    def generic_workloads(self, request: Request) -> JSON:
        """Objects of a type no definition covers, read generically (views.generic): kstatus
        phase, the pods their owner chains reach (from the pod cache) and their requests."""
        from workload_map.kube.objects import namespace_of, uid_of
        from workload_map.server.workloads import may_list_pods, pods_by_workload
        from workload_map.views.generic import generic_view

        user = self.user(request)
        word = str(request.path_params["resource"])
        namespace = request.query_params.get("namespace") or ""
        matches = self.state.discovery.resolve_type(word)
        if not matches:
            raise HttpError(404, "not_found", f'the cluster serves no resource "{word}"')
        res = matches[0]
        allowed = self.authz.allowed(user, "list", group=res.group, resource=res.name)
        if not allowed and not (namespace and res.namespaced):
            self.authz.require(user, "list", group=res.group, resource=res.name)
        if not allowed:
            self.authz.require(user, "list", group=res.group, resource=res.name, namespace=namespace)
        try:
            objects = self.state.client.list_all(res.path(namespace or None))[:MAX_GENERIC]
        except ClusterError as exc:
            raise from_cluster_error(exc, f"list {res.name}") from exc
        objects = [{"apiVersion": res.group_version, "kind": res.kind, **obj} for obj in objects]
        namespaces = {namespace_of(o) for o in objects}
        owned = (
            pods_by_workload(
                self.state,
                self.authz,
                user,
                namespaces,
                {uid_of(o) for o in objects if uid_of(o)},
                self.state.owner_lookup(),
            )
            or {}
        )
        items = []
        for obj in objects:
            known = may_list_pods(self.authz, user, namespace_of(obj))  # cached per namespace
            view, status = generic_view(obj, owned.get(uid_of(obj), []) if known else None)
            items.append({**view.to_dict(), "kstatus": {"status": status.status, "message": status.message}})
        return JSON({"items": items, "resource": res.qualified_name, "generic": True})

    def suspend(self, request: Request) -> JSON:
        from workload_map.resolve import writeback

        component = request.query_params.get("component") or None
        return self._write(request, "suspend", lambda karta, obj: writeback.suspend(karta, obj, component))

    def resume(self, request: Request) -> JSON:
        from workload_map.resolve import writeback

        component = request.query_params.get("component") or None
        return self._write(request, "resume", lambda karta, obj: writeback.resume(karta, obj, component))

    async def edit(self, request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        await run_in_threadpool(self.user, request)  # authenticated before the body is read
        body = await _json_body(request, self.settings.limits)
        return await run_in_threadpool(self._edit, request, body)

    def _edit(self, request: Request, body: Any) -> JSON:
        from workload_map.resolve.editdoc import edits_from_document
        from workload_map.resolve.writeback import InvalidEditError, apply_edits

        if not isinstance(body, dict):
            raise HttpError(
                400, "invalid_request", "the body must be an object: {edits: {...}, components: [...]}"
            )
        unknown = sorted(set(body) - {"edits", "components", "overwrite"})
        if unknown:
            raise HttpError(
                400, "invalid_request", f"unknown field {unknown[0]!r} (edits, components, overwrite)"
            )
        components = body.get("components")
        if components is not None and (
            not isinstance(components, list) or not all(isinstance(c, str) and c for c in components)
        ):
            raise HttpError(400, "invalid_request", "components must be a list of component names")
        overwrite = body.get("overwrite", True)
        if not isinstance(overwrite, bool):
            raise HttpError(400, "invalid_request", "overwrite must be true or false")
        try:
            edits = edits_from_document(
                body.get("edits"), "edits", existing="overwrite" if overwrite else "error"
            )
        except InvalidEditError as exc:
            raise HttpError(422, "unprocessable", str(exc), field=exc.field) from exc
        return self._write(
            request, "edit", lambda karta, obj: apply_edits(karta, obj, edits, components=components)
        )

    async def scale(self, request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        await run_in_threadpool(self.user, request)
        body = await _json_body(request, self.settings.limits)
        return await run_in_threadpool(self._scale, request, body)

    def _scale(self, request: Request, body: Any) -> JSON:
        from workload_map.resolve.writeback import scale

        if not isinstance(body, dict) or not isinstance(body.get("component"), str) or not body["component"]:
            raise HttpError(
                400, "invalid_request", "the body must be {component: NAME, replicas: N | {instance: N}}"
            )
        unknown = sorted(set(body) - {"component", "replicas"})
        if unknown:
            raise HttpError(400, "invalid_request", f"unknown field {unknown[0]!r} (component, replicas)")
        replicas: int | dict[str, int] = body.get("replicas")  # type: ignore[assignment]  # checked next
        counts = replicas.values() if isinstance(replicas, dict) else [replicas]
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in counts):
            raise HttpError(
                400, "invalid_request", "replicas must be an integer, or an object of instance -> integer"
            )
        component = body["component"]
        return self._write(request, "scale", lambda karta, obj: scale(karta, obj, component, replicas))

    def _write(self, request: Request, action: str, compute: Callable[[Any, dict[str, Any]], Any]) -> JSON:
        """Every write (the route gate already asked for --enable-writes, dry runs included):
        SAR patch on the object, then the change computed on the object as read and PATCHed with
        a resourceVersion precondition (a conflict is retried on the fresh object, cluster.writes)."""
        from workload_map.cluster.writes import patch_of, write_change
        from workload_map.errors import ConflictError, WriteBackError

        user = self.user(request)
        dry_run = _bool(request, "dryRun")
        ns, t, name = self._workload_params(request)
        res = t.resource
        self.authz.require(user, "patch", group=res.group, resource=res.name, namespace=ns, name=name)
        current = self._get_workload(t, ns, name)
        karta = t.entry.karta
        try:
            result = write_change(
                self.state.client,
                res.path(ns, name),
                lambda obj: compute(karta, obj),
                dry_run="client" if dry_run else "none",
                field_manager="wmap-serve",
                current=current,
            )
        except WriteBackError as exc:
            raise HttpError(422, "unprocessable", f"{action} {res.kind} {_ref(ns, name)}: {exc}") from exc
        except ConflictError as exc:
            raise HttpError(
                409, "conflict", f"{res.kind} {_ref(ns, name)}: {exc}", "Retry the request."
            ) from exc
        except ClusterError as exc:
            raise from_cluster_error(exc, f"patch {res.kind} {_ref(ns, name)}") from exc
        change = result.change
        patch_type, patch = patch_of(change)
        shown = (
            result.after if result.after is not None else (change.new_object if dry_run else result.before)
        )
        return JSON(
            {
                "action": action,
                "dryRun": dry_run,
                "changed": change.changed,
                "patchType": patch_type,
                "patch": patch,
                "jsonPatch": change.json_patch,
                "mergePatch": change.merge_patch,
                "warnings": list(change.warnings),
                "attempts": result.attempts,
                "workload": row_for(
                    t, shown, None, self.state.quarantine, claim_reader(self.state, self.authz, user)
                ),
            }
        )

    # gangs and placement
    def gangs(self, request: Request) -> JSON:
        """Every object ``scheduler`` needs for the workload, the pod-template changes that link
        its pods and the workload change (``wmap gang TYPE/NAME --scheduler S -o json``), plus
        ``warnings`` (kinds the cluster does not serve, objects another controller holds)."""
        from workload_map.live import gang_objects

        user = self.user(request)
        ns, t, name = self._workload_params(request)
        res = t.resource
        self.authz.require(user, "get", group=res.group, resource=res.name, namespace=ns, name=name)
        scheduler, plan_options, render_options = self._gang_options(request, user)
        obj = self._get_workload(t, ns, name)
        claims = claim_reader(self.state, self.authz, user)
        try:
            answer = gang_objects(t.entry, obj, scheduler, plan_options, render_options, claims)
        except WorkloadMapError as exc:
            raise HttpError(422, "unprocessable", f'gang {res.kind} "{name}": {exc}') from exc
        warnings = [*self._gang_warnings(user, answer), *claims.warnings()]
        return JSON({**answer.to_dict(), "warnings": warnings})

    def _gang_options(self, request: Request, user: User) -> tuple[str, PlanOptions, RenderOptions]:
        """``scheduler`` (422 naming the allowed ones) and the policy parameters ``wmap gang``
        takes as options (``queue``, ``priorityClass``, ``scheduleTimeoutSeconds``,
        ``schedulerName``, ``disruptionMode``; 400 when malformed)."""
        from workload_map.kube.schedulers import DEFAULT_SCHEDULER, SCHEDULERS
        from workload_map.live import priority_values
        from workload_map.resolve.gang_expressions import check_name
        from workload_map.resolve.gang_plan import PlanOptions
        from workload_map.resolve.schedulers import RenderOptions

        q = request.query_params
        scheduler = q.get("scheduler") or DEFAULT_SCHEDULER
        if scheduler not in SCHEDULERS:
            raise HttpError(
                422,
                "unprocessable",
                f"unsupported scheduler {scheduler[:40]!r}: one of {', '.join(SCHEDULERS)}",
                field="scheduler",
            )
        names: dict[str, str | None] = {}
        for key in ("queue", "priorityClass"):
            try:
                names[key] = check_name(q.get(key), key)
            except WorkloadMapError as exc:
                raise HttpError(
                    400,
                    "invalid_request",
                    f"{key} must be a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', "
                    "at most 253 characters)",
                ) from exc
        timeout = _int(request, "scheduleTimeoutSeconds", None, 0, 2**31 - 1)
        scheduler_name = q.get("schedulerName") or None
        if scheduler_name is not None and not _NAME.match(scheduler_name):
            raise HttpError(400, "invalid_request", "schedulerName must be a Kubernetes name")
        mode = q.get("disruptionMode") or None
        if mode not in (None, "single", "all"):
            raise HttpError(400, "invalid_request", "disruptionMode must be single or all")

        def get_priority_class(path: str) -> Mapping[str, Any]:
            # Read with the server's identity: the caller must be allowed to read it too.
            self.authz.require(user, "get", group="scheduling.k8s.io", resource="priorityclasses")
            return self.state.client.get(path)

        plan = PlanOptions(
            queue=names["queue"], priority_class_name=names["priorityClass"], schedule_timeout_seconds=timeout
        )
        rendering = RenderOptions(
            scheduler_name=scheduler_name,
            priority_value=priority_values(get_priority_class),
            disruption_mode="all" if mode == "all" else "single" if mode == "single" else None,
        )
        return scheduler, plan, rendering

    def _gang_warnings(self, user: User, answer: GangAnswer) -> list[str]:
        from workload_map.errors import ForbiddenError
        from workload_map.live import NotServedError, gang_warnings

        def read(api_version: str, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
            res = self.state.discovery.resource_for_kind(api_version, kind)
            if res is None:
                raise NotServedError(kind)
            # Read with the server's identity: the caller must be allowed to read it too.
            if not self.authz.allowed(
                user, "get", group=res.group, resource=res.name, namespace=namespace, name=name
            ):
                raise ForbiddenError(403, "Forbidden", f"{user.username} may not get {kind} {name}")
            try:
                return self.state.client.get(res.path(namespace, name))
            except NotFoundError:
                return None

        return gang_warnings(answer, read, MAX_GANG_READS)

    def pod_group(self, request: Request) -> JSON:
        from workload_map.cluster.owners import make_owner_lookup, make_pod_lister
        from workload_map.errors import ForbiddenError
        from workload_map.live import (
            kai_pod_group,
            pod_gang_objects,
            pod_group_document,
            priority_class_exists,
        )
        from workload_map.resolve.gang_expressions import MAX_SELECTED_PODS

        user = self.user(request)
        ns, pod = request.path_params["namespace"], request.path_params["name"]
        self.authz.require(user, "get", group="", resource="pods", namespace=ns, name=pod)
        scheduler, plan_options, render_options = self._gang_options(request, user)
        client = self.state.client
        try:
            pod_obj = client.get(f"/api/v1/namespaces/{ns}/pods/{pod}")
        except NotFoundError as exc:
            raise HttpError(404, "not_found", f'Pod "{pod}" not found in namespace {ns}') from exc
        except ClusterError as exc:
            raise from_cluster_error(exc, f"get pod {ns}/{pod}") from exc
        owners = make_owner_lookup(client, self.state.discovery)

        def lookup(namespace: str, api_version: str, kind: str, name: str) -> Mapping[str, Any] | None:
            # The owner walk reads with the server's identity: the caller must be allowed too.
            res = self.state.discovery.resource_for_kind(api_version, kind)
            if res is not None:
                self.authz.require(
                    user, "get", group=res.group, resource=res.name, namespace=namespace, name=name
                )
            return owners(namespace, api_version, kind, name)

        if scheduler != "kai":
            claims = claim_reader(self.state, self.authz, user)
            try:
                found = pod_gang_objects(
                    pod_obj, lookup, self.state.definitions(), scheduler, plan_options, render_options, claims
                )
            except ClusterError as exc:
                raise from_cluster_error(exc, f"owners of pod {ns}/{pod}") from exc
            except WorkloadMapError as exc:
                raise HttpError(422, "unprocessable", f'group Pod "{pod}": {exc}') from exc
            if found.object is None:
                raise HttpError(422, "unprocessable", f'group Pod "{pod}": {found.missing()}')
            return JSON(found.to_dict())

        pods_of = make_pod_lister(client, MAX_SELECTED_PODS)

        def list_pods(namespace: str, labels: Mapping[str, str]) -> Sequence[Mapping[str, Any]]:
            # The pods a native grouper reads (MPIJob launchers): the caller must be allowed too.
            self.authz.require(user, "list", group="", resource="pods", namespace=namespace)
            return pods_of(namespace, labels)

        def get_priority_class(path: str) -> Mapping[str, Any]:
            # Read with the server's identity: a caller who may not read it is told it exists,
            # as the CLI's forbidden read is.
            if not self.authz.allowed(user, "get", group="scheduling.k8s.io", resource="priorityclasses"):
                raise ForbiddenError(403, "Forbidden", f"{user.username} may not get priorityclasses")
            return client.get(path)

        try:
            answer = kai_pod_group(
                pod_obj,
                lookup,
                self.state.definitions(),
                priority_class_exists=priority_class_exists(get_priority_class),
                list_pods=list_pods,
            )
        except ClusterError as exc:
            raise from_cluster_error(exc, f"owners of pod {ns}/{pod}") from exc
        except WorkloadMapError as exc:
            raise HttpError(422, "unprocessable", f'group Pod "{pod}": {exc}') from exc
        return JSON(pod_group_document(answer))

    async def placement(self, request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        await run_in_threadpool(self.user, request)  # authenticated before the body is read
        body = await _json_body(request, self.settings.limits)
        return await run_in_threadpool(self._placement, request, body)

    def _placement(self, request: Request, body: Any) -> JSON:
        from workload_map.live import definitions_for
        from workload_map.resolve.placement import placement_needs

        if not isinstance(body, dict) or not isinstance(body.get("apiVersion"), str) or not body.get("kind"):
            raise HttpError(400, "invalid_request", "the body must be a manifest with apiVersion and kind")
        if not isinstance(body["kind"], str) or not body["apiVersion"]:
            raise HttpError(400, "invalid_request", "apiVersion and kind must be non-empty strings")
        kind = body["kind"]
        found, gvk_text = definitions_for(self.state.definitions(), body)
        if len(found) != 1:
            raise HttpError(
                404,
                "no_definition_for_type",
                f"no single Karta definition covers {gvk_text}",
                "GET /api/v1/workload-types lists the types.",
                gvk=gvk_text,
            )
        # DRA claim templates the manifest's pods name count from the cluster, as far as the caller
        # may read them (a manifest about to be applied names templates already there).
        claims = claim_reader(self.state, self.authz, self.user(request))
        try:
            needs = placement_needs(found[0].karta, body, claims=claims)
        except WorkloadMapError as exc:
            raise HttpError(422, "unprocessable", f"{kind}: {exc}") from exc
        except Exception as exc:  # a manifest of the wrong shape deep inside
            raise HttpError(422, "unprocessable", f"{kind}: cannot be resolved: {exc}") from exc
        return JSON({**needs.to_dict(), "origin": found[0].origin, "warnings": claims.warnings()})

    # live events
    async def watch(self, request: Request) -> Response:
        from starlette.concurrency import run_in_threadpool

        query = _query(request)
        timeout = _int(request, "timeoutSeconds", None, 1, 86400)

        def prepare() -> tuple[User, list[TypeRef]]:
            user = self.user(request)
            return user, select_types(self.state, query.types)

        user, types = await run_in_threadpool(prepare)
        stream = _EventStream(self, user, types, query, timeout)
        await stream.start()
        return StreamingResponse(
            stream.events(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )


class _EventStream:
    """One SSE client: informer events -> filtered rows -> ``event:``/``data:`` frames.

    Pod events count too: a pod added, deleted or changed in what a row shows (phase, readiness,
    node, ...) is traced to the workload it belongs to (owner references, following controllers
    up to 6 levels) and that workload's row is sent again as ``modified``, at most once per
    ``pod_debounce`` seconds per workload (the row is built from the caches when the delay ends,
    so it shows every pod change of the interval). A DRA claim or template added, changed or
    deleted refreshes the streamed workloads of its namespace the same way (the GPUs their pods
    request through it count in the row; claims change rarely, and the cache keeps none of the
    per-pod claims, as the exporter reads them)."""

    def __init__(self, api: Api, user: User, types: list[TypeRef], query: Query, timeout: int | None) -> None:
        from workload_map.views.filters import SelectorError, parse_selector

        self.api = api
        self.user = user
        self.keys = {t.key for t in types}
        self.types = types
        self.query = query
        self.timeout = timeout
        try:
            self.match = parse_selector(query.label_selector)
        except SelectorError as exc:
            raise HttpError(400, "invalid_request", f"invalid labelSelector: {exc}") from exc
        self.queue: asyncio.Queue[tuple[str, str, dict[str, Any]]] = asyncio.Queue()
        self.cancels: list[Callable[[], None]] = []
        self.initial: list[dict[str, Any]] = []
        #: (type key, uid) of workloads waiting for their debounced pod refresh.
        self.pending: set[tuple[str, str]] = set()
        self._lookup: OwnerLookup | None = None

    async def start(self) -> None:
        from starlette.concurrency import run_in_threadpool

        loop = asyncio.get_running_loop()

        def push(kind: str, key: str, obj: dict[str, Any]) -> None:
            if key in self.keys:
                loop.call_soon_threadsafe(self.queue.put_nowait, (kind, key, obj))

        def push_pod(_kind: str, pod: dict[str, Any]) -> None:
            ns = str((pod.get("metadata") or {}).get("namespace") or "")
            if not self.query.namespaces or ns in self.query.namespaces:
                loop.call_soon_threadsafe(self.queue.put_nowait, ("pod", "", pod))

        def push_claim(namespace: str) -> None:
            if not self.query.namespaces or namespace in self.query.namespaces:
                loop.call_soon_threadsafe(self.queue.put_nowait, ("claim", namespace, {}))

        def initial() -> None:
            for t in self.types:
                self.api.state.informer(t)
            self.cancels.append(self.api.state.subscribe(push))
            self.cancels.append(self.api.state.subscribe_pods(push_pod))
            self.cancels.append(self.api.state.subscribe_claims(push_claim))
            rows, _ = list_workloads(self.api.state, self.api.authz, self.user, self.query)
            self.initial = sort_rows(rows, "name")

        await run_in_threadpool(initial)

    def _row(self, kind: str, key: str, obj: dict[str, Any]) -> dict[str, Any] | None:
        t = self.api.state.type_for(key)
        if t is None:
            return None
        meta = obj.get("metadata") or {}
        ns = str(meta.get("namespace") or "")
        if self.query.namespaces and ns not in self.query.namespaces:
            return None
        labels = meta.get("labels")
        if not self.match(labels if isinstance(labels, Mapping) else {}):
            return None
        if not visible(self.api.authz, self.user, t, ns, "watch") and not visible(
            self.api.authz, self.user, t, ns, "list"
        ):
            return None
        pods = None
        if kind != "deleted" and may_list_pods(self.api.authz, self.user, ns):
            from workload_map.cluster.owners import make_owner_lookup
            from workload_map.kube.owners import index_by_owner

            uid = str(meta.get("uid") or "")
            store = self.api.state.pods().store
            lookup = make_owner_lookup(self.api.state.client, self.api.state.discovery)
            pods = index_by_owner(store.by_index("namespace", ns), {uid}, lookup).get(uid, [])
        claims = claim_reader(self.api.state, self.api.authz, self.user)
        row = row_for(t, obj, pods, self.api.state.quarantine, claims)
        if kind != "deleted" and self.query.phases and not set(self.query.phases) & set(row["phases"]):
            return None
        return row

    def _row_or_none(self, kind: str, key: str, obj: dict[str, Any]) -> Any:
        return self._row(kind, key, obj)

    def _workloads_of(self, pod: Mapping[str, Any]) -> list[tuple[str, str]]:
        """``(type key, uid)`` of the streamed workloads owning ``pod`` (at any owner level)."""
        from workload_map.cluster.owners import make_owner_lookup
        from workload_map.kube.objects import owner_uids
        from workload_map.kube.owners import chain

        state = self.api.state
        stores = [(t.key, state.informer(t, wait=False).store) for t in self.types]

        def lookup(namespace: str, api_version: str, kind: str, name: str) -> Mapping[str, Any] | None:
            if self._lookup is None:
                self._lookup = make_owner_lookup(state.client, state.discovery)
            return self._lookup(namespace, api_version, kind, name)

        for level in chain(pod, lookup):
            hits = [
                (key, uid) for uid in owner_uids(level) for key, store in stores if store.by_index("uid", uid)
            ]
            if hits:
                return hits
        return []

    def _workloads_in(self, namespace: str) -> list[tuple[str, str]]:
        """``(type key, uid)`` of the streamed workloads of ``namespace`` (cache only)."""
        state = self.api.state
        return [
            (t.key, str((obj.get("metadata") or {}).get("uid") or ""))
            for t in self.types
            for obj in state.informer(t, wait=False).store.by_index("namespace", namespace)
        ]

    def _current(self, key: str, uid: str) -> dict[str, Any] | None:
        t = self.api.state.type_for(key)
        if t is None:
            return None
        found = self.api.state.informer(t, wait=False).store.by_index("uid", uid)
        return found[0] if found else None

    def _pods_changed(self, pod: dict[str, Any]) -> Awaitable[list[tuple[str, str]]]:
        from starlette.concurrency import run_in_threadpool

        return run_in_threadpool(self._workloads_of, pod)

    def _schedule(self, targets: list[tuple[str, str]]) -> None:
        loop = asyncio.get_running_loop()
        for target in targets:
            if target in self.pending:
                continue  # a refresh is already due: it will show this change too
            self.pending.add(target)
            key, uid = target
            loop.call_later(
                self.api.settings.pod_debounce, self.queue.put_nowait, ("refresh", key, {"uid": uid})
            )

    @staticmethod
    def frame(kind: str, row: dict[str, Any]) -> bytes:
        data = orjson.dumps({"type": kind, "object": row})
        rv = row.get("resourceVersion") or ""
        return f"event: {kind}\nid: {rv}\n".encode() + b"data: " + data + b"\n\n"

    async def events(self) -> AsyncIterator[bytes]:
        from starlette.concurrency import run_in_threadpool

        deadline = time.monotonic() + self.timeout if self.timeout else None
        try:
            yield b"retry: 3000\n\n"
            for first in self.initial:
                yield self.frame("added", first)
            yield b'event: synced\ndata: {"type": "synced"}\n\n'
            while True:
                wait = self.api.settings.heartbeat
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return
                    wait = min(wait, left)
                try:
                    kind, key, obj = await asyncio.wait_for(self.queue.get(), timeout=wait)
                except asyncio.TimeoutError:
                    yield b": keep-alive\n\n"
                    continue
                if kind == "pod":
                    with contextlib.suppress(Exception):
                        self._schedule(await self._pods_changed(obj))
                    continue
                if kind == "claim":
                    self._schedule(await run_in_threadpool(self._workloads_in, key))
                    continue
                if kind == "refresh":
                    self.pending.discard((key, str(obj["uid"])))
                    current = await run_in_threadpool(self._current, key, str(obj["uid"]))
                    if current is None:
                        continue  # deleted meanwhile: its own event says so
                    kind, obj = "modified", current
                row: dict[str, Any] | None = None
                with contextlib.suppress(HttpError):
                    row = await run_in_threadpool(self._row_or_none, kind, key, obj)
                if row is not None:
                    yield self.frame(kind, row)
        finally:
            for cancel in self.cancels:
                cancel()


_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,251}[A-Za-z0-9])?$")
_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def _ref(namespace: str, name: str) -> str:
    """``ns/name``, or ``name`` for a cluster-scoped object."""
    return f"{namespace}/{name}" if namespace else name


def _check_path(params: Mapping[str, Any]) -> None:
    """Path parameters must be Kubernetes names (400 otherwise, before any API call)."""
    for key, value in params.items():
        pattern = _NAMESPACE if key == "namespace" else _NAME
        if not isinstance(value, str) or not pattern.match(value):
            raise HttpError(400, "invalid_request", f"invalid {key} {value!r}: not a Kubernetes name")


def _wrap(
    fn: Callable[[Request], Any], gate: Callable[[Request], Awaitable[None]] | None = None
) -> Callable[[Request], Awaitable[Response]]:
    """Errors -> the JSON error object; ``gate`` (the write rule) runs first; sync handlers run in
    the thread pool."""
    from starlette.concurrency import run_in_threadpool

    async def endpoint(request: Request) -> Response:
        try:
            _check_path(request.path_params)
            if gate is not None:
                await gate(request)
            if asyncio.iscoroutinefunction(fn):
                result: Response = await fn(request)
            else:
                result = await run_in_threadpool(fn, request)
            return result
        except HttpError as exc:
            return _err(exc)
        except WorkloadMapError as exc:
            return _err(
                from_cluster_error(exc, "request")
                if isinstance(exc, ClusterError)
                else HttpError(422, "unprocessable", str(exc))
            )

    return endpoint


def create_app(state: ClusterState, settings: ServerSettings | None = None) -> Starlette:
    """The ASGI app. The caller owns ``state``; the app starts its informers on startup (when
    ``settings.start_informers``) and closes it on shutdown."""
    settings = settings or ServerSettings()
    api = Api(state, settings)

    async def not_found(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        code = {404: "not_found", 405: "method_not_allowed"}.get(status, "invalid_request")
        detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
        return JSON(
            error_body(status, code, f"{request.method} {request.url.path}: {detail}"), status_code=status
        )

    async def internal(request: Request, exc: Exception) -> Response:
        log.exception("internal error on %s %s", request.method, request.url.path)
        return JSON(
            error_body(500, "internal", f"internal error: {type(exc).__name__}: {exc}"), status_code=500
        )

    def index(_request: Request) -> Response:
        page = STATIC_DIR / "index.html"
        if page.is_file():
            return FileResponse(page)
        return JSON({"name": "wmap serve", "openapi": "/openapi.json", "ui": "not installed"})

    def route(path: str, fn: Callable[[Request], Any], method: str, *, read_only: bool = False) -> Route:
        """A route; a method that is not a read goes through the write gate unless ``read_only``."""
        write = method not in READ_METHODS and not read_only

        async def gate(request: Request) -> None:
            await api.require_writes(request, path)

        return Route(path, _wrap(fn, gate if write else None), methods=[method])

    wl = "/api/v1/namespaces/{namespace}/workloads/{type}/{name}"
    cwl = "/api/v1/workloads/{type}/{name}"  # cluster-scoped kinds
    routes: list[Route | Mount] = [
        route("/healthz", api.healthz, "GET"),
        route("/readyz", api.readyz, "GET"),
        route("/openapi.json", api.openapi, "GET"),
        route("/api/v1/whoami", api.whoami, "GET"),
        route("/api/v1/workload-types", api.list_types, "GET"),
        route("/api/v1/workload-types", api.register_type, "POST"),
        route("/api/v1/workload-types/{name}", api.get_type, "GET"),
        route("/api/v1/workload-types/{name}", api.delete_type, "DELETE"),
        route("/api/v1/workloads", api.list_workloads, "GET"),
        route(wl, api.get_workload, "GET"),
        route(wl + "/manifest", api.get_manifest, "GET"),
        route(cwl + "/manifest", api.get_manifest, "GET"),
        route(wl + "/cost", api.get_cost, "GET"),
        route(cwl + "/cost", api.get_cost, "GET"),
        route(wl + "/gangs", api.gangs, "GET"),
        route(cwl + "/gangs", api.gangs, "GET"),
        route("/api/v1/namespaces", api.list_namespaces, "GET"),
        route("/api/v1/other-types", api.other_types, "GET"),
        route("/api/v1/generic/{resource}", api.generic_workloads, "GET"),
        route("/api/v1/nodes/{name}", api.get_node, "GET"),
        route(wl + "/suspend", api.suspend, "POST"),
        route(wl + "/resume", api.resume, "POST"),
        route(wl + "/edits", api.edit, "POST"),
        route(wl + "/scale", api.scale, "POST"),
        route(cwl, api.get_workload, "GET"),
        route(cwl + "/suspend", api.suspend, "POST"),
        route(cwl + "/resume", api.resume, "POST"),
        route(cwl + "/edits", api.edit, "POST"),
        route(cwl + "/scale", api.scale, "POST"),
        route("/api/v1/namespaces/{namespace}/pods/{name}/podgroup", api.pod_group, "GET"),
        route("/api/v1/placement", api.placement, "POST", read_only=True),
        route("/api/v1/watch/workloads", api.watch, "GET"),
        Route("/", index, methods=["GET"]),
    ]
    if STATIC_DIR.is_dir():
        routes.append(Mount("/static", app=StaticFiles(directory=str(STATIC_DIR)), name="static"))

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if settings.start_informers:
            state.start()
        try:
            yield
        finally:
            api.close()
            await asyncio.get_running_loop().run_in_executor(None, state.close)
            if api.prometheus is not None:
                api.prometheus.close()

    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: not_found, Exception: internal},
        lifespan=lifespan,
        middleware=[
            Middleware(HeadLimit, limit=settings.limits.max_header_bytes),
            Middleware(RequestLimit, limit=settings.limits.max_requests),
            *([Middleware(LoopbackOnly)] if settings.local_user is not None else []),
            Middleware(BodyLimit, limit=settings.limits.max_body),
        ],
    )
    app.state.api = api
    return app
