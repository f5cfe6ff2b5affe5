"""Fixtures for the controllers tests: a KubeClient for the session test cluster."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cluster import TestCluster
from workload_map.cluster import ConnectionOptions, KubeClient


@pytest.fixture
def kubeconfig(cluster: TestCluster, tmp_path: Path) -> Path:
    return cluster.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def client(kubeconfig: Path) -> Iterator[KubeClient]:
    c = KubeClient.from_options(ConnectionOptions(kubeconfig=str(kubeconfig)), connect_tries=1)
    yield c
    c.close()
