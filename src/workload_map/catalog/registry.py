"""The bundled catalog: every ``catalog/data/*.yaml`` loaded once, lazily, keyed by root GVK.

Rules (upstream-spec 4): immutable; keyed by the root component's GVK, and two files claiming one
GVK is an error (:class:`CatalogError`, raised when the catalog is first used); lookups by GVK
or by definition name (the slug, e.g. ``jobset-x-k8s-io-jobset-v1alpha2``); :func:`list_definitions`
is sorted by GVK string (then name). The :class:`~workload_map.model.definition.Karta` models are
frozen pydantic models, so sharing them is safe (no deep copy needed).

``WMAP_CATALOG_DIR`` replaces the data directory (development and tests only). The parsed
definitions are kept in the user's cache (:mod:`workload_map.catalog.cache`), keyed by the package
version and the files' content, so later commands rebuild the models without parsing the YAML.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from workload_map.errors import DefinitionError, WorkloadMapError
from workload_map.kube.objects import gvk_text, split_api_version
from workload_map.model.definition import GroupVersionKind, Karta
from workload_map.model.inputs import read_bytes

DATA_DIR = Path(__file__).resolve().parent / "data"
CATALOG_DIR_ENV = "WMAP_CATALOG_DIR"

__all__ = [
    "CATALOG_DIR_ENV",
    "DATA_DIR",
    "Catalog",
    "CatalogEntry",
    "CatalogError",
    "catalog",
    "get_by_name",
    "get_definition",
    "gvk_key",
    "list_definitions",
    "reset",
]


class CatalogError(DefinitionError):
    """The bundled catalog is broken (unreadable file, not a definition, duplicate GVK or name)."""


@dataclass(frozen=True)
class CatalogEntry:
    karta: Karta
    path: str

    @property
    def name(self) -> str:
        return self.karta.name

    @property
    def gvk(self) -> GroupVersionKind | None:
        return self.karta.root_gvk


#: The GVK string used for keys and sorting: Go's ``group/version, Kind=kind``.
gvk_key = gvk_text


class Catalog:
    """The definitions of one directory, loaded on first use."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self._lock = threading.Lock()
        self._entries: tuple[CatalogEntry, ...] | None = None
        self._by_gvk: dict[str, CatalogEntry] = {}
        self._by_name: dict[str, CatalogEntry] = {}

    def _load(self) -> tuple[CatalogEntry, ...]:
        with self._lock:
            if self._entries is not None:
                return self._entries
            entries: list[CatalogEntry] = []
            by_gvk: dict[str, CatalogEntry] = {}
            by_name: dict[str, CatalogEntry] = {}
            files = sorted(self.directory.glob("*.yaml")) if self.directory.is_dir() else []
            # Cached or parsed, every definition goes through the same checks.
            for path, karta in _definitions(self.directory, files):
                entry = CatalogEntry(karta, str(path))
                gvk = entry.gvk
                if gvk is None or not gvk.kind or not gvk.version:
                    raise CatalogError(f"catalog definition {entry.name!r} ({path.name}) has no root GVK")
                key = gvk_key(gvk.group, gvk.version, gvk.kind)
                if key in by_gvk:
                    raise CatalogError(
                        f"catalog definitions {by_gvk[key].name!r} and {entry.name!r} both claim {key}"
                    )
                if entry.name in by_name:
                    raise CatalogError(f"two catalog definitions are named {entry.name!r}")
                by_gvk[key] = entry
                by_name[entry.name] = entry
                entries.append(entry)
            entries.sort(key=lambda e: (gvk_key(*_gvk_parts(e)), e.name))
            self._by_gvk, self._by_name = by_gvk, by_name
            self._entries = tuple(entries)
            return self._entries

    def entries(self) -> tuple[CatalogEntry, ...]:
        return self._load()

    def list(self) -> list[Karta]:
        return [e.karta for e in self._load()]

    def get(self, api_version: str, kind: str) -> Karta | None:
        self._load()
        group, version = split_api_version(api_version)
        entry = self._by_gvk.get(gvk_key(group, version, kind))
        return entry.karta if entry is not None else None

    def by_name(self, name: str) -> Karta | None:
        self._load()
        entry = self._by_name.get(name)
        return entry.karta if entry is not None else None


def _definitions(directory: Path, files: list[Path]) -> list[tuple[Path, Karta]]:
    """Every definition of ``files`` with its file: from the user's cache when it holds this
    content (:mod:`workload_map.catalog.cache`), else parsed (and then cached)."""
    from workload_map.catalog import cache

    try:
        key: str | None = cache.source_key([(p.name, read_bytes(p)) for p in files])
    except WorkloadMapError:
        key = None  # unreadable: parsing reports it
    if key is not None:
        cached = cache.load(directory, key, [p.name for p in files])
        if cached is not None:
            return [(directory / name, karta) for name, karta in cached]
    from workload_map.model.loader import load_definitions

    out: list[tuple[Path, Karta]] = []
    for path in files:
        result = load_definitions(path)
        if result.errors or result.rejected:
            first = (result.errors or [f for r in result.rejected for f in r.findings])[0]
            raise CatalogError(f"catalog file {path.name}: {first.format()}")
        out.extend((path, loaded.karta) for loaded in result.definitions)
    if key is not None:
        cache.store(directory, key, [(p.name, karta) for p, karta in out])
    return out


def _gvk_parts(entry: CatalogEntry) -> tuple[str, str, str]:
    gvk = entry.gvk
    return (gvk.group, gvk.version, gvk.kind) if gvk is not None else ("", "", "")


_CATALOG: Catalog | None = None
_CATALOG_LOCK = threading.Lock()


def catalog() -> Catalog:
    """The process-wide catalog (``WMAP_CATALOG_DIR`` or the bundled data directory)."""
    global _CATALOG
    with _CATALOG_LOCK:
        wanted = Path(os.environ.get(CATALOG_DIR_ENV) or DATA_DIR)
        if _CATALOG is None or _CATALOG.directory != wanted:
            _CATALOG = Catalog(wanted)
        return _CATALOG


def reset() -> None:
    """Forget the loaded catalog (tests)."""
    global _CATALOG
    with _CATALOG_LOCK:
        _CATALOG = None


def list_definitions() -> list[Karta]:
    """Every catalog definition, sorted by root GVK string then name."""
    return catalog().list()


def get_definition(api_version: str, kind: str) -> Karta | None:
    """The catalog definition whose root is ``kind`` at ``api_version`` (``group/version``, or
    ``v1`` for the core group), or ``None``."""
    return catalog().get(api_version, kind)


def get_by_name(name: str) -> Karta | None:
    """The catalog definition named ``name`` (its slug), or ``None``."""
    return catalog().by_name(name)
