"""The bounded stdlib server behind the exporter and the webhooks (issue #10): a fixed worker pool,
503 beyond the waiting room, head and body deadlines enforced against trickling clients, TLS
handshakes off the accept loop."""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from workload_map.runtime.http import (
    BoundedHTTPServer,
    BoundedRequestHandler,
    ServerLimits,
    ServerThread,
    parse_listen,
)


class Echo(BoundedRequestHandler):
    def do_GET(self) -> None:
        self._answer(200, b"ok")

    def do_POST(self) -> None:
        length = self.content_length()
        body = self.read_body(length or 0) if length else b""
        if body is None:
            return
        self._answer(200, body)

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def serve(request: pytest.FixtureRequest) -> Iterator[ServerThread]:
    limits = getattr(
        request, "param", ServerLimits(workers=2, backlog=1, header_timeout=1.0, body_timeout=1.0)
    )
    thread = ServerThread(BoundedHTTPServer(("127.0.0.1", 0), Echo, limits=limits), "test-http").start()
    yield thread
    thread.stop()


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    return sock


def trickle_until_closed(sock: socket.socket, data: bytes, pause: float) -> int:
    """Send ``data`` one byte per ``pause``; how many bytes went out before the server hung up."""
    sent = 0
    for byte in data:
        try:
            sock.send(bytes([byte]))
        except OSError:
            return sent
        sent += 1
        sock.settimeout(pause)
        try:
            if sock.recv(1024) == b"":
                return sent
        except TimeoutError:
            pass
        except OSError:
            return sent
    return sent


def test_parse_listen() -> None:
    assert parse_listen(":9090") == ("0.0.0.0", 9090)
    assert parse_listen("[::1]:80") == ("::1", 80)
    assert parse_listen("8080") == ("0.0.0.0", 8080)
    with pytest.raises(ValueError, match='invalid listen address "x:y"'):
        parse_listen("x:y")
    with pytest.raises(ValueError, match="port out of range"):
        parse_listen(":70000")


def test_a_client_trickling_its_request_head_is_cut_at_the_head_deadline(serve: ServerThread) -> None:
    head = b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 200 + b"\r\n\r\n"
    with connect(serve.port) as sock:
        sent = trickle_until_closed(sock, head, pause=0.1)
    # One byte per 0.1 s against a 1 s deadline: cut after about 10 bytes (a per-read timeout
    # would never fire); the whole head would need 24 s.
    assert sent < len(head) // 2


def test_a_client_trickling_its_body_is_cut_at_the_body_deadline(serve: ServerThread) -> None:
    with connect(serve.port) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 300\r\n\r\n")
        sent = trickle_until_closed(sock, b"b" * 300, pause=0.1)
    assert sent < 150


def test_connections_beyond_the_pool_and_waiting_room_get_503(serve: ServerThread) -> None:
    # Two workers held by idle connections, one connection waiting: the next one is refused at once.
    idle = [connect(serve.port) for _ in range(3)]
    try:
        for sock in idle:
            sock.sendall(b"G")  # each has reached the server (a slot is taken on accept)
        time.sleep(0.1)  # the accept loop runs on its own thread: let it take the three
        conn = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=30)
        conn.request("GET", "/")
        answer = conn.getresponse()
        assert answer.status == 503 and answer.getheader("Retry-After") == "1"
        conn.close()
    finally:
        for sock in idle:
            sock.close()


def test_after_the_slow_clients_are_cut_the_server_answers_again(serve: ServerThread) -> None:
    idle = [connect(serve.port) for _ in range(2)]
    try:
        for sock in idle:  # the head deadline ends both idle connections
            sock.settimeout(30)
            assert sock.recv(10) == b""
        conn = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=30)
        conn.request("POST", "/", body=b"hello")
        answer = conn.getresponse()
        assert answer.status == 200 and answer.read() == b"hello"
        conn.close()
    finally:
        for sock in idle:
            sock.close()


def test_keep_alive_requests_on_one_connection(serve: ServerThread) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=30)
    for i in range(5):
        conn.request("POST", "/", body=str(i).encode())
        assert conn.getresponse().read() == str(i).encode()
    conn.close()


