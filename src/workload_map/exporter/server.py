"""The exporter's HTTP endpoints on a threaded stdlib server.

- ``/metrics``: the exposition (gzip when the client accepts it);
- ``/healthz``: 200 while the process serves requests;
- ``/readyz``: 200 once every informer has synced, else 503 with what is still syncing.
"""

from __future__ import annotations

import logging
import zlib
from typing import TYPE_CHECKING

from workload_map.exporter.exposition import CONTENT_TYPE
from workload_map.runtime.http import BoundedHTTPServer, BoundedRequestHandler, ServerLimits, ServerThread

if TYPE_CHECKING:
    from workload_map.exporter.collector import Exporter

__all__ = ["MetricsServer"]

log = logging.getLogger(__name__)

#: Bytes gathered per socket write of the exposition.
WRITE_CHUNK = 1 << 20


class _Handler(BoundedRequestHandler):
    server: _Server

    def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
        self._send_parts(status, [body], content_type)

    def _send_parts(self, status: int, parts: list[bytes], content_type: str) -> None:
        """Write ``parts`` one after another: a large exposition is never copied into one body
        (gzip compresses piece by piece into a much smaller list)."""
        encoding = None
        if sum(len(p) for p in parts) > 1024 and "gzip" in (self.headers.get("Accept-Encoding") or ""):
            packer = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip framing
            parts = [c for c in (packer.compress(p) for p in parts) if c] + [packer.flush()]
            encoding = "gzip"
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(sum(len(p) for p in parts)))
        if encoding:
            self.send_header("Content-Encoding", encoding)
        self.end_headers()
        if self.command != "HEAD":
            batch: list[bytes] = []
            size = 0
            for part in parts:  # about WRITE_CHUNK bytes per write: few syscalls, no full copy
                batch.append(part)
                size += len(part)
                if size >= WRITE_CHUNK:
                    self.wfile.write(b"".join(batch))
                    batch, size = [], 0
            if batch:
                self.wfile.write(b"".join(batch))

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        exporter = self.server.exporter
        if path == "/metrics":
            try:
                parts = exporter.render_parts()
            except Exception as exc:  # never kill the server thread
                log.exception("rendering metrics failed")
                self._send(500, f"rendering metrics failed: {exc}\n".encode())
                return
            self._send_parts(200, parts, CONTENT_TYPE)
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


class _Server(BoundedHTTPServer):
    def __init__(self, address: tuple[str, int], exporter: Exporter, limits: ServerLimits | None) -> None:
        self.exporter = exporter
        super().__init__(address, _Handler, limits=limits)


class MetricsServer(ServerThread):
    """Serve ``exporter`` on ``host:port`` (port 0 picks a free one; see :attr:`port`)."""

    def __init__(
        self, exporter: Exporter, host: str = "0.0.0.0", port: int = 9090, limits: ServerLimits | None = None
    ) -> None:
        super().__init__(_Server((host, port), exporter, limits), "wmap-http")

    def serve_forever(self) -> None:
        self.server.serve_forever()
