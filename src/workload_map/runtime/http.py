"""The small stdlib HTTP(S) server shared by the exporter and the operator's webhooks, bounded.

``http.server.ThreadingHTTPServer`` starts a thread per connection and a slow client holds its
thread as long as it likes. :class:`BoundedHTTPServer` instead:

- serves connections on a fixed pool of ``workers`` threads, with at most ``backlog`` more open;
- keeps a new connection in a waiting room (one selector thread, no worker) until its first bytes
  arrive: a connection that sends nothing never holds a worker, and is closed at the head deadline;
- lets one client address hold at most ``max_per_client`` connections (one more is answered ``503``
  and closed); when every slot is taken, a new connection closes the oldest silent one in the
  waiting room, and only when there is none is it answered ``503`` at once;
- gives each request a deadline for its head (``header_timeout``: also the keep-alive idle time)
  and, when the handler reads one, its body (``body_timeout``). A watchdog thread shuts the socket of
  a connection past its deadline, so even a client trickling one byte at a time is cut off (a
  per-read timeout alone never fires then);
- answers ``431`` to a request head (request line and headers) over ``max_header_bytes``; the
  stdlib alone allows 100 header lines of 64 KB each;
- does the TLS handshake on the worker, so a broken client cannot stall the accept loop.

:func:`parse_listen` reads the ``--listen`` address of every server command.
"""

from __future__ import annotations

import contextlib
import io
import logging
import queue
import selectors
import socket
import ssl
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, TypeVar

__all__ = ["BoundedHTTPServer", "BoundedRequestHandler", "ServerLimits", "ServerThread", "parse_listen"]

log = logging.getLogger(__name__)
_T = TypeVar("_T", bound="ServerThread")

_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\nConnection: close\r\n"
    b"Retry-After: 1\r\n\r\nbusy\n"
)
_HEAD_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 28\r\nConnection: close\r\n"
    b"\r\nthe request head is too big\n"
)


def parse_listen(value: str) -> tuple[str, int]:
    """``:9090``, ``0.0.0.0:9090``, ``[::1]:9090`` or ``9090`` -> (host, port); no host = all."""
    text = value.strip()
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]")
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f'invalid listen address "{value}": expected [HOST]:PORT') from None
    if not 0 <= number <= 65535:
        raise ValueError(f'invalid listen address "{value}": port out of range')
    return host or "0.0.0.0", number


@dataclass(frozen=True)
class ServerLimits:
    """Bounds of one server (see the module doc)."""

    workers: int = 16
    backlog: int = 64
    header_timeout: float = 10.0
    body_timeout: float = 10.0
    #: Per-read and per-write socket timeout (a stalled peer during the response).
    io_timeout: float = 30.0
    #: Connections one client address may hold (served, queued or in the waiting room).
    max_per_client: int = 16
    #: Bytes of a request head (request line and headers); 431 beyond.
    max_header_bytes: int = 32 << 10


class _Watchdog:
    """Shuts down sockets whose deadline passed (checked every ``tick`` seconds)."""

    def __init__(self, tick: float = 0.25) -> None:
        self._tick = tick
        self._lock = threading.Lock()
        self._deadlines: dict[int, tuple[socket.socket, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="http-watchdog", daemon=True)
        self._thread.start()

    def arm(self, sock: socket.socket, seconds: float) -> None:
        with self._lock:
            self._deadlines[id(sock)] = (sock, time.monotonic() + seconds)

    def disarm(self, sock: socket.socket) -> None:
        with self._lock:
            self._deadlines.pop(id(sock), None)

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self._tick):
            now = time.monotonic()
            with self._lock:
                late = [k for k, (_, at) in self._deadlines.items() if at <= now]
                socks = [self._deadlines.pop(k)[0] for k in late]
            for sock in socks:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


class _HeadTooLarge(Exception):
    pass


class _HeadReader:
    """The connection's reader while a request head is read: ``readline`` (how the stdlib reads the
    request line and the headers) is counted against ``limit`` bytes; ``read`` (bodies) is not."""

    def __init__(self, raw: io.BufferedIOBase, limit: int) -> None:
        self.raw = raw
        self.left = limit

    def readline(self, size: int = -1) -> bytes:
        want = self.left + 1 if size < 0 else min(size, self.left + 1)
        line = self.raw.readline(want)
        self.left -= len(line)
        if self.left < 0:
            raise _HeadTooLarge
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


