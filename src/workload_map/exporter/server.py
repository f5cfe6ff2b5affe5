"""The exporter's HTTP endpoints on a threaded stdlib server.

- ``/metrics``: the exposition, text format 0.0.4; gzip when ``Accept-Encoding`` accepts it (the
  workload families compressed once per change generation, see :mod:`.scrape`);
- ``/healthz``: 200 while the process serves requests;
- ``/readyz``: 200 once every informer has synced, else 503 with what is still syncing.
"""

from __future__ import annotations

import logging
import zlib
from typing import TYPE_CHECKING

from workload_map.exporter.exposition import CONTENT_TYPE
from workload_map.exporter.scrape import accepts_gzip, gzip_body
from workload_map.runtime.http import BoundedHTTPServer, BoundedRequestHandler, ServerLimits, ServerThread

if TYPE_CHECKING:
    from workload_map.exporter.collector import Exporter

__all__ = ["MetricsServer"]

log = logging.getLogger(__name__)

#: Bytes gathered per socket write of the exposition: under glibc's 128 KiB mmap threshold, which
#: the exporter fixes there (runtime/allocator.py), so each joined batch reuses heap memory. Batches
#: of 1 MiB were mapped and unmapped fresh on every write: ~10,000 page faults and 1.7x the CPU per
#: plain scrape of a 36 MB body (issue 24; measured against the same body, see bench_exporter).
WRITE_CHUNK = 64 * 1024
#: Bodies up to this size are sent as they are: compressing them saves nothing.
GZIP_MIN = 1024


class _Handler(BoundedRequestHandler):
    server: _Server

    def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
        self._send_parts(status, [body], content_type)

    def _gzip(self) -> bool:
        return accepts_gzip(self.headers.get("Accept-Encoding"))

    def _send_parts(
        self, status: int, parts: list[bytes], content_type: str, encoding: str | None = None
    ) -> None:
        """Write ``parts`` one after another: a large exposition is never copied into one body.
        Without an ``encoding`` they are gzipped here when the client accepts it."""
        vary = encoding is not None
        if encoding is None and sum(len(p) for p in parts) > GZIP_MIN and self._gzip():
            packer = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip framing
            parts = [c for c in (packer.compress(p) for p in parts) if c] + [packer.flush()]
            encoding, vary = "gzip", True
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(sum(len(p) for p in parts)))
        if encoding and encoding != "identity":
            self.send_header("Content-Encoding", encoding)
        if vary:
            self.send_header("Vary", "Accept-Encoding")
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
                body, tail = exporter.exposition()
                if body.size + len(tail) > GZIP_MIN and self._gzip():
                    parts, encoding = gzip_body(body, tail), "gzip"
                else:
                    parts, encoding = [*body.parts, tail], "identity"
            except Exception as exc:  # never kill the server thread
                log.exception("rendering metrics failed")
                self._send(500, f"rendering metrics failed: {exc}\n".encode())
                return
            self._send_parts(200, parts, CONTENT_TYPE, encoding)
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
