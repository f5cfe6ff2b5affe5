"""One API server for the operator, CRD and deploy tests, separate from the session ``cluster``.

These tests register admission webhooks, restart the API server and kill operators: doing that on
the shared session cluster would disturb every other test. This cluster is bare (no framework CRD
corpus, so it starts in seconds), has the Karta CRD installed, and is shared by tests/crd,
tests/operator and tests/deploy through :func:`karta_cluster` (one per test process).
"""

from __future__ import annotations

import atexit
import os
import threading
from typing import Any

import pytest

from tests.support import crds
from tests.support.apiserver_binary import ApiserverBinaryError
from tests.support.cluster import ClusterError, TestCluster
from tests.support.fixtures import SKIP_ENV
from tests.support.kube import KubeTestClient
from workload_map.crd.generate import shipped_crd

_LOCK = threading.Lock()


def _nullable_strings(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "string":
            node["nullable"] = True
        for value in node.values():
            _nullable_strings(value)
    elif isinstance(node, list):
        for value in node:
            _nullable_strings(value)


def server_crd() -> dict[str, Any]:
    """The Karta CRD as this test API server accepts it: down-levelled for v1.20 (no CEL, no list
    types) and with ``nullable: true`` on strings. The v1.20.2 build in use validates an empty
    string inside a custom resource as ``null`` ("must be of type string: null"), so the core group
    ``group: ""`` would be refused; with ``nullable`` it is accepted and stored as ``""``. Real
    clusters need neither change."""
    doc = crds.downlevel_crd(shipped_crd())
    _nullable_strings(doc["spec"]["versions"][0]["schema"])
    return doc


_CLUSTER: list[TestCluster] = []


def karta_cluster() -> TestCluster:
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{SKIP_ENV}=1: cluster tests skipped on request")
    with _LOCK:
        if _CLUSTER:
            return _CLUSTER[0]
        try:
            cluster = TestCluster().start()
        except (ApiserverBinaryError, ClusterError, FileNotFoundError) as exc:
            pytest.fail(f"cannot start the Karta test cluster: {exc}", pytrace=False)
        atexit.register(cluster.stop)
        with KubeTestClient(cluster.server, cluster.admin_token, cluster.ca_file) as client:
            crds.install_crds(client, [server_crd()], downlevel=False)
        _CLUSTER.append(cluster)
        return cluster