class BoundedRequestHandler(BaseHTTPRequestHandler):
    """A handler whose request head is read under the server's head deadline and size limit.

    Subclasses call :meth:`read_body` for a request body (bounded by ``limit`` and the body deadline)
    and define ``do_GET``/``do_POST`` as usual.
    """

    server: BoundedHTTPServer
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.limits.io_timeout)

    def handle_one_request(self) -> None:
        # The deadline covers waiting for the next request on a kept-alive connection and its head.
        self.server.watchdog.arm(self.connection, self.server.limits.header_timeout)
        raw = self.rfile
        self.rfile = _HeadReader(raw, self.server.limits.max_header_bytes)  # type: ignore[assignment]
        try:
            super().handle_one_request()
        except _HeadTooLarge:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.wfile.write(_HEAD_TOO_LARGE)
        finally:
            self.rfile = raw
            self.server.watchdog.disarm(self.connection)

    def parse_request(self) -> bool:
        ok = super().parse_request()
        self.server.watchdog.disarm(self.connection)  # the head is in; the handler runs unhurried
        if isinstance(self.rfile, _HeadReader):
            self.rfile = self.rfile.raw  # the body is the handler's, bounded by read_body
        return ok

    def content_length(self) -> int | None:
        """The declared Content-Length, or None when it is missing, not a number or negative."""
        text = self.headers.get("Content-Length")
        if text is None or not text.strip().isdigit():
            return None
        return int(text)

    def read_body(self, length: int) -> bytes | None:
        """``length`` bytes of body read within the body deadline; None if the client is too slow."""
        self.server.watchdog.arm(self.connection, self.server.limits.body_timeout)
        try:
            data = self.rfile.read(length)
        except OSError:
            data = b""
        finally:
            self.server.watchdog.disarm(self.connection)
        if len(data) != length:
            self.close_connection = True
            return None
        return data

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - " + format, self.address_string(), *args)


