"""A small synchronous Kubernetes API client on httpx that returns plain dicts decoded by orjson.

Design points:

- Lists are decoded with one ``orjson.loads`` per page: no per-item wrapping (the hot path of ``wmap get``).
- Paging: :meth:`KubeClient.list` yields pages (``limit`` = chunk size, default 500; ``0`` = one request)
  following ``continue`` tokens. If a continue token expires (410 Gone) the list restarts from the
  beginning once and ``on_relist`` is told: pages yielded before the restart may repeat objects, so
  consumers must deduplicate by ``metadata.uid`` (:meth:`KubeClient.list_items` does). The next page
  is asked for while the consumer handles the current one (one page ahead, on a helper thread), so
  the API server encodes a page while we decode the previous one; ``list_ahead=False`` turns it off.
- Retries: 429 and 503 always (the API server rejected the request before acting on it), 500/502/504,
  read timeouts and dropped connections only for idempotent requests (GET, HEAD, PUT, DELETE, apply),
  a refused connection once. Exponential backoff with full jitter, ``Retry-After`` honoured (capped),
  at most ``max_tries`` (5) attempts in all.
- Errors: HTTP errors become :class:`~workload_map.errors.ApiError` subclasses carrying the API's
  ``Status`` message; transport failures become :class:`~workload_map.errors.ConnectionFailedError`.
  A redirect (any 3xx: redirects are not followed) and a success body that is empty or not a JSON
  object are errors naming the request and the server.
- Ceilings on what a server can make the client hold or do: :data:`MAX_RESPONSE_BYTES` per body,
  :data:`~workload_map.cluster.decode.MAX_DECODED_VALUES` JSON values per document (counted before
  decoding, cluster/decode.py), :data:`MAX_LIST_PAGES` pages, :data:`MAX_LIST_ITEMS` objects and
  :data:`MAX_LIST_SECONDS` seconds of requests per list; a list page over a ceiling is asked for
  again in halves (``limit`` halved).
"""

from __future__ import annotations

import builtins
import errno
import functools
import random
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import httpx
import orjson

from workload_map import __version__
from workload_map.cluster.auth import Credential, ExecCredentialProvider, KubeAuth
from workload_map.cluster.decode import (
    ACCEPT_ENCODING,
    MAX_DECODED_VALUES,
    decoded_chunks,
    loads_bounded,
    not_json,
    too_many_values,
    value_count,
)
from workload_map.cluster.kubeconfig import ClusterConfig, ConnectionOptions, load_cluster_config
from workload_map.cluster.tls import build_ssl_context
from workload_map.cluster.watch import WatchStream
from workload_map.errors import (
    ApiError,
    ConflictError,
    ConnectionFailedError,
    ForbiddenError,
    GoneError,
    NotFoundError,
    UnauthorizedError,
    causes,
)
from workload_map.kube.objects import api_path

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "MAX_LIST_ITEMS",
    "MAX_LIST_PAGES",
    "MAX_LIST_SECONDS",
    "MAX_RESPONSE_BYTES",
    "Deadline",
    "KubeClient",
    "PatchType",
    "WatchEvent",
    "WatchStream",
    "api_path",
]

DEFAULT_CHUNK_SIZE = 500
PatchType = Literal["merge", "json", "strategic", "apply"]
_PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
_ERROR_TYPES: dict[int, type[ApiError]] = {
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    410: GoneError,
}
#: Longest wait a Retry-After header can impose on one retry.
MAX_RETRY_AFTER = 30.0
#: Whole-request deadline (retries and body included) when ``--request-timeout`` is not set; watches
#: and other streams have none then (the server ends a watch by its ``timeoutSeconds``).
DEFAULT_RESPONSE_DEADLINE = 300.0
#: Largest response body kept; an endless or huge body is an error, not unbounded memory.
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
#: Error bodies are cut here: only their Status message is used.
MAX_ERROR_BODY = 64 * 1024
#: Pages one list may take: a million objects at the default page of 500 (Kubernetes supports
#: clusters of up to 150,000 pods); a server that sends a ``continue`` token on every page is
#: stopped here.
MAX_LIST_PAGES = 2_000
#: Seconds of requests one list may take in all (its consumer's time between pages not counted).
MAX_LIST_SECONDS = 600.0
#: Objects one list may bring (pages of tiny objects, each under the value ceiling, would otherwise
#: keep a consumer resolving objects for as long as the pages last).
MAX_LIST_ITEMS = 1_000_000


