"""One API server for the operator, CRD and deploy tests, separate from the session ``cluster``.

These tests register admission webhooks, restart the API server and kill operators: doing that on
the shared session cluster would disturb every other test. This cluster is bare (no framework CRD
corpus, so it starts in seconds), has the project's Karta CRD installed (as
:func:`tests.support.crds.karta_crd_doc` makes it acceptable to v1.20), and is shared by tests/crd,
tests/operator and tests/deploy through :func:`karta_cluster` (one per test process) and the session
fixtures ``kcluster`` (the cluster) and ``kkube`` (an admin client), loaded by tests/conftest.py.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterator

import pytest

from tests.support import crds
from tests.support.apiserver_binary import ApiserverBinaryError
from tests.support.cluster import ClusterError, TestCluster
from tests.support.fixtures import SKIP_ENV
from tests.support.kube import KubeTestClient

_LOCK = threading.Lock()
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
            crds.install_crds(client, [crds.karta_crd_doc()], downlevel=False)
        _CLUSTER.append(cluster)
        return cluster


@pytest.fixture(scope="session")
def kcluster() -> TestCluster:
    return karta_cluster()


@pytest.fixture(scope="session")
def kkube(kcluster: TestCluster) -> Iterator[KubeTestClient]:
    with KubeTestClient(kcluster.server, kcluster.admin_token, kcluster.ca_file) as client:
        yield client
