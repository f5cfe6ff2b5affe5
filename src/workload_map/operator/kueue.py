"""The Kueue admission controller of ``wmap operator --kueue``: Kueue's GenericJob contract for
every workload type a definition describes, driven by the definition instead of one Go adapter per
operator (the pure rules are in :mod:`.kueue_podsets`).

For a workload that opts in with Kueue's ``kueue.x-k8s.io/queue-name`` label (as Kueue's own
integrations read it):

1. its type's definition must be able to suspend it (else: one clear report, nothing written);
2. not suspended and no admitted Workload: suspend it (the definition's suspend actions);
3. no Workload: create the one :mod:`workload_map.resolve.schedulers` renders for Kueue (podSets
   per pod template, owner reference to the workload, so it is garbage-collected with it);
4. Workload admitted: write the admitted ResourceFlavors' node labels and tolerations into each
   podSet's pod template, the admitted counts of a partial admission (the definition's scale
   write-back), and resume, in one write;
5. Workload evicted, or admission gone while running: suspend and restore the counts and the
   templates from the Workload's podSets (the originals);
6. pending and the podSets no longer match the workload (scaled while waiting): the Workload is
   deleted and created again, as Kueue does for a job that is no longer equivalent.

Kueue's CRDs missing: one warning, then a check every ``crd_check_interval`` seconds (never a
tight loop); nothing is watched or written until they are served. Writes carry the object's
resourceVersion (:func:`~workload_map.cluster.writes.write_change`); a failing key is retried with
backoff, then after ``retry_after`` seconds. Problems that only a change can fix (a podSet name
the workload does not have, a node selector conflict, an admitted count outside the podSet's
``minCount``..``count`` or one the definition cannot write, a type that cannot suspend, a Workload
owned by another object) are reported once per workload and message, not retried.

This module carries its own small per-workload loop (informers -> de-duplicating queue -> workers,
leader-gated); the gang controller has one of the same shape.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workload_map.cluster.client import KubeClient
from workload_map.cluster.discovery import Discovery
from workload_map.cluster.writes import write_change
from workload_map.definitions_source import DefinitionEntry, catalog_entries
from workload_map.errors import ApiError, ConnectionFailedError, NotFoundError, WorkloadMapError
from workload_map.kube.objects import api_path
from workload_map.kube.schedulers import KUEUE_API_VERSION, KUEUE_JOB_UID_LABEL, KUEUE_QUEUE_LABEL
from workload_map.operator.events import event_body
from workload_map.operator.kueue_podsets import (
    FlavorNotFoundError,
    KueueAdmissionError,
    admit,
    assigned_flavors,
    phase,
    pod_set_shape,
    stop,
)
from workload_map.resolve import writeback
from workload_map.resolve.gang_plan import plan_gangs
from workload_map.resolve.schedulers import RenderOptions, render
from workload_map.runtime.informer import EventHandler, Informer
from workload_map.runtime.workqueue import WorkerPool, WorkQueue

log = logging.getLogger(__name__)

Obj = dict[str, Any]
#: (apiVersion, kind, namespace, name) of a workload.
Key = tuple[str, str, str, str]

FIELD_MANAGER = "wmap-kueue"
#: PriorityClass values are read again after this many seconds; at most this many are kept.
PRIORITY_TTL = 60.0
MAX_PRIORITIES = 1000
#: Kueue resources the controller needs served before it starts.
NEEDED = ("workloads", "resourceflavors")


@dataclass(frozen=True)
class _Kind:
    entry: DefinitionEntry
    plural: str
    informer: Informer


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def can_suspend(entry: DefinitionEntry) -> bool:
    from workload_map.resolve.compiled import as_compiled

    sd = as_compiled(entry.karta).root.definition.suspend_definition
    return sd is not None and bool(sd.suspend_actions)


def cannot_hold(what: str, definition: str, kind: str) -> str:
    """Why a labelled workload is left as it is (the controller's report, the webhook's warning)."""
    return (
        f'{what} has the {KUEUE_QUEUE_LABEL} label, but definition "{definition}" gives '
        f"{kind} no suspend actions: Kueue cannot hold it; nothing written"
    )


def admission_entries(types: Sequence[str] = ()) -> list[DefinitionEntry]:
    """The catalog definitions the controller watches: those that can suspend their workload, or
    the ``types`` named (``Kind`` or ``Kind.group``, any case; a named type that cannot suspend is
    watched so that its labelled workloads are reported). An unknown name is an error."""
    entries = [e for e in catalog_entries() if e.gvk is not None]
    if not types:
        return [e for e in entries if can_suspend(e)]
    out: list[DefinitionEntry] = []
    for t in types:
        want = t.lower()
        found = [
            e
            for e in entries
            if e.gvk is not None
            and want in (e.gvk.kind.lower(), f"{e.gvk.kind}.{e.gvk.group}".lower().rstrip("."))
        ]
        if not found:
            raise WorkloadMapError(
                f"--kueue-type {t}: no catalog definition has that kind (Kind or Kind.group)"
            )
        out.extend(e for e in found if e not in out)
    return out


class KueueAdmission:
    def __init__(
        self,
        client: KubeClient,
        entries: Sequence[DefinitionEntry] | None = None,
        *,
        workers: int = 2,
        resync: float = 300.0,
        crd_check_interval: float = 300.0,
        max_retries: int = 8,
        retry_after: float = 30.0,
        leading: Callable[[], bool] | None = None,
    ) -> None:
        self.client = client
        self.entries = list(entries) if entries is not None else admission_entries()
        self.resync = resync
        self.crd_check_interval = crd_check_interval
        self.retry_after = retry_after
        self._leading = leading or (lambda: True)
        self.discovery = Discovery(client, cache_dir=False)
        self.queue: WorkQueue[Key] = WorkQueue(name="kueue")
        self.pool = WorkerPool(
            self.queue,
            self._process,
            count=workers,
            max_retries=max_retries,
            on_give_up=self._give_up,
            name="kueue",
        )
        self.kinds: dict[tuple[str, str], _Kind] = {}
        self.workloads: Informer | None = None
        #: ResourceFlavors (cluster-scoped, few): read from here, as Kueue's cached client does.
        self.flavors: Informer | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._reported: dict[Key, str] = {}
        self._priorities: dict[str, tuple[float, int | None]] = {}
        #: What each reconciliation did (``created``, ``admitted``, ``stopped``...): diagnostics, tests.
        self.actions: Counter[str] = Counter()
        #: Times Kueue's CRDs were looked for, and the warnings given about them.
        self.crd_checks = 0
        self.crd_warnings: list[str] = []

    # ---------------------------------------------------------------------------- lifecycle

    def start(self) -> KueueAdmission:
        self.pool.start()
        self._thread = threading.Thread(target=self._run, name="kueue-admission", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.pool.stop()
        for kind in self.kinds.values():
            kind.informer.stop()
        for informer in (self.workloads, self.flavors):
            if informer is not None:
                informer.stop()
        if self._thread is not None:
            self._thread.join(5.0)

    @property
    def running(self) -> bool:
        """Kueue is served and the informers are started."""
        return self.workloads is not None

    def synced(self) -> bool:
        return self.workloads is None or all(i.has_synced() for i in self._informers())

    def alive(self) -> bool:
        return all(i.alive for i in self._informers())

    def _informers(self) -> list[Informer]:
        found = [k.informer for k in self.kinds.values()]
        return found + [i for i in (self.workloads, self.flavors) if i is not None]

    def problems(self) -> dict[Key, str]:
        """The last problem reported per workload (cleared when it reconciles cleanly)."""
        with self._lock:
            return dict(self._reported)

    def _run(self) -> None:
        was_leading = False
        next_check = 0.0
        next_resync = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            if self.workloads is None and now >= next_check:
                next_check = now + self.crd_check_interval
                try:
                    self.check_kueue()
                except Exception as exc:  # an API outage: looked at again next interval
                    log.warning("looking for Kueue's CRDs failed: %s", exc)
            leading = self._leading()
            if self.workloads is not None and leading and (not was_leading or now >= next_resync):
                next_resync = now + self.resync
                self.enqueue_all()
            was_leading = leading
            self._stop.wait(1.0)

    def check_kueue(self) -> bool:
        """Start watching when Kueue's CRDs are served; warn once when they are not."""
        self.crd_checks += 1
        served = {r.name for r in self.discovery.served_at(KUEUE_API_VERSION, max_age=0.0)}
        missing = [r for r in NEEDED if r not in served]
        if missing:
            if not self.crd_warnings:
                text = (
                    f"Kueue admission is off: the cluster serves no {KUEUE_API_VERSION} "
                    f"{' or '.join(missing)} (install Kueue's CRDs); looking again every "
                    f"{self.crd_check_interval:g}s"
                )
                self.crd_warnings.append(text)
                log.warning("%s", text)
            return False
        self._start_informers()
        return True

    def _start_informers(self) -> None:
        watched: set[tuple[str, str]] = set()
        for entry in self.entries:
            gvk = entry.gvk
            # One version per kind: two would see every object twice (each version of one CRD)
            # and act on it through two definitions; the first served in catalog order is used.
            if gvk is None or (gvk.group, gvk.kind) in watched:
                continue
            rows = self.discovery.served_at(gvk.api_version, max_age=self.resync)
            plural = next((r.name for r in rows if r.kind == gvk.kind and "/" not in r.name), None)
            if plural is None:
                continue  # the type is not served here
            watched.add((gvk.group, gvk.kind))
            informer = Informer(
                self.client,
                api_path(gvk.api_version, plural),
                resource=plural,
                label_selector=KUEUE_QUEUE_LABEL,
            )
            informer.add_handler(
                EventHandler(
                    on_add=self._changed,
                    on_update=lambda _old, new: self._changed(new),
                    on_delete=self._deleted,
                )
            )
            self.kinds[(gvk.api_version, gvk.kind)] = _Kind(entry, plural, informer)
        workloads = Informer(
            self.client,
            api_path(KUEUE_API_VERSION, "workloads"),
            resource="workloads",
            label_selector=KUEUE_JOB_UID_LABEL,
        )
        workloads.add_handler(
            EventHandler(
                on_add=self._workload_changed,
                on_update=lambda _old, new: self._workload_changed(new),
                on_delete=self._workload_changed,
            )
        )
        flavors = Informer(
            self.client, api_path(KUEUE_API_VERSION, "resourceflavors"), resource="resourceflavors"
        )
        for kind in self.kinds.values():
            kind.informer.start()
        workloads.start()
        flavors.start()
        self.flavors = flavors
        self.workloads = workloads
        log.info("Kueue admission watches %d workload types", len(self.kinds))

    # ------------------------------------------------------------------------------ events

    def _changed(self, obj: Obj) -> None:
        meta = _meta(obj)
        self.queue.add(
            (
                str(obj.get("apiVersion")),
                str(obj.get("kind")),
                str(meta.get("namespace")),
                str(meta.get("name")),
            )
        )

    def _deleted(self, obj: Obj) -> None:
        meta = _meta(obj)
        key = (
            str(obj.get("apiVersion")),
            str(obj.get("kind")),
            str(meta.get("namespace")),
            str(meta.get("name")),
        )
        with self._lock:
            self._reported.pop(key, None)

    def _workload_changed(self, wl: Obj) -> None:
        meta = _meta(wl)
        for ref in meta.get("ownerReferences") or ():
            if not isinstance(ref, Mapping) or not ref.get("controller"):
                continue
            kind = (str(ref.get("apiVersion")), str(ref.get("kind")))
            if kind in self.kinds:
                self.queue.add((*kind, str(meta.get("namespace")), str(ref.get("name"))))

    def enqueue_all(self) -> None:
        for kind in list(self.kinds.values()):
            for obj in kind.informer.store.list():
                self._changed(obj)

    # ------------------------------------------------------------------------------ workers

    def _process(self, key: Key) -> None:
        if not self._leading():
            return
        kind = self.kinds.get((key[0], key[1]))
        if kind is None:
            return
        obj = kind.informer.store.get(key[2], key[3])
        if obj is None or KUEUE_QUEUE_LABEL not in (_meta(obj).get("labels") or {}):
            return
        try:
            action = self.sync(kind, obj)
        except FlavorNotFoundError as exc:
            self._report(key, obj, str(exc))
            raise  # the ResourceFlavor may yet be created: retried with backoff
        except KueueAdmissionError as exc:
            self._report(key, obj, str(exc))
            return
        except (ApiError, ConnectionFailedError):
            raise  # the API server's trouble: retried with backoff
        except WorkloadMapError as exc:  # the workload's own gang plan or Workload is refused
            self._report(key, obj, f"{key[1]} {key[2]}/{key[3]}: {exc}; nothing written")
            return
        with self._lock:
            self._reported.pop(key, None)
            self.actions[action] += 1

    def _report(self, key: Key, obj: Mapping[str, Any], message: str) -> None:
        """Say once (log and a Warning Event on the workload) why a workload was left as it is."""
        with self._lock:
            if self._reported.get(key) == message:
                return
            self._reported[key] = message
        log.warning("Kueue admission: %s", message)
        self._event(obj, "Warning", "KueueAdmission", message)

    def _give_up(self, key: Key, exc: BaseException) -> None:
        if not self._stop.is_set():
            log.warning(
                "Kueue admission of %s %s/%s keeps failing (%s); retrying in %gs",
                key[1],
                key[2],
                key[3],
                exc,
                self.retry_after,
            )
            self.queue.add_after(key, self.retry_after)

    def _priority_value(self, name: str) -> int | None:
        """A PriorityClass's value, read at most once a minute per name (at most 1,000 kept)."""
        now = time.monotonic()
        with self._lock:
            hit = self._priorities.get(name)
        if hit is not None and now - hit[0] < PRIORITY_TTL:
            return hit[1]
        try:
            pc = self.client.get(api_path("scheduling.k8s.io/v1", "priorityclasses", None, name))
            value = pc.get("value")
            found = value if isinstance(value, int) and not isinstance(value, bool) else None
        except NotFoundError:
            found = None
        with self._lock:
            if len(self._priorities) >= MAX_PRIORITIES:
                self._priorities.clear()
            self._priorities[name] = (now, found)
        return found

    def _flavors(self, wl: Mapping[str, Any]) -> dict[str, Obj]:
        out: dict[str, Obj] = {}
        for names in assigned_flavors(wl).values():
            for name in names:
                if name in out:
                    continue
                found = self.flavors.store.get("", name) if self.flavors is not None else None
                if found is not None:
                    out[name] = found
                    continue
                with contextlib.suppress(NotFoundError):  # created a moment ago, or missing (named then)
                    out[name] = self.client.get(api_path(KUEUE_API_VERSION, "resourceflavors", None, name))
        return out

    def sync(self, kind: _Kind, obj: Obj) -> str:
        """One reconciliation of ``obj``; returns what it did."""
        definition = kind.entry.karta
        meta = _meta(obj)
        ns, name = str(meta.get("namespace")), str(meta.get("name"))
        what = f"{obj.get('kind')} {ns}/{name}"
        plan = plan_gangs(definition, obj)
        if not plan.suspend_actions:
            raise KueueAdmissionError(cannot_hold(what, plan.definition, plan.kind))
        rendered = render(plan, "kueue", RenderOptions(priority_value=self._priority_value))
        if not rendered.objects:
            raise KueueAdmissionError(
                f"{what}: no Kueue Workload ({'; '.join(rendered.notes)}); nothing written"
            )
        desired = rendered.objects[0]
        wl_path = api_path(KUEUE_API_VERSION, "workloads", ns, desired["metadata"]["name"])
        path = api_path(str(obj.get("apiVersion")), kind.plural, ns, name)
        suspended = not writeback.actions_not_kept(definition, obj, None, "suspend")
        wl = self._workload(ns, desired["metadata"]["name"], wl_path)
        if wl is None:
            if not suspended:
                self._write(path, obj, lambda o: writeback.suspend(definition, o))
                self._event(obj, "Normal", "Stopped", "Not admitted by cluster queue")
            self.client.create(
                api_path(KUEUE_API_VERSION, "workloads", ns), desired, field_manager=FIELD_MANAGER
            )
            self._event(
                obj, "Normal", "CreatedWorkload", f"Created Workload: {ns}/{desired['metadata']['name']}"
            )
            return "created"
        owner = next(
            (
                r
                for r in _meta(wl).get("ownerReferences") or ()
                if isinstance(r, Mapping) and r.get("controller")
            ),
            None,
        )
        if owner is None or owner.get("uid") != meta.get("uid"):
            held = f"{owner.get('kind')} {owner.get('name')}" if owner else "no controller"
            raise KueueAdmissionError(
                f"{what}: Workload {ns}/{desired['metadata']['name']} belongs to {held}, not to it; "
                "nothing written"
            )
        state = phase(wl)
        if state == "admitted":
            if not suspended:
                return "running"
            flavors = self._flavors(wl)
            self._write(path, obj, lambda o: admit(definition, o, plan_gangs(definition, o), wl, flavors))
            queue = ((wl.get("status") or {}).get("admission") or {}).get("clusterQueue")
            self._event(obj, "Normal", "Started", f"Admitted by clusterQueue {queue}")
            return "admitted"
        if state == "evicted" or not suspended:
            done = self._write(path, obj, lambda o: stop(definition, o, plan_gangs(definition, o), wl))
            if not suspended:
                why = "Evicted by Kueue" if state == "evicted" else "Not admitted by cluster queue"
                self._event(obj, "Normal", "Stopped", why)
            return "stopped" if done else "waiting"
        spec = wl.get("spec")
        have = pod_set_shape(spec.get("podSets") or () if isinstance(spec, Mapping) else ())
        if have != pod_set_shape(desired["spec"]["podSets"]):
            self.client.delete(wl_path, resource_version=_meta(wl).get("resourceVersion"))
            self.queue.add((str(obj.get("apiVersion")), str(obj.get("kind")), ns, name))
            return "replaced"
        return "waiting"

    def _write(self, path: str, obj: Obj, compute: Callable[[Obj], writeback.Change]) -> bool:
        """Write ``compute``'s change (with the resourceVersion precondition); whether it wrote."""
        done = write_change(self.client, path, compute, field_manager=FIELD_MANAGER, current=obj)
        return done.after is not None

    def _workload(self, namespace: str, name: str, path: str) -> Obj | None:
        """The Workload from the informer (it may lag: then from the API server)."""
        if self.workloads is not None:
            found = self.workloads.store.get(namespace, name)
            if found is not None:
                return found
        try:
            return self.client.get(path)
        except NotFoundError:
            return None

    def _event(self, obj: Mapping[str, Any], type_: str, reason: str, message: str) -> None:
        """An Event on the workload, as Kueue's job reconciler records them (same reasons), so
        ``kubectl describe`` shows what happened; a failure to record it is only logged."""
        meta = _meta(obj)
        ns = str(meta.get("namespace") or "default")
        body = event_body(obj, ns, reason, message, type_, FIELD_MANAGER)
        try:
            self.client.create(api_path("v1", "events", ns), body)
        except WorkloadMapError as exc:
            log.info(
                "could not record event %s on %s %s/%s: %s",
                reason,
                obj.get("kind"),
                ns,
                meta.get("name"),
                exc,
            )


__all__ = ["FIELD_MANAGER", "KueueAdmission", "admission_entries", "can_suspend", "cannot_hold"]
