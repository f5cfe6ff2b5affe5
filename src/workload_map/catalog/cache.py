"""The parsed catalog kept in the user's cache, so a command does not parse 31 YAML files first.

Issue 24 (``describe`` of 1,000 pods within ``kubectl get pods -o json``'s time): reading the
bundled catalog from YAML (libyaml composing, the located data, unknown-field and rule checks,
the models) costs about four times rebuilding the same models from their JSON dump.

The cache file, ``<cache root>/catalog/<hash of the directory>.json`` (one per catalog directory,
rewritten when anything changes), holds the definitions as :meth:`Karta.model_dump` wrote them,
under a key: the sha256 of the format, the package version, the models' fields
(:func:`~workload_map.model.rebuild.fingerprint`) and every data file's name and bytes. A key that
differs (another version, changed models, an edited or added file) is a miss, so the cache is
never stale. The file is untrusted: read only when it is this user's and nobody else may write it,
at most :data:`MAX_CACHE_BYTES`, parsed with orjson and rebuilt by
:func:`~workload_map.model.rebuild.rebuild`, which checks every value's shape against the models'
fields without building pydantic's validators (about 30 ms of a command's start-up); anything
unexpected is a miss, and a miss parses the YAML and writes the file again (atomically; a read-only
home only means no cache). The catalog's own checks (one definition per GVK and name, a root GVK)
run on cached definitions as on parsed ones.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from pathlib import Path

import orjson

from workload_map import __version__
from workload_map.model.cachefile import cache_root, read_private, write_atomic
from workload_map.model.definition import Karta
from workload_map.model.rebuild import fingerprint, rebuild

FORMAT = "wmap-catalog 1"
#: Bytes a cache file may have (the bundled catalog's is about 175 KB); a larger one is a miss.
MAX_CACHE_BYTES = 8 << 20
#: Definitions a cache file may hold.
MAX_CACHED_DEFINITIONS = 10_000

__all__ = ["FORMAT", "MAX_CACHE_BYTES", "cache_path", "load", "source_key", "store"]


def source_key(files: Sequence[tuple[str, bytes]]) -> str:
    """The key of a catalog directory's content: format, package version, each file's name and
    bytes (``files`` in the order the catalog reads them)."""
    digest = hashlib.sha256(f"{FORMAT}\0{__version__}\0{_models()}\0".encode())
    for name, data in files:
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


@functools.cache
def _models() -> str:
    """The definition models' fields: a cache written by other models is a miss."""
    return fingerprint(Karta)


def cache_path(directory: Path) -> Path:
    """Where the parsed catalog of ``directory`` is kept."""
    where = hashlib.sha256(str(directory.resolve()).encode()).hexdigest()[:32]
    return cache_root() / "catalog" / f"{where}.json"


def load(directory: Path, key: str, names: Sequence[str]) -> list[tuple[str, Karta]] | None:
    """The cached ``(file name, definition)`` pairs of ``directory`` when the cache holds them
    under ``key``, each file name one of ``names``; ``None`` (a miss) otherwise."""
    raw = read_private(cache_path(directory), MAX_CACHE_BYTES)
    if raw is None:
        return None
    known = set(names)
    try:
        doc = orjson.loads(raw)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("key") != key:
            return None
        items = doc.get("entries")
        if not isinstance(items, list) or len(items) > MAX_CACHED_DEFINITIONS:
            return None
        out: list[tuple[str, Karta]] = []
        for item in items:
            if not isinstance(item, dict):
                return None
            name, data = item.get("file"), item.get("definition")
            if not isinstance(name, str) or name not in known or not isinstance(data, dict):
                return None
            out.append((name, rebuild(Karta, data)))
        return out
    except (orjson.JSONDecodeError, ValueError, RecursionError):
        return None


def store(directory: Path, key: str, entries: Sequence[tuple[str, Karta]]) -> bool:
    """Keep ``entries`` (file name, definition) of ``directory`` under ``key``; ``False`` when the
    cache cannot be written."""
    doc = {
        "format": FORMAT,
        "key": key,
        "entries": [
            {"file": name, "definition": karta.model_dump(mode="json", by_alias=True)}
            for name, karta in entries
        ],
    }
    return write_atomic(cache_path(directory), orjson.dumps(doc))