def test_a_broken_tls_handshake_does_not_stall_other_clients(tmp_path: Path) -> None:
    import ssl

    from workload_map.operator.certs import ensure_certs

    files = ensure_certs(tmp_path, ["127.0.0.1"])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(files.cert), str(files.key))
    limits = ServerLimits(workers=2, backlog=4, header_timeout=1.0)
    thread = ServerThread(
        BoundedHTTPServer(("127.0.0.1", 0), Echo, limits=limits, ssl_context=context), "tls"
    ).start()
    try:
        silent = connect(thread.port)  # connects and never starts the handshake
        client_context = ssl.create_default_context(cafile=str(files.ca_cert))
        conn = http.client.HTTPSConnection("127.0.0.1", thread.port, timeout=30, context=client_context)
        conn.request("GET", "/")
        assert conn.getresponse().status == 200
        conn.close()
        silent.settimeout(30)
        assert silent.recv(10) == b""  # cut at the head deadline
        silent.close()
    finally:
        thread.stop()


# ------------------------------------------------------------------ issue #23: heads and clients


def start(limits: ServerLimits) -> ServerThread:
    return ServerThread(BoundedHTTPServer(("127.0.0.1", 0), Echo, limits=limits), "test-http").start()


def connect_from(port: int, source: str) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(30)
    sock.connect(("127.0.0.1", port))
    return sock


def ask(port: int, head: bytes, source: str = "127.0.0.1") -> bytes:
    with connect_from(port, source) as sock:
        sock.sendall(head)
        return sock.recv(65536)


def test_a_100_kb_request_head_is_answered_431(serve: ServerThread) -> None:
    # 50 lines of 2 KB: each under the stdlib's 64 KB line limit and within its 100 lines.
    pad = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"a" * 2000) for i in range(50))
    reply = ask(serve.port, b"GET / HTTP/1.1\r\nHost: x\r\n" + pad + b"\r\n")
    assert reply.startswith(b"HTTP/1.1 431 "), reply[:80]


def test_a_long_request_line_counts_toward_the_head(serve: ServerThread) -> None:
    reply = ask(serve.port, b"GET /" + b"a" * (40 << 10) + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 431 "), reply[:80]


def test_a_head_within_the_limit_and_its_body_pass(serve: ServerThread) -> None:
    pad = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"a" * 1000) for i in range(30))
    body = b"b" * (64 << 10)  # the body does not count toward the head
    head = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n" % len(body) + pad + b"\r\n"
    with connect_from(serve.port, "127.0.0.1") as sock:
        sock.sendall(head + body)
        reply = b""
        while len(reply) < len(body):
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 200 ") and reply.endswith(body)


def test_one_client_address_holds_at_most_max_per_client_connections() -> None:
    thread = start(ServerLimits(workers=4, backlog=16, header_timeout=30.0, max_per_client=2))
    held = [connect_from(thread.port, "127.0.0.2") for _ in range(2)]
    try:
        time.sleep(0.1)  # let the accept loop take both
        refused = connect_from(thread.port, "127.0.0.2")
        assert refused.recv(100).startswith(b"HTTP/1.1 503")
        refused.close()
        assert ask(thread.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200")
    finally:
        for sock in held:
            sock.close()
        thread.stop()


def test_silent_connections_hold_no_worker() -> None:
    # One worker; five connections that never send a byte wait in the waiting room, not on it.
    thread = start(ServerLimits(workers=1, backlog=8, header_timeout=30.0, max_per_client=8))
    silent = [connect_from(thread.port, "127.0.0.2") for _ in range(5)]
    try:
        for _ in range(3):
            assert ask(thread.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200")
    finally:
        for sock in silent:
            sock.close()
        thread.stop()


def test_when_every_slot_is_taken_the_oldest_silent_connection_makes_room() -> None:
    thread = start(ServerLimits(workers=1, backlog=1, header_timeout=30.0, max_per_client=8))
    first = connect_from(thread.port, "127.0.0.2")
    time.sleep(0.1)
    second = connect_from(thread.port, "127.0.0.3")
    time.sleep(0.1)
    try:
        assert ask(thread.port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 200")
        assert first.recv(10) == b""  # closed to make room
        second.settimeout(0.2)
        with pytest.raises(TimeoutError):
            second.recv(10)  # still waiting, untouched
    finally:
        first.close()
        second.close()
        thread.stop()
