"""``wmap generate`` on every CRD of the corpus (``$WMAP_SHARED_DIR/crds``): each kind's draft
loads, validates without errors and lints clean against the same CRD, says why for every guess,
and reproduces the catalog's pod locations and replica fields (bench/bench_generate.py prints the
table; this pins it)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import yaml
from bench.bench_generate import compare

from tests.cli.helpers import wmap
from tests.support.apiserver_binary import shared_dir
from workload_map.catalog.registry import DATA_DIR
from workload_map.generate import GenerateError, draft_from_schemas, pick_schema
from workload_map.lint import SchemaSet, lint_definition, load_crd_file
from workload_map.model.loader import load_definitions, load_definitions_text
from workload_map.model.validator import validate_definition

CRDS = shared_dir() / "crds"
pytestmark = pytest.mark.corpus


def _kinds() -> list[tuple[Path, str]]:
    if not CRDS.is_dir():
        return []
    out = []
    for path in sorted(CRDS.glob("*/*.yaml")):
        for kind in sorted({s.kind for s in load_crd_file(path)}):
            out.append((path, kind))
    return out


KINDS = _kinds()


@pytest.mark.parametrize(("path", "kind"), KINDS, ids=[f"{p.parent.name}/{k}" for p, k in KINDS])
def test_every_draft_validates_and_lints_clean(path: Path, kind: str) -> None:
    schemas = load_crd_file(path)
    draft = draft_from_schemas(schemas, kind=kind, source=path.name)
    loaded = load_definitions_text(draft.text, name=f"{kind}.yaml")
    assert not loaded.errors and not loaded.rejected, [f.format() for f in loaded.errors]
    karta = loaded.definitions[0].karta
    assert karta.model_dump(by_alias=True, exclude_none=True)["metadata"]["name"] == draft.name
    errors = [f.format() for f in validate_definition(karta) if f.severity == "error"]
    assert errors == []
    assert [f.format() for f in lint_definition(karta, SchemaSet().add(schemas))] == []
    assert yaml.safe_load(draft.text) == draft.karta
    lines = draft.text.splitlines()
    for i, line in enumerate(lines):  # every inferred path says where it came from
        if line.strip().startswith(
            ("podTemplateSpecPath:", "podSpecPath:", "replicasPath:", "instanceIdPath:")
        ):
            assert lines[i - 1].strip().startswith("#"), line


@functools.lru_cache(maxsize=1)
def _catalog_with_crds() -> list[tuple[str, list]]:
    if not CRDS.is_dir():
        return []
    index: dict[tuple[str, str], list] = {}
    for path in sorted(CRDS.glob("*/*.yaml")):
        for s in load_crd_file(path):
            index.setdefault((s.group, s.kind), []).append(s)
    out = []
    for path in sorted(DATA_DIR.glob("*.yaml")):
        karta = load_definitions(str(path)).definitions[0].karta
        gvk = karta.root_gvk
        schemas = [s for s in index.get((gvk.group, gvk.kind), []) if s.version == gvk.version]
        if schemas:
            out.append((path.stem, schemas))
    return out


@pytest.mark.parametrize(("slug", "schemas"), _catalog_with_crds(), ids=[s for s, _ in _catalog_with_crds()])
def test_the_draft_reproduces_the_catalog(slug: str, schemas: list) -> None:
    karta = load_definitions(str(DATA_DIR / f"{slug}.yaml")).definitions[0].karta
    result = compare(karta, schemas)
    assert result["pods"][0] == result["pods"][1]
    assert result["status"][0] == result["status"][1]
    assert result["fields"][0] == result["fields"][1]
    assert result["missing"] == []


def test_version_and_kind_choice() -> None:
    schemas = load_crd_file(CRDS / "kubeflow-trainer" / "trainer.kubeflow.org_trainjobs.yaml")
    assert pick_schema(schemas).version == schemas[0].version
    with pytest.raises(GenerateError, match='no version "v9"'):
        pick_schema(schemas, version="v9")
    with pytest.raises(GenerateError, match='no kind "Nope"'):
        pick_schema(schemas, kind="Nope")


def test_cli(tmp_path: Path) -> None:
    crd = CRDS / "kuberay" / "ray.io_rayclusters.yaml"
    rc, out, err = wmap("generate", "--crd", str(crd))
    assert rc == 0, err
    assert yaml.safe_load(out)["metadata"]["name"] == "ray-io-raycluster-v1"
    draft = tmp_path / "draft.yaml"
    draft.write_text(out)
    rc, out, err = wmap("validate", str(draft))
    assert rc == 0, out + err
    rc, out, err = wmap("lint", str(draft), "--crd", str(crd))
    assert rc == 0, out + err
    rc, _, err = wmap("generate", "--crd", str(tmp_path / "missing.yaml"))
    assert rc == 2 and "missing.yaml" in err
    rc, _, err = wmap("generate", "--crd", str(crd), "--kind", "Nope")
    assert rc == 2 and 'no kind "Nope"' in err
    rc, _, err = wmap("generate")
    assert rc == 2 and "--crd FILE, or a TYPE" in err


def test_a_condition_type_enum_is_mapped_by_name() -> None:
    """No corpus CRD enumerates its condition types; a schema that does gets them mapped."""
    from workload_map.generate import draft_definition

    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"suspend": {"type": "boolean"}}},
            "status": {
                "type": "object",
                "properties": {
                    "conditions": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "type": {
                                    "type": "string",
                                    "enum": ["Available", "Complete", "Failed", "Frobbed"],
                                },
                                "status": {"type": "string"},
                            },
                        },
                    }
                },
            },
        },
    }
    draft = draft_definition("example.com", "v1", "Widget", schema, source="test")
    mappings = draft.karta["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"][
        "statusMappings"
    ]
    assert mappings["running"] == [{"byConditions": [{"type": "Available", "status": "True"}]}]
    assert mappings["completed"] == [{"byConditions": [{"type": "Complete", "status": "True"}]}]
    assert mappings["failed"] == [{"byConditions": [{"type": "Failed", "status": "True"}]}]
    assert "not mapped (review): Frobbed" in draft.text
    assert "suspended" in mappings  # from .spec.suspend
    loaded = load_definitions_text(draft.text, name="widget.yaml")
    assert (
        not loaded.errors
        and [f for f in validate_definition(loaded.definitions[0].karta) if f.severity == "error"] == []
    )


#: Where the draft's pod counts differ from the catalog's on real objects, and why.
COUNT_LIMITS = {
    # The revision's pods come from the template annotation autoscaling.knative.dev/min-scale,
    # which no schema names.
    "serving-knative-dev-service-v1": "min-scale annotation",
}


def _with_fixtures() -> list[str]:
    """Catalog families with lifecycle fixtures whose definition reads pod templates or specs
    (NIMService, Milvus and the like create theirs from fields, which the bench leaves out)."""
    from bench.bench_generate import LIFECYCLES, _components, _pod_locations

    out = []
    for slug, _ in _catalog_with_crds():
        karta = load_definitions(str(DATA_DIR / f"{slug}.yaml")).definitions[0].karta
        if any((LIFECYCLES / slug).glob("*.yaml")) and any(_pod_locations(c) for c in _components(karta)):
            out.append(slug)
    return out


@pytest.mark.parametrize("slug", _with_fixtures())
def test_drafted_replicas_count_what_the_catalog_counts(slug: str) -> None:
    """On every lifecycle fixture (real objects) the draft's replicas give the catalog's desired
    pods for each pod location, except where COUNT_LIMITS says the count is not in the schema."""
    from bench.bench_generate import LIFECYCLES, counts_agree

    schemas = dict(_catalog_with_crds())[slug]
    karta = load_definitions(str(DATA_DIR / f"{slug}.yaml")).definitions[0].karta
    objects = [yaml.safe_load(p.read_text())["object"] for p in sorted((LIFECYCLES / slug).glob("*.yaml"))]
    agree, total = counts_agree(karta, schemas, objects)
    assert total >= len(objects)
    if slug in COUNT_LIMITS:
        assert agree < total, f"{slug} now counts exactly: drop it from COUNT_LIMITS"
    else:
        assert agree == total


def test_every_family_with_fixtures_is_counted() -> None:
    assert len(_with_fixtures()) >= 20 and set(COUNT_LIMITS) <= set(_with_fixtures())


def test_the_documented_table_is_the_measured_one() -> None:
    """docs/new-type.md carries bench/bench_generate.py's table: it must be the one measured now."""
    import re

    from bench.bench_generate import measure, table

    doc = (Path(__file__).resolve().parents[2] / "docs" / "new-type.md").read_text()
    found = re.search(r"^```\n(definition .*?)^```", doc, flags=re.S | re.M)
    assert found is not None, "docs/new-type.md has no generate-vs-catalog table"
    assert found.group(1).rstrip("\n").splitlines() == table(measure(CRDS), missed=False)
