"""The Karta handlers: what the operator does for one Karta (upstream-spec 2.10).

:meth:`KartaHandlers.reconcile` is idempotent: it computes the desired conditions and labels from
the object and the cluster, and writes only what differs. Validation runs on its own thread with a
time budget (``validation_timeout``) and its result is cached per (uid, generation), so a hostile
definition costs at most one budget per generation and never blocks the other Kartas' workers.
"""

from __future__ import annotations

import datetime as _dt
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from workload_map.cluster.client import KubeClient, api_path
from workload_map.errors import ApiError, NotFoundError, WorkloadMapError
from workload_map.operator import texts
from workload_map.operator.claims import ClaimStore
from workload_map.operator.events import event_body
from workload_map.operator.sampling import Sample, Sampler
from workload_map.operator.webhooks import definition_findings, join_messages

log = logging.getLogger(__name__)

Obj = dict[str, Any]
GVK = tuple[str, str, str]
#: Definitions larger than this (serialised spec) are not validated at all.
MAX_DEFINITION_BYTES = 1_000_000
EVENT_NAMESPACE = "default"  # where kubectl looks for events about cluster-scoped objects


def now_rfc3339() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Verdict:
    ok: bool
    message: str


def condition(ctype: str, ok: bool, reason: str, message: str, generation: int) -> Obj:
    return {
        "type": ctype,
        "status": "True" if ok else "False",
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
    }


def pending_conditions(generation: int) -> list[Obj]:
    return [
        condition(t, False, texts.REASON_PENDING, texts.MESSAGE_PENDING, generation)
        for t in texts.CONDITION_TYPES
    ]


def merge_conditions(current: list[Any], desired: list[Obj], now: str) -> list[Obj]:
    """Desired conditions with ``lastTransitionTime`` kept from ``current`` unless the status changed."""
    by_type = {c.get("type"): c for c in current if isinstance(c, Mapping)}
    out = []
    for cond in desired:
        old = by_type.get(cond["type"])
        ltt = old.get("lastTransitionTime") if old and old.get("status") == cond["status"] else None
        out.append({**cond, "lastTransitionTime": ltt or now})
    return out


class ServedKinds:
    """Is a group/version/kind served? CRDs from the informer store; built-ins via discovery
    (cached per group-version, dropped whenever CRDs change)."""

    def __init__(self, client: KubeClient, crds: Callable[[], list[Obj]], ttl: float = 60.0) -> None:
        from workload_map.cluster.discovery import Discovery

        self.client = client
        self._crds = crds
        self.ttl = ttl
        self._discovery = Discovery(client, cache_dir=False)

    def invalidate(self) -> None:
        self._discovery.forget()

    def _from_crds(self, group: str, version: str, kind: str) -> bool | None:
        seen_group = False
        for crd in self._crds():
            spec = crd.get("spec") or {}
            if spec.get("group") != group:
                continue
            seen_group = True
            if (spec.get("names") or {}).get("kind") != kind:
                continue
            return any(v.get("name") == version and v.get("served") for v in spec.get("versions") or [])
        return False if seen_group else None

    def _discovered(self, group: str, version: str) -> Mapping[str, tuple[str, bool]]:
        """Kind -> (plural, namespaced) of a group-version's discovery document (the shared
        :class:`~workload_map.cluster.discovery.Discovery`, re-read after ``ttl``)."""
        gv = f"{group}/{version}" if group else version
        rows = self._discovery.served_at(gv, max_age=self.ttl)
        return {r.kind: (r.name, r.namespaced) for r in rows if "/" not in r.name}

    def served(self, group: str, version: str, kind: str) -> bool:
        found = self._from_crds(group, version, kind)
        if found is not None:
            return found
        return kind in self._discovered(group, version)

    def resource(self, group: str, version: str, kind: str) -> tuple[str, bool] | None:
        """(plural, namespaced) of a served kind, or None."""
        if not self.served(group, version, kind):
            return None
        for crd in self._crds():
            spec = crd.get("spec") or {}
            if spec.get("group") == group and (spec.get("names") or {}).get("kind") == kind:
                return str((spec.get("names") or {}).get("plural")), spec.get("scope") == "Namespaced"
        return self._discovered(group, version).get(kind)


