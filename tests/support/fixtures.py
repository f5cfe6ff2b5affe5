"""pytest fixtures for tests that need the real API server (loaded by tests/conftest.py).

- ``cluster`` (session): one :class:`TestCluster` with every CRD of ``shared/crds`` installed (one per
  CRD name, see :data:`tests.support.crds.DEFAULT_PREFER`) plus ``extra_crd_docs``.
- ``kube`` (session): an admin :class:`KubeTestClient`.
- ``namespace`` (function): a fresh namespace with a never-reused name.
- ``extra_crd_docs`` (session): CRD documents to install on top, ``[]`` here; override it in a
  conftest.
- ``karta_crd`` (session): the project's real Karta CRD (:func:`tests.support.crds.karta_crd_doc`)
  installed on the session cluster; its value is the CRD name.
- ``no_karta_crd`` (function): the Karta CRD removed for one test (and every Karta with it), installed
  again afterwards.

Installing the ~33 corpus CRDs takes about a minute on 2 cores (the apiserver rebuilds its OpenAPI
document after each). The first session therefore saves etcd's data directory after installing them,
keyed by the corpus, apiserver and etcd versions, under the binary cache dir (``etcd-seeds/``); later
sessions start etcd from a copy of it. ``WMAP_NO_ETCD_SEED=1`` disables this.

A missing apiserver binary or etcd makes the fixture fail with an explanation; set
``WMAP_SKIP_CLUSTER_TESTS=1`` to skip cluster tests on purpose.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support import crds
from tests.support.apiserver_binary import (
    SHA256,
    ApiserverBinaryError,
    cache_dir,
    ensure_apiserver_binary,
    ensure_etcd,
)
from tests.support.cluster import ClusterError, TestCluster
from tests.support.kube import KubeTestClient

SKIP_ENV = "WMAP_SKIP_CLUSTER_TESTS"
SEED_FORMAT = 2

#: What the last session cluster start did, for the terminal summary.
CLUSTER_REPORT: dict[str, Any] = {}


def _etcd_version(etcd: Path) -> str:
    out = subprocess.run([str(etcd), "--version"], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()[0] if out.stdout else "unknown"


def _seed_root() -> Path:
    return cache_dir() / "etcd-seeds"


def _seed_key(prefer: Mapping[str, str] | None) -> str:
    parts = [
        f"seed-format-{SEED_FORMAT}",
        SHA256,
        _etcd_version(ensure_etcd()),
        crds.corpus_fingerprint(prefer=prefer),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def _wait_groups_served(client: KubeTestClient, groups: set[str], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        served = {g["name"] for g in client.request("GET", "/apis").get("groups", [])}
        missing = groups - served
        if not missing:
            return
        if time.monotonic() >= deadline:
            raise ClusterError(f"API groups not served {timeout:.0f}s after start: {sorted(missing)}")
        time.sleep(0.2)


def _store_seed(cluster: TestCluster, key: str, names: Sequence[str]) -> None:
    root = _seed_root()
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{key}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    cluster.save_etcd_data(tmp / "etcd")
    info = [{"name": name, "group": name.split(".", 1)[1]} for name in names]
    (tmp / "crds.json").write_text(json.dumps(info, indent=1) + "\n")
    try:
        os.rename(tmp, root / key)
    except OSError:  # another session stored the same seed meanwhile
        shutil.rmtree(tmp, ignore_errors=True)
        return
    for old in root.iterdir():
        if old.name != key and not old.name.startswith("."):
            shutil.rmtree(old, ignore_errors=True)


def start_corpus_cluster(
    *,
    extra_docs: Sequence[Mapping[str, Any]] = (),
    prefer: Mapping[str, str] | None = None,
    use_seed: bool | None = None,
) -> TestCluster:
    """Start a cluster with all shared CRDs (from a cached etcd seed when possible) plus
    ``extra_docs``. Records timings in ``cluster.timings`` and :data:`CLUSTER_REPORT`."""
    if use_seed is None:
        use_seed = os.environ.get("WMAP_NO_ETCD_SEED") != "1"
    began = time.monotonic()
    ensure_apiserver_binary(allow_build=False)  # unpacks from shared/bin if needed; never builds
    key = _seed_key(prefer) if use_seed else ""
    seed_dir = _seed_root() / key if use_seed else None
    seeded = seed_dir is not None and (seed_dir / "crds.json").is_file()
    cluster = TestCluster(etcd_seed=seed_dir / "etcd" if seeded and seed_dir else None)
    try:
        cluster.start()
    except ClusterError:
        if not seeded or seed_dir is None:
            raise
        # A broken seed must not break every later session: drop it and start from scratch.
        shutil.rmtree(seed_dir, ignore_errors=True)
        seeded = False
        cluster = TestCluster()
        cluster.start()
    try:
        client = KubeTestClient(cluster.server, cluster.admin_token, cluster.ca_file)
        t_crds = time.monotonic()
        if seeded and seed_dir is not None:
            seed_info = json.loads((seed_dir / "crds.json").read_text())
            names: list[str] = [entry["name"] for entry in seed_info]
            # Established is already stored in etcd; wait until every group is served (cheap,
            # unlike listing ~20 MB of CRDs).
            _wait_groups_served(client, {entry["group"] for entry in seed_info})
        else:
            names = crds.install_corpus(client, prefer=prefer)
        cluster.timings["corpus_crds"] = time.monotonic() - t_crds
        if use_seed and not seeded:
            t_seed = time.monotonic()
            _store_seed(cluster, key, names)
            cluster.timings["store_seed"] = time.monotonic() - t_seed
        if extra_docs:
            t_extra = time.monotonic()
            names += crds.install_crds(client, extra_docs)
            cluster.timings["extra_crds"] = time.monotonic() - t_extra
        client.close()
    except BaseException:
        cluster.stop()
        raise
    cluster.installed_crds = names
    cluster.timings["processes"] = cluster.start_seconds or 0.0
    cluster.timings["total"] = time.monotonic() - began
    CLUSTER_REPORT.clear()
    CLUSTER_REPORT.update(
        seed="used" if seeded else ("created" if use_seed else "disabled"),
        crds=len(names),
        timings=dict(cluster.timings),
    )
    return cluster


# ------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def extra_crd_docs() -> list[dict[str, Any]]:
    """CRD documents installed after the shared corpus. Override to add the project's own CRDs."""
    return []


