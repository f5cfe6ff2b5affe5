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
