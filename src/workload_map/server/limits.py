"""Bounds on what one client can make ``wmap serve`` hold: request bodies (size and time),
request headers (size and time), idle keep-alive connections and open connections.

Sizes are refused before they are read: a ``Content-Length`` over the limit is answered 413
without reading a byte, and a chunked body is counted as it arrives. Handlers that take a body
authenticate the caller first (app.py), so an anonymous client can make the server read at most
``max_body`` bytes per connection, and at most ``max_connections`` connections are served.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from workload_map.server.errors import HttpError, send_error


@dataclass(frozen=True)
class Limits:
    max_body: int = 1 << 20  # bytes: a Karta definition or a placement request is far smaller
    body_timeout: float = 10.0  # seconds to receive a whole body once the handler asks for it
    header_timeout: float = 10.0  # seconds from connecting (or the last response) to a full request head
    max_header_bytes: int = 32 << 10
    keep_alive: float = 5.0  # seconds an idle keep-alive connection stays open
    max_connections: int = 256  # beyond this uvicorn answers 503


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


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for each request head: a client that connects (or
    finishes a request) and then sends its headers slowly is disconnected, instead of holding a
    connection forever. uvicorn's own keep-alive timeout only covers silent connections."""

    header_timeout = Limits.header_timeout

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._answered_cycle: object = None
        self._head_timer: asyncio.TimerHandle | None = None
        self._arm_head_timer()

    def _arm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._answered_cycle = self.cycle
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_expired)

    def _head_expired(self) -> None:
        self._head_timer = None
        if self.cycle is self._answered_cycle and not self.transport.is_closing():
            self.transport.close()  # no new request head arrived in time

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._head_timer is not None and self.cycle is not self._answered_cycle:
            self._head_timer.cancel()
            self._head_timer = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        super().connection_lost(exc)


def uvicorn_options(limits: Limits) -> dict[str, Any]:
    """The uvicorn.run keyword arguments that enforce ``limits``."""
    protocol = type("WmapH11Protocol", (BoundedH11Protocol,), {"header_timeout": limits.header_timeout})
    return {
        "http": protocol,
        "limit_concurrency": limits.max_connections,
        "timeout_keep_alive": limits.keep_alive,
        "h11_max_incomplete_event_size": limits.max_header_bytes,
    }