class KartaHandlers:
    def __init__(
        self,
        client: KubeClient,
        served: ServedKinds,
        claims: ClaimStore | None,
        *,
        validation_timeout: float = 10.0,
        component: str = texts.COMPONENT,
        sample: bool = True,
    ) -> None:
        self.client = client
        self.served = served
        self.claims = claims
        self.validation_timeout = validation_timeout
        self.component = component
        #: Evaluates valid Kartas on a few live workloads (WithinLimits); None: not sampled.
        self.sampler: Sampler | None = Sampler(client, served.resource) if sample else None
        self._verdicts: dict[tuple[str, int], Verdict] = {}
        self._lock = threading.Lock()
        #: Last root GVK seen per Karta name (to release claims after deletion).
        self.known_gvks: dict[str, GVK] = {}
        self.events_emitted = 0

    # ------------------------------------------------------------------------------ validation

    def verdict(self, obj: Mapping[str, Any]) -> Verdict:
        meta = obj.get("metadata") or {}
        key = (str(meta.get("uid") or meta.get("name")), int(meta.get("generation") or 0))
        with self._lock:
            cached = self._verdicts.get(key)
        if cached is not None:
            return cached
        verdict = self._validate_bounded(obj)
        with self._lock:
            if len(self._verdicts) > 10_000:
                self._verdicts.clear()
            self._verdicts[key] = verdict
        return verdict

    def _validate_bounded(self, obj: Mapping[str, Any]) -> Verdict:
        size = len(orjson.dumps(obj.get("spec")))
        if size > MAX_DEFINITION_BYTES:
            return Verdict(
                False, f"definition is too large to validate ({size} bytes > {MAX_DEFINITION_BYTES})"
            )
        box: list[Verdict] = []

        def run() -> None:
            try:
                errors, _warnings = definition_findings(obj)
                message = join_messages(errors) if errors else texts.MESSAGE_VALIDATION_SUCCEEDED
                box.append(Verdict(not errors, message))
            except Exception as exc:  # the validator must never take the operator down
                box.append(Verdict(False, f"validation failed: {type(exc).__name__}: {exc}"))

        worker = threading.Thread(target=run, name="validate", daemon=True)
        worker.start()
        worker.join(self.validation_timeout)
        if not box:
            return Verdict(False, f"validation did not finish within {self.validation_timeout:g}s")
        return box[0]

    # ------------------------------------------------------------------------------- reconcile

    def desired_conditions(self, obj: Mapping[str, Any]) -> tuple[list[Obj], Verdict, bool | None]:
        generation = int((obj.get("metadata") or {}).get("generation") or 0)
        verdict = self.verdict(obj)
        validated = condition(
            texts.VALIDATED,
            verdict.ok,
            texts.REASON_VALIDATION_SUCCEEDED if verdict.ok else texts.REASON_VALIDATION_FAILED,
            verdict.message,
            generation,
        )
        gvk = texts.root_gvk(obj)
        crd_ok: bool | None
        if gvk is None or not gvk[1] or not gvk[2]:
            crd_ok = False
            group, version, kind = gvk or ("", "", "")
        else:
            group, version, kind = gvk
            crd_ok = self.served.served(group, version, kind)
        crd = condition(
            texts.CRD_EXISTS,
            bool(crd_ok),
            texts.REASON_CRD_FOUND if crd_ok else texts.REASON_CRD_NOT_FOUND,
            texts.crd_found(group, kind, version) if crd_ok else texts.crd_not_found(group, kind, version),
            generation,
        )
        if verdict.ok and crd_ok and self.sampler is not None:
            sample = self.sampler.sample(obj, (group, version, kind))
        else:
            sample = Sample(
                None, texts.REASON_NOT_SAMPLED, texts.not_sampled("Validated and CRDExists are not both True")
            )
        limits = condition(texts.WITHIN_LIMITS, bool(sample.ok), sample.reason, sample.message, generation)
        if sample.ok is None:
            limits["status"] = "Unknown"
        ready_ok = verdict.ok and bool(crd_ok) and sample.ok is not False
        message = texts.MESSAGE_READY if ready_ok else texts.MESSAGE_NOT_READY
        if verdict.ok and crd_ok and sample.ok is False:
            message = texts.MESSAGE_LIMITS_NOT_READY
        ready = condition(
            texts.READY,
            ready_ok,
            texts.REASON_READY if ready_ok else texts.REASON_NOT_READY,
            message,
            generation,
        )
        return [validated, crd, limits, ready], verdict, crd_ok

    def reconcile(self, obj: Obj) -> None:
        meta = obj.get("metadata") or {}
        name = str(meta["name"])
        if meta.get("deletionTimestamp"):
            return
        gvk = texts.root_gvk(obj)
        if gvk is not None:
            self.known_gvks[name] = gvk
        desired, verdict, crd_ok = self.desired_conditions(obj)
        status = obj.get("status") or {}
        current = list(status.get("conditions") or [])
        merged = merge_conditions(current, desired, now_rfc3339())
        generation = int(meta.get("generation") or 0)
        if _strip_times(merged) != _strip_times(current) or status.get("observedGeneration") != generation:
            self._patch_status(name, {"observedGeneration": generation, "conditions": merged})
            old = {c.get("type"): c for c in current if isinstance(c, Mapping)}
            for cond, event in (
                (merged[0], texts.EVENT_VALIDATION_FAILED),
                (merged[1], texts.EVENT_CRD_NOT_FOUND),
                (merged[2], texts.EVENT_EXCEEDS_LIMITS),
            ):
                before = old.get(cond["type"])
                changed = before is None or (
                    before.get("status"),
                    before.get("reason"),
                    before.get("message"),
                ) != (
                    cond["status"],
                    cond["reason"],
                    cond["message"],
                )
                if cond["status"] == "False" and changed:
                    self.record_event(obj, event, cond["message"])
        if gvk is not None:
            self._ensure_labels(obj, gvk)
            if verdict.ok and self.claims is not None:
                try:
                    conflict = self.claims.claim(gvk, name)
                except WorkloadMapError as exc:
                    log.warning("could not claim %s for Karta %s: %s", gvk, name, exc)
                    conflict = None
                if conflict is not None:
                    self.record_event(obj, "DuplicateGVK", texts.duplicate_gvk(*gvk, conflict.holder))
        del crd_ok

    def deleted(self, name: str, last: Mapping[str, Any] | None) -> None:
        gvk = (texts.root_gvk(last) if last else None) or self.known_gvks.get(name)
        self.known_gvks.pop(name, None)
        if gvk is not None and self.claims is not None:
            self.claims.release(gvk, name)

    # ---------------------------------------------------------------------------------- writes

    def _patch_status(self, name: str, status: Obj) -> None:
        try:
            self.client.patch_status(
                f"{texts.KARTA_PATH}/{name}", {"status": status}, field_manager=texts.FIELD_MANAGER
            )
        except NotFoundError:
            log.debug("Karta %s vanished before its status was written", name)

    def _ensure_labels(self, obj: Mapping[str, Any], gvk: GVK) -> None:
        wanted = {k: v for k, v in texts.index_labels(*gvk).items() if texts.valid_label_value(v)}
        labels = (obj.get("metadata") or {}).get("labels") or {}
        if all(labels.get(k) == v for k, v in wanted.items()):
            return
        name = obj["metadata"]["name"]
        try:
            self.client.patch(
                f"{texts.KARTA_PATH}/{name}",
                {"metadata": {"labels": wanted, "resourceVersion": obj["metadata"].get("resourceVersion")}},
                field_manager=texts.FIELD_MANAGER,
            )
        except ApiError as exc:
            # A stale resourceVersion (409) means a newer event is queued; a webhook refusal
            # (invalid or duplicate Karta) is reported by the conditions and events.
            log.info("could not label Karta %s: %s", name, exc.message)

    def record_event(self, obj: Mapping[str, Any], reason: str, message: str, type_: str = "Warning") -> None:
        meta = obj.get("metadata") or {}
        karta = {"apiVersion": texts.KARTA_API_VERSION, "kind": "Karta", "metadata": meta}
        body = event_body(karta, EVENT_NAMESPACE, reason, message, type_, self.component)
        try:
            self.client.create(api_path("v1", "events", EVENT_NAMESPACE), body)
            self.events_emitted += 1
        except WorkloadMapError as exc:
            log.warning("could not record event %s for Karta %s: %s", reason, meta.get("name"), exc)


def _strip_times(conditions: list[Any]) -> list[Any]:
    return [
        {k: v for k, v in c.items() if k != "lastTransitionTime"} if isinstance(c, Mapping) else c
        for c in conditions
    ]
