"""Bounds on what one client can make ``wmap serve`` hold: request bodies (size and time),
request heads (size and time), idle keep-alive connections, open connections (in all and per
client address) and API requests in flight.

Sizes are refused before they are read: a ``Content-Length`` over the limit is answered 413
without reading a byte, and a chunked body is counted as it arrives. Handlers that take a body
authenticate the caller first (app.py), so an anonymous client can make the server read at most
``max_body`` bytes per connection.

Connections (:class:`ConnectionTable`, :class:`BoundedH11Protocol`): a connection must bring a
complete request head within ``header_timeout`` (also after each response), else it is closed; a
client address holds at most ``max_connections_per_client`` connections (one more is answered 503
and closed); at ``max_connections`` in all, a new connection closes the oldest connection still
waiting for its request head (half-open and slow ones: no request of theirs is lost), and only when
every connection is busy with a request is the new one refused. A head larger than
``max_header_bytes`` is answered 431 (:class:`HeadLimit`: h11 stops a head arriving in pieces at
that size, the parsed head is measured whatever the pieces). API requests beyond ``max_requests``
in flight are answered 503 (:class:`RequestLimit`); ``/healthz`` and ``/readyz`` are never counted
nor refused there and run outside the thread pool of the API handlers (app.py), so a flood of API
traffic or of unauthenticated connections cannot make a probe fail.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from workload_map.server.errors import HttpError, send_error

log = logging.getLogger(__name__)

#: Paths answered whatever the load: never counted in ``max_requests``, never in the API's thread pool.
HEALTH_PATHS = frozenset({"/healthz", "/readyz"})


@dataclass(frozen=True)
class Limits:
    max_body: int = 1 << 20  # bytes: a Karta definition or a placement request is far smaller
    body_timeout: float = 10.0  # seconds to receive a whole body once the handler asks for it
    header_timeout: float = 10.0  # seconds from connecting (or the last response) to a full request head
    max_header_bytes: int = 32 << 10  # request line + headers, answered 431 beyond
    keep_alive: float = 5.0  # seconds an idle keep-alive connection stays open
    max_connections: int = 512  # open connections in all (the oldest waiting for a head is closed)
    max_connections_per_client: int = 32  # open connections per client address (503 beyond)
    max_requests: int = 256  # API requests in flight (503 beyond; health probes not counted)


class BodyTooLarge(Exception):
    pass


def _too_large(limit: int) -> HttpError:
    return HttpError(413, "payload_too_large", f"the request body is larger than the allowed {limit} bytes")


class BodyLimit:
    """ASGI middleware: 413 for a declared ``Content-Length`` over the limit (nothing read), and
    a receive() that stops a chunked body at the limit."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = None
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    bad = HttpError(400, "invalid_request", "Content-Length is not a number")
                    await send_error(send, bad)
                    return
        if declared is not None and declared > self.limit:
            await send_error(send, _too_large(self.limit))
            return
        seen = 0

        async def bounded_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge
            return message

        await self.app(scope, bounded_receive, send)


async def read_body(request: Any, limits: Limits) -> bytes:
    """The whole body within ``limits`` (size and time), as HttpError 413/408 otherwise."""
    chunks: list[bytes] = []
    size = 0

    async def collect() -> None:
        nonlocal size
        async for chunk in request.stream():
            size += len(chunk)
            if size > limits.max_body:
                raise _too_large(limits.max_body)
            chunks.append(chunk)

    try:
        await asyncio.wait_for(collect(), timeout=limits.body_timeout)
    except asyncio.TimeoutError:
        raise HttpError(
            408, "request_timeout", f"the request body did not arrive within {limits.body_timeout:g} s"
        ) from None
    except BodyTooLarge:
        raise _too_large(limits.max_body) from None
    return b"".join(chunks)


def head_size(scope: Scope) -> int:
    """The bytes of a request's head as sent: request line and header lines (h11 drops only the
    blanks around values and the final empty line)."""
    size = len(scope.get("method", "")) + len(scope.get("raw_path") or b"") + 12
    query = scope.get("query_string") or b""
    if query:
        size += len(query) + 1
    for name, value in scope.get("headers", ()):
        size += len(name) + len(value) + 4
    return size


