"""The exporter's HTTP endpoints on a threaded stdlib server.

- ``/metrics``: the exposition (gzip when the client accepts it);
- ``/healthz``: 200 while the process serves requests;
- ``/readyz``: 200 once every informer has synced, else 503 with what is still syncing.
"""

from __future__ import annotations

import gzip
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from workload_map.exporter.exposition import CONTENT_TYPE

if TYPE_CHECKING:
    from workload_map.exporter.collector import Exporter

__all__ = ["MetricsServer", "parse_listen"]

log = logging.getLogger(__name__)


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
        raise ValueError(f"invalid listen address {value!r}: expected [HOST]:PORT") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"invalid listen address {value!r}: port out of range")
    return host or "0.0.0.0", number


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s - %s", self.address_string(), format % args)

    def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
        encoding = None
        if len(body) > 1024 and "gzip" in (self.headers.get("Accept-Encoding") or ""):
            body = gzip.compress(body, compresslevel=1)
            encoding = "gzip"
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        exporter = self.server.exporter
        if path == "/metrics":
            try:
                body = exporter.render()
            except Exception as exc:  # never kill the server thread
                log.exception("rendering metrics failed")
                self._send(500, f"rendering metrics failed: {exc}\n".encode())
                return
            self._send(200, body, CONTENT_TYPE)
        elif path == "/healthz":
            self._send(200, b"ok\n")
        elif path == "/readyz":
            if exporter.ready():
                self._send(200, b"ok\n")
            else:
                waiting = "\n".join(exporter.unsynced())
                self._send(503, f"not ready; waiting for:\n{waiting}\n".encode())
        elif path == "/":
            self._send(200, b"workload-map exporter: /metrics /healthz /readyz\n")
        else:
            self._send(404, b"not found\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], exporter: Exporter) -> None:
        self.exporter = exporter
        if ":" in address[0]:
            import socket

            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)


class MetricsServer:
    """Serve ``exporter`` on ``host:port`` (port 0 picks a free one; see :attr:`port`)."""

    def __init__(self, exporter: Exporter, host: str = "0.0.0.0", port: int = 9090) -> None:
        self._server = _Server((host, port), exporter)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> MetricsServer:
        self._thread = threading.Thread(target=self._server.serve_forever, name="wmap-http", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
