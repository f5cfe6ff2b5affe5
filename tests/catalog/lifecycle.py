"""Shared by the catalog tests: the lifecycle fixtures folder, loading a fixture file and loading
a bundled catalog definition by slug."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from workload_map.catalog.registry import DATA_DIR
from workload_map.model.definition import Karta
from workload_map.model.loader import load_definitions

LC = Path(__file__).parent / "lifecycles"


def load_fixture(path: Path) -> dict[str, Any]:
    """A lifecycle fixture file: ``object`` and ``expect`` (see ``lifecycles/README.md``)."""
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    return data


def catalog_definition(slug: str) -> Karta:
    """The bundled catalog definition ``<slug>.yaml``."""
    karta: Karta = load_definitions(str(DATA_DIR / f"{slug}.yaml")).definitions[0].karta
    return karta
