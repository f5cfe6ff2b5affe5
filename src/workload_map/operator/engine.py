"""A small kopf-like runtime for the Karta operator.

- Informers (``workload_map.runtime.informer``) list+watch Kartas and CRDs; their handlers only
  enqueue Karta names into a de-duplicating, rate-limited :class:`WorkQueue`, so a burst of events
  for one Karta is one reconciliation and a key is never processed by two workers at once.
- Worker threads call the handlers (:class:`~workload_map.operator.handlers.KartaHandlers`) only
  while this replica is the leader (:class:`~workload_map.runtime.leader.LeaderElector`); becoming
  leader enqueues every known Karta. A failing key is retried with backoff and, after
  ``max_retries``, re-queued after ``retry_after`` seconds: API outages lose no work.
- CRD events (add, delete, served versions changed) drop the discovery cache and re-queue the
  Kartas of that API group; a periodic resync re-queues all Kartas and sweeps stale GVK claims.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from workload_map.cluster.client import KubeClient
from workload_map.kube.objects import KARTA_PLURAL
from workload_map.operator import texts
from workload_map.operator.claims import ClaimStore
from workload_map.operator.gangs import GangController
from workload_map.operator.gangs_config import GangConfig
from workload_map.operator.handlers import KartaHandlers, ServedKinds
from workload_map.runtime.informer import EventHandler, Informer
from workload_map.runtime.leader import LeaderElector
from workload_map.runtime.workqueue import WorkerPool, WorkQueue

log = logging.getLogger(__name__)

Obj = dict[str, Any]


def _generation(obj: Mapping[str, Any]) -> Any:
    return (obj.get("metadata") or {}).get("generation")


def _crd_signature(crd: Mapping[str, Any]) -> tuple[Any, ...]:
    spec = crd.get("spec") or {}
    versions = tuple(sorted((str(v.get("name")), bool(v.get("served"))) for v in spec.get("versions") or []))
    return (spec.get("group"), (spec.get("names") or {}).get("kind"), versions)


class Engine:
    def __init__(
        self,
        client: KubeClient,
        namespace: str,
        identity: str,
        *,
        leader_election: bool = True,
        lease_name: str = "wmap-operator-leader",
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        workers: int = 4,
        validation_timeout: float = 10.0,
        claim_grace: float = 15.0,
        resync: float = 300.0,
        sweep_interval: float = 60.0,
        max_retries: int = 12,
        retry_after: float = 10.0,
        gangs: GangConfig | None = None,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.identity = identity
        self.resync = resync
        self.sweep_interval = sweep_interval
        self.retry_after = retry_after
        self.kartas = Informer(client, texts.KARTA_PATH, resource=KARTA_PLURAL)
        self.crds = Informer(client, texts.CRD_PATH, resource="customresourcedefinitions")
        self.claims = ClaimStore(client, namespace, grace=claim_grace, karta_gvk=self._store_gvk)
        self.served = ServedKinds(client, self.crds.store.list)
        self.handlers = KartaHandlers(client, self.served, self.claims, validation_timeout=validation_timeout)
        self.queue: WorkQueue[str] = WorkQueue(name="kartas")
        self.pool = WorkerPool(
            self.queue,
            self._process,
            count=workers,
            max_retries=max_retries,
            on_give_up=self._give_up,
            name="reconcile",
        )
        self._stop = threading.Event()
        self._leading = threading.Event()
        self.elector: LeaderElector | None = None
        if leader_election:
            self.elector = LeaderElector(
                client,
                namespace,
                lease_name,
                identity,
                lease_duration=lease_duration,
                renew_deadline=renew_deadline,
                retry_period=retry_period,
                on_started_leading=self._started_leading,
                on_stopped_leading=self._leading.clear,
            )
        self._timer: threading.Thread | None = None
        #: Reconciliations done (diagnostics and tests).
        self.reconciled = 0
        #: The gang controller (opt-in: ``gangs``), sharing the Karta and CRD informers.
        self.gangs: GangController | None = None
        if gangs is not None:
            self.gangs = GangController(
                client, gangs, self.served.resource, kartas=self.kartas.store.list, is_leader=self.is_leader
            )

    # ---------------------------------------------------------------------------- lifecycle

    def start(self) -> Engine:
        self.kartas.add_handler(
            EventHandler(
                on_add=self._karta_changed,
                on_update=lambda _old, new: self._karta_changed(new),
                on_delete=self._karta_deleted,
            )
        )
        self.crds.add_handler(
            EventHandler(
                on_add=self._crd_changed,
                on_update=self._crd_updated,
                on_delete=self._crd_changed,
            )
        )
        self.crds.start()
        self.kartas.start()
        self.pool.start()
        if self.gangs is not None:
            self.kartas.add_handler(self._gang_definitions_handler(_generation), replay=False)
            self.crds.add_handler(self._gang_definitions_handler(_crd_signature), replay=False)
            self.gangs.start()
        if self.elector is not None:
            self.elector.start()
        else:
            self._started_leading()
        self._timer = threading.Thread(target=self._periodic, name="resync", daemon=True)
        self._timer.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self.elector is not None:
            self.elector.stop(release=True)
        self._leading.clear()
        self.pool.stop()
        if self.gangs is not None:
            self.gangs.stop()
        self.kartas.stop()
        self.crds.stop()

    def is_leader(self) -> bool:
        return self._leading.is_set()

    def synced(self) -> bool:
        # Not the gang controller's informers: a workload type it may not list (RBAC) must not
        # make the webhooks unready.
        return self.kartas.has_synced() and self.crds.has_synced()

    def alive(self) -> bool:
        return self.kartas.alive and self.crds.alive

    # ------------------------------------------------------------------------------ events

    def _store_gvk(self, name: str) -> tuple[str, str, str] | None:
        obj = self.kartas.store.get("", name)
        if obj is None:
            # The informer may lag behind a create: ask the API server.
            return self.claims._read_karta_gvk(name)
        return texts.root_gvk(obj)

    def _karta_changed(self, obj: Obj) -> None:
        self.queue.add(str(obj["metadata"]["name"]))

    def _karta_deleted(self, obj: Obj) -> None:
        name = str(obj["metadata"]["name"])
        self.handlers.known_gvks.setdefault(name, texts.root_gvk(obj) or ("", "", ""))
        self.queue.add(name)

    def _crd_updated(self, old: Obj, new: Obj) -> None:
        if _crd_signature(old) != _crd_signature(new):
            self._crd_changed(new)

    def _crd_changed(self, crd: Obj) -> None:
        self.served.invalidate()
        group = (crd.get("spec") or {}).get("group")
        if not self.kartas.has_synced():
            return  # the Karta informer's initial list enqueues everything anyway
        for karta in self.kartas.store.list():
            gvk = texts.root_gvk(karta)
            if gvk is not None and gvk[0] == group:
                self.queue.add(str(karta["metadata"]["name"]))

    def _started_leading(self) -> None:
        self._leading.set()
        self.enqueue_all()
        if self.gangs is not None:
            self.gangs.enqueue_all()

    def _gang_definitions_handler(self, signature: Callable[[Obj], Any]) -> EventHandler:
        """Kartas or CRDs changed (``signature`` differs: not a status write): the gang controller
        re-reads what it follows (after :meth:`_crd_changed` dropped the discovery cache)."""

        def changed(_obj: Obj) -> None:
            assert self.gangs is not None
            self.gangs.definitions_changed()

        def updated(old: Obj, new: Obj) -> None:
            if signature(old) != signature(new):
                changed(new)

        return EventHandler(on_add=changed, on_update=updated, on_delete=changed)

    def enqueue_all(self) -> None:
        for obj in self.kartas.store.list():
            self.queue.add(str(obj["metadata"]["name"]))

    # ------------------------------------------------------------------------------ workers

    def _process(self, name: str) -> None:
        if not self._leading.is_set():
            return
        obj = self.kartas.store.get("", name)
        if obj is None:
            self.handlers.deleted(name, None)
            return
        self.handlers.reconcile(obj)
        self.reconciled += 1

    def _give_up(self, name: str, exc: BaseException) -> None:
        if not self._stop.is_set():
            log.warning(
                "reconciling Karta %s keeps failing (%s); retrying in %gs", name, exc, self.retry_after
            )
            self.queue.add_after(name, self.retry_after)

    def _periodic(self) -> None:
        import time

        last_resync = last_sweep = time.monotonic()
        while not self._stop.wait(1.0):
            now = time.monotonic()
            if not self._leading.is_set() or not self.kartas.has_synced():
                continue
            if now - last_resync >= self.resync:
                last_resync = now
                self.served.invalidate()
                self.enqueue_all()
                if self.gangs is not None:
                    self.gangs.definitions_changed()
            if now - last_sweep >= self.sweep_interval:
                last_sweep = now
                live = {o["metadata"]["name"]: texts.root_gvk(o) for o in self.kartas.store.list()}
                try:
                    self.claims.sweep(live)
                except Exception as exc:
                    log.warning("sweeping GVK claims failed: %s", exc)
