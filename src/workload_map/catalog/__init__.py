"""The built-in catalog of Karta definitions (YAML files under ``catalog/data/``).

``list_definitions()``, ``get_definition(api_version, kind)`` and ``get_by_name(slug)`` read the
files once, lazily, and cache them (see :mod:`workload_map.catalog.registry`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workload_map.catalog.registry import (
        Catalog,
        CatalogEntry,
        CatalogError,
        catalog,
        get_by_name,
        get_definition,
        list_definitions,
    )

__all__ = [
    "Catalog",
    "CatalogEntry",
    "CatalogError",
    "catalog",
    "get_by_name",
    "get_definition",
    "list_definitions",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module("workload_map.catalog.registry"), name)
    globals()[name] = value
    return value
