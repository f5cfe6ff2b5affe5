"""A fake Kubernetes API server on loopback, for the client's hostile-server tests and benchmarks.

:class:`FakeApiServer` is a small threaded HTTP/1.1 server that plays an empty cluster: ``/version``,
``/readyz``, discovery of core ``v1`` (pods, namespaces, events, nodes), empty lists with a
resourceVersion, watches that stay open until their ``timeoutSeconds`` (or the server stops),
TokenReviews (the tokens given at construction authenticate, any other is refused) and
Subject/SelfSubjectAccessReviews (always allowed). A test replaces any answer with
:meth:`FakeApiServer.on`, a hostile one included: a :class:`Reply` body may be an iterator of chunks
(sent with chunked transfer encoding, so it may trickle or never end), :meth:`Reply.json` can gzip.

The documents follow the shapes the real API server sends (``APIVersions``, ``APIGroupList``,
``APIResourceList``, ``Status``, ``TokenReview``; kube-apiserver v1.20 in ``tests/support/cluster.py``
answers the same paths). Every request is recorded in :attr:`FakeApiServer.requests`.
"""

from __future__ import annotations

import gzip as gzip_module
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
import yaml

__all__ = ["FakeApiServer", "Reply", "Seen", "status_doc"]

#: The longest a default watch stays open (its ``timeoutSeconds`` is capped here).
MAX_WATCH_SECONDS = 60.0


@dataclass
class Reply:
    """One answer: a status, headers and a body (bytes, or an iterator of chunks sent chunked)."""

    status: int = 200
    body: bytes | Iterable[bytes] = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, doc: Any, status: int = 200, *, gzip: bool = False, **headers: str) -> Reply:
        body = orjson.dumps(doc)
        head = {"Content-Type": "application/json", **headers}
        if gzip:
            body = gzip_module.compress(body, 6)
            head["Content-Encoding"] = "gzip"
        return cls(status, body, head)

    @classmethod
    def raw(cls, body: bytes, status: int = 200, *, gzip: bool = False, **headers: str) -> Reply:
        """``body`` as it is (JSON or not), optionally gzipped on the wire."""
        head = {"Content-Type": "application/json", **headers}
        if gzip:
            body = gzip_module.compress(body, 9)
            head["Content-Encoding"] = "gzip"
        return cls(status, body, head)


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]
    body: bytes

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None


Handler = Callable[[Seen], "Reply | None"]