@pytest.fixture(scope="session")
def cluster(extra_crd_docs: list[dict[str, Any]]) -> Iterator[TestCluster]:
    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{SKIP_ENV}=1: cluster tests skipped on request")
    problem = ""
    try:
        started = start_corpus_cluster(extra_docs=extra_crd_docs)
    except (ApiserverBinaryError, ClusterError, FileNotFoundError) as exc:
        problem = str(exc)
    if problem:
        pytest.fail(
            f"cannot start the test cluster (etcd + kube-apiserver): {problem}\n"
            f"Run scripts/test (installs etcd and the apiserver) or set {SKIP_ENV}=1 to skip.",
            pytrace=False,
        )
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="session")
def kube(cluster: TestCluster) -> Iterator[KubeTestClient]:
    client = KubeTestClient(cluster.server, cluster.admin_token, cluster.ca_file)
    yield client
    client.close()


@pytest.fixture
def namespace(kube: KubeTestClient) -> str:
    """A new namespace (deleted namespaces never go away here, so names are never reused)."""
    return kube.create_namespace()


@pytest.fixture(scope="session")
def karta_crd(kube: KubeTestClient) -> str:
    """The real Karta CRD on the session cluster (installed once; tests that remove it through
    ``no_karta_crd`` get it back afterwards)."""
    crds.ensure_karta_crd(kube)
    return crds.KARTA_CRD_NAME


@pytest.fixture
def no_karta_crd(kube: KubeTestClient) -> Iterator[None]:
    """No ``kartas.run.ai`` CRD during the test; the real one is installed again afterwards."""
    crds.remove_karta_crd(kube)
    try:
        yield
    finally:
        crds.ensure_karta_crd(kube)


# ---------------------------------------------------------------------------------------- hooks


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the ``cluster`` fixture (directly or not) gets the ``cluster`` mark."""
    for item in items:
        if "cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cluster)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not CLUSTER_REPORT:
        return
    t = CLUSTER_REPORT["timings"]
    parts = ", ".join(f"{k} {v:.1f}s" for k, v in t.items() if k != "total")
    terminalreporter.write_line(
        f"test cluster: ready in {t['total']:.1f}s ({parts}); {CLUSTER_REPORT['crds']} CRDs; "
        f"etcd seed {CLUSTER_REPORT['seed']}"
    )
