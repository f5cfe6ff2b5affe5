"""The Kueue hold of ``wmap operator --kueue``: ``POST /hold-kueue``, a mutating webhook that
suspends an opted-in workload at creation, so its operator never starts pods before Kueue admits
it (the controller in :mod:`.kueue` would only suspend it after seeing it).

Kueue's own job webhooks do the same on CREATE (``jobframework.ApplyDefaultForSuspend``): a job
with a non-empty ``kueue.x-k8s.io/queue-name`` label is suspended unless it is already, or its
controller owner is itself a job Kueue manages (the owner is the one queued). Here the suspension
is the definition's suspend actions (:func:`workload_map.resolve.writeback.suspend`, as the
controller writes it), answered as a JSONPatch. Everything else passes unchanged: another
operation, a kind the controller does not manage, an unlabelled object. A managed type whose
definition cannot suspend passes with a warning; so does any failure of this code (the controller
suspends the workload when it sees it): the hold never refuses a workload.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from workload_map.definitions_source import DefinitionEntry
from workload_map.errors import WorkloadMapError
from workload_map.kube.objects import controller_ref, labels_of, meta
from workload_map.kube.schedulers import KUEUE_QUEUE_LABEL
from workload_map.operator.kueue import can_suspend, cannot_hold
from workload_map.resolve import writeback

log = logging.getLogger(__name__)

Obj = dict[str, Any]
#: Admission warnings are cut at this length (the API server shows them to kubectl users).
MAX_WARNING = 240


def _warn(message: str) -> Obj:
    return {"allowed": True, "warnings": [message if len(message) <= MAX_WARNING else message[:237] + "..."]}


class KueueHold:
    """The hold decision for the types the Kueue controller manages (independent of HTTP)."""

    def __init__(self, entries: Sequence[DefinitionEntry]) -> None:
        #: (group, version, kind) -> definition; the first per GVK, as the controller picks.
        self.entries: dict[tuple[str, str, str], DefinitionEntry] = {}
        for entry in entries:
            gvk = entry.gvk
            if gvk is not None:
                self.entries.setdefault((gvk.group, gvk.version, gvk.kind), entry)
        self._kinds = {(g, k) for g, _v, k in self.entries}

    def mutate(self, request: Mapping[str, Any]) -> Obj:
        try:
            return self._mutate(request)
        except Exception as exc:  # never block a workload for this code's sake
            log.exception("Kueue hold failed")
            return _warn(f"workload-map did not suspend it for Kueue at creation: {exc}")

    def _mutate(self, request: Mapping[str, Any]) -> Obj:
        obj = request.get("object")
        if request.get("operation") != "CREATE" or not isinstance(obj, Mapping):
            return {"allowed": True}
        raw_kind = request.get("kind")
        kind: Mapping[str, Any] = raw_kind if isinstance(raw_kind, Mapping) else {}
        group, version, kind_name = (str(kind.get(k) or "") for k in ("group", "version", "kind"))
        entry = self.entries.get((group, version, kind_name))
        if entry is None or not labels_of(obj).get(KUEUE_QUEUE_LABEL):
            return {"allowed": True}
        owner = controller_ref(obj)
        if owner is not None:
            owner_group = str(owner.get("apiVersion") or "").rpartition("/")[0]
            if (owner_group, str(owner.get("kind") or "")) in self._kinds:
                return {"allowed": True}  # its owner is the workload Kueue queues
        namespace = str(request.get("namespace") or meta(obj).get("namespace") or "")
        name = str(meta(obj).get("name") or meta(obj).get("generateName") or "")
        what = f"{kind_name} {namespace}/{name}"
        if not can_suspend(entry):
            return _warn(cannot_hold(what, entry.name, kind_name))
        definition = entry.karta
        try:
            if not writeback.actions_not_kept(definition, obj, None, "suspend"):
                return {"allowed": True}  # created suspended
            change = writeback.suspend(definition, obj)
        except WorkloadMapError as exc:  # the definition's paths do not fit this object
            return _warn(f"{what}: not suspended for Kueue at creation: {exc}")
        if not change.json_patch:
            return {"allowed": True}
        log.debug("Kueue hold: %s suspended at creation", what)
        return {
            "allowed": True,
            "patchType": "JSONPatch",
            "patch": base64.b64encode(orjson.dumps(change.json_patch)).decode("ascii"),
        }


__all__ = ["KueueHold"]
