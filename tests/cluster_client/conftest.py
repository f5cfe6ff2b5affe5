"""Fixtures for the workload_map.cluster tests.

The real-cluster tests use the shared session fixtures of ``tests/support/fixtures.py``
(``cluster``, ``kube``, ``namespace``); this file only adds a :class:`KubeClient` on top.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient
from workload_map.cluster import ConnectionOptions, KubeClient, load_cluster_config

JOBSET_CRD = "jobsets.jobset.x-k8s.io"


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
def admin_kubeconfig(cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
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
def ns(namespace: str) -> str:
    """A fresh namespace (the shared ``namespace`` fixture: names are never reused)."""
    return namespace


@pytest.fixture(scope="session")
def jobset_crd(cluster: TestCluster, kube: KubeTestClient) -> str:
    """The real JobSet CRD from shared/crds: part of the shared cluster's corpus, installed here
    (downlevelled for v1.20) only if the corpus lacks it."""
    if JOBSET_CRD in cluster.installed_crds:
        return JOBSET_CRD
    from tests.support.crds import crds_dir, install_crds

    return install_crds(kube, [crds_dir() / "jobset" / "jobset.x-k8s.io_jobsets.yaml"])[0]
