"""KubeClient.open_watch / WatchStream against httpx.MockTransport (and one plain-HTTP socket server):
event decoding with bookmarks, ERROR events, a broken stream, and close() from another thread
interrupting a read that is blocked waiting for the next event."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from workload_map.cluster.client import KubeClient, WatchStream
from workload_map.cluster.kubeconfig import ClusterConfig
from workload_map.errors import ApiError, ConnectionFailedError, GoneError

ADDED = {"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "5"}}}
BOOKMARK = {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "6"}}}


def make(handler: Any) -> KubeClient:
    config = ClusterConfig(server="https://k8s.test", token="tok")
    return KubeClient(config, transport=httpx.MockTransport(handler), sleep=lambda _s: None)


class BlockingStream(httpx.SyncByteStream):
    """Sends ``lines``, then blocks until the response is closed (or ``fail`` raises after the lines)."""

    def __init__(self, lines: list[bytes], fail: BaseException | None = None) -> None:
        self.lines = lines
        self.fail = fail
        self.sent = threading.Event()
        self.released = threading.Event()

    def __iter__(self) -> Iterator[bytes]:
        yield from self.lines
        self.sent.set()
        if self.fail is not None:
            raise self.fail
        self.released.wait(30)

    def close(self) -> None:
        self.released.set()


def test_open_watch_params_and_events_include_bookmarks() -> None:
    seen: list[httpx.QueryParams] = []
    body = b"".join(orjson.dumps(x) + b"\n" for x in (ADDED, BOOKMARK)) + orjson.dumps(ADDED)

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req.url.params)
        return httpx.Response(200, content=body)

    client = make(handler)
    with client.open_watch(
        "/api/v1/pods", resource_version="4", label_selector="a=b", timeout_seconds=60
    ) as stream:
        assert isinstance(stream, WatchStream)
        events = [(e.type, e.resource_version) for e in stream.events()]
    assert events == [("ADDED", "5"), ("BOOKMARK", "6"), ("ADDED", "5")]  # last line without newline
    params = seen[0]
    assert params["watch"] == "1" and params["resourceVersion"] == "4"
    assert params["labelSelector"] == "a=b" and params["timeoutSeconds"] == "60"
    assert params["allowWatchBookmarks"] == "true" and "fieldSelector" not in params
    assert stream.closed


def test_error_events_and_bad_lines_raise() -> None:
    gone = {
        "type": "ERROR",
        "object": {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"},
    }
    client = make(lambda r: httpx.Response(200, content=orjson.dumps(ADDED) + b"\n" + orjson.dumps(gone)))
    with client.open_watch("/x") as stream, pytest.raises(GoneError, match="too old"):
        list(stream.events())
    forbidden = {"type": "ERROR", "object": {"code": 403, "reason": "Forbidden", "message": "no"}}
    client = make(lambda r: httpx.Response(200, content=orjson.dumps(forbidden) + b"\n"))
    with client.open_watch("/x") as stream, pytest.raises(ApiError, match="no") as info:
        list(stream.events())
    assert info.value.status == 403
    client = make(lambda r: httpx.Response(200, content=b"not json\n"))
    with client.open_watch("/x") as stream, pytest.raises(ApiError, match="not JSON"):
        list(stream.events())


def test_http_410_is_raised_by_open_watch() -> None:
    body = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old resource version"}
    client = make(lambda r: httpx.Response(410, json=body))
    with pytest.raises(GoneError, match="too old resource version"):
        client.open_watch("/x", resource_version="1")


def test_a_broken_stream_is_a_connection_error() -> None:
    stream_body = BlockingStream([orjson.dumps(ADDED) + b"\n"], fail=httpx.ReadError("peer reset"))
    client = make(lambda r: httpx.Response(200, stream=stream_body))
    got: list[str] = []
    with client.open_watch("/api/v1/pods") as stream, pytest.raises(ConnectionFailedError) as info:
        for event in stream.events():
            got.append(event.type)
    assert got == ["ADDED"]
    assert "the watch on /api/v1/pods broke: peer reset" in str(info.value)


def test_close_from_another_thread_ends_a_blocked_iteration() -> None:
    body = BlockingStream([orjson.dumps(ADDED) + b"\n"])
    client = make(lambda r: httpx.Response(200, stream=body))
    stream = client.open_watch("/x")
    got: list[str] = []
    errors: list[BaseException] = []

    def consume() -> None:
        try:
            for event in stream.events():
                got.append(event.type)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    thread = threading.Thread(target=consume)
    thread.start()
    assert body.sent.wait(30)
    stream.close()
    stream.close()  # idempotent
    thread.join(30)
    assert not thread.is_alive()
    assert got == ["ADDED"] and errors == []
    assert stream.closed


def _serve_one_watch(listener: socket.socket, first_line: bytes, done: threading.Event) -> None:
    conn, _ = listener.accept()
    with conn:
        conn.recv(65536)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"%x\r\n" % len(first_line)
            + first_line
            + b"\r\n"
        )
        done.wait(30)  # then keep the connection open without sending: the client's read blocks


def test_close_shuts_a_real_socket_down() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    done = threading.Event()
    server = threading.Thread(
        target=_serve_one_watch, args=(listener, orjson.dumps(ADDED) + b"\n", done), daemon=True
    )
    server.start()
    port = listener.getsockname()[1]
    client = KubeClient(ClusterConfig(server=f"http://127.0.0.1:{port}"), sleep=lambda _s: None)
    got: list[str] = []
    errors: list[BaseException] = []
    first = threading.Event()
    try:
        stream = client.open_watch("/api/v1/pods", timeout_seconds=600)

        def consume() -> None:
            try:
                for event in stream.events():
                    got.append(event.type)
                    first.set()
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        thread = threading.Thread(target=consume)
        thread.start()
        assert first.wait(30)
        stream.close()
        thread.join(30)
        assert not thread.is_alive()
        assert got == ["ADDED"] and errors == []
    finally:
        done.set()
        client.close()
        listener.close()
        server.join(30)
