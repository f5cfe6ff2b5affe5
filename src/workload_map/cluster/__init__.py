"""The only layer that talks to the Kubernetes API.

Submodules: :mod:`.kubeconfig` (kubectl loading rules, flags, in-cluster), :mod:`.auth` (tokens, basic,
exec plugins, impersonation), :mod:`.tls`, :mod:`.client` (:class:`KubeClient`: get/list/watch/writes with
retries), :mod:`.watch` (:class:`WatchStream`: an open watch another thread can interrupt),
:mod:`.discovery` (resource types, kubectl type resolution, REST mapping) and :mod:`.owners`.

Names are exported lazily so that ``import workload_map.cluster`` stays cheap: httpx is imported only when
the client (or auth) is first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workload_map.cluster.auth import Credential, ExecCredentialProvider, KubeAuth
    from workload_map.cluster.client import DEFAULT_CHUNK_SIZE, KubeClient, WatchEvent, api_path
    from workload_map.cluster.discovery import APIResource, Discovery, ResourceMatch, version_priority
    from workload_map.cluster.kubeconfig import (
        ClusterConfig,
        ConnectionOptions,
        ExecConfig,
        load_cluster_config,
        load_kubeconfig,
    )
    from workload_map.cluster.owners import OwnerLookup, make_owner_lookup
    from workload_map.cluster.watch import WatchStream

_EXPORTS = {
    "ConnectionOptions": "kubeconfig",
    "ClusterConfig": "kubeconfig",
    "ExecConfig": "kubeconfig",
    "load_cluster_config": "kubeconfig",
    "load_kubeconfig": "kubeconfig",
    "Credential": "auth",
    "ExecCredentialProvider": "auth",
    "KubeAuth": "auth",
    "KubeClient": "client",
    "WatchEvent": "client",
    "WatchStream": "watch",
    "api_path": "client",
    "DEFAULT_CHUNK_SIZE": "client",
    "APIResource": "discovery",
    "ResourceMatch": "discovery",
    "Discovery": "discovery",
    "version_priority": "discovery",
    "OwnerLookup": "owners",
    "make_owner_lookup": "owners",
}

__all__ = [
    "DEFAULT_CHUNK_SIZE",
    "APIResource",
    "ClusterConfig",
    "ConnectionOptions",
    "Credential",
    "Discovery",
    "ExecConfig",
    "ExecCredentialProvider",
    "KubeAuth",
    "KubeClient",
    "OwnerLookup",
    "ResourceMatch",
    "WatchEvent",
    "WatchStream",
    "api_path",
    "load_cluster_config",
    "load_kubeconfig",
    "make_owner_lookup",
    "version_priority",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
