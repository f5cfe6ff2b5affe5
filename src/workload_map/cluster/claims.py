"""DRA ResourceClaimTemplates and ResourceClaims read for the resolver
(:data:`workload_map.resolve.dra.ClaimLookup`).

:class:`ClaimReader` reads them from the API server (the CLI) at the version of
``resource.k8s.io`` the server prefers among those serving the kind (:func:`served_version`:
``v1``, ``v1beta2``, ``v1beta1``; the resolver reads every shape), each object fetched once; or,
built with :meth:`ClaimReader.over`, from another source (the caches of ``wmap serve``). A reader
without ``get`` on them, a kind the cluster does not serve, or a name that does not exist, is
remembered and said once (:meth:`ClaimReader.warnings`); the resolver then counts no device for
that claim."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from workload_map import messages
from workload_map.errors import ForbiddenError, NotFoundError
from workload_map.kube.objects import api_path

if TYPE_CHECKING:
    from workload_map.cluster.client import KubeClient
    from workload_map.cluster.discovery import Discovery

__all__ = ["GROUP", "PLURALS", "ClaimNotServedError", "ClaimReader", "ReadClaim", "served_version"]

GROUP = "resource.k8s.io"
PLURALS = {"ResourceClaimTemplate": "resourceclaimtemplates", "ResourceClaim": "resourceclaims"}
#: At most this many claim objects are read by one reader (a workload names a handful).
MAX_READS = 512


class ClaimNotServedError(LookupError):
    """The cluster does not serve the claim's kind (no ``resource.k8s.io`` version has it)."""


#: ``read(kind, namespace, name)``: the object. Raises :class:`NotFoundError` (no such object),
#: :class:`ForbiddenError` (the reader may not get it) or :class:`ClaimNotServedError`.
ReadClaim = Callable[[str, str, str], Mapping[str, Any]]


def served_version(discovery: Discovery, kind: str) -> str | None:
    """The ``resource.k8s.io`` version to read ``kind`` at: the group's preferred version when it
    serves the kind, else the first that does; ``None`` when none does."""
    served = discovery.served_versions(GROUP, kind)
    preferred = discovery.preferred_version(GROUP)
    return preferred if preferred in served else (served[0] if served else None)


class ClaimReader:
    """``reader(kind, namespace, name)`` -> the object or None. Thread-safe."""

    def __init__(
        self, client: KubeClient | None, discovery: Discovery | None, max_reads: int = MAX_READS
    ) -> None:
        self.client = client
        self.discovery = discovery
        self.max_reads = max_reads
        self._read: ReadClaim = self._get
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str, str], Mapping[str, Any] | None] = {}
        self._versions: dict[str, str | None] = {}
        #: (resource, namespace) the reader may not get: not asked again.
        self._denied: set[tuple[str, str]] = set()
        self._missing: list[str] = []
        self._unserved: set[str] = set()

    @classmethod
    def over(cls, read: ReadClaim, max_reads: int = MAX_READS) -> ClaimReader:
        """A reader whose objects come from ``read`` (a cache, say) instead of the API server."""
        reader = cls(None, None, max_reads)
        reader._read = read
        return reader

    def _version(self, kind: str) -> str | None:
        with self._lock:
            if kind in self._versions:
                return self._versions[kind]
        assert self.discovery is not None  # the API server reader has one
        version = served_version(self.discovery, kind)
        with self._lock:
            self._versions[kind] = version
        return version

    def _get(self, kind: str, namespace: str, name: str) -> Mapping[str, Any]:
        version = self._version(kind)
        if version is None:
            raise ClaimNotServedError(kind)
        assert self.client is not None  # the API server reader has one
        return self.client.get(api_path(f"{GROUP}/{version}", PLURALS[kind], namespace, name))

    def __call__(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        plural = PLURALS.get(kind)
        if plural is None or not namespace or not name:
            return None
        resource = f"{plural}.{GROUP}"
        key = (kind, namespace, name)
        with self._lock:
            if key in self._cache:
                return self._cache[key]
            if len(self._cache) >= self.max_reads or (resource, namespace) in self._denied:
                return None
        obj: Mapping[str, Any] | None = None
        try:
            obj = self._read(kind, namespace, name)
        except ClaimNotServedError:
            with self._lock:
                self._unserved.add(resource)
        except NotFoundError:
            with self._lock:
                self._missing.append(f"{kind} {namespace}/{name}")
        except ForbiddenError:
            with self._lock:
                self._denied.add((resource, namespace))
        with self._lock:
            self._cache[key] = obj
        return obj

    def warnings(self) -> list[str]:
        """What kept devices from being counted, one line each (then forgotten)."""
        with self._lock:
            denied = sorted({resource for resource, _ in self._denied})
            out = [messages.dra_claims_not_readable(denied)] if denied else []
            out += [messages.dra_claims_not_served(r) for r in sorted(self._unserved)]
            out += [messages.dra_claim_missing(m) for m in self._missing]
            self._denied.clear()
            self._unserved.clear()
            self._missing.clear()
        return out