@dataclass(frozen=True)
class WatchEvent:
    """One watch event: ``type`` is ADDED, MODIFIED, DELETED or BOOKMARK; ``object`` the decoded object."""

    type: str
    object: dict[str, Any]

    @property
    def resource_version(self) -> str | None:
        rv = self.object.get("metadata", {}).get("resourceVersion")
        return rv if isinstance(rv, str) else None


def _status_error(status: int, body: bytes, method: str, path: str) -> ApiError:
    reason = ""
    message = ""
    details: dict[str, Any] | None = None
    try:
        doc = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and doc.get("kind") == "Status":
        reason = str(doc.get("reason") or "")
        message = str(doc.get("message") or "")
        raw_details = doc.get("details")
        details = raw_details if isinstance(raw_details, dict) else None
    if not message:
        text = body[:300].decode("utf-8", errors="replace").strip()
        message = f"{method} {path}: HTTP {status}" + (f": {text}" if text else "")
    if not reason:
        reason = {401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 409: "Conflict", 410: "Gone"}.get(
            status, "Unknown"
        )
    cls = _ERROR_TYPES.get(status, ApiError)
    return cls(status, reason, message, details=details, method=method, path=path)


def _transport_reason(exc: BaseException) -> tuple[str, bool]:
    """A short human reason for a transport failure, and whether it is a TLS problem."""
    for cur in causes(exc):
        if isinstance(cur, ssl.SSLCertVerificationError):
            return f"TLS certificate verification failed: {cur.verify_message or cur}", True
        if isinstance(cur, ssl.SSLError):
            return f"TLS handshake failed: {cur.reason or cur}", True
        if isinstance(cur, ConnectionRefusedError) or getattr(cur, "errno", None) == errno.ECONNREFUSED:
            return "connection refused", False
        if isinstance(cur, socket.gaierror):
            return f"host name lookup failed ({cur.strerror or cur})", False
    text = str(exc)
    if "CERTIFICATE_VERIFY_FAILED" in text:
        return f"TLS certificate verification failed: {text}", True
    if "Connection refused" in text or "[Errno 111]" in text:
        return "connection refused", False
    if isinstance(exc, httpx.TimeoutException):
        return "timed out", False
    return text or type(exc).__name__, False


