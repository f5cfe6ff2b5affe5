"""The parsed catalog kept in the user's cache (workload_map.catalog.cache): a hit gives exactly the
definitions the YAML gives, without parsing it; a miss (no file, another package version, an
edited data file, a corrupted or hostile file) parses the YAML and writes the cache again; a home
that cannot be written only means no cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

import workload_map.model.loader as loader
from workload_map.catalog import cache
from workload_map.catalog.registry import DATA_DIR, Catalog, CatalogEntry
from workload_map.model import definition
from workload_map.model.rebuild import rebuild


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The catalog files parsed from YAML (the cache's misses), by name."""
    seen: list[str] = []
    real = loader.load_definitions

    def counting(path: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(loader, "load_definitions", counting)
    return seen


def wire(entries: tuple[CatalogEntry, ...]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(e.name, e.path, e.karta.to_wire()) for e in entries]


@pytest.fixture(scope="module")
def parsed() -> tuple[CatalogEntry, ...]:
    """The bundled catalog as the YAML gives it (no cache: a file stands where the cache would)."""
    saved = os.environ.get("XDG_CACHE_HOME")
    blocker = Path(__file__).resolve()  # a file: the cache directory cannot be made under it
    os.environ["XDG_CACHE_HOME"] = str(blocker)
    try:
        return Catalog(DATA_DIR).entries()
    finally:
        if saved is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = saved


def test_a_hit_gives_the_parsed_definitions_without_parsing(
    home: Path, parses: list[str], parsed: tuple[CatalogEntry, ...]
) -> None:
    first = Catalog(DATA_DIR).entries()
    assert len(parses) == len(list(DATA_DIR.glob("*.yaml"))) > 20  # a miss: every file parsed
    assert cache.cache_path(DATA_DIR).is_file()
    parses.clear()
    second = Catalog(DATA_DIR).entries()
    assert parses == []  # a hit
    for entries in (first, second):
        assert [e.karta for e in entries] == [e.karta for e in parsed]  # the same models
        assert wire(entries) == wire(parsed)  # and the same output, file paths included
    assert [e.karta.root_gvk for e in second] == [e.karta.root_gvk for e in parsed]


def test_another_package_version_or_an_edited_file_is_a_miss(
    home: Path, parses: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    Catalog(data).entries()
    parses.clear()
    monkeypatch.setattr(cache, "__version__", "99.0.0")
    Catalog(data).entries()
    assert len(parses) > 20  # the file was written by another version: parsed again
    parses.clear()
    Catalog(data).entries()
    assert parses == []  # and cached for this one
    job = data / "batch-job-v1.yaml"
    job.write_text(
        job.read_text().replace("  name: batch-job-v1\n", "  name: batch-job-v1\n  labels: {x: edited}\n", 1)
    )
    entries = Catalog(data).entries()
    assert len(parses) > 20
    [edited] = [e for e in entries if e.path == str(job)]
    assert edited.karta.to_wire()["metadata"]["labels"] == {"x": "edited"}


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00\xff" * 1000)


def _edit(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(path: Path) -> None:
        doc = orjson.loads(path.read_bytes())
        change(doc)
        path.write_bytes(orjson.dumps(doc))

    return apply


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc.__setitem__(key, value)


def _first_entry(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda doc: doc["entries"][0].__setitem__(key, value)


def _bad_definition(doc: dict[str, Any]) -> None:
    doc["entries"][0]["definition"]["spec"] = "not a spec"


def _component(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Sets ``key`` of the first definition's root component."""
    return lambda doc: doc["entries"][0]["definition"]["spec"]["structureDefinition"][
        "rootComponent"
    ].__setitem__(key, value)


def _drop_root_component(doc: dict[str, Any]) -> None:
    del doc["entries"][0]["definition"]["spec"]["structureDefinition"]["rootComponent"]


def _deep(path: Path) -> None:
    doc = orjson.loads(path.read_bytes())
    path.write_bytes(
        orjson.dumps({**doc, "entries": []})[:-1] + b',"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    )


def _group_writable(path: Path) -> None:
    path.chmod(0o664)


def _symlink(path: Path) -> None:
    target = path.with_name("elsewhere.json")
    path.rename(target)
    path.symlink_to(target)


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate,
    "garbage": _garbage,
    "not an object": lambda p: p.write_bytes(b"[1, 2]"),
    "another format": _edit(_set("format", "wmap-catalog 0")),
    "another key": _edit(_set("key", "0" * 64)),
    "entries not a list": _edit(_set("entries", {"a": 1})),
    "an entry not an object": _edit(lambda doc: doc["entries"].__setitem__(0, "x")),
    "a file name not in the catalog": _edit(_first_entry("file", "../../etc/passwd")),
    "a definition not an object": _edit(_first_entry("definition", "x")),
    "a definition the model refuses": _edit(_bad_definition),
    # Rebuilt without the validator (model.rebuild), every value's shape is still checked:
    "a number where a string is declared": _edit(_component("name", 7)),
    "a string where a list of models is declared": _edit(
        lambda doc: doc["entries"][0]["definition"]["spec"]["structureDefinition"].__setitem__(
            "childComponents", "x"
        )
    ),
    "an object where a string is declared": _edit(_component("instanceIdPath", {"a": 1})),
    "a field the models do not have": _edit(_component("ownerName", "x")),
    "a required field missing": _edit(_drop_root_component),
    "a boolean where an integer is declared": _edit(
        lambda doc: doc["entries"][0]["definition"]["metadata"].__setitem__("generation", True)
    ),
    "nesting too deep": _deep,
    "group-writable": _group_writable,
    "a symbolic link": _symlink,
    "a FIFO": _fifo,
}


@pytest.mark.parametrize("corrupt", list(CORRUPTIONS), ids=list(CORRUPTIONS))
def test_a_corrupted_or_hostile_file_is_a_miss_and_is_rewritten(
    corrupt: str, home: Path, parses: list[str], parsed: tuple[CatalogEntry, ...]
) -> None:
    Catalog(DATA_DIR).entries()
    path = cache.cache_path(DATA_DIR)
    CORRUPTIONS[corrupt](path)
    parses.clear()
    entries = Catalog(DATA_DIR).entries()
    assert len(parses) > 20  # parsed, not taken from the file
    assert wire(entries) == wire(parsed)
    parses.clear()
    Catalog(DATA_DIR).entries()
    assert parses == []  # written again (whole: a rename over the bad file)
    assert path.is_file() and not path.is_symlink() and path.stat().st_mode & 0o077 == 0


def test_a_file_larger_than_the_bound_is_not_read(
    home: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    Catalog(DATA_DIR).entries()
    size = cache.cache_path(DATA_DIR).stat().st_size
    monkeypatch.setattr(cache, "MAX_CACHE_BYTES", size - 1)
    parses.clear()
    Catalog(DATA_DIR).entries()
    assert len(parses) > 20


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_a_file_of_another_user_is_a_miss(home: Path, parses: list[str]) -> None:
    Catalog(DATA_DIR).entries()
    os.chown(cache.cache_path(DATA_DIR), 65534, 65534)
    parses.clear()
    Catalog(DATA_DIR).entries()
    assert len(parses) > 20


@pytest.fixture
def unwritable_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache root nothing can be created in, even by root: its parent is a regular file."""
    blocker = tmp_path / "home-is-a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    yield blocker


def test_a_home_that_cannot_be_written_still_loads_the_catalog(
    unwritable_home: Path, parses: list[str], parsed: tuple[CatalogEntry, ...]
) -> None:
    assert wire(Catalog(DATA_DIR).entries()) == wire(parsed)
    parses.clear()
    assert wire(Catalog(DATA_DIR).entries()) == wire(parsed)
    assert len(parses) > 20  # parsed every time, nothing written
    assert unwritable_home.read_text() == ""


def test_a_read_only_cache_directory_keeps_its_file_and_leaves_no_temporary_file(
    home: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    Catalog(DATA_DIR).entries()
    folder = cache.cache_path(DATA_DIR).parent
    before = sorted(p.name for p in folder.iterdir())
    monkeypatch.setattr(cache, "__version__", "99.0.0")  # a miss, so a write is tried

    def no_space(*_args: Any, **_kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_space)
    Catalog(DATA_DIR).entries()
    assert sorted(p.name for p in folder.iterdir()) == before  # no temporary file left behind


def test_a_hit_builds_no_validator(tmp_path: Path) -> None:
    """The models defer their validators (issue 24: building them is about a fifth of describe's
    start-up beside its reads): a process reading the catalog from the cache builds none, and the
    rebuilt definitions still validate and dump as parsed ones do."""
    code = (
        "import sys\n"
        "from workload_map.catalog.registry import Catalog, DATA_DIR\n"
        "from workload_map.model import definition\n"
        "entries = Catalog(DATA_DIR).entries()\n"
        "built = sorted(n for n, c in vars(definition).items()\n"
        "               if isinstance(c, type) and issubclass(c, definition._Model)\n"
        "               and c.__pydantic_complete__)\n"
        "print(len(entries), built)\n"
        "k = entries[0].karta\n"
        "assert definition.Karta.model_validate(k.to_wire()) == k\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("WMAP_CATALOG_DIR", None)
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr
    count = len(list(DATA_DIR.glob("*.yaml")))
    assert runs[1].stdout.split(" ", 1) == [str(count), "[]\n"]  # the hit: nothing built
    assert runs[0].stdout.split(" ", 1)[1] != "[]\n"  # the miss validated (parsed the YAML)


def test_a_change_to_the_models_is_a_miss(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key holds the models' fields: a model changed without a version bump (an editable
    install) does not read a cache the old models wrote."""
    files = [("a.yaml", b"x")]
    before = cache.source_key(files)
    fields = dict(definition.ObjectMeta.model_fields)
    fields["extra_field"] = fields["name"]
    monkeypatch.setattr(definition.ObjectMeta, "model_fields", fields)
    cache._models.cache_clear()
    try:
        assert cache.source_key(files) != before
    finally:
        monkeypatch.undo()
        cache._models.cache_clear()
    assert cache.source_key(files) == before


def test_rebuild_refuses_a_field_shape_it_does_not_know() -> None:
    """A model field of a shape rebuild cannot check fails loudly (tests, not users' caches)."""

    class Odd(definition._Model):
        when: float = 0.0

    with pytest.raises(TypeError, match=r"Odd\.when: rebuild does not know the field type"):
        rebuild(Odd, {"when": 1.0})
