"""The WorkloadPolicy admission webhooks of ``wmap operator --policies``.

* ``POST /mutate-workload``: for a workload a definition covers (catalog or cluster Karta), the
  policies that match it (:func:`workload_map.resolve.policy.apply_policies`) as a JSONPatch, and
  their warnings (conflicts, kept values, missing labels) as admission warnings. An object no
  definition covers, an object a controller created (a JobSet's Jobs, a Deployment's pods: their
  templates come from their owner), or any failure of this code is let through unchanged: the policy
  webhook never blocks a workload (``failurePolicy`` only decides what happens when the webhook
  cannot be reached).
* ``POST /validate-workloadpolicy``: a policy object checked field by field; errors reject it
  with the field's path (``spec.set.tolerations.add[0].effect: ...``).

Policies, namespaces and Karta objects come from informers (every replica serves the webhooks);
a namespace not yet in the cache is read once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workload_map.errors import ClusterError
from workload_map.kube.objects import KARTA_PATH, controller_ref, labels_of, meta
from workload_map.resolve.edits import InvalidEditError
from workload_map.resolve.policy import (
    GROUP,
    PLURAL,
    VERSION,
    PolicyResult,
    WorkloadPolicy,
    apply_policies,
    parse_policy,
)
from workload_map.runtime.informer import EventHandler, Informer

if TYPE_CHECKING:
    from workload_map.cluster.client import KubeClient
    from workload_map.definitions_source import DefinitionSet

log = logging.getLogger(__name__)

POLICIES_PATH = f"/apis/{GROUP}/{VERSION}/{PLURAL}"
NAMESPACES_PATH = "/api/v1/namespaces"
#: Warnings returned with one admission at most (the API server shows them to kubectl users).
MAX_WARNINGS = 20

Obj = dict[str, Any]


def policy_problems(obj: Mapping[str, Any]) -> list[str]:
    """Why a WorkloadPolicy is invalid (empty when it is valid)."""
    try:
        parse_policy(obj)
    except InvalidEditError as exc:
        return [str(exc)]
    return []


def admit(
    definitions: DefinitionSet,
    policies: Sequence[WorkloadPolicy],
    gvk: tuple[str, str, str],
    obj: Mapping[str, Any],
    *,
    operation: str,
    namespace_labels: Callable[[], Mapping[str, Any]],
) -> PolicyResult | str:
    """What admission does with one object (the webhook and ``wmap policy preview`` both ask
    here): the policies' result, or why the object passes unchanged. ``namespace_labels`` is
    called only when policies are applied (the webhook may have to read the namespace)."""
    group, version, kind = gvk
    if not policies:
        return "no WorkloadPolicy applies: unchanged"
    found = definitions.for_gvk(group, version, kind)
    if len(found) != 1:
        # no (single) definition covers it: not ours to change
        return f"{len(found)} definitions cover {group or 'core'}/{version} {kind}: unchanged"
    if controller_ref(obj) is not None:
        # Created by a controller (a JobSet's Jobs, a Deployment's pods, a TrainJob's JobSet):
        # its template comes from its owner, which is the workload policies apply to.
        return "created by a controller (policies apply to its owner): unchanged"
    return apply_policies(
        found[0].karta, obj, policies, operation=operation, namespace_labels=namespace_labels()
    )


class _Changed(EventHandler):
    def __init__(self, bump: Callable[[], None]) -> None:
        self.bump = bump

    def on_add(self, obj: Obj) -> None:
        self.bump()

    def on_update(self, old: Obj, new: Obj) -> None:
        self.bump()

    def on_delete(self, obj: Obj) -> None:
        self.bump()


class PolicySource:
    """The cluster's policies, namespaces and definitions, kept current by informers."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self.policy_informer = Informer(client, POLICIES_PATH, resource=PLURAL)
        self.namespace_informer = Informer(client, NAMESPACES_PATH, resource="namespaces")
        self.karta_informer = Informer(client, KARTA_PATH, resource="kartas")
        self._lock = threading.Lock()
        self._version = 0
        self._built: tuple[int, list[WorkloadPolicy], DefinitionSet] | None = None
        handler = _Changed(self._bump)
        self.policy_informer.add_handler(handler)
        self.karta_informer.add_handler(handler)

    def _bump(self) -> None:
        with self._lock:
            self._version += 1

    def start(self) -> PolicySource:
        for informer in (self.policy_informer, self.namespace_informer, self.karta_informer):
            informer.start()
        return self

    def stop(self) -> None:
        for informer in (self.policy_informer, self.namespace_informer, self.karta_informer):
            informer.stop()

    def synced(self) -> bool:
        return self.policy_informer.has_synced() and self.namespace_informer.has_synced()

    def current(self) -> tuple[list[WorkloadPolicy], DefinitionSet]:
        """The valid policies and the merged definitions, rebuilt after a change."""
        with self._lock:
            version = self._version
            if self._built is not None and self._built[0] == version:
                return self._built[1], self._built[2]
        from workload_map.definitions_source import load_definition_set

        policies = []
        for obj in self.policy_informer.store.list():
            try:
                policies.append(parse_policy(obj))
            except InvalidEditError as exc:  # rejected by the validating webhook; older ones skip
                log.warning("WorkloadPolicy %s is invalid and not applied: %s", meta(obj).get("name"), exc)
        definitions = load_definition_set(list_kartas=self.karta_informer.store.list)
        with self._lock:
            self._built = (version, policies, definitions)
        return policies, definitions

    def namespace_labels(self, name: str) -> dict[str, str]:
        if not name:
            return {}
        found = self.namespace_informer.store.get("", name)
        if found is None:  # created a moment ago: the watch may not have brought it yet
            try:
                found = self.client.get(f"{NAMESPACES_PATH}/{name}")
            except ClusterError as exc:
                log.warning("namespace %s cannot be read for policies: %s", name, exc)
                return {}
        return labels_of(found)


