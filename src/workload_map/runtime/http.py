"""The small stdlib HTTP(S) server shared by the exporter and the operator's webhooks, bounded.

``http.server.ThreadingHTTPServer`` starts a thread per connection and a slow client holds its
thread as long as it likes. :class:`BoundedHTTPServer` instead:

- serves connections on a fixed pool of ``workers`` threads, with at most ``backlog`` connections
  waiting; a connection beyond that is answered ``503`` at once and closed;
- gives each request a deadline for its head (``header_timeout``: also the keep-alive idle time)
  and, when the handler reads one, its body (``body_timeout``). A watchdog thread shuts the socket of
  a connection past its deadline, so even a client trickling one byte at a time is cut off (a
  per-read timeout alone never fires then);
- does the TLS handshake on the worker, so a broken client cannot stall the accept loop.

:func:`parse_listen` reads the ``--listen`` address of every server command.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import socket
import ssl
import threading
import time
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


class BoundedRequestHandler(BaseHTTPRequestHandler):
    """A handler whose request head is read under the server's head deadline.

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
        try:
            super().handle_one_request()
        finally:
            self.server.watchdog.disarm(self.connection)

    def parse_request(self) -> bool:
        ok = super().parse_request()
        self.server.watchdog.disarm(self.connection)  # the head is in; the handler runs unhurried
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


class BoundedHTTPServer(HTTPServer):
    """An HTTPServer with a worker pool, a waiting-room limit, deadlines and optional TLS."""

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
        # Connections being served or waiting; a free slot is taken before a connection is queued.
        self._slots = threading.BoundedSemaphore(max(1, self.limits.workers) + max(0, self.limits.backlog))
        self._waiting: queue.SimpleQueue[tuple[socket.socket, Any] | None] = queue.SimpleQueue()
        self._workers = [
            threading.Thread(target=self._work, name=f"http-worker-{i}", daemon=True)
            for i in range(max(1, self.limits.workers))
        ]
        for worker in self._workers:
            worker.start()

    def process_request(self, request: Any, client_address: Any) -> None:
        if self._slots.acquire(blocking=False):
            self._waiting.put((request, client_address))
            return
        log.warning("too many connections: %s answered 503", client_address)
        with contextlib.suppress(OSError):
            request.setblocking(False)
            request.send(_BUSY)
        self.shutdown_request(request)

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
                self._slots.release()

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
