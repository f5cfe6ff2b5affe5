"""The exporter's engine: informers for every covered workload kind the cluster serves, for pods
and for intermediate owners; per-workload metric text kept up to date by worker threads.

Flow:

- **Definitions**: the catalog, cluster ``Karta`` objects (watched; any change triggers a
  rediscovery) and ``--definitions`` files, merged per GVK as everywhere else
  (:mod:`workload_map.definitions_source`). Every covered GroupKind is watched once, at its most
  stable covered version the server serves. A rediscovery also runs every
  ``rediscover_interval`` seconds so that a CRD installed later gets its informer.
- **Informers**: one per watched kind (per namespace with ``namespaces``), one for pods and one
  for each intermediate owner kind that is not a covered kind itself (Jobs, ReplicaSets,
  StatefulSets, and the non-core kinds the definitions declare in their chains: see
  :func:`chain_kinds`). Stores are indexed by owner-reference uid.
- **Events** only enqueue keys (informer threads stay fast): a workload's own key, and for pods and
  owners the covered ancestors found by climbing controller owner references through the stores.
  Until the first lists of the pods and of the owner kinds are in, nothing is rendered; then every
  top-level workload is, once, with all of its pods (see :meth:`Exporter._await_pods`). Unsharded,
  the pods are listed beside the owner kinds; sharded, after them (see :meth:`Exporter._start_pods`).
- **Workers** take a workload key, keep it only when it is top-level (no covered kind in its
  controller-owner chain, upstream's ``get --all-types`` rule), collect its pods top-down from the
  owner indexes, resolve it (cached per resourceVersion), attribute the pods
  (:func:`workload_map.resolve.pods.attribute_pods`) and store the rendered lines. A scrape only
  concatenates those lines.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workload_map import __version__
from workload_map.errors import ClusterError, DefinitionQuarantinedError, WorkloadMapError
from workload_map.exporter import metrics as m
from workload_map.exporter.compact import as_dict, compact_workload
from workload_map.exporter.exposition import Family
from workload_map.exporter.scrape import DeflateCache, WorkloadBody, admit
from workload_map.exporter.sharding import Shard
from workload_map.exporter.trim import STUB_KEY, stub, trim_owner, trim_pod, trim_workload
from workload_map.kube.objects import (
    KARTA_API_VERSION,
    KARTA_GROUP,
    KARTA_KIND,
    KARTA_PATH,
    KARTA_RESOURCE,
    api_path,
    controller_ref,
    group_of,
    meta,
    name_of,
    namespace_of,
    owner_uids,
    ref_key,
    uid_of,
)
from workload_map.kube.owners import climb, descendants
from workload_map.quarantine import Quarantine, exceeded_limits
from workload_map.runtime import WorkQueue, run_workers
from workload_map.runtime.informer import EventHandler as ClaimHandler
from workload_map.runtime.informer import ObjectEventHandler, ObjectInformer, SharedIndex, Stored
from workload_map.runtime.workqueue import WorkerPool

if TYPE_CHECKING:
    from workload_map.cluster.client import KubeClient
    from workload_map.cluster.kubeconfig import ClusterConfig
    from workload_map.definitions_source import DefinitionEntry
    from workload_map.model.loader import FieldValidation
    from workload_map.resolve.compiled import CompiledDefinition
    from workload_map.resolve.types import Workload

__all__ = ["Exporter", "WatchedKind"]

log = logging.getLogger(__name__)

#: Owner kinds between workloads and pods that are watched even when no definition covers them.
INTERMEDIATE_KINDS: tuple[tuple[str, str, str], ...] = (
    ("batch", "v1", "Job"),
    ("apps", "v1", "ReplicaSet"),
    ("apps", "v1", "StatefulSet"),
)
POD_KIND = "/Pod"
#: The pod informers' tag in the owner index (the watched kinds' stores are tagged with their id).
POD_TAG = "pods"


def chain_kinds(entries: Iterable[DefinitionEntry]) -> set[tuple[str, str, str]]:
    """The owner kinds the definitions declare between their workloads and the pods (child
    component kinds and ``additionalChildKinds``, e.g. a Knative Revision and Configuration under an
    InferenceService), so that a pod's chain can be climbed through the informer stores. Core kinds
    are left out: none of them owns pods (Services, ConfigMaps) and watching them costs memory."""
    out: set[tuple[str, str, str]] = set()
    for e in entries:
        structure = e.karta.spec.structure_definition
        kinds = [c.kind for c in structure.child_components] + list(structure.additional_child_kinds)
        for gvk in kinds:
            if gvk is not None and gvk.group and gvk.version and gvk.kind:
                out.add((gvk.group, gvk.version, gvk.kind))
    return out


#: Default --max-series: workload series per scrape (the bench's 10,000 10-pod JobSets give 440,000).
DEFAULT_MAX_SERIES = 1_000_000
#: Seconds the pod informers wait for the owner kinds' first lists before starting anyway.
POD_START_WAIT = 120.0
#: Seconds workloads wait for the pods' first list before they are rendered anyway.
POD_SYNC_WAIT = 120.0
#: Rediscoveries in a row a kind must be missing from discovery before its informers stop.
MISSING_ROUNDS = 3

GroupKind = tuple[str, str]
#: (kind id "group/Kind", namespace, name)
WorkloadKey = tuple[str, str, str]
Obj = dict[str, Any]
#: The exporter's informers keep trimmed objects: dicts, and pods in compact form (exporter.compact).
Informer = ObjectInformer[Stored]
EventHandler = ObjectEventHandler[Stored]


def _version_key(version: str) -> tuple[int, int, int, str]:
    from workload_map.cluster.discovery import version_priority

    return version_priority(version)


@dataclass
class WatchedKind:
    """One GroupKind being watched: its served version and REST names, the definition (``None``
    for intermediate owner kinds) and its informers."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    entry: DefinitionEntry | None
    #: compiled at the kind's first workload (see Exporter._compiled)
    compiled: CompiledDefinition | None = None
    compile_tried: bool = False
    informers: list[Informer] = field(default_factory=list)
    #: ``--generic-types``: no definition, rendered by the generic reading (kstatus, owned pods)
    generic: bool = False

    @property
    def renders(self) -> bool:
        """Its top-level objects are workloads of their own (a definition or a generic reading)."""
        return self.entry is not None or self.generic

    @property
    def id(self) -> str:
        return f"{self.group}/{self.kind}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def resource_name(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def path(self, namespace: str | None) -> str:
        return api_path(self.api_version, self.plural, namespace if self.namespaced else None)

    def get(self, namespace: str, name: str) -> Stored | None:
        for inf in self.informers:
            obj = inf.store.get(namespace, name)
            if obj is not None:
                return obj
        return None

    def signature(self) -> tuple[str, str, str]:
        entry = self.entry
        name = entry.name if entry else ("generic" if self.generic else "")
        return (self.version, name, repr(entry.karta.spec) if entry else "")


