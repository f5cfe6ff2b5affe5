"""DRA ResourceClaimTemplates and ResourceClaims read from the API server for the resolver
(:data:`workload_map.resolve.dra.ClaimLookup`): at the version of ``resource.k8s.io`` the server
prefers among those serving the kind (``v1``, ``v1beta2``, ``v1beta1``: the resolver reads every
shape), each object fetched once. A reader without ``get`` on them, or a name that does not
exist, is remembered and said once (:meth:`ClaimReader.warnings`); the resolver then counts no
device for that claim."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workload_map import messages
from workload_map.errors import ForbiddenError, NotFoundError
from workload_map.kube.objects import api_path

if TYPE_CHECKING:
    from workload_map.cluster.client import KubeClient
    from workload_map.cluster.discovery import Discovery

__all__ = ["ClaimReader"]

GROUP = "resource.k8s.io"
PLURALS = {"ResourceClaimTemplate": "resourceclaimtemplates", "ResourceClaim": "resourceclaims"}
#: At most this many claim objects are read by one reader (a workload names a handful).
MAX_READS = 512


class ClaimReader:
    """``reader(kind, namespace, name)`` -> the object or None. Thread-safe."""

    def __init__(self, client: KubeClient, discovery: Discovery) -> None:
        self.client = client
        self.discovery = discovery
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str, str], dict[str, Any] | None] = {}
        self._versions: dict[str, str | None] = {}
        self._denied: set[str] = set()
        self._missing: list[str] = []
        self._unserved: set[str] = set()

    def _version(self, kind: str) -> str | None:
        with self._lock:
            if kind in self._versions:
                return self._versions[kind]
        served = self.discovery.served_versions(GROUP, kind)
        preferred = self.discovery.preferred_version(GROUP)
        version = preferred if preferred in served else (served[0] if served else None)
        with self._lock:
            self._versions[kind] = version
        return version

    def __call__(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        plural = PLURALS.get(kind)
        if plural is None or not namespace or not name:
            return None
        key = (kind, namespace, name)
        with self._lock:
            if key in self._cache:
                return self._cache[key]
            if len(self._cache) >= MAX_READS or f"{plural}.{GROUP}" in self._denied:
                return None
        version = self._version(kind)
        obj: dict[str, Any] | None = None
        if version is None:
            with self._lock:
                self._unserved.add(f"{plural}.{GROUP}")
        else:
            try:
                obj = self.client.get(api_path(f"{GROUP}/{version}", plural, namespace, name))
            except NotFoundError:
                with self._lock:
                    self._missing.append(f"{kind} {namespace}/{name}")
            except ForbiddenError:
                with self._lock:
                    self._denied.add(f"{plural}.{GROUP}")
        with self._lock:
            self._cache[key] = obj
        return obj

    def warnings(self) -> list[str]:
        """What kept devices from being counted, one line each (then forgotten)."""
        with self._lock:
            out = [messages.dra_claims_not_readable(sorted(self._denied))] if self._denied else []
            out += [messages.dra_claims_not_served(r) for r in sorted(self._unserved)]
            out += [messages.dra_claim_missing(m) for m in self._missing]
            self._denied.clear()
            self._unserved.clear()
            self._missing.clear()
        return out
