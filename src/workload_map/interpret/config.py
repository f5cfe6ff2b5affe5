"""Which kinds the interpreter answers for, and Karmada's ``ResourceInterpreterWebhookConfiguration``
that sends them to it.

The configuration has one webhook with one rule per covered kind (``apiGroups``/``apiVersions``/
``kinds`` of the definition's root, every operation of :data:`OPERATIONS`), ``v1alpha1`` contexts
and a timeout of a few seconds; its shape follows the CRD and the checks of Karmada's validating
webhook (``pkg/webhook/configuration``: a fully qualified webhook name, exactly one of ``url``
(https) and ``service``, a timeout of 1-30 s).

Kinds Karmada interprets natively (Deployment, StatefulSet, Job, CronJob, Pod...) are left out
unless asked for: a webhook takes precedence over Karmada's built-in interpreter.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from threading import Lock
from typing import Any

from workload_map.definitions_source import DefinitionSet
from workload_map.errors import DefinitionError
from workload_map.resolve.compiled import CompiledDefinition, compile_definition

from .operations import OPERATIONS

CONFIGURATION_NAME = "wmap-interpreter"
WEBHOOK_NAME = "interpreter.wmap.run.ai"
INTERPRET_PATH = "/interpret-karmada"
CONTEXT_VERSIONS = ("v1alpha1",)
DEFAULT_TIMEOUT = 3

#: (group, kind) Karmada's built-in (native) interpreter handles.
KARMADA_NATIVE: frozenset[tuple[str, str]] = frozenset(
    {
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
        ("apps", "ReplicaSet"),
        ("batch", "Job"),
        ("batch", "CronJob"),
        ("", "Pod"),
    }
)


@dataclass(frozen=True)
class Covered:
    """A kind the interpreter answers for and the definition that covers it."""

    group: str
    version: str
    kind: str
    definition: str

    @property
    def native(self) -> bool:
        return (self.group, self.kind) in KARMADA_NATIVE


class DefinitionIndex:
    """The definitions by root kind, compiled on first use (thread-safe): the webhook's lookup."""

    def __init__(self, definitions: DefinitionSet) -> None:
        self.definitions = definitions
        self._compiled: dict[tuple[str, str, str], CompiledDefinition] = {}
        self._lock = Lock()

    def covered(self) -> list[Covered]:
        out: list[Covered] = []
        for entry in self.definitions.resolvable():
            gvk = entry.gvk
            assert gvk is not None
            if len(self.definitions.for_gvk(gvk.group, gvk.version, gvk.kind)) == 1:
                out.append(Covered(gvk.group, gvk.version, gvk.kind, entry.name))
        return out

    def __call__(self, group: str, version: str, kind: str) -> CompiledDefinition | None:
        key = (group, version, kind)
        with self._lock:
            hit = self._compiled.get(key)
        if hit is not None:
            return hit
        entries = self.definitions.for_gvk(group, version, kind)
        if not entries:
            return None
        if len(entries) > 1:
            names = ", ".join(sorted(e.name for e in entries))
            raise DefinitionError(f"several definitions cover this kind ({names})")
        compiled = compile_definition(entries[0].karta)
        with self._lock:
            self._compiled[key] = compiled
        return compiled


def select(
    covered: Iterable[Covered], kinds: Sequence[str] = (), include_native: bool = False
) -> list[Covered]:
    """The kinds to configure: all covered ones (natively interpreted kinds only with
    ``include_native``), or those ``kinds`` names (``Kind`` or ``Kind.group``, case-insensitive)."""
    wanted = {k.lower() for k in kinds}
    out: list[Covered] = []
    for c in covered:
        names = {c.kind.lower(), f"{c.kind}.{c.group}".lower() if c.group else c.kind.lower()}
        if wanted:
            if names & wanted:
                out.append(c)
        elif include_native or not c.native:
            out.append(c)
    return out


def _rule(c: Covered) -> dict[str, Any]:
    return {
        "operations": list(OPERATIONS),
        "apiGroups": [c.group],
        "apiVersions": [c.version],
        "kinds": [c.kind],
    }


def webhook_configuration(
    kinds: Sequence[Covered],
    *,
    ca_pem: bytes | None,
    url: str | None = None,
    service: tuple[str, str, int] | None = None,
    timeout_seconds: int = DEFAULT_TIMEOUT,
    name: str = CONFIGURATION_NAME,
) -> dict[str, Any]:
    """The ``ResourceInterpreterWebhookConfiguration``: ``url`` is the webhook's https base URL,
    or ``service`` is ``(namespace, name, port)`` of the Service in front of it."""
    if (url is None) == (service is None):
        raise ValueError("exactly one of url and service is needed")
    if not 1 <= timeout_seconds <= 30:
        raise ValueError("the timeout must be between 1 and 30 seconds")
    client: dict[str, Any] = {}
    if url is not None:
        if not url.startswith("https://"):
            raise ValueError(f"the webhook URL must use https: {url}")
        client["url"] = url.rstrip("/") + INTERPRET_PATH
    else:
        assert service is not None
        namespace, svc, port = service
        client["service"] = {"namespace": namespace, "name": svc, "path": INTERPRET_PATH, "port": port}
    if ca_pem:
        client["caBundle"] = base64.b64encode(ca_pem).decode("ascii")
    return {
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterWebhookConfiguration",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "wmap"}},
        "webhooks": [
            {
                "name": WEBHOOK_NAME,
                "clientConfig": client,
                "rules": [_rule(c) for c in kinds],
                "timeoutSeconds": timeout_seconds,
                "interpreterContextVersions": list(CONTEXT_VERSIONS),
            }
        ],
    }
