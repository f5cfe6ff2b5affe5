"""CLI test helpers: run ``wmap`` in-process against the test catalog (``tests/cli/data/catalog``),
with an isolated HOME (no stray config) and discovery cache; kubeconfigs for the test cluster."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).parent / "data"

KARTA_CRD: dict[str, Any] = {
    # A minimal structural CRD for kartas.run.ai (the project ships none yet).
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


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    from workload_map.catalog import registry

    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("WMAP_CATALOG_DIR", str(DATA / "catalog"))
    for name in ("KUBECONFIG", "WMAP_CONFIG", "KARTA_CONFIG", "WMAP_OUTPUT", "KARTA_OUTPUT"):
        monkeypatch.delenv(name, raising=False)
    registry.reset()
    yield
    registry.reset()