class PolicyAdmission:
    """The two admission decisions (independent of HTTP)."""

    def __init__(self, source: PolicySource) -> None:
        self.source = source

    @staticmethod
    def validate_policy(request: Mapping[str, Any]) -> Obj:
        """``/validate-workloadpolicy`` (needs no cluster state)."""
        if request.get("operation") not in ("CREATE", "UPDATE"):
            return {"allowed": True}
        obj = request.get("object") or {}
        problems = policy_problems(obj)
        if problems:
            message = "\n".join(problems)
            return {"allowed": False, "status": {"code": 403, "reason": "Forbidden", "message": message}}
        return {"allowed": True}

    def mutate(self, request: Mapping[str, Any]) -> Obj:
        try:
            return self._mutate(request)
        except Exception as exc:  # never block a workload for this code's sake
            log.exception("WorkloadPolicy admission failed")
            return {"allowed": True, "warnings": [f"workload-map policies were not applied: {exc}"[:240]]}

    def _mutate(self, request: Mapping[str, Any]) -> Obj:
        import base64

        import orjson

        operation = str(request.get("operation") or "")
        obj = request.get("object")
        if operation not in ("CREATE", "UPDATE") or not isinstance(obj, Mapping):
            return {"allowed": True}
        raw_kind = request.get("kind")
        kind: Mapping[str, Any] = raw_kind if isinstance(raw_kind, Mapping) else {}
        group, version, kind_name = (str(kind.get(k) or "") for k in ("group", "version", "kind"))
        policies, definitions = self.source.current()
        name = f"{kind_name} {request.get('namespace') or ''}/{meta(obj).get('name') or ''}"
        namespace = str(request.get("namespace") or meta(obj).get("namespace") or "")
        result = admit(
            definitions,
            policies,
            (group, version, kind_name),
            obj,
            operation=operation,
            namespace_labels=lambda: self.source.namespace_labels(namespace),
        )
        if isinstance(result, str):
            log.debug("policies: %s: %s", name, result)
            return {"allowed": True}
        log.debug(
            "policies: %s: applied %s (%d operations)", name, result.applied, len(result.change.json_patch)
        )
        response: Obj = {"allowed": True}
        if result.change.changed:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(orjson.dumps(result.change.json_patch)).decode("ascii")
        warnings = [w if len(w) <= 240 else w[:237] + "..." for w in result.warnings[:MAX_WARNINGS]]
        if warnings:
            response["warnings"] = warnings
        return response


__all__ = [
    "NAMESPACES_PATH",
    "POLICIES_PATH",
    "PolicyAdmission",
    "PolicySource",
    "admit",
    "policy_problems",
]