class _WaitingRoom:
    """New connections wait here, on one selector thread, until their first bytes arrive (then they
    go to the workers' queue) or the head deadline passes (then they are closed). Oldest first, so
    that the server can close the oldest to make room. Only the room's thread touches the selector
    and closes waiting sockets (an evicted one is closed there a moment later)."""

    def __init__(self, server: BoundedHTTPServer) -> None:
        self._server = server
        self._lock = threading.Lock()
        self._waiting: OrderedDict[socket.socket, tuple[Any, float]] = OrderedDict()
        self._evicted: list[socket.socket] = []
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="http-waiting-room", daemon=True)
        self._thread.start()

    def add(self, sock: socket.socket, client_address: Any) -> None:
        with self._lock:
            self._waiting[sock] = (client_address, time.monotonic() + self._server.limits.header_timeout)
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def evict_oldest(self) -> Any:
        """Close the connection waiting longest; its client address (its slot is the caller's now),
        or None when nobody waits."""
        with self._lock:
            if not self._waiting:
                return None
            sock, (client_address, _) = self._waiting.popitem(last=False)
            self._evicted.append(sock)
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")
        return client_address

    def stop(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def _drop(self, sock: socket.socket) -> None:
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._selector.unregister(sock)
        self._server.shutdown_request(sock)

    def _run(self) -> None:
        registered: set[socket.socket] = set()
        while not self._stop.is_set():
            with self._lock:
                waiting = dict(self._waiting)
                evicted, self._evicted = self._evicted, []
            for sock in evicted:
                registered.discard(sock)
                self._drop(sock)
            for sock in waiting.keys() - registered:
                with contextlib.suppress(KeyError, ValueError, OSError):
                    self._selector.register(sock, selectors.EVENT_READ)
                registered.add(sock)
            registered &= waiting.keys()
            ready = self._selector.select(timeout=0.25)
            now = time.monotonic()
            for key, _ in ready:
                if key.fileobj is self._wake_r:
                    with contextlib.suppress(OSError):
                        self._wake_r.recv(4096)
                    continue
                if not isinstance(key.fileobj, socket.socket):
                    continue
                sock = key.fileobj
                with self._lock:
                    entry = self._waiting.pop(sock, None)
                with contextlib.suppress(KeyError, ValueError, OSError):
                    self._selector.unregister(sock)
                registered.discard(sock)
                if entry is not None:
                    self._server.hand_over(sock, entry[0])
            with self._lock:
                late = [(s, a) for s, (a, at) in self._waiting.items() if at <= now]
                for sock, _ in late:
                    del self._waiting[sock]
            for sock, client_address in late:
                registered.discard(sock)
                self._drop(sock)
                self._server.release(client_address)
        with self._lock:
            left = [*self._waiting, *self._evicted]
            self._waiting.clear()
            self._evicted.clear()
        for sock in left:
            self._drop(sock)


class BoundedHTTPServer(HTTPServer):
    """An HTTPServer with a worker pool, a waiting room, per-client limits, deadlines and optional TLS."""

    allow_reuse_address = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BoundedRequestHandler],
        *,
        limits: ServerLimits | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)
        self.limits = limits or ServerLimits()
        self.ssl_context = ssl_context
        self.watchdog = _Watchdog()
        # Connections open (served, queued or in the waiting room); a slot is taken on accept.
        self._slots = threading.BoundedSemaphore(max(1, self.limits.workers) + max(0, self.limits.backlog))
        self._per_client: dict[str, int] = {}
        self._clients_lock = threading.Lock()
        self._waiting: queue.SimpleQueue[tuple[socket.socket, Any] | None] = queue.SimpleQueue()
        self._room = _WaitingRoom(self)
        self._workers = [
            threading.Thread(target=self._work, name=f"http-worker-{i}", daemon=True)
            for i in range(max(1, self.limits.workers))
        ]
        for worker in self._workers:
            worker.start()

    @staticmethod
    def _client(client_address: Any) -> str:
        return str(client_address[0]) if isinstance(client_address, tuple) and client_address else ""

    def process_request(self, request: Any, client_address: Any) -> None:
        client = self._client(client_address)
        with self._clients_lock:
            full = self._per_client.get(client, 0) >= self.limits.max_per_client
            if not full:
                self._per_client[client] = self._per_client.get(client, 0) + 1
        if full:
            return self._refuse(request, client_address, "too many connections from this client")
        if not self._slots.acquire(blocking=False):
            evicted = self._room.evict_oldest()  # its slot passes to this connection
            if evicted is None:
                self._uncount(client)
                return self._refuse(request, client_address, "too many connections")
            self._uncount(self._client(evicted))
        self._room.add(request, client_address)

    def _refuse(self, request: socket.socket, client_address: Any, why: str) -> None:
        log.warning("%s: %s answered 503", why, client_address)
        with contextlib.suppress(OSError):
            request.setblocking(False)
            request.send(_BUSY)
        self.shutdown_request(request)

    def _uncount(self, client: str) -> None:
        with self._clients_lock:
            left = self._per_client.get(client, 0) - 1
            if left > 0:
                self._per_client[client] = left
            else:
                self._per_client.pop(client, None)

    def hand_over(self, request: socket.socket, client_address: Any) -> None:
        """A connection from the waiting room has sent its first bytes: to the workers."""
        self._waiting.put((request, client_address))

    def release(self, client_address: Any) -> None:
        """A connection ended: its slot and its client's count are free again."""
        self._uncount(self._client(client_address))
        self._slots.release()

    def _work(self) -> None:
        while True:
            item = self._waiting.get()
            if item is None:
                return
            request, client_address = item
            try:
                self._serve_one(request, client_address)
            except Exception:  # one connection's failure never ends a worker
                log.exception("serving %s failed", client_address)
            finally:
                self.shutdown_request(request)
                self.release(client_address)

    def _serve_one(self, request: socket.socket, client_address: Any) -> None:
        if self.ssl_context is None:
            self.finish_request(request, client_address)
            return
        self.watchdog.arm(request, self.limits.header_timeout)
        try:
            request.settimeout(self.limits.io_timeout)
            tls = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            log.debug("TLS handshake with %s failed: %s", client_address, exc)
            return
        finally:
            self.watchdog.disarm(request)
        try:
            self.finish_request(tls, client_address)
        finally:
            with contextlib.suppress(OSError):
                tls.close()

    def server_close(self) -> None:
        super().server_close()
        # Also called by HTTPServer.__init__ when the bind fails, before our attributes exist.
        watchdog = getattr(self, "watchdog", None)
        if watchdog is not None:
            watchdog.stop()
        room = getattr(self, "_room", None)
        if room is not None:
            room.stop()
        for _ in getattr(self, "_workers", ()):
            self._waiting.put(None)


class ServerThread:
    """A :class:`BoundedHTTPServer` running on a background thread."""

    def __init__(self, server: BoundedHTTPServer, name: str) -> None:
        self.server = server
        self._thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def start(self: _T) -> _T:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