@dataclass
class _Entry:
    #: None when the lines are provisional (the definition exceeded its limits or is quarantined):
    #: the next look at the workload renders it again even if nothing changed.
    fingerprint: tuple[Any, ...] | None
    lines: dict[str, bytes]
    #: sample lines in ``lines`` (what the series ceiling counts)
    series: int = 0


def _slim(workload: Workload | None) -> Workload | None:
    """What rendering reads again while only pods change (phases, requests, the components' tree
    and totals), without the instances: their pod templates point into the object decoded for this
    render, which the store keeps only as JSON text (compact.CompactObject); caching them would
    keep a decoded copy of every workload."""
    if workload is None:
        return None
    components = {name: dataclasses.replace(c, instances=()) for name, c in workload.components.items()}
    return dataclasses.replace(workload, components=components)


def _pods_digest(pods: Mapping[str, Stored]) -> bytes:
    """The pods' names and resourceVersions in 16 bytes (what a workload's fingerprint compares;
    a tuple of them cost ~80 bytes per pod). Names and versions hold no NUL."""
    text = "\0".join(f"{n}\0{meta(p).get('resourceVersion')}" for n, p in sorted(pods.items()))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class Exporter:
    """Keeps metric text for every top-level workload of the covered kinds.

    ``client_factory`` builds a new :class:`KubeClient` (each informer holds a long-lived watch
    connection on its own client). ``namespaces``: watch only these (default: all).
    ``max_series``: the ceiling on workload series per scrape (0: none; see :mod:`.scrape`).
    """

    def __init__(
        self,
        config: ClusterConfig,
        *,
        namespaces: Sequence[str] = (),
        local_paths: Sequence[str] = (),
        include_catalog: bool = True,
        rediscover_interval: float = 30.0,
        workers: int = 4,
        watch_timeout: int = 300,
        client_factory: Callable[[], KubeClient] | None = None,
        shard: Shard | None = None,
        generic_types: Sequence[str] = (),
        max_series: int = DEFAULT_MAX_SERIES,
        field_validation: FieldValidation = "strict",
        families: Sequence[Family] = m.WORKLOAD_FAMILIES,
    ) -> None:
        from workload_map.cluster.client import KubeClient
        from workload_map.definitions_source import catalog_entries, local_entries

        self.config = config
        self.namespaces: tuple[str, ...] = tuple(dict.fromkeys(namespaces))
        self.rediscover_interval = rediscover_interval
        self.watch_timeout = watch_timeout
        self.shard = shard or Shard()
        #: ``plural.group`` words of types without a definition to render generically
        self.generic_types: tuple[str, ...] = tuple(dict.fromkeys(generic_types))
        self._pods_started = False
        #: Set once the pods' first list is in (or failed, or POD_SYNC_WAIT passed): until then
        #: workers render nothing and pod events enqueue nothing; then every workload is rendered.
        self._pods_synced = threading.Event()
        self.max_series = max(0, max_series)
        #: the workload families exported (--metric-allowlist/--metric-denylist; see metrics.select_families)
        self.families: tuple[Family, ...] = tuple(families)
        self._family_names = frozenset(f.name for f in self.families)
        #: the workload families of the current generation (see workload_body)
        self._body: WorkloadBody | None = None
        #: compressed segments of the workload families, reused across generations (see .scrape)
        self._deflate_cache = DeflateCache()
        self._body_lock = threading.Lock()
        self._client_factory = client_factory or (lambda: KubeClient(config, connect_tries=1))
        self.client = self._client_factory()
        self._catalog = catalog_entries() if include_catalog else []
        self._local = local_entries(local_paths, field_validation=field_validation)
        self._lock = threading.RLock()
        self.kinds: dict[str, WatchedKind] = {}
        self._pod_informers: list[Informer] = []
        self._karta_informer: Informer | None = None
        self._entries: dict[WorkloadKey, _Entry] = {}
        self._resolved: dict[WorkloadKey, tuple[str, Any]] = {}
        #: owner UID -> the objects with an owner reference to it, over every informer's store
        self._owned = SharedIndex(owner_uids)
        self._resolve_errors: dict[str, int] = {}
        self._definition_rows: list[tuple[list[tuple[str, str]], float]] = []
        self._compiled_cache: dict[tuple[str, str], CompiledDefinition] = {}
        self._compile_lock = threading.Lock()
        #: Definitions that keep exceeding the expression limits are not evaluated for a while.
        self.quarantine = Quarantine()
        from workload_map.cluster.discovery import Discovery

        self.discovery = Discovery(self.client, cache_dir=False)
        from workload_map.resolve.dra import claim_to_cache
        from workload_map.runtime.claims import ClaimCache

        #: DRA claims and templates (their GPUs count in the resource series), by namespace: a
        #: change bumps the namespace's generation, part of each workload's fingerprint there.
        self.claims = ClaimCache(
            self._client_factory,
            self.discovery,
            claim_to_cache,
            namespaces=self.namespaces,
            watch_timeout=watch_timeout,
        )
        self.claims.add_handler(
            ClaimHandler(
                on_add=self._claims_changed,
                on_update=lambda _old, new: self._claims_changed(new),
                on_delete=self._claims_changed,
            )
        )
        self._claim_generations: dict[str, int] = {}
        self._missing: dict[str, int] = {}
        self._version = 0
        self.queue: WorkQueue[WorkloadKey] = WorkQueue(name="workloads")
        self._workers_count = max(1, workers)
        self._pool: WorkerPool[WorkloadKey] | None = None
        self._stop = threading.Event()
        self._nudge = threading.Event()
        self._discovered = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_discovery_error: str | None = None

    # ------------------------------------------------------------------------------- lifecycle

    def start(self) -> Exporter:
        self._pool = run_workers(
            self.queue, self._process, count=self._workers_count, max_retries=8, name="wmap-exporter"
        )
        for ns in self.namespaces or (None,):
            inf = self._new_informer(
                "/api/v1/pods" if ns is None else f"/api/v1/namespaces/{ns}/pods", "pods", self._pod_transform
            )
            inf.store.attach(self._owned, POD_TAG)
            inf.add_handler(
                EventHandler(
                    on_add=self._on_pod,
                    on_update=lambda old, new: self._on_pod(new, old),
                    on_delete=self._on_pod,
                )
            )
            self._pod_informers.append(inf)
        # The pods are listed after the first discovery; sharded, once the owner kinds are (see
        # _start_pods): their chains are then in the stores, so a pod of another shard is dropped on
        # arrival, never held whole.
        self._thread = threading.Thread(target=self._discovery_loop, name="wmap-discovery", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._nudge.set()
        with self._lock:
            informers: list[ObjectInformer[Any]] = [
                *self._pod_informers,
                *(i for k in self.kinds.values() if k.id != POD_KIND for i in k.informers),
            ]
            if self._karta_informer is not None:
                informers.append(self._karta_informer)
        informers += self.claims.informers()
        for inf in informers:
            inf.stop(0)
        for inf in informers:
            inf.stop(2.0)
            inf.client.close()
        if self._pool is not None:
            self._pool.stop(2.0)
        if self._thread is not None:
            self._thread.join(2.0)
        self.client.close()

    def _new_informer(
        self, path: str, resource: str, transform: Callable[[Obj], Stored | None] = trim_workload
    ) -> Informer:
        return Informer(
            self._client_factory(),
            path,
            resource=resource,
            watch_timeout=self.watch_timeout,
            backoff_initial=0.5,
            backoff_max=10.0,
            transform=transform,
        )

    def informers(self) -> list[ObjectInformer[Any]]:
        with self._lock:
            out: list[ObjectInformer[Any]] = [*self._pod_informers]
            if self._karta_informer is not None:
                out.append(self._karta_informer)
            for k in self.kinds.values():
                if k.id != POD_KIND:
                    out.extend(k.informers)
        return out + self.claims.informers()

    def ready(self) -> bool:
        """True after the first discovery, once every informer has synced."""
        return self._discovered.is_set() and all(i.has_synced() for i in self.informers())

    def unsynced(self) -> list[str]:
        out = [f"{i.resource} ({i.path})" for i in self.informers() if not i.has_synced()]
        if not self._discovered.is_set():
            out.insert(0, "discovery")
        return out

    def wait_ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not self.ready():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    # ------------------------------------------------------------------------------- discovery

    def _owner_informers(self) -> list[Informer]:
        """The informers of the watched kinds (workload and intermediate owner kinds; not pods)."""
        with self._lock:
            return [i for k in self.kinds.values() if k.id != POD_KIND for i in k.informers]

    def _wait_listed(self, informers: Callable[[], list[Informer]], deadline: float) -> bool:
        """Wait until each of ``informers()`` has listed once (or its list failed) or ``deadline``
        (monotonic) passed; ``False`` when the exporter was stopped meanwhile."""
        while not self._stop.is_set():
            pending = [i for i in informers() if not i.has_synced() and not i.stats.list_errors]
            if not pending or time.monotonic() > deadline:
                return True
            pending[0].wait_for_sync(0.1)
        return False

    def _start_pods(self) -> None:
        """Start the pod informers after the first discovery. Sharded, once the owner kinds'
        informers have synced (or POD_START_WAIT seconds have passed: a kind that never syncs must
        not hold the pods): the chains are then in the stores, so a pod of another shard is
        dropped on arrival, never held whole. Unsharded every pod is kept: the pods are listed
        beside the owner kinds at once (the API server sends one list while we take in another)."""
        if self.shard.sharded:
            deadline = time.monotonic() + POD_START_WAIT
            while not self._stop.is_set() and time.monotonic() < deadline:
                if all(i.has_synced() for i in self._owner_informers()):
                    break
                self._stop.wait(0.1)
        for inf in self._pod_informers:
            inf.start()
        self._pods_started = True
        threading.Thread(target=self._await_pods, name="wmap-pods-synced", daemon=True).start()

    def _await_pods(self) -> None:
        """Open the gate once the pods' first list and the owner kinds' are in: every workload is
        then rendered once with all its pods (its owner chain in the stores, so a pod under a Job
        is never taken for a workload of its own). Rendering while the list arrived rendered each
        workload two or three times (without pods, with some, with all) and climbed every pod's
        owner chain to enqueue it. A list that fails, or takes longer than POD_SYNC_WAIT, opens it
        too (rendered as before)."""
        deadline = time.monotonic() + POD_SYNC_WAIT
        if not self._wait_listed(lambda: list(self._pod_informers), deadline):
            return
        if not self._wait_listed(self._owner_informers, deadline):
            return
        if time.monotonic() > deadline:
            log.warning("pods not listed after %.0fs: rendering workloads meanwhile", POD_SYNC_WAIT)
        self._pods_synced.set()
        self._enqueue_all()

    def _enqueue_all(self) -> None:
        """Every top-level stored object of the rendering kinds (pods too when a definition covers
        them). Nothing is rendered before this, so an object under a covered owner (a Job of a
        JobSet, the pods of a Job: most of them) has nothing to drop and is not queued; its
        top-level owner renders it."""
        with self._lock:
            kinds = [k for k in self.kinds.values() if k.renders]
        # The chain above an object is its controller's: the pods of one Job (a definition covers
        # pods too, so all 100,000 are looked at) climb it once, not once each.
        chains: dict[tuple[tuple[str, str, str, str], str], bool] = {}
        for wk in kinds:
            for inf in wk.informers:
                for obj in inf.store.list():
                    ref = controller_ref(obj)
                    if ref is None:
                        top = self._top_level(obj)
                    else:
                        key = (ref_key(namespace_of(obj), ref), str(ref.get("uid") or ""))
                        found = chains.get(key)
                        top = chains[key] = self._top_level(obj) if found is None else found
                    if top:
                        self.queue.add((wk.id, namespace_of(obj), name_of(obj)))

    def _discovery_loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.rediscover()
                self.last_discovery_error = None
                self._discovered.set()
                if not self._pods_started:
                    self._start_pods()
            except ClusterError as exc:
                self.last_discovery_error = str(exc)
                log.warning("discovery failed: %s", exc)
            except Exception:
                log.exception("discovery failed unexpectedly")
            self._nudge.wait(self.rediscover_interval if self._discovered.is_set() else 1.0)
            self._nudge.clear()

    def _served(self, group_version: str) -> dict[str, tuple[str, bool]]:
        """kind -> (plural, namespaced) served at a group version (the shared discovery,
        re-read every 4 rediscovery intervals, so kinds added to a served group are followed)."""
        rows = self.discovery.served_at(group_version, max_age=4 * self.rediscover_interval)
        return {r.kind: (r.name, r.namespaced) for r in rows if "/" not in r.name}

    def _group_versions(self) -> dict[str, list[str]]:
        return self.discovery.group_versions()

    def rediscover(self) -> None:
        """Recompute the definitions and served kinds; start/stop informers to match."""
        from workload_map.definitions_source import decode_cluster_items, merge_definitions

        served_groups = self._group_versions()
        self.claims.start()  # discovery asked once (again only after a failure)
        # Karta objects: watched when the CRD is served.
        karta_served = KARTA_GROUP in served_groups and KARTA_KIND in self._served(KARTA_API_VERSION)
        if karta_served and self._karta_informer is None:
            inf = self._new_informer(KARTA_PATH, KARTA_RESOURCE)

            def nudge(*_args: Stored) -> None:
                self._nudge.set()

            inf.add_handler(EventHandler(on_add=nudge, on_update=nudge, on_delete=nudge))
            inf.start()
            inf.wait_for_sync(10)
            with self._lock:
                self._karta_informer = inf
        cluster_items = self._karta_informer.store.list() if self._karta_informer is not None else []
        cluster, warnings = decode_cluster_items(cluster_items)
        for w in warnings:
            log.warning("%s", w.message)
        entries, merge_warnings = merge_definitions(self._catalog, cluster, self._local)
        for w in merge_warnings:
            log.warning("%s", w.message)
        covered: dict[GroupKind, list[DefinitionEntry]] = {}
        for e in entries:
            gvk = e.gvk
            if gvk is not None:
                covered.setdefault((gvk.group, gvk.kind), []).append(e)
        wanted: dict[str, WatchedKind] = {}
        rows: list[tuple[list[tuple[str, str]], float]] = []
        for (group, kind), group_entries in sorted(covered.items()):
            by_version: dict[str, list[DefinitionEntry]] = {}
            for e in group_entries:
                assert e.gvk is not None
                by_version.setdefault(e.gvk.version, []).append(e)
            chosen: WatchedKind | None = None
            for version in sorted(by_version, key=_version_key):
                if version not in served_groups.get(group, ()):
                    continue
                gv = f"{group}/{version}" if group else version
                found = self._served(gv).get(kind)
                if found is None:
                    continue
                if len(by_version[version]) > 1:
                    log.warning("%s %s: several definitions claim it; not exported", kind, gv)
                    break
                chosen = WatchedKind(group, version, kind, found[0], found[1], by_version[version][0])
                break
            for version, es in by_version.items():
                for e in es:
                    is_served = chosen is not None and chosen.version == version and chosen.entry is e
                    labels = [
                        ("definition", e.name),
                        ("group", group),
                        ("version", version),
                        ("kind", kind),
                        ("origin", e.origin),
                    ]
                    rows.append((labels, 1 if is_served else 0))
            if chosen is not None:
                wanted[chosen.id] = chosen
        for word in self.generic_types:
            generic = self._generic_kind(word, served_groups, covered)
            if generic is not None:
                wanted[generic.id] = generic
        for group, version, kind in sorted(set(INTERMEDIATE_KINDS) | chain_kinds(entries)):
            wk_id = f"{group}/{kind}"
            if wk_id not in wanted and version in served_groups.get(group, ()):
                found = self._served(f"{group}/{version}").get(kind)
                if found is not None:
                    wanted[wk_id] = WatchedKind(group, version, kind, found[0], found[1], None)
        self._definition_rows = rows
        self._apply(wanted)

    def _generic_kind(
        self, word: str, served_groups: dict[str, list[str]], covered: Mapping[GroupKind, Any]
    ) -> WatchedKind | None:
        """``plural.group`` (``gizmos.example.com``) as a generic kind at its most stable served
        version; ``None`` (and a log line) when not served or when a definition covers it."""
        plural, _, group = word.partition(".")
        for version in sorted(served_groups.get(group, ()), key=_version_key):
            for kind, (name, namespaced) in self._served(f"{group}/{version}").items():
                if name != plural:
                    continue
                if (group, kind) in covered:
                    log.info("%s: a definition covers %s; not read generically", word, kind)
                    return None
                return WatchedKind(group, version, kind, name, namespaced, None, generic=True)
        log.info("%s: not served", word)
        return None

    def _apply(self, wanted: dict[str, WatchedKind]) -> None:
        to_start: list[WatchedKind] = []
        to_stop: list[WatchedKind] = []
        with self._lock:
            for wk_id, current in list(self.kinds.items()):
                new = wanted.get(wk_id)
                if new is None and current.entry is not None and current.entry.origin != "cluster":
                    # Not served right now: the API server may be starting (groups appear one by
                    # one). Stop only after several rediscoveries in a row.
                    self._missing[wk_id] = self._missing.get(wk_id, 0) + 1
                    if self._missing[wk_id] < MISSING_ROUNDS:
                        continue
                self._missing.pop(wk_id, None)
                if new is None or new.signature() != current.signature() or new.plural != current.plural:
                    to_stop.append(current)
                    del self.kinds[wk_id]
            for wk_id, new in wanted.items():
                if wk_id not in self.kinds:
                    self.kinds[wk_id] = new
                    to_start.append(new)
        for wk in to_stop:
            log.info("no longer watching %s", wk.id)
            if wk.id == POD_KIND:
                self._drop_kind(wk.id)
                continue  # the shared pod informers keep running
            for inf in wk.informers:
                inf.stop(2.0)
                inf.client.close()
                inf.store.detach(self._owned)
            self._drop_kind(wk.id)
        for wk in to_start:
            log.info("watching %s at %s", wk.id, wk.api_version)
            if wk.id == POD_KIND:
                wk.informers = list(self._pod_informers)  # shared; its events are handled in _on_pod
                for inf in wk.informers:
                    for obj in inf.store.list():
                        self._on_pod(obj)
                continue
            namespaces: Iterable[str | None] = (
                self.namespaces if (self.namespaces and wk.namespaced) else (None,)
            )
            for ns in namespaces:
                # An owner no definition covers is only climbed through, and so is a workload of
                # another shard: their identity is enough.
                transform = self._workload_transform if wk.renders else trim_owner
                inf = self._new_informer(wk.path(ns), wk.resource_name, transform)
                inf.store.attach(self._owned, wk.id)
                inf.add_handler(self._kind_handler(wk))
                wk.informers.append(inf)
            for inf in wk.informers:
                inf.start()

    def _compiled(self, wk: WatchedKind) -> CompiledDefinition | None:
        """``wk``'s compiled definition, compiled when its first workload is rendered: most
        catalog kinds have no workload in a given cluster, and compiling all ~30 at the start cost
        seconds of CPU while the informers were listing."""
        if wk.entry is None:
            return None
        with self._compile_lock:
            if not wk.compile_tried:
                wk.compiled = self._compile(wk.entry)
                wk.compile_tried = True
        return wk.compiled

    def _compile(self, entry: DefinitionEntry) -> CompiledDefinition | None:
        from workload_map.resolve.compiled import compile_definition

        key = (entry.name, repr(entry.karta.spec))
        cached = self._compiled_cache.get(key)
        if cached is not None:
            return cached
        try:
            compiled = compile_definition(entry.karta)
        except WorkloadMapError as exc:
            log.warning("definition %s does not compile: %s", entry.name, exc)
            return None
        self._compiled_cache[key] = compiled
        self.quarantine.forget(entry.name)  # a changed definition starts with a clean record
        return compiled

    def _drop_kind(self, wk_id: str) -> None:
        with self._lock:
            for key in [k for k in self._entries if k[0] == wk_id]:
                del self._entries[key]
                self._resolved.pop(key, None)
            self._version += 1

    # --------------------------------------------------------------------------------- events

    def _kind_handler(self, wk: WatchedKind) -> EventHandler:
        def changed(obj: Stored) -> None:
            if not self._pods_synced.is_set():
                return  # as for pods (_on_pod): nothing renders before; _await_pods enqueues all
            if wk.renders:
                self.queue.add((wk.id, namespace_of(obj), name_of(obj)))
            for key in self._ancestors(obj):
                self.queue.add(key)

        def updated(old: Stored, new: Stored) -> None:
            changed(new)
            for key in self._ancestors(old):  # its owners may have changed: the old ones too
                self.queue.add(key)

        return EventHandler(on_add=changed, on_update=updated, on_delete=changed)

    def _claims_changed(self, claim: Obj) -> None:
        """A DRA claim or template changed: the workloads of its namespace resolve again (the
        devices their pods name may be its; claims change rarely, one per pod is never kept)."""
        namespace = namespace_of(claim)
        with self._lock:
            self._claim_generations[namespace] = self._claim_generations.get(namespace, 0) + 1
            keys = [key for key in self._entries if key[1] == namespace]
        for key in keys:
            self.queue.add(key)

    def _store_lookup(self, namespace: str, api_version: str, kind: str, name: str) -> Stored | None:
        """The owner-walk lookup of the exporter: its informer stores, never the API."""
        wk = self.kinds.get(f"{group_of(api_version)}/{kind}")
        return wk.get(namespace, name) if wk is not None else None

    def _covered_refs(self, obj: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
        """The controller references up ``obj``'s chain that name a watched kind (stores only;
        the walk ends at a kind that is not watched or an owner not in a store)."""
        for step in climb(obj, self._store_lookup, until=lambda ref: self._watched(ref) is None):
            wk = self._watched(step.ref)
            if wk is None:
                return
            if step.owner is not None and uid_of(step.owner) != step.ref.get("uid"):
                return
            if wk.renders:
                yield step.ref

    def _watched(self, ref: Mapping[str, Any]) -> WatchedKind | None:
        return self.kinds.get(f"{group_of(ref.get('apiVersion'))}/{ref.get('kind')}")

    def _ancestors(self, obj: Mapping[str, Any]) -> set[WorkloadKey]:
        """Keys of the covered objects up ``obj``'s controller-owner chain (from the stores)."""
        namespace = namespace_of(obj)
        out: set[WorkloadKey] = set()
        for ref in self._covered_refs(obj):
            wk = self._watched(ref)
            assert wk is not None
            out.add((wk.id, namespace, str(ref.get("name") or "")))
        return out

    # -------------------------------------------------------------------------------- sharding

    def _workload_transform(self, obj: Obj) -> Stored:
        """A covered object is kept whole only when this exporter may render it: not owned by
        another covered kind (a Job under a JobSet is climbed through, never rendered) and of
        this shard. Otherwise its identity is enough."""
        ref = controller_ref(obj)
        wk = self._watched(ref) if ref is not None else None
        if (wk is not None and wk.renders) or not self.shard.owns(uid_of(obj)):
            return stub(obj)
        return compact_workload(trim_workload(obj))

    def _pod_transform(self, pod: Obj) -> Stored | None:
        """A pod whose (complete) chain leads to another shard's workload is not kept at all: its
        workload is rendered elsewhere, and a chain that climbs through it (an LWS leader Pod)
        belongs to that same workload."""
        trimmed = trim_pod(pod)
        if self.shard.sharded:
            owner_uid = self._shard_uid(trimmed)
            if owner_uid is not None and not self.shard.owns(owner_uid):
                return None
        return trimmed

    def _shard_uid(self, obj: Mapping[str, Any]) -> str | None:
        """The UID that decides ``obj``'s shard: its topmost covered owner's, its own when it has
        none; ``None`` while an owner of the chain is not in the stores yet."""
        top = uid_of(obj)
        for step in climb(obj, self._store_lookup, until=lambda ref: self._watched(ref) is None):
            wk = self._watched(step.ref)
            if wk is None:
                break
            if step.owner is None:
                return None
            if uid_of(step.owner) != step.ref.get("uid"):
                break
            if wk.renders:
                top = uid_of(step.owner)
        return top

    def _drop_pods(self, pods: Iterable[Mapping[str, Any]]) -> None:
        """Forget pods another shard renders (found once their workload arrived): the next event
        of such a pod is dropped on arrival by :meth:`_pod_transform`."""
        for pod in pods:
            key = (namespace_of(pod), name_of(pod))
            for inf in self._pod_informers:
                inf.store.remove(key)

    def _on_pod(self, pod: Stored, old: Stored | None = None) -> None:
        """Enqueue the workloads above ``pod`` (added, updated or deleted), and above its previous
        state ``old`` when its owner references changed (the chain is climbed through the stores,
        so an update that only moved status costs one climb)."""
        # Another shard's pods never get here: _pod_transform leaves them out on every event, and
        # _process drops those whose workload turned out foreign only after they arrived.
        if not self._pods_synced.is_set():
            return  # the first list: every workload is enqueued once it is in (_await_pods)
        parents = self._ancestors(pod)
        if old is not None and meta(old).get("ownerReferences") != meta(pod).get("ownerReferences"):
            parents |= self._ancestors(old)
        for wk_key in parents:
            self.queue.add(wk_key)
        with self._lock:
            pod_kind = self.kinds.get(POD_KIND)
        if pod_kind is not None and pod_kind.entry is not None:
            self.queue.add((pod_kind.id, namespace_of(pod), name_of(pod)))

    # ------------------------------------------------------------------------------ processing

    def _top_level(self, obj: Mapping[str, Any]) -> bool:
        """No covered kind in the controller-owner chain (owners looked up in the stores; an owner
        that is not in any store ends the walk)."""
        return next(self._covered_refs(obj), None) is None

    def _pods_of(self, obj: Mapping[str, Any], wk: WatchedKind) -> dict[str, Stored]:
        """Pods below ``obj`` in its namespace, top-down through the one owner index over every
        store (one lookup per object of the tree), as stored. Pods can own objects too: an LWS
        leader Pod owns its group's worker StatefulSet."""
        if wk.id == POD_KIND:
            return {name_of(obj): obj}
        uid = uid_of(obj)
        namespace = namespace_of(obj)
        if not uid:
            return {}
        pod_ids: set[int] = set()

        def children(owner_uid: str) -> list[Stored]:
            found = self._owned.get(owner_uid)
            pod_ids.update(id(child) for tag, child in found if tag == POD_TAG)
            return [child for _tag, child in found]

        pods: dict[str, Stored] = {}
        for child in descendants(uid, children):
            if id(child) in pod_ids and namespace_of(child) == namespace:
                pods[name_of(child)] = child
        return pods

    def _process(self, key: WorkloadKey) -> None:
        if not self._pods_synced.is_set():
            return  # rendered once the pods' first list is in (_await_pods enqueues every workload)
        wk_id, namespace, name = key
        with self._lock:
            wk = self.kinds.get(wk_id)
        obj = wk.get(namespace, name) if wk is not None else None
        top = wk is not None and wk.renders and obj is not None and self._top_level(obj)
        if not top or obj is None or wk is None or obj.get(STUB_KEY) or not self.shard.owns(uid_of(obj)):
            with self._lock:
                if self._entries.pop(key, None) is not None:
                    self._version += 1
                self._resolved.pop(key, None)
            if top and obj is not None and wk is not None and not self.shard.owns(uid_of(obj)):
                self._drop_pods(self._pods_of(obj, wk).values())  # another shard renders them
            return
        pods = self._pods_of(obj, wk)
        with self._lock:
            claims = self._claim_generations.get(namespace, 0)
        # what the resolved workload depends on: the object, and the DRA claims of its namespace
        rv = f"{meta(obj).get('resourceVersion') or ''}/{claims}"
        fingerprint = (id(wk), rv, _pods_digest(pods))
        with self._lock:
            current = self._entries.get(key)
        if current is not None and current.fingerprint == fingerprint:
            return
        # What the resolver and the definitions' expressions read: plain dicts (pods are stored compact).
        plain = obj if isinstance(obj, dict) else as_dict(obj)
        lines, settled = self._render(key, wk, plain, rv, {n: as_dict(p) for n, p in pods.items()})
        lines = {k: v for k, v in lines.items() if k in self._family_names}  # series counted as exported
        with self._lock:
            if self.kinds.get(wk_id) is wk:
                series = sum(chunk.count(b"\n") for chunk in lines.values())
                self._entries[key] = _Entry(fingerprint if settled else None, lines, series)
                self._version += 1

    def _render(
        self, key: WorkloadKey, wk: WatchedKind, obj: Obj, rv: str, pods: dict[str, Obj]
    ) -> tuple[dict[str, bytes], bool]:
        """The workload's lines, and whether they are settled (not a limit failure to retry)."""
        from workload_map.resolve.pods import attribute_pods
        from workload_map.resolve.resolver import resolve

        base = [("namespace", key[1]), ("group", wk.group), ("kind", wk.kind), ("name", key[2])]
        pod_labels = [("workload_group", wk.group), ("workload_kind", wk.kind), ("workload_name", key[2])]
        if wk.generic:
            from workload_map.kube.kstatus import GENERIC, PHASE_OF, kstatus

            info = [
                ("version", wk.version),
                ("uid", uid_of(obj)),
                ("definition", GENERIC),
                ("origin", GENERIC),
            ]
            phase = PHASE_OF[kstatus(obj).status]
            return m.render_generic(base, info, phase, pods, pod_labels), True
        assert wk.entry is not None
        info = [
            ("version", wk.version),
            ("uid", uid_of(obj)),
            ("definition", wk.entry.name),
            ("origin", wk.entry.origin),
        ]
        workload = None
        attribution = None
        settled = True
        compiled = self._compiled(wk)
        with self._lock:
            cached = self._resolved.get(key)
        if cached is not None and cached[0] == rv:
            workload = cached[1]
        elif compiled is not None:
            try:
                workload = self.quarantine.run(
                    wk.entry.name, lambda: resolve(compiled, obj, claims=self.claims.get)
                )
            except WorkloadMapError as exc:
                with self._lock:
                    self._resolve_errors[wk.kind] = self._resolve_errors.get(wk.kind, 0) + 1
                if isinstance(exc, DefinitionQuarantinedError):
                    # Not evaluated: look again when the quarantine ends (the probe may lift it).
                    state = self.quarantine.state(wk.entry.name)
                    retry = state.until - self.quarantine.now() if state is not None else 0.0
                    self.queue.add_after(key, max(retry, 0.0) + 0.5)
                    settled = False
                else:
                    log.info("%s %s/%s: %s", wk.kind, key[1], key[2], exc)
                    if exceeded_limits(exc):  # counts towards the quarantine: try again later
                        self.queue.add_after(key, self.quarantine.base_period)
                        settled = False
            if settled:  # a success, or an object at fault: same version, same result
                with self._lock:
                    self._resolved[key] = (rv, _slim(workload))
        if workload is not None and compiled is not None:
            try:
                # detail=False: render_workload reads the pods' names, readiness and the counts only
                attribution = attribute_pods(
                    compiled, obj, pods.values(), check_ownership=False, detail=False
                )
            except WorkloadMapError as exc:
                log.info("%s %s/%s: pods: %s", wk.kind, key[1], key[2], exc)
        return m.render_workload(base, info, workload, attribution, pods, pod_labels), settled

    # ------------------------------------------------------------------------------- scraping

    def render(self) -> bytes:
        """The whole exposition as one body (:meth:`render_parts` joined)."""
        return b"".join(self.render_parts())

    def render_parts(self) -> list[bytes]:
        """The whole exposition in pieces: the workload families of the current generation (the
        workers' bytes, not copied), then the exporter's own families computed now."""
        body, tail = self.exposition()
        return [*body.parts, tail]

    def exposition(self) -> tuple[WorkloadBody, bytes]:
        """The current generation's workload families and the exporter's own families (the
        server gzips the first once per generation, the second per scrape)."""
        body = self.workload_body()
        return body, self.render_tail(body)

    def workload_body(self) -> WorkloadBody:
        """The workload families within the series ceiling, built once per generation (a worker
        storing new lines starts the next one); concurrent scrapes share one build."""
        with self._body_lock:
            with self._lock:
                generation = self._version
                body = self._body
                if body is not None and body.generation == generation:
                    return body
                entries = dict(self._entries)
            admitted = admit(
                {key: e.series for key, e in entries.items()},
                self.max_series,
                sort_key=lambda key: (key[1], key[0], key[2]),  # namespace, kind, name
            )
            body = WorkloadBody.build(
                generation,
                self.families,
                [entries[key].lines for key in admitted.keys],
                admitted,
                self._deflate_cache,
            )
            if admitted.dropped_workloads:
                log.warning(
                    "--max-series %d: %d workloads (%d series) left out of the exposition",
                    self.max_series,
                    admitted.dropped_workloads,
                    admitted.dropped_series,
                )
            self._body = body
            return body

    def render_tail(self, body: WorkloadBody) -> bytes:
        """The exporter's own families: build and shard info, errors, quarantine, definitions,
        informers, the series ceiling (what ``body`` left out), queue and readiness."""
        with self._lock:
            errors = dict(self._resolve_errors)
            rows = list(self._definition_rows)
        parts: list[bytes] = [m.BUILD_INFO.render([([("version", __version__)], 1)])]
        shard = [("shard", str(self.shard.index)), ("total_shards", str(self.shard.total))]
        parts.append(m.SHARD_INFO.render([(shard, 1)]))
        parts.append(m.RESOLVE_ERRORS.render(([("kind", k)], v) for k, v in sorted(errors.items())))
        now = self.quarantine.now()
        records = self.quarantine.states()
        parts.append(
            m.DEFINITION_QUARANTINED.render(
                ([("definition", r.definition)], 1 if r.active(now) else 0) for r in records
            )
        )
        parts.append(
            m.DEFINITION_LIMIT_FAILURES.render(([("definition", r.definition)], r.total) for r in records)
        )
        parts.append(m.DEFINITION_INFO.render(rows))
        informers = self.informers()

        def per_informer(fam: Family, value: Callable[[Informer], float | None]) -> bytes:
            samples = []
            for inf in informers:
                v = value(inf)
                if v is not None:
                    samples.append(([("resource", inf.resource), ("path", inf.path)], v))
            return fam.render(samples)

        parts.append(per_informer(m.INFORMER_SYNCED, lambda i: 1 if i.has_synced() else 0))
        parts.append(per_informer(m.INFORMER_LAST_EVENT, lambda i: i.last_event_time))
        parts.append(per_informer(m.INFORMER_LAST_SYNC, lambda i: i.last_sync_time))
        parts.append(per_informer(m.INFORMER_OBJECTS, lambda i: len(i.store)))
        parts.append(per_informer(m.INFORMER_RELISTS, lambda i: i.stats.lists))
        parts.append(
            per_informer(m.INFORMER_WATCH_ERRORS, lambda i: i.stats.watch_errors + i.stats.list_errors)
        )
        parts.append(m.SERIES_LIMIT.render([([], self.max_series)]))
        parts.append(m.WORKLOAD_SERIES.render([([], body.series)]))
        parts.append(m.DROPPED_SERIES.render([([], body.dropped_series)]))
        parts.append(m.DROPPED_WORKLOADS.render([([], body.dropped_workloads)]))
        parts.append(m.QUEUE_DEPTH.render([([], len(self.queue))]))
        parts.append(m.READY.render([([], 1 if self.ready() else 0)]))
        return b"".join(parts)

    def workload_count(self) -> int:
        with self._lock:
            return len(self._entries)

    def idle(self) -> bool:
        """No queued work (tests and benchmarks)."""
        return len(self.queue) == 0 and self.queue.pending_delayed == 0
