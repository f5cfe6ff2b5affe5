"""Karmada's side of the interpreter webhook protocol, for tests: start ``wmap``'s webhook over TLS
and call it as ``karmada-controller-manager`` does.

:func:`karmada_context` builds the ``ResourceInterpreterContext`` the way Karmada's
``CreateV1alpha1ResourceInterpreterContext`` does (``pkg/resourceinterpreter/customized/webhook/
request/resourceinterpretercontext.go``): a fresh uid, ``kind`` from the object's apiVersion and
kind, name and namespace from its metadata, ``replicas`` always present (0 unless revising),
``observedObject`` only when there is one, ``aggregatedStatus`` only when not nil.
:meth:`KarmadaClient.call` checks the answer as ``VerifyResourceInterpreterContext`` does (same uid,
``status`` on failure, ``replicas``/``rawStatus``/``healthy`` present for their operations, a patch
only with ``patchType: JSONPatch``) and applies patches as ``applyPatch`` does.
"""

from __future__ import annotations

import base64
import json
import ssl
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from workload_map.resolve.patch import apply_json_patch


class WebhookCallError(AssertionError):
    """The answer is one Karmada would reject (or a refusal, with Karmada's message)."""


def karmada_context(
    operation: str,
    obj: Mapping[str, Any],
    *,
    observed: Mapping[str, Any] | None = None,
    replicas: int = 0,
    aggregated_status: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    api_version = str(obj.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    meta = obj.get("metadata") or {}
    request: dict[str, Any] = {
        "uid": str(uuid.uuid4()),
        "kind": {"group": group, "version": version, "kind": obj.get("kind", "")},
        "name": meta.get("name", ""),
        "operation": operation,
        "object": obj,
        "replicas": replicas,
    }
    if meta.get("namespace"):
        request["namespace"] = meta["namespace"]
    if observed is not None:
        request["observedObject"] = observed
    if aggregated_status is not None:
        request["aggregatedStatus"] = list(aggregated_status)
    return {
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterContext",
        "request": request,
    }


@dataclass
class Outcome:
    """What Karmada takes from one answer (``ResponseAttributes`` plus the patched object)."""

    response: dict[str, Any]
    patched: dict[str, Any] | None = None

    @property
    def successful(self) -> bool:
        return bool(self.response.get("successful"))


def verify(uid: str, operation: str, context: Any, obj: Mapping[str, Any]) -> Outcome:
    """Karmada's ``VerifyResourceInterpreterContext`` and ``applyPatch``."""
    if not isinstance(context, dict) or not isinstance(context.get("response"), dict):
        raise WebhookCallError("webhook response was absent")
    response = context["response"]
    if response.get("uid") != uid:
        raise WebhookCallError(f"expected response.uid {uid!r}, got {response.get('uid')!r}")
    if not response.get("successful"):
        if not isinstance(response.get("status"), dict):
            raise WebhookCallError("webhook require response.status when response.successful is false")
        return Outcome(response)
    required = {"InterpretReplica": "replicas", "InterpretStatus": "rawStatus", "InterpretHealth": "healthy"}
    if operation in required and response.get(required[operation]) is None:
        raise WebhookCallError(f"webhook returned nil response.{required[operation]}")
    outcome = Outcome(response)
    if operation in ("ReviseReplica", "Retain", "AggregateStatus"):
        patch, patch_type = response.get("patch"), response.get("patchType")
        if patch and patch_type != "JSONPatch":
            raise WebhookCallError(f"webhook returned invalid response.patchType of {patch_type!r}")
        if patch_type and not patch:
            raise WebhookCallError("webhook returned empty response.patch")
        ops = json.loads(base64.b64decode(patch)) if patch else []
        outcome.patched = apply_json_patch(dict(obj), ops)
    if operation == "InterpretDependency":
        for dep in response.get("dependencies") or []:
            if (
                not dep.get("apiVersion")
                or not dep.get("kind")
                or not (dep.get("name") or dep.get("labelSelector"))
            ):
                raise WebhookCallError(f"invalid dependency {dep}")
    return outcome


class KarmadaClient:
    """An HTTPS client trusting the webhook's CA, posting contexts as Karmada does."""

    def __init__(self, url: str, ca_file: Path) -> None:
        context = ssl.create_default_context(cafile=str(ca_file))
        self.url = url
        self.http = httpx.Client(verify=context, timeout=30.0)

    def post(self, body: Any) -> httpx.Response:
        return self.http.post(
            self.url, content=json.dumps(body), headers={"Content-Type": "application/json"}
        )

    def call(
        self,
        operation: str,
        obj: Mapping[str, Any],
        *,
        observed: Mapping[str, Any] | None = None,
        replicas: int = 0,
        aggregated_status: Sequence[Mapping[str, Any]] | None = None,
    ) -> Outcome:
        body = karmada_context(
            operation, obj, observed=observed, replicas=replicas, aggregated_status=aggregated_status
        )
        answer = self.post(body)
        if answer.status_code != 200:
            raise WebhookCallError(f"HTTP {answer.status_code}: {answer.text[:300]}")
        return verify(body["request"]["uid"], operation, answer.json(), obj)

    def close(self) -> None:
        self.http.close()


@contextmanager
def interpreter_webhook(cert_dir: Path, lookup: Any) -> Iterator[KarmadaClient]:
    """``wmap``'s interpreter webhook on a free local port over TLS (a CA and certificate made for
    127.0.0.1), with a client trusting that CA."""
    from workload_map.interpret import INTERPRET_PATH, review
    from workload_map.operator.certs import ensure_certs
    from workload_map.operator.webhooks import HTTPServerThread

    files = ensure_certs(cert_dir, ["127.0.0.1"])
    server = HTTPServerThread(
        "127.0.0.1:0", cert=files.cert, key=files.key, interpreter=lambda body: review(body, lookup)
    ).start()
    client = KarmadaClient(f"https://127.0.0.1:{server.port}{INTERPRET_PATH}", files.ca_cert)
    try:
        yield client
    finally:
        client.close()
        server.stop()
