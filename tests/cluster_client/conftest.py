"""Fixtures for the workload_map.cluster tests.

The real-cluster tests use ``tests.support.cluster.TestCluster``. When the repository-wide
``tests/conftest.py`` provides the ``cluster`` fixture it is used; otherwise this file starts one
cluster for the session itself.
"""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workload_map.cluster import ConnectionOptions, KubeClient, load_cluster_config

ROOT_CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
_names = itertools.count(1)


def _root_has_cluster_fixture() -> bool:
    try:
        return "def cluster(" in ROOT_CONFTEST.read_text()
    except OSError:
        return False


if not _root_has_cluster_fixture():

    @pytest.fixture(scope="session")
    def cluster() -> Iterator[Any]:
        from tests.support.cluster import TestCluster

        with TestCluster() as started:
            yield started


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty HOME and no KUBECONFIG / in-cluster variables: only what the test writes is seen."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "POD_NAMESPACE"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture(scope="session")
def admin_kubeconfig(cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path: Path = cluster.write_kubeconfig(tmp_path_factory.mktemp("kc") / "admin.yaml", user="admin")
    return path


@pytest.fixture(scope="session")
def admin(admin_kubeconfig: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeClient]:
    config = load_cluster_config(
        ConnectionOptions(kubeconfig=str(admin_kubeconfig), cache_dir=str(tmp_path_factory.mktemp("cache"))),
        environ={},
    )
    with KubeClient(config) as client:
        yield client


@pytest.fixture
def ns(admin: KubeClient) -> str:
    """A fresh namespace (deleted namespaces stay Terminating without a controller-manager: never reused)."""
    name = f"wmap-cc-{os.getpid() % 10000}-{next(_names)}-{secrets.token_hex(2)}"
    admin.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


@pytest.fixture(scope="session")
def jobset_crd(admin: KubeClient) -> str:
    """The real JobSet CRD from shared/crds, installed once (downlevelled for v1.20)."""
    from tests.support.crds import crds_dir, install_crds
    from tests.support.kube import KubeTestClient

    server = admin.config.server
    with KubeTestClient(server, admin.config.token, admin.config.ca_file) as kube:
        names = install_crds(kube, [crds_dir() / "jobset" / "jobset.x-k8s.io_jobsets.yaml"])
    return names[0]
