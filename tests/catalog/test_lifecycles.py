"""Lifecycle fixtures (``tests/catalog/lifecycles/<slug>/<stage>.yaml``: ``object`` + ``expect``):
each object is valid against the real CRD (our structural validator, and a server-side dry-run
create on the test API server), resolves to the expected phases, replicas and GPUs, and gives
the expected KAI PodGroups."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.catalog.crdmap import CRD_FILES, schemas_for
from workload_map.catalog.registry import DATA_DIR
from workload_map.lint.objects import validate_object
from workload_map.model.loader import load_definitions
from workload_map.resolve import resolve
from workload_map.resolve.gangs import group_pod

ROOT = Path(__file__).parent / "lifecycles"
FIXTURES = sorted(ROOT.glob("*/*.yaml"))
IDS = [f"{p.parent.name}/{p.stem}" for p in FIXTURES]


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    return data


def definition(slug: str) -> Any:
    return load_definitions(str(DATA_DIR / f"{slug}.yaml")).definitions[0].karta


def test_fixture_dirs_are_catalog_slugs() -> None:
    assert {p.parent.name for p in FIXTURES} <= set(CRD_FILES)


@pytest.mark.parametrize("path", FIXTURES, ids=IDS)
def test_object_valid_against_crd_schema(path: Path) -> None:
    obj = load(path)["object"]
    findings = validate_object(obj, schemas_for(path.parent.name))
    assert findings == [], "\n".join(f.format() for f in findings)


@pytest.mark.parametrize("path", FIXTURES, ids=IDS)
def test_resolves_to_expected(path: Path) -> None:
    data = load(path)
    expect = data["expect"]
    w = resolve(definition(path.parent.name), data["object"])
    if "phases" in expect:
        assert [p.value for p in w.status.phases] == expect["phases"]
    for comp, instances in (expect.get("components") or {}).items():
        got = {i.id: i.desired_replicas for i in w.components[comp].instances}
        assert got == {str(k): v for k, v in instances.items()}, comp
    if "gpus" in expect:
        assert w.resources.gpus == expect["gpus"]


@pytest.mark.parametrize("path", FIXTURES, ids=IDS)
def test_gangs_match(path: Path) -> None:
    data = load(path)
    obj = data["object"]
    for gang in data["expect"].get("gangs") or ():
        plan = group_pod(definition(path.parent.name), obj, gang["pod"])
        assert plan.name == f"pg-{obj['metadata']['uid']}-{gang['name_suffix']}"
        assert plan.min_available == gang["min_member"]