class HeadLimit:
    """ASGI middleware: 431 for a request head over ``limit`` bytes, and the connection closed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and head_size(scope) > self.limit:
            error = HttpError(
                431,
                "request_header_fields_too_large",
                f"the request head is larger than the allowed {self.limit} bytes",
            )
            await send_error(send, error, close=True)
            return
        await self.app(scope, receive, send)


class RequestLimit:
    """ASGI middleware: at most ``limit`` API requests in flight (503 beyond); the health paths are
    neither counted nor refused."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in HEALTH_PATHS:
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.limit:
            busy = HttpError(503, "busy", f"the server is answering {self.limit} requests; retry shortly")
            await send_error(send, busy, close=True)
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1


class ConnectionTable:
    """The open connections of one server by client address, and those waiting for a request head
    (oldest first); used on the event loop only, so it needs no lock."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.per_client: dict[str, int] = {}
        self._client_of: dict[BoundedH11Protocol, str] = {}
        self._waiting: OrderedDict[BoundedH11Protocol, None] = OrderedDict()
        #: Connections refused and waiting ones closed to make room (tests and diagnostics).
        self.refused = 0
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._client_of)

    def admit(self, conn: BoundedH11Protocol, client: str) -> str | None:
        """Register ``conn``; the reason it is refused, or None."""
        if self.per_client.get(client, 0) >= self.limits.max_connections_per_client:
            self.refused += 1
            return f"too many connections from {client} (at most {self.limits.max_connections_per_client})"
        if len(self._client_of) >= self.limits.max_connections:
            if not self._waiting:
                self.refused += 1
                return f"the server holds {self.limits.max_connections} busy connections"
            oldest, _ = self._waiting.popitem(last=False)
            self.evicted += 1
            self.release(oldest)
            oldest.transport.close()
        self._client_of[conn] = client
        self.per_client[client] = self.per_client.get(client, 0) + 1
        return None

    def waiting(self, conn: BoundedH11Protocol, is_waiting: bool) -> None:
        """``conn`` waits for a request head (since now), or is busy with a request."""
        if is_waiting and conn in self._client_of:
            self._waiting[conn] = None
            self._waiting.move_to_end(conn)
        else:
            self._waiting.pop(conn, None)

    def release(self, conn: BoundedH11Protocol) -> None:
        self._waiting.pop(conn, None)
        client = self._client_of.pop(conn, None)
        if client is not None:
            left = self.per_client[client] - 1
            if left:
                self.per_client[client] = left
            else:
                del self.per_client[client]


def _busy_response(reason: str) -> bytes:
    body = f'{{"error":"busy","message":"{reason}","hint":"","status":503}}'.encode()
    return (
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n"
        b"retry-after: 1\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    )


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol under the connection bounds of the module doc: a deadline for each
    request head (a client that connects, or finishes a request, and then sends its head slowly
    or not at all is disconnected; uvicorn's own keep-alive timeout only covers silent
    connections), and admission through the server's :class:`ConnectionTable`."""

    header_timeout = Limits.header_timeout
    table: ConnectionTable

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._answered_cycle: object = None
        self._head_timer: asyncio.TimerHandle | None = None
        refused = self.table.admit(self, self.client[0] if self.client else "")
        if refused is not None:
            log.warning("connection refused: %s", refused)
            transport.write(_busy_response(refused))
            transport.close()
            return
        self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._answered_cycle = self.cycle
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_expired)
        self.table.waiting(self, True)

    def _head_expired(self) -> None:
        self._head_timer = None
        if self.cycle is self._answered_cycle and not self.transport.is_closing():
            self.transport.close()  # no new request head arrived in time

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():
            return  # refused or closed: nothing more is read
        super().data_received(data)
        if self._head_timer is not None and self.cycle is not self._answered_cycle:
            self._head_timer.cancel()
            self._head_timer = None
            self.table.waiting(self, False)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        self.table.release(self)
        super().connection_lost(exc)


def uvicorn_options(limits: Limits) -> dict[str, Any]:
    """The uvicorn.run keyword arguments that enforce ``limits`` (one connection table per call:
    one per server). uvicorn's own ``limit_concurrency`` is off: it counts every open connection,
    so idle and half-open ones would make it refuse health probes."""
    protocol = type(
        "WmapH11Protocol",
        (BoundedH11Protocol,),
        {"header_timeout": limits.header_timeout, "table": ConnectionTable(limits)},
    )
    return {
        "http": protocol,
        "limit_concurrency": None,
        "timeout_keep_alive": limits.keep_alive,
        "h11_max_incomplete_event_size": limits.max_header_bytes,
    }
