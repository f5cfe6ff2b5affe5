"""Bounded server: body size refused before reading, authentication before bodies, slow request
heads disconnected, request heads bounded, connections bounded per client address and in all
(the oldest half-open one makes room), API requests in flight bounded apart from the health
probes (server/limits.py).

The mechanisms run under a real uvicorn on loopback with the same options ``wmap serve`` passes,
over real sockets; a second client address is another loopback address (127.0.0.2...), so the
server sees distinct clients. The ordering (auth first) runs against the real app on the test API
server; the real app under a flood runs in tests/server/test_serve_flood.py."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.server.conftest import AppFactory, uvicorn_on_loopback
from workload_map.server.errors import HttpError
from workload_map.server.limits import (
    BodyLimit,
    HeadLimit,
    Limits,
    RequestLimit,
    read_body,
    uvicorn_options,
)

LIMITS = Limits(max_body=1000, body_timeout=0.5, header_timeout=0.5, keep_alive=0.5, max_connections=4)


class Gate:
    """``/slow`` requests wait here until the test opens it (requests in flight on demand)."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()
        self.waiting = 0
        self.loop: asyncio.AbstractEventLoop | None = None

    def open(self) -> None:
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.opened.set)


def _app(limits: Limits, gate: Gate | None = None) -> Starlette:
    async def echo(request: Request) -> JSONResponse:
        try:
            body = await read_body(request, limits)
        except HttpError as exc:
            return JSONResponse(exc.body(), status_code=exc.status)
        return JSONResponse({"size": len(body)})

    async def ping(_request: Request) -> JSONResponse:
        return JSONResponse({"pong": True})

    async def slow(_request: Request) -> JSONResponse:
        assert gate is not None
        gate.loop = asyncio.get_running_loop()
        gate.waiting += 1
        await gate.opened.wait()
        return JSONResponse({"slow": True})

    return Starlette(
        routes=[
            Route("/echo", echo, methods=["POST"]),
            Route("/ping", ping, methods=["GET"]),
            Route("/healthz", ping, methods=["GET"]),
            Route("/slow", slow, methods=["GET"]),
        ],
        middleware=[
            Middleware(HeadLimit, limit=limits.max_header_bytes),
            Middleware(RequestLimit, limit=limits.max_requests),
            Middleware(BodyLimit, limit=limits.max_body),
        ],
    )


@contextmanager
def running(limits: Limits, gate: Gate | None = None) -> Iterator[tuple[str, int]]:
    """The test app under a real uvicorn on loopback, with the options ``wmap serve`` passes."""
    with uvicorn_on_loopback(_app(limits, gate), limits) as port:
        yield "127.0.0.1", port


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    with running(LIMITS) as addr:
        yield addr


def _exchange(addr: tuple[str, int], raw: bytes, wait: float = 5.0) -> bytes:
    with socket.create_connection(addr, timeout=wait) as s:
        s.sendall(raw)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            out += chunk
            if (b"\r\n\r\n" in out and b'"}' in out) or out.endswith(b"}"):
                break
    return out


def test_declared_oversize_body_is_refused_without_reading(server: tuple[str, int]) -> None:
    # 300 MB announced, nothing sent: the answer comes from the headers alone.
    reply = _exchange(server, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 300000000\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 413"), reply[:80]
    assert b"larger than the allowed 1000 bytes" in reply


def test_chunked_oversize_body_is_stopped_at_the_limit(server: tuple[str, int]) -> None:
    chunk = b"x" * 600
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(3)) + b"0\r\n\r\n"
    reply = _exchange(server, b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + body)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:80]