class KubeClient:
    """A synchronous Kubernetes API client. Thread-safe for concurrent requests (discovery uses threads).

    ``transport`` replaces the network (tests pass ``httpx.MockTransport``); ``sleep`` replaces
    ``time.sleep`` for the retry backoff.
    """

    def __init__(
        self,
        config: ClusterConfig,
        *,
        transport: httpx.BaseTransport | None = None,
        exec_provider: ExecCredentialProvider | None = None,
        max_tries: int = 5,
        connect_tries: int = 2,
        backoff_base: float = 0.2,
        backoff_max: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        max_values: int = MAX_DECODED_VALUES,
        max_list_pages: int = MAX_LIST_PAGES,
        max_list_seconds: float = MAX_LIST_SECONDS,
        max_list_items: int = MAX_LIST_ITEMS,
        list_ahead: bool = True,
        on_warning: Callable[[str], None] | None = None,
        user_agent: str | None = None,
    ) -> None:
        self.config = config
        self.auth = KubeAuth(config, exec_provider)
        self.max_tries = max(1, max_tries)
        self.connect_tries = max(1, connect_tries)
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self._sleep = sleep
        self._clock = clock
        self.max_response_bytes = max_response_bytes
        self.max_values = max_values
        self.max_list_pages = max(1, max_list_pages)
        self.max_list_seconds = max_list_seconds
        self.max_list_items = max_list_items
        #: request a list's next page while its caller handles the current one (see :meth:`list`)
        self.list_ahead = list_ahead
        self.on_warning = on_warning
        self.user_agent = user_agent or f"wmap/{__version__} (python; httpx)"
        self._transport = transport
        self._lock = threading.Lock()
        self._http: httpx.Client | None = None
        self._cert_in_use: bytes | None = None
        self._extensions: dict[str, Any] = {}
        if config.tls_server_name:
            # httpcore uses this for both SNI and certificate host name verification, like Go's ServerName.
            self._extensions["sni_hostname"] = config.tls_server_name
        self._seen_warnings: set[str] = set()

    @classmethod
    def from_options(cls, options: ConnectionOptions | None = None, **kwargs: Any) -> KubeClient:
        """Load the kubeconfig (kubectl rules) for ``options`` and build a client."""
        return cls(load_cluster_config(options), **kwargs)

    # ------------------------------------------------------------------------------------ plumbing

    @property
    def server(self) -> str:
        return self.config.server

    @property
    def namespace(self) -> str:
        """The default namespace: ``-n`` > context namespace > ``default``."""
        return self.config.namespace

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    def __enter__(self) -> KubeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _build(self, cred: Credential | None) -> httpx.Client:
        cert = cred.cert_pem if cred is not None else None
        key = cred.key_pem if cred is not None else None
        if self._transport is not None:
            verify: ssl.SSLContext | bool = False
        else:
            verify = build_ssl_context(self.config, cert_pem=cert, key_pem=key)
        timeout = (
            httpx.Timeout(self.config.timeout)
            if self.config.timeout
            else httpx.Timeout(connect=15.0, read=120.0, write=60.0, pool=None)
        )
        headers = {
            "User-Agent": self.user_agent,
            "Accept": "application/json",
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        if self.config.disable_compression:
            headers["Accept-Encoding"] = "identity"
        self._cert_in_use = cert
        return httpx.Client(
            base_url=self.config.server,
            verify=verify,
            auth=self.auth,
            timeout=timeout,
            headers=headers,
            transport=self._transport,
            proxy=self.config.proxy_url,
            http1=True,
            http2=False,
            follow_redirects=False,
            limits=httpx.Limits(max_connections=32, max_keepalive_connections=16),
        )

    def _client(self) -> httpx.Client:
        """The httpx client; rebuilt when an exec plugin hands out a new client certificate."""
        cred = None
        if self.auth.exec is not None:
            cred = self.auth.exec_credential()
        with self._lock:
            if self._http is None or (cred is not None and cred.cert_pem != self._cert_in_use):
                if self._http is not None:
                    self._http.close()
                self._http = self._build(cred)
            return self._http

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(max(float(retry_after), 0.0), MAX_RETRY_AFTER)
            except ValueError:
                pass  # an HTTP date: fall back to our own backoff
        cap = min(self.backoff_max, self.backoff_base * (2 ** (attempt - 1)))
        return random.uniform(cap / 2, cap)

    def _warn(self, response: httpx.Response) -> None:
        if self.on_warning is None:
            return
        for value in response.headers.get_list("warning"):
            # RFC 7234 format: 299 - "text"
            text = value
            if value.startswith("299 ") and '"' in value:
                text = value.split('"', 1)[1].rsplit('"', 1)[0]
            if text not in self._seen_warnings:
                self._seen_warnings.add(text)
                self.on_warning(text)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        content: bytes | None = None,
        content_type: str | None = None,
        stream: bool = False,
        idempotent: bool | None = None,
        timeout: httpx.Timeout | None = None,
        accept: str | None = None,
        until: Deadline | None = None,
        values: tuple[int, str] | None = None,
    ) -> httpx.Response:
        """Send a request with retries; raise ApiError subclasses for HTTP errors.

        With ``stream=True`` the caller must close the returned response. ``until`` is an outer
        deadline (a whole list's or discovery's) that shortens the request's own; ``values`` a
        lower value ceiling for this body than the client's, with the name of its constant.
        """
        if idempotent is None:
            idempotent = method in ("GET", "HEAD", "PUT", "DELETE", "OPTIONS")
        headers: dict[str, str] = {}
        if content_type:
            headers["Content-Type"] = content_type
        if accept:
            headers["Accept"] = accept
        budget = self.config.timeout or (None if stream else DEFAULT_RESPONSE_DEADLINE)
        deadline = None if budget is None else Deadline(budget, self._clock() + budget)
        if until is not None and (deadline is None or until.at < deadline.at):
            deadline = until
        attempt = 0
        connect_failures = 0
        exec_retried = False
        while True:
            attempt += 1
            http = self._client()
            base_timeout = timeout if timeout is not None else http.timeout
            request = http.build_request(
                method,
                path,
                params=_clean_params(params),
                content=content,
                headers=headers or None,
                extensions=self._extensions or None,
                timeout=_within(base_timeout, self._left(deadline, method, path)),
            )
            try:
                response = http.send(request, stream=True)
            except httpx.TransportError as exc:
                reason, tls = _transport_reason(exc)
                refused = isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)) and not tls
                if refused:
                    connect_failures += 1
                retryable = not tls and (
                    (refused and connect_failures < self.connect_tries)
                    or (
                        idempotent
                        and isinstance(
                            exc,
                            (httpx.ReadTimeout, httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError),
                        )
                    )
                )
                delay = self._backoff(attempt, None)
                if retryable and attempt < self.max_tries and self._can_wait(delay, deadline):
                    self._sleep(delay)
                    continue
                if (
                    isinstance(exc, httpx.TimeoutException)
                    and deadline is not None
                    and self._clock() >= deadline.at - 0.05
                ):
                    raise self._timed_out(method, path, deadline) from exc
                raise ConnectionFailedError(
                    f"cannot reach the Kubernetes API server at {self.config.server}: {reason}",
                    server=self.config.server,
                ) from exc
            status = response.status_code
            raw_path = request.url.raw_path.decode("ascii", "replace")
            if 300 <= status < 400:
                self._read_body(response, deadline, method, raw_path, limit=MAX_ERROR_BODY)
                raise self._redirect(status, response.headers.get("location"), method, raw_path)
            if status < 400:
                self._warn(response)
                if not stream:
                    self._read_body(response, deadline, method, raw_path, values=values)
                return response
            retry = status in (429, 503) or (idempotent and status in (500, 502, 504))
            delay = self._backoff(attempt, response.headers.get("retry-after")) if retry else 0.0
            if retry and attempt < self.max_tries and self._can_wait(delay, deadline):
                response.close()
                self._sleep(delay)
                continue
            body = self._read_body(response, deadline, method, raw_path, limit=MAX_ERROR_BODY)
            if status == 401 and not exec_retried and self._cert_in_use is not None and self.auth.exec:
                # An exec plugin's client certificate was refused: ask the plugin again, once.
                exec_retried = True
                self.auth.exec.refresh_after_unauthorized(self.auth.exec_credential())
                attempt -= 1
                continue
            raise _status_error(status, body, method, raw_path)

    def _left(self, deadline: Deadline | None, method: str, path: str) -> float | None:
        """Seconds left before ``deadline`` (None: no deadline); past it, the request has timed out."""
        if deadline is None:
            return None
        left = deadline.at - self._clock()
        if left <= 0:
            raise self._timed_out(method, path, deadline)
        return left

    def _can_wait(self, delay: float, deadline: Deadline | None) -> bool:
        """Whether a retry after ``delay`` seconds still starts before the deadline."""
        return deadline is None or self._clock() + delay < deadline.at

    def _timed_out(self, method: str, path: str, deadline: Deadline) -> ConnectionFailedError:
        if deadline.why:
            within = deadline.why
        else:
            flag = " (--request-timeout)" if self.config.timeout else ""
            within = f"no complete response within {deadline.budget:g}s{flag}"
        return ConnectionFailedError(
            f"{method} {path} on {self.config.server}: {within}",
            server=self.config.server,
        )

    def _redirect(self, status: int, location: str | None, method: str, path: str) -> ApiError:
        to = f" to {location[:200]}" if location else ""
        return ApiError(
            status,
            "Redirect",
            f"{self.where(method, path)}: the API server answered HTTP {status} (a redirect{to}); "
            "redirects are not followed: check the server address of the kubeconfig's cluster",
            method=method,
            path=path,
        )

    def where(self, method: str, path: str) -> str:
        """``GET /api/v1/pods on https://host``: how errors name a request."""
        return f"{method} {path} on {self.config.server}"

    def deadline(self, seconds: float, why: str) -> Deadline:
        """An outer deadline ``seconds`` from now (see :meth:`request`'s ``until``); ``why`` is the
        error text once it passed."""
        return Deadline(seconds, self._clock() + seconds, why)

    def _read_body(
        self,
        response: httpx.Response,
        deadline: Deadline | None,
        method: str,
        path: str,
        *,
        limit: int | None = None,
        values: tuple[int, str] | None = None,
    ) -> bytes:
        """Read the body within the deadline and the ceilings; the response keeps it as ``.content``.

        An error body over ``limit`` is cut there (only its Status message matters); a success body over
        ``max_response_bytes`` (inflated) or ``max_values`` JSON values is an error raised as soon as
        it passes the ceiling, as is a body still arriving at the deadline (a server that trickles
        bytes defeats the per-read timeout).
        """
        cap = self.max_response_bytes if limit is None else limit
        most, name = (self.max_values, "MAX_DECODED_VALUES") if values is None else values
        where = self.where(method, path)
        chunks: list[bytes] = []
        size = 0
        counted = 0
        try:
            for chunk in decoded_chunks(response, where):
                size += len(chunk)
                if size > cap:
                    if limit is not None:
                        chunks.append(chunk[: len(chunk) - (size - cap)])
                        break
                    raise ApiError(
                        response.status_code,
                        "ResponseTooLarge",
                        f"{where}: the API server's response is larger than {cap} bytes (MAX_RESPONSE_BYTES)",
                        method=method,
                        path=path,
                    )
                if limit is None:
                    counted += value_count(chunk)
                    if counted > most:
                        raise too_many_values(response.status_code, where, most, name)
                chunks.append(chunk)
                if deadline is not None and self._clock() > deadline.at:
                    raise self._timed_out(method, path, deadline)
        except httpx.TimeoutException as exc:
            if deadline is not None:
                raise self._timed_out(method, path, deadline) from exc
            raise ConnectionFailedError(
                f"{method} {path} on {self.config.server}: the response stopped arriving",
                server=self.config.server,
            ) from exc
        except (httpx.TransportError, httpx.StreamError) as exc:
            reason, _ = _transport_reason(exc)
            raise ConnectionFailedError(
                f"{method} {path} on {self.config.server}: the response broke off: {reason}",
                server=self.config.server,
            ) from exc
        finally:
            response.close()
        body = b"".join(chunks)
        response._content = body  # what httpx's own read() stores; later .content is this body
        return body

    # --------------------------------------------------------------------------------------- reads

    def get(
        self, path: str, params: Mapping[str, Any] | None = None, *, until: Deadline | None = None
    ) -> dict[str, Any]:
        """GET and decode the JSON body (an object; anything else is an ApiError naming the request)."""
        response = self.request("GET", path, params=params, until=until)
        try:
            return self._json(response)
        finally:
            # httpx keeps a response in a reference cycle with its stream: freed only by the cyclic
            # collector, it would keep its body (a list page: megabytes) until then
            response._content = b""

    def get_document(
        self,
        path: str,
        *,
        accept: str | None = None,
        until: Deadline | None = None,
        values: tuple[int, str] | None = None,
    ) -> tuple[dict[str, Any], str]:
        """GET a JSON object with its Content-Type (discovery tells aggregated documents by it);
        ``values``: a value ceiling of its own, with its constant's name."""
        response = self.request("GET", path, accept=accept, until=until, values=values)
        return self._json(response), response.headers.get("content-type", "")

    def _json(self, response: httpx.Response) -> dict[str, Any]:
        """The body of a successful ``response`` as a JSON object (its values were counted as it was read)."""
        request = response.request
        where = self.where(request.method, request.url.raw_path.decode("ascii", "replace"))
        content = response.content
        try:
            doc = orjson.loads(content)
        except orjson.JSONDecodeError as exc:
            raise not_json(response.status_code, where, content, exc) from None
        if not isinstance(doc, dict):
            raise ApiError(
                response.status_code,
                "InvalidResponse",
                f"{where}: the API server sent JSON that is not an object ({type(doc).__name__})",
            )
        return doc

    def get_bytes(self, path: str, params: Mapping[str, Any] | None = None) -> bytes:
        return self.request("GET", path, params=params).content

    def list(
        self,
        path: str,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = DEFAULT_CHUNK_SIZE,
        resource_version: str | None = None,
        on_relist: Callable[[str], None] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Yield the List pages of ``path`` (each a decoded ``...List`` dict with ``items``).

        ``limit`` is the chunk size (0 = no paging). If the continue token expires (410), the list
        restarts from the first page once and ``on_relist(message)`` is called: objects from pages
        already yielded can then be yielded again, so deduplicate by ``metadata.uid``. A page over
        the byte or value ceiling is asked for again with half the ``limit`` (down to 1; the pages
        after it double back up to ``limit``); a list is stopped after :data:`MAX_LIST_PAGES`
        pages, :data:`MAX_LIST_ITEMS` objects or :data:`MAX_LIST_SECONDS` of requests.

        With ``list_ahead`` (the client's default) the next page is requested on a helper thread as
        soon as this one is in, while the caller handles it: the API server reads and encodes one
        page while the caller decodes and transforms the other (one page ahead, never more; the
        same requests and ceilings as one page at a time, and ``on_relist`` is called from the
        caller's thread).
        """
        base: dict[str, Any] = {
            "labelSelector": label_selector or None,
            "fieldSelector": field_selector or None,
            "resourceVersion": resource_version,
        }
        token: str | None = None
        relisted = False
        requested = limit
        pages = 0
        items = 0
        spent = 0.0  # seconds spent in this list's requests
        where = self.where("GET", path)
        ahead: _PageAhead | None = None  # the next page's request, sent while the caller has this one
        while True:
            if pages >= self.max_list_pages:
                raise ApiError(
                    200,
                    "TooManyPages",
                    f"{where}: the list did not end after {pages} pages (MAX_LIST_PAGES): "
                    "the API server keeps sending continue tokens",
                    method="GET",
                    path=path,
                )
            pages += 1
            left = self.max_list_seconds - spent
            why = _list_too_long(self.max_list_seconds, pages)
            if left <= 0:
                raise ConnectionFailedError(f"{where}: {why}", server=self.config.server)
            params = _page_params(base, limit, token)
            if ahead is not None and ahead.params == params:
                outcome, took = ahead.result()
            else:
                outcome, took = self._list_page(path, params, left, why)
            ahead = None
            spent += took
            try:
                if isinstance(outcome, Exception):
                    raise outcome
                page = outcome
            except GoneError as exc:
                if token is None or relisted:
                    raise
                relisted = True
                token = None
                if on_relist is not None:
                    on_relist(f"the list of {path} expired while paging ({exc.message}); listing again")
                continue
            except ApiError as exc:
                if exc.reason != "ResponseTooLarge" or limit <= 1:
                    raise
                limit //= 2  # a page over a ceiling: ask for the same page in halves
                continue
            limit = min(requested, limit * 2)  # after a halving, back up page by page
            if page.get("items") is None:
                page["items"] = []
            items += len(page["items"]) if isinstance(page["items"], list) else 0
            if items > self.max_list_items:
                raise ApiError(
                    200,
                    "TooManyItems",
                    f"{where}: the list holds more than {self.max_list_items} objects (MAX_LIST_ITEMS)",
                    method="GET",
                    path=path,
                )
            token = (page.get("metadata") or {}).get("continue") or None
            left = self.max_list_seconds - spent
            if token and self.list_ahead and pages < self.max_list_pages and left > 0:
                # The API server reads and encodes the next page while the caller decodes this one;
                # the next loop takes it if it asks for the same page (it does unless this one
                # failed), so every ceiling above applies to it as to any page.
                nxt = _page_params(base, limit, token)
                why = _list_too_long(self.max_list_seconds, pages + 1)
                ahead = _PageAhead(nxt, functools.partial(self._list_page, path, nxt, left, why))
            yield page
            if not token:
                return

    def _list_page(
        self, path: str, params: dict[str, Any], left: float, why: str
    ) -> tuple[dict[str, Any] | Exception, float]:
        """One list page within ``left`` seconds (``why``: the error text past them), or the error
        it ended in, with the seconds it took."""
        started = self._clock()
        try:
            return self.get(path, params, until=self.deadline(left, why)), self._clock() - started
        except Exception as exc:  # handed to the list's loop, which raises or handles it
            return exc, self._clock() - started

    def list_items(
        self,
        path: str,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = DEFAULT_CHUNK_SIZE,
        on_relist: Callable[[str], None] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Every item of every page, each once (deduplicated by uid after a relist)."""
        relisted = False

        def note(message: str) -> None:
            nonlocal relisted
            relisted = True
            if on_relist is not None:
                on_relist(message)

        seen: set[str] = set()
        for page in self.list(
            path, label_selector=label_selector, field_selector=field_selector, limit=limit, on_relist=note
        ):
            for item in page["items"]:
                uid = (item.get("metadata") or {}).get("uid")
                if uid:
                    if relisted and uid in seen:
                        continue
                    seen.add(uid)
                yield item

    def list_all(self, path: str, **kwargs: Any) -> builtins.list[dict[str, Any]]:
        """All items as one list (see :meth:`list_items`)."""
        return list(self.list_items(path, **kwargs))

    def open_watch(
        self,
        path: str,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
    ) -> WatchStream:
        """Open a watch (``?watch=1``) on ``path`` from ``resource_version``; use it as a context manager.

        The returned :class:`~workload_map.cluster.watch.WatchStream` yields every event (BOOKMARKs
        included) from :meth:`~workload_map.cluster.watch.WatchStream.events`; its ``close()`` may be
        called from another thread to interrupt a blocked read. HTTP errors (e.g. 410 for a too old
        resourceVersion) are raised here, before any event.
        """
        params: dict[str, Any] = {
            "watch": "1",
            "resourceVersion": resource_version,
            "labelSelector": label_selector or None,
            "fieldSelector": field_selector or None,
            "timeoutSeconds": timeout_seconds,
            "allowWatchBookmarks": "true" if allow_bookmarks else None,
        }
        read = None if timeout_seconds is None else timeout_seconds + 30.0
        response = self.request(
            "GET", path, params=params, stream=True, timeout=httpx.Timeout(15.0, read=read)
        )
        return WatchStream(response, path=path, server=self.server)

    def watch(
        self,
        path: str,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
        include_bookmarks: bool = False,
    ) -> Iterator[WatchEvent]:
        """Stream watch events (``?watch=1``) from ``resource_version`` until the server ends the watch.

        Raises :class:`GoneError` when the resourceVersion is too old (HTTP 410 or an ERROR event with
        code 410): list again and watch from the list's resourceVersion. BOOKMARK events only move
        the resourceVersion forward; they are yielded only with ``include_bookmarks``.
        """
        with self.open_watch(
            path,
            resource_version=resource_version,
            label_selector=label_selector,
            field_selector=field_selector,
            timeout_seconds=timeout_seconds,
            allow_bookmarks=allow_bookmarks,
        ) as stream:
            for event in stream.events():
                if event.type != "BOOKMARK" or include_bookmarks:
                    yield event

    # -------------------------------------------------------------------------------------- writes

    def create(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """POST ``body`` to a collection path."""
        return self._write("POST", path, body, field_manager, dry_run)

    def replace(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """PUT ``body`` (include ``metadata.resourceVersion`` for optimistic concurrency)."""
        return self._write("PUT", path, body, field_manager, dry_run)

    def _write(
        self, method: str, path: str, body: Mapping[str, Any], field_manager: str | None, dry_run: bool
    ) -> dict[str, Any]:
        params = {"fieldManager": field_manager, "dryRun": "All" if dry_run else None}
        response = self.request(
            method, path, params=params, content=orjson.dumps(body), content_type="application/json"
        )
        return self._json(response)

    def patch(
        self,
        path: str,
        body: Any,
        *,
        patch_type: PatchType = "merge",
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        resource_version: str | None = None,
    ) -> dict[str, Any]:
        """PATCH with a merge, JSON, strategic-merge or server-side-apply body.

        ``apply`` needs ``field_manager``; ``force=True`` takes over conflicting fields. With
        ``resource_version`` the patch is a precondition on it (a merge patch carries it in
        ``metadata``, a JSON patch replaces it first): the API server applies the patch only to
        that version and answers 409 (:class:`ConflictError`) if the object changed since.
        """
        if patch_type not in _PATCH_CONTENT_TYPES:
            raise ValueError(f"unknown patch type {patch_type!r}")
        if patch_type == "apply" and not field_manager:
            raise ValueError("server-side apply needs a field_manager")
        if resource_version is not None:
            body = _with_precondition(body, patch_type, resource_version)
        params = {
            "fieldManager": field_manager,
            "force": ("true" if force else "false") if force is not None and patch_type == "apply" else None,
            "dryRun": "All" if dry_run else None,
        }
        response = self.request(
            "PATCH",
            path,
            params=params,
            content=orjson.dumps(body),
            content_type=_PATCH_CONTENT_TYPES[patch_type],
            idempotent=patch_type == "apply",
        )
        return self._json(response)

    def delete(
        self,
        path: str,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        resource_version: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """DELETE; returns the deleted object (or the Status the server sent)."""
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if resource_version:
            options["preconditions"] = {"resourceVersion": resource_version}
        if dry_run:
            options["dryRun"] = ["All"]
        response = self.request(
            "DELETE", path, content=orjson.dumps(options), content_type="application/json"
        )
        return self._json(response)

    # ------------------------------------------------------------------------- status subresource

    def get_status(self, path: str) -> dict[str, Any]:
        return self.get(path + "/status")

    def replace_status(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self.replace(path + "/status", body)

    def patch_status(
        self,
        path: str,
        body: Any,
        *,
        patch_type: PatchType = "merge",
        field_manager: str | None = None,
        force: bool | None = None,
    ) -> dict[str, Any]:
        return self.patch(
            path + "/status", body, patch_type=patch_type, field_manager=field_manager, force=force
        )

    def server_version(self) -> dict[str, Any]:
        return self.get("/version")


@dataclass(frozen=True)
class Deadline:
    """A time limit: ``budget`` seconds, ending at the client clock's time ``at``; ``why`` says, once
    it passed, what was limited (empty: the request's own deadline)."""

    budget: float
    at: float
    why: str = ""


def _within(timeout: httpx.Timeout, left: float | None) -> httpx.Timeout:
    """``timeout`` with every phase shortened to the ``left`` seconds of the request's deadline."""
    if left is None:
        return timeout

    def cap(value: float | None) -> float:
        return left if value is None else min(value, left)

    return httpx.Timeout(
        connect=cap(timeout.connect), read=cap(timeout.read), write=cap(timeout.write), pool=cap(timeout.pool)
    )


def _with_precondition(body: Any, patch_type: PatchType, resource_version: str) -> Any:
    """``body`` with ``metadata.resourceVersion`` required to be ``resource_version``."""
    if patch_type == "json":
        if not isinstance(body, list):
            raise ValueError("a JSON patch is a list of operations")
        op = {"op": "replace", "path": "/metadata/resourceVersion", "value": resource_version}
        return [op, *body]
    if patch_type not in ("merge", "strategic") or not isinstance(body, Mapping):
        raise ValueError(f"a resourceVersion precondition needs a merge or JSON patch, not {patch_type!r}")
    meta = body.get("metadata")
    return {
        **body,
        "metadata": {**(meta if isinstance(meta, Mapping) else {}), "resourceVersion": resource_version},
    }


def _clean_params(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not params:
        return None
    return {k: v for k, v in params.items() if v is not None}


def _watch_event(line: bytes, path: str) -> WatchEvent | None:
    line = line.strip()
    if not line:
        return None
    doc = loads_bounded(line, f"the watch on {path}")
    if not isinstance(doc, dict):
        raise ApiError(200, "InvalidResponse", f"the watch on {path} sent a line that is not an object")
    kind = doc.get("type")
    obj = doc.get("object")
    if not isinstance(obj, dict):
        obj = {}
    if kind == "ERROR":
        code = int(obj.get("code") or 500)
        cls = _ERROR_TYPES.get(code, ApiError)
        raise cls(code, str(obj.get("reason") or ""), str(obj.get("message") or "watch error"), path=path)
    return WatchEvent(str(kind), obj)


def _page_params(base: Mapping[str, Any], limit: int, token: str | None) -> dict[str, Any]:
    """The query of one list page."""
    params = dict(base)
    if limit > 0:
        params["limit"] = limit
    if token:
        params["continue"] = token
        params["resourceVersion"] = None  # not allowed together with continue
    return params


def _list_too_long(seconds: float, page: int) -> str:
    return (
        f"the list took more than {seconds:g}s of requests (MAX_LIST_SECONDS); it was stopped at page {page}"
    )


class _PageAhead:
    """A list page requested on a helper thread while the caller handles the previous page (one
    page ahead, never more). Its outcome is taken with :meth:`result`; a list abandoned meanwhile
    leaves the request to finish within its own deadline, and its page to be dropped."""

    def __init__(
        self, params: dict[str, Any], fetch: Callable[[], tuple[dict[str, Any] | Exception, float]]
    ) -> None:
        self.params = params
        self._done = threading.Event()
        self._outcome: tuple[dict[str, Any] | Exception, float] = (
            ConnectionFailedError("the list's next page was not fetched"),
            0.0,
        )
        threading.Thread(target=self._run, args=(fetch,), name="wmap-list-ahead", daemon=True).start()

    def _run(self, fetch: Callable[[], tuple[dict[str, Any] | Exception, float]]) -> None:
        try:
            self._outcome = fetch()
        finally:
            self._done.set()

    def result(self) -> tuple[dict[str, Any] | Exception, float]:
        """The page or the error it ended in, and its seconds (waits at most the request's own
        deadline: the request is bounded by the list's seconds left)."""
        self._done.wait()
        return self._outcome
