"""CLI test helpers: run ``wmap`` in-process against the test catalog (``tests/cli/data/catalog``),
with an isolated HOME (no stray config) and discovery cache; kubeconfigs for the test cluster."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cluster import TestCluster

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    from workload_map.catalog import registry

    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("WMAP_CATALOG_DIR", str(DATA / "catalog"))
    for name in (
        "KUBECONFIG",
        "WMAP_CONFIG",
        "KARTA_CONFIG",
        "WMAP_OUTPUT",
        "KARTA_OUTPUT",
        "WMAP_PROMETHEUS_URL",
        "WMAP_COST_WINDOW",
    ):
        monkeypatch.delenv(name, raising=False)
    registry.reset()
    yield
    registry.reset()


@pytest.fixture
def bundled_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog users get instead of the CLI tests' small one."""
    from workload_map.catalog import registry

    monkeypatch.delenv(registry.CATALOG_DIR_ENV, raising=False)
    registry.reset()


@pytest.fixture
def kc(cluster: TestCluster, tmp_path: Path) -> str:
    """An admin kubeconfig for the test cluster (tests needing more override it)."""
    return str(cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin"))
