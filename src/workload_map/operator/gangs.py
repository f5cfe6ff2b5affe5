"""The gang controller: keeps each opted-in workload's scheduler objects (PodGroups, Workloads...)
equal to its gang plan, and links its pods to them.

For every workload type whose definition has gang rules (catalog and cluster Kartas) and whose
CRD the cluster serves, an informer lists and watches the workloads (server-side label selector,
namespaces filtered here). Each workload is one key of a de-duplicating work queue, so one
failing workload never delays another. Reconciling a key:

1. **Stand aside** where the workload's own operator integrates with the scheduler (the data of
   :mod:`workload_map.kube.gang_integrations`): one event and log line, a counter, nothing made.
2. **Plan and render**: :func:`~workload_map.resolve.gang_plan.plan_gangs` and the scheduler's
   renderer (:func:`~workload_map.resolve.schedulers.render`), nothing re-derived here.
3. **Scheduler CRD missing**: one warning per kind (cached until the CRDs change, which
   re-queues the waiting workloads); no retry loop.
4. **Desired vs actual**: each object is created with the renderer's controller owner reference
   (the API server's garbage collector deletes it with the workload), plus the managed-by label
   and a hash of its desired spec; an object whose hash differs is replaced (spec, labels,
   owner references) at the resourceVersion read; objects of this workload the plan no longer
   produces are deleted. An object of that name controlled by anyone else is never touched:
   reported once and skipped.
5. **Link pods** (:mod:`.gangs_links`): the labels, annotations, scheduler name or scheduling
   group the renderer says pods need, written into the templates only where they lack them.

Actual objects come from informers on the scheduler kinds (label selector: managed by us), so a
steady state costs no API calls; an object deleted by hand re-queues its owner.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from workload_map.cluster.client import KubeClient
from workload_map.definitions_source import (
    DefinitionEntry,
    catalog_entries,
    decode_cluster_items,
    merge_definitions,
)
from workload_map.errors import ApiError, ConflictError, NotFoundError, WorkloadMapError
from workload_map.kube.gang_integrations import OwnIntegration, own_integration
from workload_map.kube.objects import api_path, controller_ref, group_of, name_of, namespace_of, uid_of
from workload_map.operator.events import event_body
from workload_map.operator.gangs_config import GangConfig
from workload_map.operator.gangs_links import linked
from workload_map.resolve.gang_plan import plan_gangs
from workload_map.resolve.patch import merge_patch
from workload_map.resolve.schedulers import Rendered, RenderOptions, render
from workload_map.runtime.informer import EventHandler, Informer, strip_managed_fields
from workload_map.runtime.workqueue import WorkerPool, WorkQueue

log = logging.getLogger(__name__)

Obj = dict[str, Any]
#: ``(apiVersion, kind)`` of a workload type or scheduler object kind.
Kind = tuple[str, str]
#: ``(apiVersion, kind, namespace, name)`` of one workload: a work-queue key.
WorkloadKey = tuple[str, str, str, str]
#: Re-reads the definitions and the served types (the first key after start and CRD changes).
REFRESH: WorkloadKey = ("", "", "", "")

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "wmap-gang-controller"
SPEC_HASH_ANNOTATION = "workload-map.run.ai/gang-spec-hash"
FIELD_MANAGER = "wmap-gang-controller"
COMPONENT = "wmap-gang-controller"
#: Reported (uid, reason, message) triples remembered to report each once; cleared beyond this.
MAX_REPORTED = 10_000
#: Wait for a new informer's first list before using its store.
SYNC_WAIT = 30.0

#: Kinds with gang rules the controller does not follow: a bare Pod's spec (schedulerName) cannot
#: change after it is created, so there is no template to link; KAI's pod-grouper covers it.
NOT_FOLLOWED = frozenset({("", "Pod")})

ServedResource = Callable[[str, str, str], "tuple[str, bool] | None"]


@dataclass
class GangStats:
    """Counters (diagnostics, tests, benchmarks)."""

    reconciled: int = 0
    created: int = 0
    updated: int = 0
    deleted: int = 0
    linked: int = 0
    stood_aside: int = 0
    conflicts: int = 0
    missing_crd: int = 0
    failed_plans: int = 0
    api_calls: int = 0


@dataclass
class _Watched:
    """One workload type the controller follows."""

    entry: DefinitionEntry
    plural: str
    informer: Informer


@dataclass
class _Owned:
    """One scheduler object kind the controller keeps (its objects, by owner uid)."""

    plural: str
    namespaced: bool
    informer: Informer


def spec_hash(obj: Mapping[str, Any]) -> str:
    """A short hash of what the controller decides in an object: spec, labels, owner references."""
    meta = obj.get("metadata") or {}
    doc = {"spec": obj.get("spec"), "labels": meta.get("labels"), "owners": meta.get("ownerReferences")}
    return hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def decorated(obj: Mapping[str, Any]) -> Obj:
    """A rendered object with the managed-by label and its spec hash (what makes it ours)."""
    out = copy.deepcopy(dict(obj))
    meta = out.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), MANAGED_BY_LABEL: MANAGED_BY}
    meta["annotations"] = {**(meta.get("annotations") or {}), SPEC_HASH_ANNOTATION: spec_hash(out)}
    return out


def _owner_uid(obj: Mapping[str, Any]) -> list[str]:
    ref = controller_ref(obj)
    return [str(ref.get("uid"))] if ref is not None and ref.get("uid") else []


def has_gang_rules(entry: DefinitionEntry) -> bool:
    gs = entry.karta.spec.optimization_instructions.gang_scheduling
    return gs is not None and (gs.pod_group is not None or bool(gs.pod_groups))


class GangController:
    """See the module docstring. ``served`` answers (plural, namespaced) of a served kind (the
    operator's :class:`~workload_map.operator.handlers.ServedKinds`); ``kartas`` lists the
    cluster's Karta objects (the operator's informer store); ``is_leader`` gates every write."""

    def __init__(
        self,
        client: KubeClient,
        config: GangConfig,
        served: ServedResource,
        *,
        kartas: Callable[[], list[Obj]] = list,
        is_leader: Callable[[], bool] = lambda: True,
        catalog: Callable[[], list[DefinitionEntry]] = catalog_entries,
        page_size: int = 500,
        max_retries: int = 8,
        retry_after: float = 30.0,
    ) -> None:
        self.client = client
        self.config = config
        self.served = served
        self.kartas = kartas
        self.is_leader = is_leader
        self._catalog = catalog
        self.page_size = page_size
        self.retry_after = retry_after
        self.stats = GangStats()
        self.queue: WorkQueue[WorkloadKey] = WorkQueue(name="gangs")
        self.pool = WorkerPool(
            self.queue,
            self._process,
            count=config.workers,
            max_retries=max_retries,
            on_give_up=self._give_up,
            name="gangs",
        )
        self._lock = threading.RLock()
        self._watched: dict[Kind, _Watched] = {}
        self._owned: dict[Kind, _Owned] = {}
        self._missing: set[Kind] = set()
        self._waiting: set[WorkloadKey] = set()
        #: uid -> the workload's resourceVersion at which it was last seen converged: an event for
        #: that same version (our own link patch echoed back, a resync) costs no plan.
        self._settled: dict[str, str] = {}
        self._reported: set[tuple[str, str, str]] = set()
        self._karta_signature: tuple[tuple[str, str], ...] | None = None
        self._entries: list[DefinitionEntry] = []
        self._stop = threading.Event()
        self._started = False

    # ---------------------------------------------------------------------------- lifecycle

    def start(self) -> GangController:
        self._started = True
        self.pool.start()
        self.queue.add(REFRESH)
        return self

    def stop(self) -> None:
        self._stop.set()
        self.pool.stop()
        with self._lock:
            informers = [w.informer for w in self._watched.values()] + [
                o.informer for o in self._owned.values()
            ]
        for inf in informers:
            inf.stop()

    def synced(self) -> bool:
        with self._lock:
            return all(w.informer.has_synced() for w in self._watched.values())

    def definitions_changed(self) -> None:
        """Kartas or CRDs changed: re-read definitions and served types, retry waiting workloads."""
        with self._lock:
            self._missing.clear()
            self._settled.clear()
        self.queue.add(REFRESH)

    def enqueue_all(self) -> None:
        with self._lock:
            watched = list(self._watched.items())
        for (api_version, kind), w in watched:
            for obj in w.informer.store.list():
                self.queue.add((api_version, kind, namespace_of(obj), name_of(obj)))

    def watched_kinds(self) -> list[Kind]:
        with self._lock:
            return sorted(self._watched)

    # ------------------------------------------------------------------------ definitions

    def _refresh(self) -> None:
        items = self.kartas()
        signature = tuple(
            sorted((uid_of(k), str((k.get("metadata") or {}).get("generation"))) for k in items)
        )
        if signature != self._karta_signature or not self._entries:
            cluster, warnings = decode_cluster_items(items)
            for warning in warnings:
                log.info("gang controller: %s", warning.message)
            self._entries, _ = merge_definitions(self._catalog(), cluster)
            self._karta_signature = signature
        wanted: dict[Kind, DefinitionEntry] = {}
        for e in self._entries:
            gvk = e.gvk
            if gvk is None or not has_gang_rules(e) or (gvk.group, gvk.kind) in NOT_FOLLOWED:
                continue
            kind = (f"{gvk.group}/{gvk.version}" if gvk.group else gvk.version, gvk.kind)
            wanted.setdefault(kind, e)
        started: list[_Watched] = []
        stopped: list[_Watched] = []
        with self._lock:
            for kind in list(self._watched):
                if kind not in wanted:
                    stopped.append(self._watched.pop(kind))
            for kind, entry in wanted.items():
                res = self.served(group_of(kind[0]), kind[0].rpartition("/")[2], kind[1])
                current = self._watched.get(kind)
                if res is None:
                    if current is not None:
                        stopped.append(self._watched.pop(kind))
                    continue
                if current is not None:
                    current.entry = entry
                    continue
                informer = Informer(
                    self.client,
                    api_path(kind[0], res[0]),
                    resource=f"{res[0]}.{group_of(kind[0])}",
                    label_selector=self.config.selector or None,
                    page_size=self.page_size,
                    transform=self._opted_in,
                )
                w = _Watched(entry, res[0], informer)
                self._watched[kind] = w
                started.append(w)
        for w in stopped:
            w.informer.stop()
        for w in started:
            kind = next(k for k, v in self._watched.items() if v is w)
            w.informer.add_handler(self._workload_handler(kind))
            w.informer.start()
        # Re-check every watched workload (definitions may have changed).
        self.enqueue_all()
        with self._lock:
            waiting = list(self._waiting)
        for key in waiting:
            self.queue.add(key)

    def _opted_in(self, obj: Obj) -> Obj | None:
        """Workloads outside the opted-in namespaces are not kept (memory follows the opt-in)."""
        return strip_managed_fields(obj) if self.config.selects_namespace(namespace_of(obj)) else None

    def _workload_handler(self, kind: Kind) -> EventHandler:
        def add(obj: Obj) -> None:
            if self.config.selects_namespace(namespace_of(obj)):
                self.queue.add((kind[0], kind[1], namespace_of(obj), name_of(obj)))

        return EventHandler(on_add=add, on_update=lambda _old, new: add(new), on_delete=add)

    # --------------------------------------------------------------------------- the queue

    def _process(self, key: WorkloadKey) -> None:
        if self._stop.is_set():
            return
        if key == REFRESH:
            self._refresh()
            return
        if not self.is_leader():
            return
        self.reconcile(key)

    def _give_up(self, key: WorkloadKey, exc: BaseException) -> None:
        if not self._stop.is_set():
            log.warning(
                "gang controller: %s/%s keeps failing (%s); retrying in %gs",
                key[2],
                key[3],
                exc,
                self.retry_after,
            )
            self.queue.add_after(key, self.retry_after)

    # ------------------------------------------------------------------------- reconciling

    def reconcile(self, key: WorkloadKey, *, force: bool = False) -> None:
        """Converge one workload; ``force``: even when it was seen converged at this version."""
        api_version, kind, namespace, name = key
        with self._lock:
            watched = self._watched.get((api_version, kind))
        if watched is None:
            return
        if not watched.informer.has_synced():
            watched.informer.wait_for_sync(SYNC_WAIT)
        obj = watched.informer.store.get(namespace, name)
        if obj is None or (obj.get("metadata") or {}).get("deletionTimestamp"):
            with self._lock:
                self._waiting.discard(key)
            return  # owned objects go with it (garbage collector)
        if not self.config.selects_namespace(namespace):
            return
        uid, rv = uid_of(obj), str((obj.get("metadata") or {}).get("resourceVersion") or "")
        with self._lock:
            if rv and not force and self._settled.get(uid) == rv:
                return
        self.stats.reconciled += 1
        row = own_integration(group_of(api_version), kind, self.config.scheduler, obj)
        if row is not None:
            self._stand_aside(obj, row)
            self._settle(uid, rv)
            return
        try:
            plan = plan_gangs(watched.entry.karta, obj)
            rendered = render(
                plan, self.config.scheduler, RenderOptions(scheduler_name=self.config.scheduler_name)
            )
        except WorkloadMapError as exc:
            self.stats.failed_plans += 1
            self._report(obj, "GangPlanFailed", f"no {self.config.scheduler} gang objects: {exc}")
            self._settle(uid, rv)  # the same object gives the same error: retried when it changes
            return
        desired = [decorated(o) for o in rendered.objects]
        kinds = list(dict.fromkeys((str(o["apiVersion"]), str(o["kind"])) for o in desired))
        missing = [k for k in kinds if self._owned_kind(k) is None]
        if missing:
            with self._lock:
                self._waiting.add(key)
            return
        with self._lock:
            self._waiting.discard(key)
        complete = True
        for o in desired:
            complete = self._apply(obj, o) and complete
        self._delete_stale(obj, desired)
        if complete:  # not settled otherwise: a conflict is checked again on the next event
            self._settle(uid, self._link(watched.entry, obj, rendered) or rv)

    def _settle(self, uid: str, rv: str) -> None:
        with self._lock:
            if len(self._settled) >= MAX_REPORTED:
                self._settled.clear()
            self._settled[uid] = rv

    def _stand_aside(self, obj: Obj, row: OwnIntegration) -> None:
        self.stats.stood_aside += 1
        self._report(
            obj, "GangStandAside", f"not creating {self.config.scheduler} gang objects: {row.why()}", "Normal"
        )

    def _owned_kind(self, kind: Kind) -> _Owned | None:
        """The informer of a scheduler kind (started on first use); ``None`` and one warning when
        the cluster does not serve it."""
        with self._lock:
            owned = self._owned.get(kind)
            if owned is not None:
                return owned
            if kind in self._missing:
                return None
        res = self.served(group_of(kind[0]), kind[0].rpartition("/")[2], kind[1])
        if res is None:
            with self._lock:
                first = kind not in self._missing
                self._missing.add(kind)
            if first:
                self.stats.missing_crd += 1
                log.warning(
                    "gang controller: %s (%s) is not served by this cluster (install the %s scheduler's CRD "
                    "or enable its API); its workloads wait, not retried, until the CRDs change",
                    kind[1],
                    kind[0],
                    self.config.scheduler,
                )
            return None
        informer = Informer(
            self.client,
            api_path(kind[0], res[0]),
            resource=f"{res[0]}.{group_of(kind[0])}",
            label_selector=f"{MANAGED_BY_LABEL}={MANAGED_BY}",
            page_size=self.page_size,
        )
        informer.store.add_indexer("owner", _owner_uid)
        with self._lock:
            owned = self._owned.get(kind)
            if owned is not None:
                return owned
            owned = _Owned(res[0], res[1], informer)
            self._owned[kind] = owned
        informer.add_handler(
            EventHandler(
                on_add=lambda _o: None,
                on_update=lambda _old, _new: None,
                on_delete=self._owned_deleted,
            )
        )
        informer.start()
        informer.wait_for_sync(SYNC_WAIT)
        return owned

    def _owned_deleted(self, obj: Obj) -> None:
        """An object of ours went away (by hand, or with its owner): re-check the owner."""
        ref = controller_ref(obj)
        if ref is not None:
            with self._lock:
                self._settled.pop(str(ref.get("uid")), None)
            self.queue.add(
                (str(ref.get("apiVersion")), str(ref.get("kind")), namespace_of(obj), str(ref.get("name")))
            )

    def _path(self, owned: _Owned, obj: Mapping[str, Any], *, named: bool = True) -> str:
        api_version = str(obj.get("apiVersion"))
        ns = namespace_of(obj) if owned.namespaced else None
        return api_path(api_version, owned.plural, ns, name_of(obj) if named else None)

    def _apply(self, workload: Obj, desired: Obj) -> bool:
        """Create or update one object; ``False`` when another owner holds its name."""
        owned = self._owned[(str(desired["apiVersion"]), str(desired["kind"]))]
        actual = owned.informer.store.get(namespace_of(desired), name_of(desired))
        if actual is None:
            try:
                self.stats.api_calls += 1
                self.client.create(
                    self._path(owned, desired, named=False), desired, field_manager=FIELD_MANAGER
                )
                self.stats.created += 1
                return True
            except ConflictError:
                self.stats.api_calls += 1
                actual = self.client.get(self._path(owned, desired))  # not ours (no label), or not yet seen
        ref = controller_ref(actual)
        if ref is None or ref.get("uid") != uid_of(workload):
            self._conflict(workload, desired, actual, ref)
            return False
        meta = actual.get("metadata") or {}
        want = desired["metadata"]
        if (meta.get("annotations") or {}).get(SPEC_HASH_ANNOTATION) == want["annotations"][
            SPEC_HASH_ANNOTATION
        ]:
            return True
        body = copy.deepcopy(actual)
        body["spec"] = desired.get("spec")
        body_meta = body["metadata"]
        body_meta["labels"] = {**(meta.get("labels") or {}), **(want.get("labels") or {})}
        body_meta["annotations"] = {**(meta.get("annotations") or {}), **want["annotations"]}
        body_meta["ownerReferences"] = want.get("ownerReferences") or meta.get("ownerReferences")
        self.stats.api_calls += 1
        self.client.replace(self._path(owned, desired), body, field_manager=FIELD_MANAGER)  # 409: retried
        self.stats.updated += 1
        return True

    def _conflict(self, workload: Obj, desired: Obj, actual: Obj, ref: Mapping[str, Any] | None) -> None:
        self.stats.conflicts += 1
        holder = f"{ref.get('kind')}/{ref.get('name')} (uid {ref.get('uid')})" if ref else "no controller"
        self._report(
            workload,
            "GangObjectConflict",
            f"{desired['kind']} {namespace_of(desired)}/{name_of(desired)} ({desired['apiVersion']}) already "
            f"exists, controlled by {holder}: left as it is; rename one of the workloads",
        )
        del actual

    def _delete_stale(self, workload: Obj, desired: list[Obj]) -> None:
        keep = {(str(o["apiVersion"]), str(o["kind"]), name_of(o)) for o in desired}
        uid = uid_of(workload)
        with self._lock:
            owned_kinds = list(self._owned.items())
        for (api_version, kind), owned in owned_kinds:
            for obj in owned.informer.store.by_index("owner", uid):
                if (api_version, kind, name_of(obj)) in keep:
                    continue
                try:
                    self.stats.api_calls += 1
                    self.client.delete(
                        self._path(owned, obj),
                        resource_version=str((obj.get("metadata") or {}).get("resourceVersion") or "")
                        or None,
                    )
                    self.stats.deleted += 1
                except NotFoundError:
                    pass

    def _link(self, entry: DefinitionEntry, workload: Obj, rendered: Rendered) -> str | None:
        """Patch the missing links into the workload's templates; the resourceVersion the patch
        gave it (``None``: nothing written)."""
        new, warnings = linked(entry.karta, workload, rendered)
        for w in warnings:
            self._report(workload, "GangLinkKept", w, "Normal")
        if new == workload:
            return None
        patch = merge_patch(workload, new)
        with self._lock:
            watched = self._watched.get((str(workload.get("apiVersion")), str(workload.get("kind"))))
        if watched is None or patch is None:
            return None
        path = api_path(
            str(workload["apiVersion"]), watched.plural, namespace_of(workload) or None, name_of(workload)
        )
        rv = str((workload.get("metadata") or {}).get("resourceVersion") or "") or None
        self.stats.api_calls += 1
        done = self.client.patch(
            path, patch, field_manager=FIELD_MANAGER, resource_version=rv
        )  # 409: retried
        self.stats.linked += 1
        return str((done.get("metadata") or {}).get("resourceVersion") or "") or None

    # ---------------------------------------------------------------------------- reports

    def _report(self, obj: Mapping[str, Any], reason: str, message: str, type_: str = "Warning") -> None:
        """Log and record an event on the workload, once per (uid, reason, message)."""
        key = (uid_of(obj), reason, message)
        with self._lock:
            if key in self._reported:
                return
            if len(self._reported) >= MAX_REPORTED:
                self._reported.clear()
            self._reported.add(key)
        where = f"{obj.get('kind')} {namespace_of(obj)}/{name_of(obj)}"
        (log.warning if type_ == "Warning" else log.info)(
            "gang controller: %s: %s: %s", where, reason, message
        )
        body = event_body(obj, namespace_of(obj) or "default", reason, message, type_, COMPONENT)
        try:
            self.stats.api_calls += 1
            self.client.create(api_path("v1", "events", namespace_of(obj) or "default"), body)
        except ApiError as exc:
            log.info("gang controller: could not record event %s on %s: %s", reason, where, exc.message)
        except WorkloadMapError as exc:
            log.info("gang controller: could not record event %s on %s: %s", reason, where, exc)


__all__ = [
    "MANAGED_BY",
    "MANAGED_BY_LABEL",
    "SPEC_HASH_ANNOTATION",
    "GangController",
    "GangStats",
    "decorated",
    "has_gang_rules",
    "spec_hash",
]
