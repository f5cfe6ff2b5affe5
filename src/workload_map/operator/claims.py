"""One Karta per root group/version/kind, without a check-then-act race.

Upstream's webhook lists Kartas and rejects a second one for the same GVK (spec 2.10, #198): two
creates admitted at the same moment both see an empty list and both succeed. Here the admission
webhook *claims* the GVK first: it creates a ``coordination.k8s.io/v1`` Lease named from a hash of
the GVK (:func:`~workload_map.operator.texts.claim_name`) in the operator's namespace, with
``spec.holderIdentity`` = the Karta's name. Creating an object is atomic in the API server: of any
number of concurrent creates exactly one succeeds, the others get ``409 AlreadyExists`` and are
rejected with upstream's message naming the holder.

A claim whose holder no longer holds it (the Karta was deleted, or its create failed after the
webhook admitted it) is *stale*. It is taken over with an update that carries the Lease's
``resourceVersion`` (compare-and-swap, so two takers cannot both win) once it is older than
``grace`` seconds; younger claims whose Karta does not exist yet belong to a create still in
flight and are respected. The operator also deletes stale claims (:meth:`ClaimStore.sweep`).
"""

from __future__ import annotations

import datetime as _dt
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from workload_map.cluster.client import KubeClient, api_path
from workload_map.errors import ConflictError, NotFoundError
from workload_map.operator import texts
from workload_map.runtime.leader import LEASE_API, now_micro

log = logging.getLogger(__name__)

CLAIM_LABEL = "run.ai/karta-claim"
ANNOTATION_GVK = "run.ai/karta-gvk"
DEFAULT_GRACE = 15.0


def parse_time(value: str | None) -> float | None:
    if not value:
        return None
    text = value.replace("Z", "+00:00")
    try:
        return _dt.datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


@dataclass(frozen=True)
class Conflict:
    """The GVK is held by another Karta (``holder``)."""

    holder: str


GVK = tuple[str, str, str]


class ClaimStore:
    """GVK claims as Leases in ``namespace``. ``karta_gvk(name)`` returns the live Karta's root GVK
    (``None`` when it does not exist); by default it reads the Karta from the API server."""

    def __init__(
        self,
        client: KubeClient,
        namespace: str,
        *,
        grace: float = DEFAULT_GRACE,
        clock: Callable[[], float] | None = None,
        karta_gvk: Callable[[str], GVK | None] | None = None,
    ) -> None:
        import time

        self.client = client
        self.namespace = namespace
        self.grace = grace
        self._clock = clock or time.time
        self._karta_gvk = karta_gvk or self._read_karta_gvk

    # ------------------------------------------------------------------------------- helpers

    def _collection(self) -> str:
        return api_path(LEASE_API, "leases", self.namespace)

    def _path(self, name: str) -> str:
        return api_path(LEASE_API, "leases", self.namespace, name)

    def _read_karta_gvk(self, name: str) -> GVK | None:
        try:
            obj = self.client.get(f"{texts.KARTA_PATH}/{name}")
        except NotFoundError:
            return None
        return texts.root_gvk(obj)

    def _body(self, gvk: GVK, holder: str) -> dict[str, Any]:
        group, version, kind = gvk
        return {
            "apiVersion": LEASE_API,
            "kind": "Lease",
            "metadata": {
                "name": texts.claim_name(*gvk),
                "namespace": self.namespace,
                "labels": {CLAIM_LABEL: "true", "app.kubernetes.io/managed-by": texts.COMPONENT},
                "annotations": {ANNOTATION_GVK: f"{group}/{version}/{kind}"},
            },
            "spec": {"holderIdentity": holder, "acquireTime": now_micro(), "renewTime": now_micro()},
        }

    def _holder_owns(self, holder: str, gvk: GVK) -> bool:
        return self._karta_gvk(holder) == gvk

    def _age(self, lease: Mapping[str, Any]) -> float:
        spec = lease.get("spec") or {}
        started = parse_time(spec.get("acquireTime")) or parse_time(
            (lease.get("metadata") or {}).get("creationTimestamp")
        )
        return self._clock() - started if started is not None else float("inf")

    # ------------------------------------------------------------------------------------ API

    def get(self, gvk: GVK) -> dict[str, Any] | None:
        try:
            return self.client.get(self._path(texts.claim_name(*gvk)))
        except NotFoundError:
            return None

    def claim(self, gvk: GVK, karta: str, *, dry_run: bool = False) -> Conflict | None:
        """Claim ``gvk`` for Karta ``karta``: ``None`` on success (or when ``karta`` already holds
        it), a :class:`Conflict` when another Karta holds it. ``dry_run`` checks without writing."""
        name = texts.claim_name(*gvk)
        for _attempt in range(8):
            lease = self.get(gvk)
            if lease is None:
                if dry_run:
                    return None
                try:
                    self.client.create(
                        self._collection(), self._body(gvk, karta), field_manager=texts.FIELD_MANAGER
                    )
                    return None
                except ConflictError:
                    continue  # somebody else created it meanwhile: look at theirs
            holder = str((lease.get("spec") or {}).get("holderIdentity") or "")
            if holder == karta:
                return None
            if holder and (self._age(lease) < self.grace or self._holder_owns(holder, gvk)):
                return Conflict(holder)
            # Stale: the holder is gone (or maps another GVK) and the claim is old enough.
            if dry_run:
                return None
            body = self._body(gvk, karta)
            body["metadata"]["resourceVersion"] = lease["metadata"]["resourceVersion"]
            try:
                self.client.replace(self._path(name), body, field_manager=texts.FIELD_MANAGER)
                log.info("took over stale claim %s from %r for Karta %r", name, holder, karta)
                return None
            except (ConflictError, NotFoundError):
                continue  # changed under us: decide again
        raise ConflictError(409, "Conflict", f"could not claim {name}: it keeps changing")

    def release(self, gvk: GVK, karta: str) -> bool:
        """Delete the claim if ``karta`` holds it (precondition on resourceVersion)."""
        lease = self.get(gvk)
        if lease is None or (lease.get("spec") or {}).get("holderIdentity") != karta:
            return False
        try:
            self.client.delete(
                self._path(texts.claim_name(*gvk)), resource_version=lease["metadata"]["resourceVersion"]
            )
            return True
        except (ConflictError, NotFoundError):
            return False

    def list(self) -> list[dict[str, Any]]:
        return self.client.list_all(self._collection(), label_selector=f"{CLAIM_LABEL}=true")

    def sweep(self, live: Mapping[str, GVK | None]) -> int:
        """Delete claims older than ``grace`` whose holder is not a live Karta for their GVK.
        ``live`` maps Karta names to root GVKs (the operator's informer store). Returns how many."""
        removed = 0
        for lease in self.list():
            meta = lease.get("metadata") or {}
            holder = str((lease.get("spec") or {}).get("holderIdentity") or "")
            gvk_text = str((meta.get("annotations") or {}).get(ANNOTATION_GVK) or "")
            parts = gvk_text.split("/")
            gvk = (parts[0], parts[1], parts[2]) if len(parts) == 3 else None
            if gvk is not None and holder in live and live[holder] == gvk:
                continue
            if self._age(lease) < self.grace:
                continue
            # Re-check against the API: the informer may lag behind a fresh create.
            if gvk is not None and holder and self._holder_owns(holder, gvk):
                continue
            try:
                self.client.delete(
                    self._path(str(meta["name"])), resource_version=meta.get("resourceVersion")
                )
                removed += 1
                log.info("deleted stale GVK claim %s (holder %r)", meta.get("name"), holder)
            except (ConflictError, NotFoundError):
                pass
        return removed
