"""The DRA ResourceClaimTemplates and ResourceClaims of the cluster, kept live for the
long-running consumers (``wmap serve``, the exporter) so that GPUs requested through claims count
as the CLI counts them (:mod:`workload_map.resolve.dra`, :mod:`workload_map.cluster.claims`).

Discovery is asked once, at :meth:`ClaimCache.start`: a kind ``resource.k8s.io`` does not serve
gets no informer (and no request, ever); each kind it serves gets one informer (one per namespace
with ``namespaces``) at the version :func:`~workload_map.cluster.claims.served_version` picks,
whose objects go through the caller's ``trim`` (the fields the resolver reads; ``None`` leaves an
object out), so the cache holds a few hundred bytes per claim it keeps.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workload_map.cluster.claims import GROUP, PLURALS, ClaimNotServedError, served_version
from workload_map.errors import ClusterError, NotFoundError
from workload_map.kube.objects import api_path
from workload_map.runtime.informer import EventHandler, Informer

if TYPE_CHECKING:
    from workload_map.cluster.client import KubeClient
    from workload_map.cluster.discovery import Discovery

__all__ = ["ClaimCache", "Trim"]

log = logging.getLogger(__name__)

Obj = dict[str, Any]
#: ``trim(obj, kind)``: what the cache keeps of a listed or watched object (None: nothing).
Trim = Callable[[Mapping[str, Any], str], Obj | None]


class ClaimCache:
    """One informer per DRA claim kind the cluster serves; :meth:`get` and :meth:`read` answer
    from their stores. Thread-safe."""

    def __init__(
        self,
        new_client: Callable[[], KubeClient],
        discovery: Discovery,
        trim: Trim,
        *,
        namespaces: Sequence[str] = (),
        watch_timeout: int = 300,
    ) -> None:
        self._new_client = new_client
        self._discovery = discovery
        self._trim = trim
        self._namespaces = tuple(namespaces)
        self._watch_timeout = watch_timeout
        self._lock = threading.Lock()
        #: (kind, namespace; "" when cluster-wide) -> informer
        self._informers: dict[tuple[str, str], Informer] = {}
        self._handlers: list[EventHandler] = []
        self._start_lock = threading.Lock()
        self._started = False

    def add_handler(self, handler: EventHandler) -> None:
        """Called for every change of a claim or template (register before :meth:`start`)."""
        self._handlers.append(handler)

    def start(self) -> list[str]:
        """Ask discovery which kinds are served and start their informers; once it answered,
        later calls do nothing (a failing discovery is asked again next time). Returns the
        resources watched."""
        with self._start_lock:
            if not self._started:
                self._started = self._start()
            return [inf.resource for inf in self.informers()]

    def _start(self) -> bool:
        versions: dict[str, str] = {}
        try:
            for kind in PLURALS:
                version = served_version(self._discovery, kind)
                if version is not None:
                    versions[kind] = version
        except ClusterError as exc:
            log.warning("discovery of %s failed: DRA claims are not counted yet (%s)", GROUP, exc)
            return False
        started: dict[tuple[str, str], Informer] = {}
        for kind, version in versions.items():
            plural = PLURALS[kind]
            for namespace in self._namespaces or ("",):
                inf = Informer(
                    self._new_client(),
                    api_path(f"{GROUP}/{version}", plural, namespace or None),
                    resource=f"{plural}.{GROUP}",
                    watch_timeout=self._watch_timeout,
                    transform=self._trimmer(kind),
                )
                for handler in self._handlers:
                    inf.add_handler(handler, replay=False)
                started[(kind, namespace)] = inf
        with self._lock:
            self._informers = started
        for inf in started.values():
            inf.start()
        return True

    def _trimmer(self, kind: str) -> Callable[[Obj], Obj | None]:
        def trim(obj: Obj) -> Obj | None:
            return self._trim(obj, kind)

        return trim

    def informers(self) -> list[Informer]:
        with self._lock:
            return list(self._informers.values())

    def _informer(self, kind: str, namespace: str) -> Informer | None:
        with self._lock:
            return self._informers.get((kind, namespace if self._namespaces else ""))

    def serves(self, kind: str) -> bool:
        """Whether ``kind`` is watched (served by the cluster)."""
        with self._lock:
            return any(k == kind for k, _ in self._informers)

    def wait_for_sync(self, timeout: float) -> bool:
        """Whether every informer has listed (each waited for up to ``timeout`` seconds)."""
        return all(inf.wait_for_sync(timeout) for inf in self.informers())

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        """The object (trimmed), or None: unknown, its kind not served, or its namespace not
        watched (a :data:`~workload_map.resolve.dra.ClaimLookup`)."""
        inf = self._informer(kind, namespace)
        return inf.store.get(namespace, name) if inf is not None else None

    def read(self, kind: str, namespace: str, name: str) -> Obj:
        """The object, for :meth:`ClaimReader.over <workload_map.cluster.claims.ClaimReader.over>`:
        raises :class:`ClaimNotServedError` or :class:`NotFoundError`."""
        if not self.serves(kind):
            raise ClaimNotServedError(kind)
        obj = self.get(kind, namespace, name)
        if obj is None:
            raise NotFoundError(404, "NotFound", f'{kind} "{name}" not found')
        return obj

    def stop(self, timeout: float = 2.0) -> None:
        for inf in self.informers():
            inf.stop(timeout=timeout)
