"""Bounded server: body size refused before reading, authentication before bodies, slow request
heads disconnected, idle and concurrent connections bounded (server/limits.py).

The mechanisms run under a real uvicorn on loopback with the same options ``wmap serve`` passes;
the ordering (auth first) runs against the real app on the test API server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.server.conftest import AppFactory
from workload_map.server.errors import HttpError
from workload_map.server.limits import BodyLimit, Limits, read_body, uvicorn_options

LIMITS = Limits(max_body=1000, body_timeout=0.5, header_timeout=0.5, keep_alive=0.5, max_connections=4)


def _app(limits: Limits) -> Starlette:
    async def echo(request: Request) -> JSONResponse:
        try:
            body = await read_body(request, limits)
        except HttpError as exc:
            return JSONResponse(exc.body(), status_code=exc.status)
        return JSONResponse({"size": len(body)})

    return Starlette(
        routes=[Route("/echo", echo, methods=["POST"])],
        middleware=[Middleware(BodyLimit, limit=limits.max_body)],
    )


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    config = uvicorn.Config(
        _app(LIMITS), host="127.0.0.1", port=port, log_level="error", **uvicorn_options(LIMITS)
    )
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(200):
        if srv.started:
            break
        time.sleep(0.05)
    yield "127.0.0.1", port
    srv.should_exit = True
    thread.join(10)


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


def test_header_size_is_bounded(server: tuple[str, int]) -> None:
    reply = _exchange(server, b"GET /echo HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (64 << 10) + b"\r\n\r\n")
    assert reply == b"" or reply.startswith(b"HTTP/1.1 4"), reply[:80]


def test_serve_passes_every_bound_to_uvicorn() -> None:
    opts = uvicorn_options(Limits())
    assert opts["limit_concurrency"] == 256
    assert opts["timeout_keep_alive"] == 5.0
    assert opts["h11_max_incomplete_event_size"] == 32 << 10
    assert opts["http"].header_timeout == 10.0


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