def status_doc(code: int, reason: str, message: str) -> dict[str, Any]:
    """A ``metav1.Status`` failure as the API server sends it."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


_CORE_RESOURCES = [
    {
        "name": "pods",
        "singularName": "",
        "namespaced": True,
        "kind": "Pod",
        "verbs": ["get", "list", "watch"],
    },
    {"name": "events", "singularName": "", "namespaced": True, "kind": "Event", "verbs": ["list"]},
    {"name": "namespaces", "singularName": "", "namespaced": False, "kind": "Namespace", "verbs": ["list"]},
    {"name": "nodes", "singularName": "", "namespaced": False, "kind": "Node", "verbs": ["get", "list"]},
]
_LIST = re.compile(r"^/api/v1(?:/namespaces/[^/]+)?/(pods|events|namespaces|nodes)$")
#: The Karta CRD's group (cluster-scoped, as ``wmap crd`` renders it): served, with no objects.
_KARTA_GROUP = {
    "name": "run.ai",
    "versions": [{"groupVersion": "run.ai/v1alpha1", "version": "v1alpha1"}],
    "preferredVersion": {"groupVersion": "run.ai/v1alpha1", "version": "v1alpha1"},
}
_KARTA_RESOURCES = [
    {"name": "kartas", "singularName": "karta", "namespaced": False, "kind": "Karta",
     "verbs": ["get", "list", "watch", "create", "delete"]},
]  # fmt: skip
KARTAS = "/apis/run.ai/v1alpha1/kartas"


class FakeApiServer:
    """A threaded fake API server on ``127.0.0.1`` (plain HTTP); a context manager."""

    def __init__(self, *, tokens: Mapping[str, str] | None = None) -> None:
        #: bearer token -> user name accepted by TokenReview (and by the fake itself: none is checked).
        self.tokens = dict(tokens if tokens is not None else {"good-token": "alice"})
        self.requests: list[Seen] = []
        self._routes: list[tuple[str, str | re.Pattern[str], Handler]] = []
        self._lock = threading.Lock()
        self.stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _RequestHandler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-apiserver", daemon=True)

    # ------------------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> FakeApiServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------------------ behaviour

    def on(self, method: str, path: str | re.Pattern[str], handler: Handler | Reply) -> None:
        """Answer ``method path`` (an exact path or a compiled pattern matched in full) with
        ``handler(seen)``; the latest rule wins, and a handler returning None falls through."""
        fn: Handler
        if isinstance(handler, Reply):
            reply = handler

            def fn_reply(_seen: Seen) -> Reply | None:
                return reply

            fn = fn_reply
        else:
            fn = handler
        with self._lock:
            self._routes.insert(0, (method.upper(), path, fn))

    def seen(self, path: str) -> list[Seen]:
        """The requests received for ``path``."""
        with self._lock:
            return [s for s in self.requests if s.path == path]

    def kubeconfig(
        self, path: Path, *, token: str | None = "good-token", user: dict[str, Any] | None = None
    ) -> Path:
        """A kubeconfig for this server: a bearer ``token``, or the ``user`` block given (exec...)."""
        auth = user if user is not None else ({"token": token} if token else {})
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake-user", "user": auth}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake-user"}}],
            "current-context": "fake",
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        return path

    def answer(self, seen: Seen) -> Reply:
        with self._lock:
            self.requests.append(seen)
            routes = list(self._routes)
        for method, pattern, fn in routes:
            if method != seen.method:
                continue
            hit = seen.path == pattern if isinstance(pattern, str) else pattern.fullmatch(seen.path)
            if hit:
                reply = fn(seen)
                if reply is not None:
                    return reply
        return self._default(seen)

    # ------------------------------------------------------------------------------ the empty cluster

    def _default(self, seen: Seen) -> Reply:
        path = seen.path
        if seen.method == "GET":
            if path in ("/readyz", "/healthz", "/livez"):
                return Reply(200, b"ok", {"Content-Type": "text/plain"})
            if path == "/version":
                return Reply.json({"major": "1", "minor": "30", "gitVersion": "v1.30.0-fake"})
            if path == "/api":
                return Reply.json(
                    {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
                )
            if path == "/apis":
                return Reply.json({"kind": "APIGroupList", "apiVersion": "v1", "groups": [_KARTA_GROUP]})
            if path == "/apis/run.ai/v1alpha1":
                return Reply.json(
                    {
                        "kind": "APIResourceList",
                        "groupVersion": "run.ai/v1alpha1",
                        "resources": _KARTA_RESOURCES,
                    }
                )
            if path == KARTAS:
                if seen.param("watch") in ("1", "true"):
                    return Reply(200, self._idle_watch(seen), {"Content-Type": "application/json"})
                return Reply.json(
                    {
                        "kind": "KartaList",
                        "apiVersion": "run.ai/v1alpha1",
                        "metadata": {"resourceVersion": "1"},
                        "items": [],
                    }
                )
            if path == "/api/v1":
                return Reply.json(
                    {"kind": "APIResourceList", "groupVersion": "v1", "resources": _CORE_RESOURCES}
                )
            m = _LIST.match(path)
            if m:
                if seen.param("watch") in ("1", "true"):
                    return Reply(200, self._idle_watch(seen), {"Content-Type": "application/json"})
                kind = next(r["kind"] for r in _CORE_RESOURCES if r["name"] == m.group(1))
                return Reply.json(
                    {
                        "kind": f"{kind}List",
                        "apiVersion": "v1",
                        "metadata": {"resourceVersion": "1"},
                        "items": [],
                    }
                )
        if seen.method == "POST":
            if path == KARTAS:  # accepted as sent (a dry run too), as the API server does
                return Reply.json(orjson.loads(seen.body or b"{}"), 201)
            if path == "/apis/authentication.k8s.io/v1/tokenreviews":
                return self._token_review(seen)
            if path.startswith("/apis/authorization.k8s.io/v1/") and path.endswith("accessreviews"):
                doc = orjson.loads(seen.body or b"{}")
                return Reply.json(
                    {**doc, "status": {"allowed": True, "reason": "fake: everything allowed"}}, 201
                )
        return Reply.json(
            status_doc(404, "NotFound", "the server could not find the requested resource"), 404
        )

    def _token_review(self, seen: Seen) -> Reply:
        doc = orjson.loads(seen.body or b"{}")
        token = str((doc.get("spec") or {}).get("token") or "")
        user = self.tokens.get(token)
        status: dict[str, Any] = {"authenticated": user is not None}
        if user is not None:
            status["user"] = {"username": user, "uid": f"uid-{user}", "groups": ["system:authenticated"]}
        return Reply.json({**doc, "status": status}, 201)

    def _idle_watch(self, seen: Seen) -> Iterator[bytes]:
        seconds = min(float(seen.param("timeoutSeconds") or MAX_WATCH_SECONDS), MAX_WATCH_SECONDS)
        end = time.monotonic() + seconds
        while time.monotonic() < end and not self.stopping.wait(0.1):
            pass
        yield b""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeApiServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up (as the hostile-client tests do) is not an error of the fake


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, Nagle on our side and a delayed ACK
    # on the client's cost 40 ms per keep-alive request (2,000 list pages took 90 s instead of 5).
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        seen = Seen(
            method=self.command,
            path=url.path,
            query=parse_qs(url.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        reply = self.server.fake.answer(seen)
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if isinstance(reply.body, (bytes, bytearray)):
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for chunk in reply.body:
                if self.server.fake.stopping.is_set():
                    break
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle
