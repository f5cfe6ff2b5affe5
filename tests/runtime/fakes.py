"""A scripted stand-in for KubeClient's list/open_watch, for informer unit tests (the watch lines go
through the real :class:`~workload_map.cluster.watch.WatchStream`)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from workload_map.cluster.watch import WatchStream
from workload_map.errors import ConnectionFailedError, GoneError


def obj(name: str, rv: int, uid: str | None = None, ns: str = "ns", **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": ns,
            "resourceVersion": str(rv),
            "uid": uid or f"uid-{name}",
            "managedFields": [{"manager": "x"}],
        },
        **extra,
    }


class FakeResponse:
    def __init__(self, lines: list[bytes], block: threading.Event | None = None) -> None:
        self.lines = lines
        self.block = block
        self.extensions: dict[str, Any] = {}
        self.headers: dict[str, str] = {}
        self.closed = False

    def iter_raw(self) -> Iterator[bytes]:
        for line in self.lines:
            yield line + b"\n"
        if self.block is not None:
            self.block.wait(10)

    def close(self) -> None:
        self.closed = True
        if self.block is not None:
            self.block.set()


class FakeClient:
    """``lists``: list results in order (each a (items, rv) pair, or an exception); ``watches``:
    watch results in order (each a list of (type, object) events, or an exception). When the
    script runs out, a watch blocks until the informer stops it."""

    server = "https://fake"

    def __init__(self) -> None:
        self.lists: list[tuple[list[dict[str, Any]], str] | BaseException] = []
        self.watches: list[list[tuple[str, dict[str, Any]]] | BaseException] = []
        self.list_calls = 0
        self.watch_params: list[Mapping[str, Any]] = []
        self.idle = threading.Event()
        self.lock = threading.Lock()

    def list(self, path: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
        with self.lock:
            self.list_calls += 1
            step = self.lists.pop(0)
        if isinstance(step, BaseException):
            raise step
        items, rv = step
        half = len(items) // 2
        yield {"metadata": {"resourceVersion": rv, "continue": "x"}, "items": items[:half]}
        yield {"metadata": {"resourceVersion": rv}, "items": items[half:]}

    def open_watch(
        self,
        path: str,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
    ) -> WatchStream:
        params = {
            "resourceVersion": resource_version,
            "labelSelector": label_selector,
            "fieldSelector": field_selector,
            "timeoutSeconds": timeout_seconds,
            "allowWatchBookmarks": "true" if allow_bookmarks else None,
        }
        with self.lock:
            self.watch_params.append(params)
            step = self.watches.pop(0) if self.watches else None
        if step is None:
            self.idle.set()
            return WatchStream(FakeResponse([], block=threading.Event()), path=path, server=self.server)
        if isinstance(step, BaseException):
            raise step
        lines = [orjson.dumps({"type": t, "object": o}) for t, o in step]
        return WatchStream(FakeResponse(lines), path=path, server=self.server)


def gone() -> GoneError:
    return GoneError(410, "Expired", "too old resource version: 1 (50)")


def refused() -> ConnectionFailedError:
    return ConnectionFailedError("cannot reach the Kubernetes API server: connection refused", server="x")
