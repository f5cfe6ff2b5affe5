"""Catalog registry and the definitions merge (spec 4 and 5.2), no cluster needed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.cli.conftest import DATA
from tests.cli.helpers import wmap
from workload_map.catalog.registry import Catalog, CatalogError
from workload_map.definitions_source import (
    DefinitionEntry,
    DefinitionSet,
    decode_cluster_items,
    merge_definitions,
    read_cluster_definitions,
)
from workload_map.errors import ForbiddenError, NotFoundError
from workload_map.model.loader import load_definition


def entry(
    name: str, origin: str = "catalog", file: str = "jobset-x-k8s-io-jobset-v1alpha2"
) -> DefinitionEntry:
    karta = load_definition(DATA / "catalog" / f"{file}.yaml").karta
    karta = karta.model_copy(update={"metadata": karta.metadata.model_copy(update={"name": name})})
    return DefinitionEntry(karta, origin)  # type: ignore[arg-type]


def test_catalog_lookups_and_order() -> None:
    cat = Catalog(DATA / "catalog")
    names = [k.name for k in cat.list()]
    assert names == sorted(names, key=lambda n: [e.name for e in cat.entries()].index(n))
    assert cat.get("jobset.x-k8s.io/v1alpha2", "JobSet") is not None
    assert cat.get("jobset.x-k8s.io/v1", "JobSet") is None
    assert cat.by_name("batch-job-v1") is not None
    keys = [f"{e.gvk}" for e in cat.entries()]
    assert keys == sorted(keys)


def test_catalog_duplicate_gvk_is_an_error(tmp_path: Path) -> None:
    text = (DATA / "catalog" / "batch-job-v1.yaml").read_text()
    (tmp_path / "a.yaml").write_text(text)
    (tmp_path / "b.yaml").write_text(text.replace("name: batch-job-v1", "name: other"))
    with pytest.raises(CatalogError, match="both claim batch/v1, Kind=Job"):
        Catalog(tmp_path).list()


def test_bundled_catalog_loads() -> None:
    from workload_map.catalog.registry import DATA_DIR

    cat = Catalog(DATA_DIR)
    if not cat.entries():
        pytest.skip("bundled catalog not written yet")
    assert cat.get("jobset.x-k8s.io/v1alpha2", "JobSet") is not None


def test_merge_cluster_replaces_catalog_and_collisions_warn() -> None:
    entries, warnings = merge_definitions([entry("cat")], [entry("c1", "cluster"), entry("c2", "cluster")])
    assert [e.name for e in entries] == ["c1", "c2"]
    assert warnings[0].reason == "collision"
    assert warnings[0].message == (
        '2 cluster Karta definitions claim jobset.x-k8s.io/v1alpha2, Kind=JobSet: "c1", "c2"'
    )
    entries, _ = merge_definitions([entry("cat")], [entry("c", "cluster")], [entry("mine", "local")])
    assert [(e.name, e.origin) for e in entries] == [("mine", "local")]


def test_match_token_forms() -> None:
    from workload_map.type_words import offline_candidates

    ds = DefinitionSet([entry("js"), entry("job", file="batch-job-v1")])
    for token in ("JobSet", "jobsets", "jobset.jobset.x-k8s.io", "jobset.v1alpha2.jobset.x-k8s.io"):
        assert [e.name for e in offline_candidates(ds, token)] == ["js"], token
    assert [e.name for e in offline_candidates(ds, "jobs")] == ["job"]
    assert offline_candidates(ds, "nope") == []
    assert ds.types() == ["job", "jobset"]


def test_cluster_read_failures_become_warnings() -> None:
    def raise_(exc: Exception):  # type: ignore[no-untyped-def]
        def f() -> list[dict[str, object]]:
            raise exc

        return f

    _, w = read_cluster_definitions(raise_(NotFoundError(404, "NotFound", "x")))
    assert w[0].reason == "no_crd"
    _, w = read_cluster_definitions(raise_(ForbiddenError(403, "Forbidden", "x")))
    assert w[0].reason == "forbidden"
    entries, w = decode_cluster_items([{"metadata": {"name": "bad"}, "spec": 3}])
    assert entries == [] and w[0].message.startswith('skipping Karta definition "bad": ')


def test_local_definitions_and_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    manifest = str(DATA / "jobset-leader-workers.yaml")
    mine = yaml.safe_load((DATA / "catalog" / "jobset-x-k8s-io-jobset-v1alpha2.yaml").read_text())
    mine["metadata"]["name"] = "my-local-jobset"
    (tmp_path / "defs").mkdir()
    (tmp_path / "defs" / "j.yaml").write_text(yaml.safe_dump(mine))
    rc, out, _ = wmap("describe", "-f", manifest, "--definitions", str(tmp_path / "defs"))
    assert rc == 0 and "definition: my-local-jobset (local)" in out
    (tmp_path / "bad.yaml").write_text("not: a definition\n")
    rc, _, err = wmap("describe", "-f", manifest, "--definitions", str(tmp_path / "bad.yaml"))
    assert rc == 2 and "--definitions" in err
    # config file and environment precedence for -o
    cfg = tmp_path / "config.yaml"
    cfg.write_text("output: json\n")
    rc, out, _ = wmap("describe", "-f", manifest, "--config", str(cfg))
    assert out.startswith("{")
    monkeypatch.setenv("WMAP_OUTPUT", "yaml")
    rc, out, _ = wmap("describe", "-f", manifest, "--config", str(cfg))
    assert out.startswith("name: train")
    rc, out, _ = wmap("describe", "-f", manifest, "--config", str(cfg), "-o", "table")
    assert out.startswith("JobSet/train")
    monkeypatch.delenv("WMAP_OUTPUT")
    monkeypatch.setenv("KARTA_CONFIG", str(cfg))
    rc, out, _ = wmap("describe", "-f", manifest)
    assert out.startswith("{")
    cfg.write_text("output: json\ncolor: true\n")
    rc, _, err = wmap("describe", "-f", manifest)
    assert rc == 2 and "unknown key(s) color" in err
    rc, _, err = wmap("describe", "-f", manifest, "--config", str(tmp_path / "missing.yaml"))
    assert rc == 2 and "does not exist" in err
