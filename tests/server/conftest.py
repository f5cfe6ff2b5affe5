"""Server test fixtures: an in-process app (ASGI test client) with the admin kubeconfig as the
server's identity, on the session cluster with the real Karta CRD (``karta_crd``), and bearer headers
per test user."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.testclient import TestClient

from tests.support.cluster import TestCluster
from workload_map.cluster.kubeconfig import ConnectionOptions, load_cluster_config
from workload_map.server.app import ServerSettings, create_app
from workload_map.server.limits import Limits, uvicorn_options
from workload_map.server.state import ClusterState


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
def make_app(karta_crd: str, admin_kubeconfig: Path) -> Iterator[AppFactory]:
    """``make_app(enable_writes=False)``: a started in-process app (closed at module end)."""
    opened: list[TestClient] = []

    def make(*, enable_writes: bool = False, local_paths: tuple[str, ...] = ()) -> TestClient:
        config = load_cluster_config(ConnectionOptions(kubeconfig=str(admin_kubeconfig)))
        state = ClusterState(config, definitions_ttl=1.0, sync_timeout=60.0, local_paths=local_paths)
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


@contextmanager
def uvicorn_on_loopback(app: Any, limits: Limits) -> Iterator[int]:
    """``app`` under a real uvicorn on a free loopback port (yielded), with the options ``wmap
    serve`` passes for ``limits``; stopped at the end."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    sock.close()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical", **uvicorn_options(limits))
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(400):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(20)
