"""Leader election on a ``coordination.k8s.io/v1`` Lease (the client-go protocol, simplified).

A candidate reads the Lease every ``retry_period`` seconds:

- absent: create it naming itself (create is atomic: one candidate wins);
- held by itself: renew ``renewTime`` (an update with the Lease's resourceVersion);
- held by another: take it over only when the Lease has not changed for ``lease_duration``
  seconds *as observed locally* (no trust in clocks across machines), or when its holder is empty
  (released). The update carries the observed resourceVersion, so two candidates cannot both win.

A leader that cannot renew for ``renew_deadline`` seconds steps down (``on_stopped_leading``)
before another candidate may take over (``renew_deadline < lease_duration``). :meth:`stop` releases
the Lease (empty holder) so that a successor takes over at once.
"""

from __future__ import annotations

import datetime as _dt
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from workload_map.cluster.client import KubeClient, api_path
from workload_map.errors import ConflictError, NotFoundError, WorkloadMapError

LEASE_API = "coordination.k8s.io/v1"


def now_micro() -> str:
    """A MicroTime string (``2006-01-02T15:04:05.000000Z``), as Leases carry them."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


log = logging.getLogger(__name__)


class LeaderElector:
    def __init__(
        self,
        client: KubeClient,
        namespace: str,
        name: str,
        identity: str,
        *,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        on_started_leading: Callable[[], None] | None = None,
        on_stopped_leading: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if renew_deadline >= lease_duration:
            raise ValueError("renew_deadline must be shorter than lease_duration")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self._clock = clock
        self._stop = threading.Event()
        self._leader = threading.Event()
        self._thread: threading.Thread | None = None
        self._observed_rv: str | None = None
        self._observed_at = 0.0
        self._last_renew = 0.0
        #: The holder seen last (diagnostics).
        self.observed_holder: str | None = None

    @property
    def path(self) -> str:
        return api_path(LEASE_API, "leases", self.namespace, self.name)

    def is_leader(self) -> bool:
        return self._leader.is_set()

    def start(self) -> LeaderElector:
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)
        self._thread.start()
        return self

    def stop(self, *, release: bool = True, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._leader.is_set():
            self._set_leader(False)
            if release:
                self._release()

    # ------------------------------------------------------------------------------- internals

    def _set_leader(self, value: bool) -> None:
        if value == self._leader.is_set():
            return
        if value:
            self._leader.set()
            log.info("%s became the leader (lease %s/%s)", self.identity, self.namespace, self.name)
            if self.on_started_leading is not None:
                self.on_started_leading()
        else:
            self._leader.clear()
            log.warning("%s is no longer the leader", self.identity)
            if self.on_stopped_leading is not None:
                self.on_stopped_leading()

    def _spec(self, transitions: int, acquired: str | None) -> dict[str, Any]:
        now = now_micro()
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, int(self.lease_duration)),
            "acquireTime": acquired or now,
            "renewTime": now,
            "leaseTransitions": transitions,
        }

    def try_acquire_or_renew(self) -> bool:
        """One round; True when this candidate holds the Lease afterwards."""
        now = self._clock()
        try:
            lease = self.client.get(self.path)
        except NotFoundError:
            body = {
                "apiVersion": LEASE_API,
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self._spec(0, None),
            }
            try:
                created = self.client.create(api_path(LEASE_API, "leases", self.namespace), body)
            except ConflictError:
                return False
            self._observe(created, now)
            return True
        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        rv = str(lease["metadata"].get("resourceVersion") or "")
        if rv != self._observed_rv:
            self._observed_rv = rv
            self._observed_at = now
        self.observed_holder = holder
        if holder and holder != self.identity:
            duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
            if now - self._observed_at < duration:
                return False  # held by a live leader
        transitions = int(spec.get("leaseTransitions") or 0)
        if holder != self.identity:
            transitions += 1
        lease["spec"] = self._spec(transitions, spec.get("acquireTime") if holder == self.identity else None)
        try:
            updated = self.client.replace(self.path, lease)
        except (ConflictError, NotFoundError):
            return False
        self._observe(updated, now)
        return True

    def _observe(self, lease: dict[str, Any], now: float) -> None:
        self._observed_rv = str(lease["metadata"].get("resourceVersion") or "")
        self._observed_at = now
        self._last_renew = now
        self.observed_holder = self.identity

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                ok = self.try_acquire_or_renew()
            except WorkloadMapError as exc:
                log.debug("leader election round failed: %s", exc)
                ok = False
            except Exception:
                log.exception("leader election round failed")
                ok = False
            if ok:
                self._set_leader(True)
            elif self._leader.is_set() and self._clock() - self._last_renew >= self.renew_deadline:
                self._set_leader(False)
            self._stop.wait(self.retry_period)

    def _release(self) -> None:
        try:
            lease = self.client.get(self.path)
            if (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            lease["spec"]["holderIdentity"] = ""
            lease["spec"]["leaseDurationSeconds"] = 1
            lease["spec"]["renewTime"] = now_micro()
            self.client.replace(self.path, lease)
            log.info("released lease %s/%s", self.namespace, self.name)
        except WorkloadMapError as exc:
            log.warning("could not release lease %s/%s: %s", self.namespace, self.name, exc)
