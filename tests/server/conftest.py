"""Server test fixtures: the Karta CRD on the session cluster, an in-process app (ASGI test
client) with the admin kubeconfig as the server's identity, and bearer headers per test user."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.support import crds
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient
from workload_map.cluster.kubeconfig import ConnectionOptions, load_cluster_config
from workload_map.server.app import ServerSettings, create_app
from workload_map.server.state import ClusterState

#: A structural Karta CRD that keeps the spec as given (the server validates with our validator).
KARTA_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "kartas.run.ai"},
    "spec": {
        "group": "run.ai",
        "scope": "Cluster",
        "names": {"plural": "kartas", "singular": "karta", "kind": "Karta", "listKind": "KartaList"},
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
}


def ensure_karta_crd(kube: KubeTestClient) -> None:
    if kube.status_of("GET", f"{crds.CRD_PATH}/kartas.run.ai") == 404:
        crds.install_crds(kube, [KARTA_CRD])
        kube.plural_for("run.ai/v1alpha1", "Karta")


@pytest.fixture(scope="module")
def admin_kubeconfig(cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cluster.write_kubeconfig(tmp_path_factory.mktemp("server") / "kubeconfig", user="admin")


@pytest.fixture(autouse=True, scope="module")
def _isolated_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    mp = pytest.MonkeyPatch()
    home = tmp_path_factory.mktemp("home")
    mp.setenv("HOME", str(home))
    mp.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    for name in ("KUBECONFIG", "WMAP_CATALOG_DIR", "WMAP_CONFIG"):
        mp.delenv(name, raising=False)
    yield
    mp.undo()


AppFactory = Callable[..., TestClient]


@pytest.fixture(scope="module")
def make_app(kube: KubeTestClient, admin_kubeconfig: Path) -> Iterator[AppFactory]:
    """``make_app(enable_writes=False)``: a started in-process app (closed at module end)."""
    ensure_karta_crd(kube)
    opened: list[TestClient] = []

    def make(*, enable_writes: bool = False) -> TestClient:
        config = load_cluster_config(ConnectionOptions(kubeconfig=str(admin_kubeconfig)))
        state = ClusterState(config, definitions_ttl=1.0, sync_timeout=60.0)
        app = create_app(state, ServerSettings(enable_writes=enable_writes, token_ttl=5.0, access_ttl=1.0))
        client = TestClient(app, raise_server_exceptions=False)
        client.__enter__()
        opened.append(client)
        return client

    yield make
    for c in opened:
        c.__exit__(None, None, None)


@pytest.fixture
def bearer(cluster: TestCluster) -> Callable[[str], dict[str, str]]:
    def headers(user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {cluster.token(user)}"}

    return headers
