"""What the server knows about its cluster: definitions, served types, informers, live events.

* **Definitions**: catalog + cluster Karta objects (read with the server's identity), merged as
  everywhere else (:mod:`workload_map.definitions_source`); reloaded after ``definitions_ttl``
  seconds or when the API registers/deletes a type. Discovery is refreshed on the same schedule,
  so types whose CRDs appear later are picked up.
* **Types**: one :class:`TypeRef` per covered kind the cluster serves (for a group and kind with
  several covered served versions: the most stable one), plus any exact served version asked for.
* **Informers** (:class:`workload_map.runtime.informer.Informer`): one per workload resource,
  plus one for pods, each with its own HTTP client (a watch holds a connection). Started for
  every served type by :meth:`ClusterState.start` (in the background) and on first use for types
  that appear later. Their events feed :meth:`subscribe` callbacks (the SSE endpoint).
* **DRA claims** (:class:`workload_map.runtime.claims.ClaimCache`): ResourceClaimTemplates and
  ResourceClaims, watched only when the cluster serves them (discovery asked once), trimmed to
  what the resolver reads; the GPUs they request count in every row (:meth:`claims`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from workload_map.errors import ClusterError, WorkloadMapError
from workload_map.kube.objects import namespace_of
from workload_map.quarantine import Quarantine
from workload_map.runtime.informer import EventHandler, Informer
from workload_map.server.errors import HttpError, from_cluster_error

if TYPE_CHECKING:
    from workload_map.cluster.client import KubeClient
    from workload_map.cluster.discovery import APIResource, Discovery
    from workload_map.cluster.kubeconfig import ClusterConfig
    from workload_map.cluster.owners import OwnerLookup
    from workload_map.definitions_source import DefinitionEntry, DefinitionSet
    from workload_map.model.loader import FieldValidation
    from workload_map.resolve.compiled import CompiledDefinition
    from workload_map.runtime.claims import ClaimCache

__all__ = ["ClusterState", "TypeRef", "WorkloadEvent"]

log = logging.getLogger(__name__)

PODS_KEY = "Pod.v1"
#: Seconds one owner cache serves the requests (see :meth:`ClusterState.owner_lookup`).
OWNER_CACHE_TTL = 60.0

#: (event type: "added" | "modified" | "deleted", type key, object)
WorkloadEvent = tuple[str, str, dict[str, Any]]
Subscriber = Callable[[str, str, dict[str, Any]], None]
#: (event type: "added" | "modified" | "deleted", pod)
PodSubscriber = Callable[[str, dict[str, Any]], None]
#: (namespace of a DRA claim or template that was added, changed or deleted)
ClaimSubscriber = Callable[[str], None]
F = TypeVar("F", Subscriber, PodSubscriber, ClaimSubscriber)


def _notify(subscribers: Sequence[Callable[..., None]], what: str, *args: Any) -> None:
    """Call every subscriber with ``args`` (a copy of the list: one may unsubscribe meanwhile)."""
    for fn in list(subscribers):
        try:
            fn(*args)
        except Exception:  # a broken subscriber must not stop the informer
            log.exception("%s failed", what)


@dataclass(frozen=True)
class TypeRef:
    """A covered type the cluster serves: its definition, compiled, and its API resource."""

    entry: DefinitionEntry
    compiled: CompiledDefinition
    resource: APIResource

    @property
    def key(self) -> str:
        """``JobSet.v1alpha2.jobset.x-k8s.io``."""
        return self.resource.gvk


def _ns_index(obj: Mapping[str, Any]) -> list[str]:
    meta = obj.get("metadata")
    return [str(meta.get("namespace") or "")] if isinstance(meta, Mapping) else [""]


def _uid_index(obj: Mapping[str, Any]) -> list[str]:
    meta = obj.get("metadata")
    uid = meta.get("uid") if isinstance(meta, Mapping) else None
    return [str(uid)] if uid else []


def pod_signature(pod: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a workload row shows of a pod: phase, readiness, node, restarts, being deleted. A pod
    update that leaves it unchanged is not passed on to the pod subscribers."""
    meta = pod.get("metadata")
    spec = pod.get("spec")
    status = pod.get("status")
    meta = meta if isinstance(meta, Mapping) else {}
    spec = spec if isinstance(spec, Mapping) else {}
    status = status if isinstance(status, Mapping) else {}
    conditions = status.get("conditions")
    conds = tuple(
        sorted(
            (str(c.get("type")), str(c.get("status")), str(c.get("reason") or ""))
            for c in (conditions if isinstance(conditions, list) else [])
            if isinstance(c, Mapping)
        )
    )
    containers = status.get("containerStatuses")
    ready_restarts = tuple(
        (bool(c.get("ready")), c.get("restartCount"), tuple(sorted(c.get("state") or {})))
        for c in (containers if isinstance(containers, list) else [])
        if isinstance(c, Mapping)
    )
    return (
        status.get("phase"),
        status.get("reason"),
        spec.get("nodeName"),
        meta.get("deletionTimestamp") is not None,
        conds,
        ready_restarts,
    )


