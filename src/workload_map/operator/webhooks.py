"""Admission webhooks for Karta objects, served over TLS by the standard library (AdmissionReview v1).

- ``POST /validate-karta`` (CREATE, UPDATE): the full definition validator (errors reject with the
  validator's messages, joined by newlines as upstream's ``errors.Join``; warnings go back as
  admission ``warnings``), the immutable root GVK, the protected index labels, and the one Karta per
  GVK rule through an atomic claim (:mod:`.claims`).
- ``POST /mutate-karta`` (CREATE): stamps the index labels with a JSONPatch.
- ``POST /mutate-workload`` (WorkloadPolicy, :mod:`.policies`) and ``POST /hold-kueue`` (Kueue
  hold at creation, :mod:`.kueue_hold`), when enabled.
- ``POST /interpret-karmada``: Karmada's resource interpreter (``ResourceInterpreterContext``,
  :mod:`workload_map.interpret`), when an interpreter is given (``wmap karmada webhook``).
- ``GET /healthz`` and ``/readyz``.

Every replica serves webhooks; only the leader reconciles. A request body is limited to
``MAX_BODY`` bytes (``MAX_INTERPRET_BODY`` for Karmada's requests, which carry the statuses of
every member cluster) and is handled on its own thread.
"""

from __future__ import annotations

import base64
import json
import logging
import ssl
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from workload_map.interpret import INTERPRET_PATH, refuse
from workload_map.model._jq import OBJECT_COMPILE_SECONDS
from workload_map.model.findings import ERROR
from workload_map.model.loader import load_definitions_text
from workload_map.operator import texts
from workload_map.operator.certs import (
    MUTATE_KUEUE_PATH,
    MUTATE_PATH,
    MUTATE_WORKLOAD_PATH,
    VALIDATE_PATH,
    VALIDATE_POLICY_PATH,
)
from workload_map.operator.claims import ClaimStore
from workload_map.operator.policies import PolicyAdmission
from workload_map.runtime.http import (
    BoundedHTTPServer,
    BoundedRequestHandler,
    ServerLimits,
    ServerThread,
    parse_listen,
)

if TYPE_CHECKING:  # the Kueue controller's imports are only paid for with --kueue
    from workload_map.operator.kueue_hold import KueueHold

log = logging.getLogger(__name__)

WEBHOOK_PATHS = (VALIDATE_PATH, MUTATE_PATH, VALIDATE_POLICY_PATH, MUTATE_WORKLOAD_PATH, MUTATE_KUEUE_PATH)

MAX_BODY = 8 * 1024 * 1024
MAX_INTERPRET_BODY = 16 * 1024 * 1024
#: Warnings longer than this are cut (the API server may truncate them anyway).
MAX_WARNING = 240
MAX_WARNINGS = 20

Obj = dict[str, Any]
#: A decoded ResourceInterpreterContext -> the one to answer (:func:`workload_map.interpret.review`).
Interpreter = Callable[[Any], Obj]


