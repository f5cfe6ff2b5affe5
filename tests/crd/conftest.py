from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.operator.karta_cluster import karta_cluster
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient


@pytest.fixture(scope="session")
def kcluster() -> TestCluster:
    return karta_cluster()


@pytest.fixture(scope="session")
def kkube(kcluster: TestCluster) -> Iterator[KubeTestClient]:
    with KubeTestClient(kcluster.server, kcluster.admin_token, kcluster.ca_file) as client:
        yield client
