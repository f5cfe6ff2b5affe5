"""An open watch (``?watch=1``) response that another thread can interrupt.

:meth:`KubeClient.open_watch <workload_map.cluster.client.KubeClient.open_watch>` returns a
:class:`WatchStream`: a context manager whose :meth:`WatchStream.events` yields the decoded
:class:`~workload_map.cluster.client.WatchEvent` objects (BOOKMARKs included) until the server ends
the watch, and whose :meth:`WatchStream.close` may be called from any thread: it shuts the
connection's socket down so that a read blocked in :meth:`WatchStream.events` returns at once, and
the iteration then simply ends (no error).

Errors: an ``ERROR`` event raises the matching :class:`~workload_map.errors.ApiError` subclass
(:class:`~workload_map.errors.GoneError` for 410); a line that is not JSON, longer than
:data:`MAX_EVENT_BYTES` or holding more than
:data:`~workload_map.cluster.decode.MAX_DECODED_VALUES` values raises
:class:`~workload_map.errors.ApiError`; a broken connection (not caused by :meth:`close`) raises
:class:`~workload_map.errors.ConnectionFailedError`. A gzipped stream is inflated piece by piece
(cluster/decode.py).
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from workload_map.cluster.decode import decoded_chunks
from workload_map.errors import ApiError, ConnectionFailedError

if TYPE_CHECKING:
    from types import TracebackType

    from workload_map.cluster.client import WatchEvent

__all__ = ["MAX_EVENT_BYTES", "WatchStream"]

#: Longest watch event line accepted (objects are at most a few MB; an endless line is an error).
MAX_EVENT_BYTES = 64 * 1024 * 1024


class _StreamingResponse(Protocol):
    """What :class:`WatchStream` needs of a response (an ``httpx.Response`` opened with ``stream=True``)."""

    @property
    def extensions(self) -> Any: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    def iter_raw(self) -> Iterator[bytes]: ...

    def close(self) -> None: ...


class WatchStream:
    """One watch response; iterate :meth:`events` once, close from any thread."""

    def __init__(self, response: _StreamingResponse, *, path: str, server: str | None = None) -> None:
        self.path = path
        self.server = server
        self._response = response
        self._lock = threading.Lock()
        self._closed = False

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has been called (by any thread)."""
        return self._closed

    def __enter__(self) -> WatchStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Interrupt a blocked read and release the connection. Thread-safe and idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        sock = None
        network_stream = None
        with contextlib.suppress(Exception):
            network_stream = self._response.extensions.get("network_stream")
        if network_stream is not None:
            with contextlib.suppress(Exception):
                sock = network_stream.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(Exception):
            self._response.close()

    def lines(self) -> Iterator[bytes]:
        """The raw newline-delimited lines of the response (without the newline)."""
        from workload_map.cluster.client import _transport_reason

        pending: list[bytes] = []  # pieces of a line not yet ended (joined once: no quadratic +=)
        pending_size = 0
        try:
            for chunk in decoded_chunks(self._response, f"the watch on {self.path}"):
                if self._closed:
                    return
                if b"\n" not in chunk:
                    pending.append(chunk)
                    pending_size += len(chunk)
                    if pending_size > MAX_EVENT_BYTES:
                        raise ApiError(
                            200,
                            "ResponseTooLarge",
                            f"the watch on {self.path} sent an event over {MAX_EVENT_BYTES} bytes",
                        )
                    continue
                first, *lines, rest = chunk.split(b"\n")
                pending.append(first)
                yield b"".join(pending)
                yield from lines
                pending = [rest]
                pending_size = len(rest)
        except (httpx.TransportError, httpx.StreamError, OSError) as exc:
            if self._closed:
                return  # interrupted by close(): a normal end
            reason, _ = _transport_reason(exc)
            raise ConnectionFailedError(
                f"the watch on {self.path} broke: {reason}", server=self.server
            ) from exc
        if self._closed:
            return
        buffer = b"".join(pending)
        if buffer.strip():
            yield buffer

    def events(self) -> Iterator[WatchEvent]:
        """Decoded events (ADDED, MODIFIED, DELETED, BOOKMARK) until the watch ends or is closed."""
        from workload_map.cluster.client import _watch_event

        for line in self.lines():
            event = _watch_event(line, self.path)
            if event is not None:
                yield event