def definition_findings(obj: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(errors, warnings) of a Karta object: loader findings (types, shape) and the validator's,
    the expressions compiled within one object's budget (0.5 s of CPU).

    Unknown fields: the API server prunes every field the Karta CRD's structural schema does not
    declare before admission (the CRD preserves none), so the webhook never sees them: kubectl's
    default ``--validate=strict`` refuses them first (server-side field validation on 1.25+, its own
    check of the published schema before), and a client that does not validate gets them pruned
    silently (tests/server/test_register_limits.py, on v1.20). Read strictly all the same, as every
    other reader: one that does arrive (a CRD changed to preserve unknown fields) is an error."""
    text = orjson.dumps(dict(obj)).decode()
    name = str((obj.get("metadata") or {}).get("name") or "karta")
    result = load_definitions_text(
        text, name=name, field_validation="strict", compile_seconds=OBJECT_COMPILE_SECONDS
    )
    findings = list(result.findings)
    for loaded in result.definitions:
        findings.extend(loaded.validate())
    if not result.definitions and not result.errors:
        return (["the object is not a Karta definition"], [])
    errors = [f.message for f in findings if f.severity == ERROR]
    warnings = [f.message for f in findings if f.severity != ERROR and f.code != "KARTA101"]
    return errors, warnings


MAX_LINE = 1024
MAX_MESSAGE = 8192


def join_messages(lines: list[str]) -> str:
    """Messages joined by newlines (as Go's ``errors.Join``), each line and the whole text bounded:
    a hostile definition's expressions can be megabytes long, and a condition message at most 32 KiB."""
    out: list[str] = []
    total = 0
    for i, line in enumerate(lines):
        if len(line) > MAX_LINE:
            line = line[: MAX_LINE - 3] + "..."
        if total + len(line) > MAX_MESSAGE:
            out.append(f"... and {len(lines) - i} more")
            break
        out.append(line)
        total += len(line) + 1
    return "\n".join(out)


def _labels(obj: Mapping[str, Any] | None) -> dict[str, str]:
    if not obj:
        return {}
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}


def label_problems(obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[str]:
    """Managed labels that differ from the root GVK, or were removed on update."""
    gvk = texts.root_gvk(obj)
    if gvk is None:
        return []
    expected = texts.index_labels(*gvk)
    new_labels = _labels(obj)
    old_labels = _labels(old)
    problems = []
    for key in texts.MANAGED_LABELS:
        want = expected[key]
        if not texts.valid_label_value(want):
            continue  # cannot be stamped; reported by the validator path
        if (key in new_labels and new_labels[key] != want) or (key in old_labels and key not in new_labels):
            problems.append(texts.managed_label(key, want))
    return problems


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def label_patch(obj: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """JSONPatch operations that set the index labels, and warnings for values that are not valid
    label values (a group longer than 63 characters, for example)."""
    gvk = texts.root_gvk(obj)
    if gvk is None:
        return [], []
    wanted = texts.index_labels(*gvk)
    warnings = [texts.label_value_invalid(k, v) for k, v in wanted.items() if not texts.valid_label_value(v)]
    wanted = {k: v for k, v in wanted.items() if texts.valid_label_value(v)}
    meta = obj.get("metadata") or {}
    current = meta.get("labels")
    if not isinstance(current, Mapping) or not current:
        return ([{"op": "add", "path": "/metadata/labels", "value": wanted}] if wanted else []), warnings
    ops = [
        {"op": "add", "path": f"/metadata/labels/{_escape(k)}", "value": v}
        for k, v in wanted.items()
        if current.get(k) != v
    ]
    return ops, warnings


def _trim(warnings: list[str]) -> list[str]:
    out = []
    for w in warnings[:MAX_WARNINGS]:
        out.append(w if len(w) <= MAX_WARNING else w[: MAX_WARNING - 3] + "...")
    return out


class AdmissionHandler:
    """The admission decisions, independent of HTTP. ``policies`` serves ``/mutate-workload``
    (``wmap operator --policies``); policy objects are validated either way. ``kueue`` serves
    ``/hold-kueue`` (``wmap operator --kueue``)."""

    def __init__(
        self,
        claims: ClaimStore | None,
        policies: PolicyAdmission | None = None,
        kueue: KueueHold | None = None,
    ) -> None:
        self.claims = claims
        self.policies = policies
        self.kueue = kueue

    def validate(self, request: Mapping[str, Any]) -> Obj:
        operation = request.get("operation")
        obj = request.get("object") or {}
        old = request.get("oldObject") if operation == "UPDATE" else None
        name = str((obj.get("metadata") or {}).get("name") or "")
        # A metadata-only update (labels, finalizers) of an unchanged spec is not re-validated: a
        # Karta that newer rules reject must still be labellable and deletable.
        spec_changed = old is None or old.get("spec") != obj.get("spec")
        errors, warnings = definition_findings(obj) if spec_changed else ([], [])
        gvk = texts.root_gvk(obj)
        if old is not None and texts.root_gvk(old) != gvk:
            errors.append(texts.GVK_IMMUTABLE)
        errors.extend(label_problems(obj, old))
        if gvk is not None:
            for key, value in texts.index_labels(*gvk).items():
                if not texts.valid_label_value(value):
                    errors.append(texts.label_value_invalid(key, value))
        if errors:
            return self._deny(join_messages(errors), warnings)
        if gvk is not None and self.claims is not None and name and spec_changed:
            conflict = self.claims.claim(gvk, name, dry_run=bool(request.get("dryRun")))
            if conflict is not None:
                return self._deny(texts.duplicate_gvk(*gvk, conflict.holder), warnings)
        return {"allowed": True, "warnings": _trim(warnings)} if warnings else {"allowed": True}

    def mutate(self, request: Mapping[str, Any]) -> Obj:
        if request.get("operation") != "CREATE":
            return {"allowed": True}
        ops, warnings = label_patch(request.get("object") or {})
        response: Obj = {"allowed": True}
        if ops:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(ops).encode()).decode("ascii")
        if warnings:
            response["warnings"] = _trim(warnings)
        return response

    @staticmethod
    def _deny(message: str, warnings: list[str]) -> Obj:
        response: Obj = {"allowed": False, "status": {"code": 403, "reason": "Forbidden", "message": message}}
        if warnings:
            response["warnings"] = _trim(warnings)
        return response

    def review(self, path: str, review: Any) -> Obj:
        """An AdmissionReview response for ``review`` sent to ``path``; a body that is not an
        AdmissionReview gets a denial that says so (never a dropped connection)."""
        request = review.get("request") if isinstance(review, Mapping) else None
        if not isinstance(request, Mapping):
            return malformed_review("the body is not an AdmissionReview with a request object")
        uid = request.get("uid", "")
        if not isinstance(uid, str):
            return malformed_review("request.uid is not a string")
        try:
            if path == VALIDATE_PATH:
                response = self.validate(request)
            elif path == MUTATE_PATH:
                response = self.mutate(request)
            elif path == VALIDATE_POLICY_PATH:
                response = PolicyAdmission.validate_policy(request)
            elif path == MUTATE_WORKLOAD_PATH:
                response = self.policies.mutate(request) if self.policies is not None else {"allowed": True}
            elif path == MUTATE_KUEUE_PATH:
                response = self.kueue.mutate(request) if self.kueue is not None else {"allowed": True}
            else:
                raise KeyError(path)
        except Exception as exc:  # any failure must answer, not hang the API server
            log.exception("admission %s failed", path)
            response = {
                "allowed": False,
                "status": {"code": 500, "reason": "InternalError", "message": f"karta webhook error: {exc}"},
            }
        response["uid"] = uid
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


def malformed_review(message: str) -> Obj:
    """The AdmissionReview answer to a request that cannot be reviewed (status 400)."""
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {
            "uid": "",
            "allowed": False,
            "status": {"code": 400, "reason": "BadRequest", "message": f"karta webhook: {message}"},
        },
    }


class _Handler(BoundedRequestHandler):
    server: _Server
    # The head and the body go out in two writes on a kept-alive connection: without TCP_NODELAY
    # the second waits for the client's delayed ACK (~40 ms per request).
    disable_nagle_algorithm = True

    def _send(self, code: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/healthz":
            self._send(200, b"ok", "text/plain")
        elif path == "/readyz":
            ready = self.server.ready()
            self._send(200 if ready else 503, b"ok" if ready else b"not ready", "text/plain")
        else:
            self._send(404, b"not found", "text/plain")

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == INTERPRET_PATH and self.server.interpreter is not None:
            self._interpret(self.server.interpreter)
            return
        if path not in WEBHOOK_PATHS or self.server.admission is None:
            self._send(404, b"not found", "text/plain")
            return
        length = self.content_length()
        if length is None or length == 0 or length > MAX_BODY:
            # Checked before reading: nothing of an oversized or undeclared body is read.
            self.close_connection = True
            too_big = length is not None and length > MAX_BODY
            message = f"body larger than {MAX_BODY} bytes" if too_big else "no valid Content-Length"
            self._send(413 if too_big else 400, orjson.dumps(malformed_review(message)))
            return
        body = self.read_body(length)
        if body is None:
            return  # the client did not send its body in time: nothing to answer
        try:
            review = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            self._send(400, orjson.dumps(malformed_review(f"the body is not JSON: {exc}")))
            return
        # A parsed body always gets an AdmissionReview (a malformed one: a denial saying why).
        self._send(200, orjson.dumps(self.server.admission.review(path, review)))

    def _interpret(self, interpreter: Interpreter) -> None:
        length = self.content_length()
        if length is None or length == 0 or length > MAX_INTERPRET_BODY:
            self.close_connection = True
            too_big = length is not None and length > MAX_INTERPRET_BODY
            message = f"body larger than {MAX_INTERPRET_BODY} bytes" if too_big else "no valid Content-Length"
            self._send(413 if too_big else 400, orjson.dumps(refuse("", f"wmap interpreter: {message}", 400)))
            return
        body = self.read_body(length)
        if body is None:
            return
        try:
            context = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            self._send(400, orjson.dumps(refuse("", f"wmap interpreter: the body is not JSON: {exc}", 400)))
            return
        self._send(200, orjson.dumps(interpreter(context)))


class _Server(BoundedHTTPServer):
    def __init__(
        self,
        address: tuple[str, int],
        admission: AdmissionHandler | None,
        ready: Callable[[], bool],
        ssl_context: ssl.SSLContext | None,
        interpreter: Interpreter | None = None,
    ) -> None:
        self.admission = admission
        self.interpreter = interpreter
        self.ready = ready
        super().__init__(
            address,
            _Handler,
            # The API servers (a few addresses) are the clients: each may hold many connections.
            limits=ServerLimits(workers=32, backlog=128, max_per_client=64),
            ssl_context=ssl_context,
        )


class HTTPServerThread(ServerThread):
    """The webhook (and health) server on a background thread; TLS when a certificate is given."""

    def __init__(
        self,
        listen: str,
        *,
        admission: AdmissionHandler | None = None,
        cert: Path | None = None,
        key: Path | None = None,
        ready: Callable[[], bool] = lambda: True,
        interpreter: Interpreter | None = None,
    ) -> None:
        context = None
        if cert is not None and key is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.minimum_version = ssl.TLSVersion.TLSv1_2
            context.load_cert_chain(str(cert), str(key))
        server = _Server(parse_listen(listen), admission, ready, context, interpreter)
        super().__init__(server, f"http:{listen}")
