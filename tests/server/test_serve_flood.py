"""``wmap serve``'s real app under attack (issue #23), over real sockets: a flood of half-open or
slow connections from one client while an authenticated client and the health probes still get
answers; health probes that never wait for the API handlers' thread pool; a caller without
credentials keeps no connection; every write, dry runs included, obeys ``--enable-writes``.

The app runs under uvicorn with the options ``wmap serve`` passes, its Kubernetes API being the
loopback fake of ``tests/support/fake_apiserver.py`` (TokenReview accepts ``good-token``, every
SubjectAccessReview is allowed). The attacker connects from 127.0.0.2, the clients from 127.0.0.1.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from starlette.routing import Route

from tests.server.conftest import uvicorn_on_loopback
from tests.support.fake_apiserver import FakeApiServer, Reply, Seen
from workload_map.cluster.kubeconfig import ConnectionOptions, load_cluster_config
from workload_map.server.app import READ_METHODS, ServerSettings, create_app
from workload_map.server.limits import Limits
from workload_map.server.state import ClusterState

GOOD = {"Authorization": "Bearer good-token"}
KARTA = Path(__file__).parents[2] / "src/workload_map/catalog/data/jobset-x-k8s-io-jobset-v1alpha2.yaml"


@dataclass
class Serve:
    url: str
    port: int
    fake: FakeApiServer


@contextmanager
def serve(tmp_path: Path, *, enable_writes: bool = False, limits: Limits | None = None) -> Iterator[Serve]:
    with FakeApiServer() as fake:
        config = load_cluster_config(ConnectionOptions(kubeconfig=str(fake.kubeconfig(tmp_path / "kc"))))
        settings = ServerSettings(enable_writes=enable_writes, limits=limits or Limits())
        app = create_app(ClusterState(config, sync_timeout=30.0), settings)
        with uvicorn_on_loopback(app, settings.limits) as port:
            url = f"http://127.0.0.1:{port}"
            for _ in range(600):  # ready: the informers on the fake cluster have synced
                if httpx.get(url + "/readyz", timeout=30).status_code == 200:
                    break
                time.sleep(0.1)
            yield Serve(url, port, fake)


def hold(port: int, count: int, first: bytes = b"") -> list[socket.socket]:
    """``count`` connections from 127.0.0.2 that send ``first`` and then nothing."""
    socks = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        s.settimeout(10)
        s.connect(("127.0.0.1", port))
        if first:
            s.sendall(first)
        socks.append(s)
    return socks


def answers(url: str) -> tuple[int, int, int]:
    with httpx.Client(timeout=30) as http:
        return (
            http.get(url + "/healthz").status_code,
            http.get(url + "/readyz").status_code,
            http.get(url + "/api/v1/whoami", headers=GOOD).status_code,
        )


@pytest.mark.parametrize(
    "first", [b"", b"GET /healthz HTTP/1.1\r\nHost: x\r\n"], ids=["half-open", "slow-head"]
)
def test_a_flood_from_one_client_leaves_the_others_served(tmp_path: Path, first: bytes) -> None:
    with serve(tmp_path, limits=Limits(header_timeout=60.0)) as s:
        flood = hold(s.port, 300 if not first else 100, first)
        try:
            for _ in range(3):
                assert answers(s.url) == (200, 200, 200)
            who = httpx.get(s.url + "/api/v1/whoami", headers=GOOD, timeout=30).json()
            assert who["username"] == "alice"
        finally:
            for sock in flood:
                sock.close()


def test_health_probes_never_wait_for_the_api_thread_pool(tmp_path: Path) -> None:
    """Every API handler thread is stuck in a TokenReview that does not answer: /healthz and
    /readyz still answer (they run on the event loop and on a thread of their own)."""
    release = threading.Event()

    def stuck_review(seen: Seen) -> Reply | None:
        if b"stuck-" in seen.body:
            release.wait(120)
        return None  # then the fake's usual answer

    with serve(tmp_path, limits=Limits(max_connections_per_client=100)) as s:
        s.fake.on("POST", "/apis/authentication.k8s.io/v1/tokenreviews", stuck_review)
        pending: list[threading.Thread] = []

        def call(i: int) -> None:
            transport = httpx.HTTPTransport(local_address="127.0.0.2")
            try:
                with httpx.Client(transport=transport, timeout=120) as http:
                    http.get(s.url + "/api/v1/whoami", headers={"Authorization": f"Bearer stuck-{i}"})
            except httpx.HTTPError:
                pass

        try:
            for i in range(60):  # more than the thread pool's 40 threads
                t = threading.Thread(target=call, args=(i,))
                t.start()
                pending.append(t)
            stuck = lambda: len([r for r in s.fake.requests if b"stuck-" in r.body])  # noqa: E731
            # 60 callers, 40 pool threads: 32 stuck in the TokenReview (the server's client keeps 32
            # connections), the other threads waiting for one of them, the rest waiting for a thread.
            for _ in range(1000):
                if stuck() >= 32:
                    break
                time.sleep(0.01)
            assert stuck() >= 32
            with httpx.Client(timeout=30) as http:
                assert http.get(s.url + "/healthz").status_code == 200
                assert http.get(s.url + "/readyz").status_code == 200
        finally:
            release.set()
            for t in pending:
                t.join(120)


def test_a_caller_without_credentials_keeps_no_connection(tmp_path: Path) -> None:
    with serve(tmp_path) as s, socket.create_connection(("127.0.0.1", s.port), timeout=30) as sock:
        sock.sendall(b"GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\n\r\n")
        reply = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break  # the server closed the connection after its answer
            reply += chunk
    assert reply.startswith(b"HTTP/1.1 401") and b"connection: close" in reply.lower()


def test_an_oversized_head_is_refused_by_the_real_app(tmp_path: Path) -> None:
    with serve(tmp_path) as s, socket.create_connection(("127.0.0.1", s.port), timeout=30) as sock:
        pad = b"".join(b"X-Pad-%d: %s\r\n" % (i, b"a" * 2000) for i in range(50))  # 100 KB
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + pad + b"\r\n")
        reply = sock.recv(65536)
    assert reply.startswith(b"HTTP/1.1 431"), reply[:100]


# ---------------------------------------------------------------------------------------- writes


def karta() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(KARTA.read_text())
    doc["metadata"]["name"] = "dry-run-probe"
    return doc


def test_a_dry_run_is_refused_when_writes_are_disabled(tmp_path: Path) -> None:
    with serve(tmp_path) as s, httpx.Client(base_url=s.url, timeout=30) as http:
        r = http.post("/api/v1/workload-types?dryRun=true", json=karta(), headers=GOOD)
        assert r.status_code == 403 and r.json()["error"] == "writes_disabled"
        assert r.json()["message"] == (
            "POST /api/v1/workload-types changes the cluster (a dry run too), and this server is read-only"
        )
        suspend = "/api/v1/namespaces/ml/workloads/jobsets/train/suspend?dryRun=true"
        assert http.post(suspend, headers=GOOD).json()["error"] == "writes_disabled"
        # Authentication comes first: an anonymous dry run is a 401, not a hint about the server.
        assert http.post("/api/v1/workload-types?dryRun=true", json=karta()).status_code == 401
        # Refused before the body was read or validated, and nothing reached the cluster.
        assert not s.fake.seen("/apis/run.ai/v1alpha1/kartas") or all(
            r.method == "GET" for r in s.fake.seen("/apis/run.ai/v1alpha1/kartas")
        )


def test_a_dry_run_passes_when_writes_are_enabled(tmp_path: Path) -> None:
    with serve(tmp_path, enable_writes=True) as s, httpx.Client(base_url=s.url, timeout=30) as http:
        r = http.post("/api/v1/workload-types?dryRun=true", json=karta(), headers=GOOD)
        assert r.status_code == 200, r.text
        assert r.json()["name"] == "dry-run-probe"
        (post,) = [x for x in s.fake.seen("/apis/run.ai/v1alpha1/kartas") if x.method == "POST"]
        assert post.param("dryRun") == "All"


def test_a_read_only_post_is_not_a_write(tmp_path: Path) -> None:
    manifest = {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}}
    with serve(tmp_path) as s:
        r = httpx.post(s.url + "/api/v1/placement", json=manifest, headers=GOOD, timeout=30)
    assert r.status_code == 404 and r.json()["error"] == "no_definition_for_type"


def test_every_route_that_changes_something_goes_through_the_write_gate(tmp_path: Path) -> None:
    """Every route with a method other than GET/HEAD/OPTIONS (except the declared read-only
    placement calculator) answers 403 writes_disabled on a read-only server: a new write endpoint
    registered any other way fails here."""
    with FakeApiServer() as fake:
        config = load_cluster_config(ConnectionOptions(kubeconfig=str(fake.kubeconfig(tmp_path / "kc"))))
        app = create_app(ClusterState(config), ServerSettings(start_informers=False))
        from starlette.testclient import TestClient

        writes = [
            (method, route.path)
            for route in app.routes
            if isinstance(route, Route)
            for method in sorted(route.methods or ())
            if method not in READ_METHODS and route.path != "/api/v1/placement"
        ]
        assert len(writes) >= 5  # register, delete, suspend and resume (both scopes)
        with TestClient(app) as http:
            for method, path in writes:
                concrete = re.sub(r"\{namespace\}", "ml", re.sub(r"\{[a-z]+\}", "x", path))
                r = http.request(method, concrete + "?dryRun=true", headers=GOOD, json={})
                assert (r.status_code, r.json()["error"]) == (403, "writes_disabled"), (method, path, r.text)