def test_small_body_passes(server: tuple[str, int]) -> None:
    reply = _exchange(server, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
    assert reply.startswith(b"HTTP/1.1 200") and b'"size":5' in reply


def test_bad_content_length_is_a_400(server: tuple[str, int]) -> None:
    reply = _exchange(server, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 400"), reply[:80]


def test_slow_body_gets_408(server: tuple[str, int]) -> None:
    reply = _exchange(server, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
    assert reply.startswith(b"HTTP/1.1 408"), reply[:80]


def _closed_by_server(addr: tuple[str, int], first: bytes) -> bool:
    """Send a partial request head, then trickle nothing: does the server hang up by itself?"""
    with socket.create_connection(addr, timeout=10) as s:
        s.sendall(first)
        try:
            data = s.recv(100)
        except TimeoutError:
            return False
        return data == b""


def test_slow_request_head_is_disconnected(server: tuple[str, int]) -> None:
    assert _closed_by_server(server, b"POST /echo HTTP/1.1\r\nHost: x\r\n")


def test_idle_connection_is_disconnected(server: tuple[str, int]) -> None:
    assert _closed_by_server(server, b"")


def test_head_deadline_rearms_after_each_response(server: tuple[str, int]) -> None:
    with socket.create_connection(server, timeout=10) as s:
        s.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok")
        reply = b""
        while not reply.endswith(b"}"):
            reply += s.recv(65536)
        assert reply.startswith(b"HTTP/1.1 200")
        s.sendall(b"POST /echo HTTP/1.1\r\nHost: x\r\n")  # a second, partial head on keep-alive
        assert s.recv(100) == b""


def _head(size: int) -> bytes:
    """A GET /ping head of exactly ``size`` bytes (request line, headers, blank line)."""
    start = b"GET /ping HTTP/1.1\r\nHost: x\r\n"
    pad = size - len(start) - len(b"X-Pad: \r\n\r\n")
    return start + b"X-Pad: " + b"a" * pad + b"\r\n\r\n"


def test_a_100_kb_head_in_one_piece_is_answered_431(server: tuple[str, int]) -> None:
    # h11 bounds only heads that arrive in pieces; this one arrives whole and is measured.
    reply = _exchange(server, _head(100 << 10))
    assert reply.startswith(b"HTTP/1.1 431"), reply[:80]
    assert b"the request head is larger than the allowed 32768 bytes" in reply


def test_many_header_lines_count_together(server: tuple[str, int]) -> None:
    lines = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"a" * 1000) for i in range(40))
    reply = _exchange(server, b"GET /ping HTTP/1.1\r\nHost: x\r\n" + lines + b"\r\n")
    assert reply.startswith(b"HTTP/1.1 431"), reply[:80]


def test_a_head_arriving_in_pieces_past_the_limit_is_cut_before_it_ends() -> None:
    # The head never ends and the head deadline is far: only the size limit can end it.
    with running(Limits(header_timeout=60.0)) as addr, socket.create_connection(addr, timeout=30) as s:
        s.sendall(b"GET /ping HTTP/1.1\r\nHost: x\r\n")
        reply = b""
        try:
            for _ in range(1000):  # up to 1 MB, a KB at a time
                s.sendall(b"X-Pad: " + b"a" * 1000 + b"\r\n")
                time.sleep(0.002)
            reply = s.recv(200)
        except OSError:
            pass  # reset while sending: the server closed it
        assert reply == b"" or reply.startswith(b"HTTP/1.1 400"), reply[:80]


def test_a_head_within_the_limit_passes(server: tuple[str, int]) -> None:
    reply = _exchange(server, _head(30 << 10))
    assert reply.startswith(b"HTTP/1.1 200"), reply[:80]


def test_serve_passes_every_bound_to_uvicorn() -> None:
    opts = uvicorn_options(Limits())
    assert opts["limit_concurrency"] is None  # it would count idle and half-open connections
    assert opts["timeout_keep_alive"] == 5.0
    assert opts["h11_max_incomplete_event_size"] == 32 << 10
    assert opts["http"].header_timeout == 10.0
    table = opts["http"].table
    assert (table.limits.max_connections, table.limits.max_connections_per_client) == (512, 32)
    assert uvicorn_options(Limits())["http"].table is not table  # one table per server


def _connect(addr: tuple[str, int], source: str) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(10)
    sock.connect(addr)
    return sock


def _get(addr: tuple[str, int], path: str, source: str = "127.0.0.1") -> bytes:
    with _connect(addr, source) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        out = b""
        while b"\r\n\r\n" not in out or not out.rstrip().endswith(b"}"):
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
    return out


def _closed(sock: socket.socket) -> bool:
    try:
        data = sock.recv(4096)
    except TimeoutError:
        return False
    except OSError:
        return True
    return data == b"" or data.startswith(b"HTTP/1.1 503")


def _wait_until(check: Callable[[], bool]) -> bool:
    for _ in range(500):
        if check():
            return True
        time.sleep(0.01)
    return False


def test_one_client_cannot_hold_every_connection() -> None:
    limits = Limits(header_timeout=30.0, max_connections=64, max_connections_per_client=4)
    with running(limits) as addr:
        held = [_connect(addr, "127.0.0.2") for _ in range(4)]  # half-open: nothing sent
        try:
            extra = _connect(addr, "127.0.0.2")
            extra.settimeout(10)
            refused = extra.recv(4096)
            extra.close()
            assert refused.startswith(b"HTTP/1.1 503"), refused[:80]
            assert b"too many connections from 127.0.0.2 (at most 4)" in refused
            # Another client is served, again and again.
            for _ in range(3):
                assert _get(addr, "/ping").startswith(b"HTTP/1.1 200")
        finally:
            for s in held:
                s.close()


def test_at_the_connection_ceiling_the_oldest_half_open_connection_makes_room() -> None:
    limits = Limits(header_timeout=30.0, max_connections=4, max_connections_per_client=4)
    with running(limits) as addr:
        held = [_connect(addr, f"127.0.0.{i + 2}") for i in range(4)]
        try:
            time.sleep(0.2)  # accepted, in that order
            assert _get(addr, "/ping").startswith(b"HTTP/1.1 200")
            held[0].settimeout(10)
            assert _closed(held[0])  # the oldest silent one was closed for it
            for s in held[1:]:
                s.settimeout(0.05)
                assert not _closed(s)
        finally:
            for s in held:
                s.close()


@contextmanager
def two_slow_requests(limits: Limits, source: str) -> Iterator[tuple[str, int]]:
    """A server with two ``/slow`` requests from ``source`` in flight until the block ends."""
    gate = Gate()
    with running(limits, gate) as addr:
        busy = [_connect(addr, source) for _ in range(2)]
        try:
            for s in busy:
                s.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _wait_until(lambda: gate.waiting == 2)
            yield addr
        finally:
            gate.open()
            for s in busy:
                s.close()


def test_connections_busy_with_requests_are_never_evicted() -> None:
    limits = Limits(header_timeout=30.0, max_connections=2, max_connections_per_client=8)
    with two_slow_requests(limits, "127.0.0.2") as addr:
        refused = _get(addr, "/ping")
        assert refused.startswith(b"HTTP/1.1 503") and b"busy connections" in refused


def test_api_requests_in_flight_are_bounded_but_health_probes_are_not() -> None:
    with two_slow_requests(Limits(header_timeout=30.0, max_requests=2), "127.0.0.1") as addr:
        refused = _get(addr, "/ping")
        assert refused.startswith(b"HTTP/1.1 503"), refused[:80]
        assert b"the server is answering 2 requests; retry shortly" in refused
        assert _get(addr, "/healthz").startswith(b"HTTP/1.1 200")


@pytest.mark.cluster
def test_body_is_not_read_before_the_caller_is_authenticated(
    make_app: AppFactory, bearer: Callable[[str], dict[str, str]]
) -> None:
    client = make_app(enable_writes=True)
    anonymous = client.post("/api/v1/placement", content=b"{" * 500_000)
    assert anonymous.status_code == 401  # not 400 for the broken body: the body was never parsed
    too_big = client.post("/api/v1/placement", content=b" " * (2 << 20), headers=bearer("admin"))
    assert too_big.status_code == 413
    assert too_big.json()["error"] == "payload_too_large"