class ClusterState:
    def __init__(
        self,
        config: ClusterConfig,
        *,
        client: KubeClient | None = None,
        definitions_ttl: float = 10.0,
        sync_timeout: float = 30.0,
        watch_timeout: int = 300,
        local_paths: Sequence[str] = (),
        field_validation: FieldValidation = "strict",
    ) -> None:
        from workload_map.cluster.client import KubeClient
        from workload_map.cluster.discovery import Discovery

        self.config = config
        self.client = client or KubeClient(config, user_agent="wmap-serve")
        self.discovery: Discovery = Discovery(self.client, cache_dir=False)
        self.definitions_ttl = definitions_ttl
        self.sync_timeout = sync_timeout
        self.watch_timeout = watch_timeout
        #: ``--definitions`` files and directories: merged over the catalog and cluster Kartas.
        self.local_paths = tuple(local_paths)
        self.field_validation = field_validation  # --validate, for the local files
        #: Definitions that keep exceeding the expression limits are not evaluated for a while.
        self.quarantine = Quarantine()
        self._lock = threading.RLock()
        self._defs: DefinitionSet | None = None
        self._defs_at = 0.0
        self._types: dict[str, TypeRef] = {}
        self._compiled: dict[int, CompiledDefinition] = {}
        self._informers: dict[str, Informer] = {}
        self._clients: list[KubeClient] = []
        self._subscribers: list[Subscriber] = []
        self._pod_subscribers: list[PodSubscriber] = []
        self._claim_subscribers: list[ClaimSubscriber] = []
        self._closed = False
        self.started = threading.Event()
        self.start_error: str | None = None
        self._owners: OwnerLookup | None = None
        self._owners_at = 0.0
        self._probe_client: KubeClient | None = None
        self._claims: ClaimCache | None = None

    # ------------------------------------------------------------------------------ definitions

    def definitions(self) -> DefinitionSet:
        with self._lock:
            if self._defs is None or time.monotonic() - self._defs_at > self.definitions_ttl:
                self._reload()
            assert self._defs is not None
            return self._defs

    def invalidate(self) -> None:
        with self._lock:
            self._defs = None

    def _reload(self) -> None:
        from workload_map.definitions_source import load_definition_set
        from workload_map.kube.objects import KARTA_PATH

        client = self.client

        def list_kartas() -> list[dict[str, Any]]:
            return client.list_all(KARTA_PATH)

        defs = load_definition_set(
            list_kartas=list_kartas, local_paths=self.local_paths, field_validation=self.field_validation
        )
        for w in defs.warnings:
            log.warning("definitions: %s", w.message)
        if self._defs is not None:
            self.discovery.invalidate()
        try:
            resources = self.discovery.resources()
        except ClusterError as exc:
            if self._defs is None:
                raise from_cluster_error(exc, "discovery") from exc
            resources = []
        self._defs = defs
        self._defs_at = time.monotonic()
        self._types = self._build_types(defs, resources)

    def compiled(self, entry: DefinitionEntry) -> CompiledDefinition:
        from workload_map.resolve import compile_definition

        with self._lock:
            hit = self._compiled.get(id(entry.karta))
            if hit is None:
                hit = compile_definition(entry.karta)
                self._compiled[id(entry.karta)] = hit
            return hit

    def _build_types(self, defs: DefinitionSet, resources: list[APIResource]) -> dict[str, TypeRef]:
        out: dict[str, TypeRef] = {}
        self._compiled = {
            k: v for k, v in self._compiled.items() if any(id(e.karta) == k for e in defs.entries)
        }
        for res in resources:
            if "/" in res.name or "list" not in res.verbs:
                continue
            found = defs.for_gvk(res.group, res.version, res.kind)
            if len(found) != 1:
                continue
            try:
                compiled = self.compiled(found[0])
            except WorkloadMapError as exc:
                log.warning("definition %s cannot be used: %s", found[0].name, exc)
                continue
            t = TypeRef(found[0], compiled, res)
            out.setdefault(t.key, t)
        return out

    def all_types(self) -> dict[str, TypeRef]:
        """Every covered served group/version/kind."""
        self.definitions()
        with self._lock:
            return dict(self._types)

    def served_types(self) -> list[TypeRef]:
        """One type per covered group and kind: the most stable covered served version."""
        from workload_map.cluster.discovery import version_priority

        best: dict[tuple[str, str], TypeRef] = {}
        for t in self.all_types().values():
            gk = (t.resource.group, t.resource.kind)
            cur = best.get(gk)
            if cur is None or version_priority(t.resource.version) < version_priority(cur.resource.version):
                best[gk] = t
        return sorted(best.values(), key=lambda t: (t.resource.kind, t.resource.group))

    def type_for(self, key: str) -> TypeRef | None:
        return self.all_types().get(key)

    def resolve_token(self, token: str) -> list[TypeRef]:
        """The served covered types a word names, by :mod:`workload_map.type_words` (the words
        every consumer accepts). A word naming a version (``JobSet.v1alpha2.jobset.x-k8s.io``)
        gets that version; otherwise the most stable served one. Empty when nothing covered and
        served matches."""
        from workload_map.type_words import (
            AmbiguousTypeWordError,
            TypeWordError,
            offline_candidates,
            resolve_word,
        )

        defs = self.definitions()
        types = self.all_types()
        defaults = {(t.resource.group, t.resource.kind): t for t in self.served_types()}
        explicit: str | None = None
        try:
            match = resolve_word(defs, token, self.discovery)
            entries = [match.entry]
            served = match.served
            if served is not None and token.count(".") >= 2 and token.split(".")[1] == served.version:
                explicit = f"{served.kind}.{served.version}.{served.group}" if served.group else None
        except AmbiguousTypeWordError:
            entries = offline_candidates(defs, token)
        except TypeWordError:
            return []
        except ClusterError as exc:
            raise from_cluster_error(exc, "discovery") from exc
        if explicit is not None and explicit in types:
            return [types[explicit]]
        out: list[TypeRef] = []
        for e in entries:
            gvk = e.gvk
            t = defaults.get((gvk.group, gvk.kind)) if gvk is not None else None
            if t is not None and t not in out:
                out.append(t)
        return out

    # ------------------------------------------------------------------------------- informers

    def _new_client(self) -> KubeClient:
        from workload_map.cluster.client import KubeClient

        c = KubeClient(self.config, user_agent="wmap-serve")
        self._clients.append(c)
        return c

    def _informer(self, key: str, path: str, resource: str) -> Informer:
        with self._lock:
            inf = self._informers.get(key)
            if inf is not None:
                return inf
            if self._closed:
                raise HttpError(503, "not_ready", "the server is shutting down")
            inf = Informer(self._new_client(), path, resource=resource, watch_timeout=self.watch_timeout)
            inf.store.add_indexer("namespace", _ns_index)
            inf.store.add_indexer("uid", _uid_index)
            if key == PODS_KEY:
                inf.add_handler(self._pod_handler(), replay=False)
            else:
                inf.add_handler(self._handler(key), replay=False)
            self._informers[key] = inf
            inf.start()
            return inf

    def _handler(self, key: str) -> EventHandler:
        def emit(kind: str, obj: dict[str, Any]) -> None:
            _notify(self._subscribers, "subscriber", kind, key, obj)

        return EventHandler(
            on_add=lambda o: emit("added", o),
            on_update=lambda _old, new: emit("modified", new),
            on_delete=lambda o: emit("deleted", o),
        )

    def _pod_handler(self) -> EventHandler:
        def emit(kind: str, pod: dict[str, Any]) -> None:
            _notify(self._pod_subscribers, "pod subscriber", kind, pod)

        def updated(old: dict[str, Any], new: dict[str, Any]) -> None:
            if pod_signature(old) != pod_signature(new):
                emit("modified", new)

        return EventHandler(
            on_add=lambda p: emit("added", p),
            on_update=updated,
            on_delete=lambda p: emit("deleted", p),
        )

    def _claim_handler(self) -> EventHandler:
        def emit(claim: dict[str, Any]) -> None:
            _notify(self._claim_subscribers, "claim subscriber", namespace_of(claim))

        return EventHandler(on_add=emit, on_update=lambda _old, new: emit(new), on_delete=emit)

    def owner_lookup(self) -> OwnerLookup:
        """Owners between workloads and their pods (ReplicaSets, Jobs...), fetched once and shared
        by the requests of :data:`OWNER_CACHE_TTL` seconds: a list climbs every pod's chain, and
        owner references do not change under a live object."""
        from workload_map.cluster.owners import make_owner_lookup

        with self._lock:
            now = time.monotonic()
            if self._owners is None or now - self._owners_at > OWNER_CACHE_TTL:
                self._owners = make_owner_lookup(self.client, self.discovery)
                self._owners_at = now
            return self._owners

    def claims(self, *, wait: bool = True) -> ClaimCache:
        """The DRA claims and templates, live (started on first use; with ``wait``, synced)."""
        from workload_map.resolve.dra import claim_to_cache
        from workload_map.runtime.claims import ClaimCache

        with self._lock:
            if self._claims is None:
                if self._closed:
                    raise HttpError(503, "not_ready", "the server is shutting down")
                self._claims = ClaimCache(
                    self._new_client, self.discovery, claim_to_cache, watch_timeout=self.watch_timeout
                )
                self._claims.add_handler(self._claim_handler())
            cache = self._claims
        cache.start()
        if wait:
            for inf in cache.informers():
                self._wait(inf, inf.resource)
        return cache

    def informer(self, t: TypeRef, *, wait: bool = True) -> Informer:
        inf = self._informer(t.key, t.resource.path(None), t.resource.qualified_name)
        if wait:
            self._wait(inf, t.resource.qualified_name)
        return inf

    def pods(self, *, wait: bool = True) -> Informer:
        inf = self._informer(PODS_KEY, "/api/v1/pods", "pods")
        if wait:
            self._wait(inf, "pods")
        return inf

    def _wait(self, inf: Informer, what: str) -> None:
        if not inf.wait_for_sync(self.sync_timeout):
            raise HttpError(
                503,
                "not_ready",
                f"the cache of {what} is not synced yet",
                "Retry in a moment; /readyz says when the server is ready.",
            )

    def _subscribe(self, subscribers: list[F], fn: F) -> Callable[[], None]:
        """Add ``fn`` to ``subscribers``; returns the unsubscribe."""
        with self._lock:
            subscribers.append(fn)

        def cancel() -> None:
            with self._lock, contextlib.suppress(ValueError):
                subscribers.remove(fn)

        return cancel

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        """Call ``fn(kind, type key, obj)`` (on the type informer's thread) for every change of
        a workload of a served type. Returns the unsubscribe."""
        return self._subscribe(self._subscribers, fn)

    def subscribe_pods(self, fn: PodSubscriber) -> Callable[[], None]:
        """Call ``fn(kind, pod)`` (on the pod informer's thread) when a pod is added or deleted, or
        changes in what a workload row shows (:func:`pod_signature`). Returns the unsubscribe."""
        return self._subscribe(self._pod_subscribers, fn)

    def subscribe_claims(self, fn: ClaimSubscriber) -> Callable[[], None]:
        """Call ``fn(namespace)`` (on a claim informer's thread) when a DRA claim or template the
        cache keeps is added, changed or deleted. Returns the unsubscribe."""
        return self._subscribe(self._claim_subscribers, fn)

    # ------------------------------------------------------------------------------- lifecycle

    def start(self, *, background: bool = True) -> None:
        """Load definitions and start informers for every served type and pods."""

        def run() -> None:
            try:
                for t in self.served_types():
                    self.informer(t, wait=False)
                self.pods(wait=False)
                self.claims(wait=False)
            except Exception as exc:
                self.start_error = str(exc)
                log.warning("starting the caches failed: %s", exc)
            finally:
                self.started.set()

        if background:
            threading.Thread(target=run, name="wmap-serve-start", daemon=True).start()
        else:
            run()

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        """Whether the API server answers and every cache has synced. The API server is asked
        with a client of its own: API traffic holding every connection of the shared client
        cannot make the probe wait."""
        checks: dict[str, Any] = {}
        with self._lock:
            if self._probe_client is None:
                self._probe_client = self._new_client()
            probe = self._probe_client
        try:
            probe.get_bytes("/readyz")
            checks["apiserver"] = "ok"
        except ClusterError as exc:
            checks["apiserver"] = str(exc)
        with self._lock:
            informers = dict(self._informers)
            claims = self._claims
        informers.update({inf.resource: inf for inf in claims.informers()} if claims is not None else {})
        pending = sorted(k for k, inf in informers.items() if not inf.has_synced())
        checks["informers"] = len(informers)
        checks["unsynced"] = pending
        if self.start_error:
            checks["startError"] = self.start_error
        ok = checks["apiserver"] == "ok" and self.started.is_set() and not pending and not self.start_error
        return ok, checks

    def close(self) -> None:
        with self._lock:
            self._closed = True
            informers = list(self._informers.values())
            self._informers.clear()
            if self._claims is not None:
                informers += self._claims.informers()
        for inf in informers:
            inf.stop(timeout=2.0)
        for c in self._clients:
            c.close()
        self.client.close()
