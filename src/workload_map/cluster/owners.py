"""Owner lookup for pod attribution: fetch an ownerReference's object, cached (hits and misses)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from workload_map.errors import ForbiddenError, NotFoundError

if TYPE_CHECKING:
    from workload_map.cluster.client import KubeClient
    from workload_map.cluster.discovery import Discovery

__all__ = ["OwnerKey", "OwnerLookup", "make_owner_lookup", "make_pod_lister"]

#: (namespace, apiVersion, kind, name)
OwnerKey = tuple[str, str, str, str]


class OwnerLookup:
    """``lookup(namespace, api_version, kind, name) -> dict | None``.

    ``None`` means the owner does not exist or its type is not served. Other errors (forbidden,
    connection) propagate and are not cached, so the caller can warn and go on. Thread-safe; each key is
    fetched at most once even when asked concurrently.
    """

    def __init__(self, client: KubeClient, discovery: Discovery, max_in_flight: int = 8) -> None:
        self.client = client
        self.discovery = discovery
        self.max_in_flight = max_in_flight
        self._cache: dict[OwnerKey, dict[str, Any] | None] = {}
        self._pending: dict[OwnerKey, threading.Event] = {}
        self._lock = threading.Lock()
        #: GET requests sent (tests and diagnostics).
        self.requests = 0
        #: Owner resources (``jobs.batch``) the caller may not read: the pods owned through them
        #: cannot be attributed, which the caller says once (:meth:`denied_resources`).
        self._denied: set[str] = set()

    def __call__(self, namespace: str, api_version: str, kind: str, name: str) -> dict[str, Any] | None:
        key: OwnerKey = (namespace, api_version, kind, name)
        while True:
            with self._lock:
                if key in self._cache:
                    return self._cache[key]
                waiter = self._pending.get(key)
                if waiter is None:
                    self._pending[key] = threading.Event()
                    break
            waiter.wait()
        try:
            value = self._fetch(key)
            with self._lock:
                self._cache[key] = value
            return value
        finally:
            with self._lock:
                self._pending.pop(key).set()

    def _fetch(self, key: OwnerKey) -> dict[str, Any] | None:
        namespace, api_version, kind, name = key
        resource = self.discovery.resource_for_kind(api_version, kind)
        if resource is None:
            return None
        with self._lock:
            self.requests += 1
        try:
            return self.client.get(resource.path(namespace, name))
        except NotFoundError:
            return None
        except ForbiddenError:
            with self._lock:
                self._denied.add(resource.qualified_name)
            raise

    def denied_resources(self) -> list[str]:
        """The owner resources a lookup was refused for, sorted."""
        with self._lock:
            return sorted(self._denied)

    def prefetch(self, keys: Iterable[OwnerKey]) -> None:
        """Fetch many owners, ``max_in_flight`` at a time; errors are left for the later direct call."""
        todo = [k for k in dict.fromkeys(keys) if k not in self._cache]
        if not todo:
            return

        def one(key: OwnerKey) -> None:
            # errors are reported when the caller asks for this key itself
            with contextlib.suppress(Exception):
                self(*key)

        with ThreadPoolExecutor(
            max_workers=min(self.max_in_flight, len(todo)), thread_name_prefix="owners"
        ) as pool:
            list(pool.map(one, todo))


def make_owner_lookup(
    client: KubeClient, discovery: Discovery | None = None, max_in_flight: int = 8
) -> OwnerLookup:
    """An :class:`OwnerLookup` over ``client`` (a fresh :class:`Discovery` when none is given)."""
    if discovery is None:
        from workload_map.cluster.discovery import Discovery

        discovery = Discovery(client)
    return OwnerLookup(client, discovery, max_in_flight)


def make_pod_lister(
    client: KubeClient, limit: int
) -> Callable[[str, Mapping[str, str]], list[dict[str, Any]]]:
    """``list_pods(namespace, labels)``: the pods of ``namespace`` carrying every one of
    ``labels`` (a labelSelector list), at most ``limit + 1`` of them (the caller refuses more);
    what a native grouper of KAI lists beside the pod it groups (the MPIJob launcher pods)."""
    from workload_map.kube.objects import api_path, label_selector

    def list_pods(namespace: str, labels: Mapping[str, str]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if not namespace:  # a cluster-scoped owner: no pod shares its namespace
            return out
        path = api_path("v1", "pods", namespace)
        for item in client.list_items(path, label_selector=label_selector(labels), limit=min(limit + 1, 500)):
            out.append(item)
            if len(out) > limit:
                break
        return out

    return list_pods
