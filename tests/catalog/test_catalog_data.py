"""Shape checks of the catalog data files and their lifecycle fixtures.

These tests only read YAML; they do not use the resolver or the jq engine.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "src" / "workload_map" / "catalog" / "data"
LIFECYCLES = Path(__file__).resolve().parent / "lifecycles"

DEFINITIONS = sorted(DATA.glob("*.yaml"))
STATUS_KEYS = {
    "initializing",
    "running",
    "completed",
    "failed",
    "degraded",
    "suspended",
    "suspending",
    "resuming",
}
PHASE_ORDER = [
    "Resuming",
    "Suspending",
    "Suspended",
    "Running",
    "Failed",
    "Completed",
    "Initializing",
    "Degraded",
]
# Constructs the upstream static jq validator rejects (upstream-spec 2.9).
BANNED = re.compile(
    r"(?<![=!<>])=(?!=)|\|=|\+=|-=|\*=|/=|%=|//=|\bdel\s*\(|\.\.(?![\w\"])|\b(range|paths|recurse|walk|repeat)\b"
)
JQ_FIELDS = {
    "podTemplateSpecPath",
    "podSpecPath",
    "metadataPath",
    "replicasPath",
    "minReplicasPath",
    "maxReplicasPath",
    "path",
    "expression",
    "instanceIdPath",
    "keyPath",
    "idPath",
}


def _load(path: Path) -> dict:
    with path.open() as fh:
        return yaml.safe_load(fh)


def _components(defn: dict) -> list[dict]:
    sd = defn["spec"]["structureDefinition"]
    return [sd["rootComponent"], *(sd.get("childComponents") or [])]


def _jq_strings(node, path=""):
    if isinstance(node, dict):
        for key, value in node.items():
            sub = f"{path}.{key}"
            if isinstance(value, str) and (key in JQ_FIELDS or key.endswith("Path")):
                yield sub, value
            elif key in ("groupByKeyPaths", "filters") and isinstance(value, list):
                for i, item in enumerate(value):
                    yield f"{sub}[{i}]", item
            else:
                yield from _jq_strings(value, sub)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _jq_strings(item, f"{path}[{i}]")


def test_catalog_is_not_empty() -> None:
    assert len(DEFINITIONS) >= 30


@pytest.mark.parametrize("path", DEFINITIONS, ids=lambda p: p.stem)
def test_definition_shape(path: Path) -> None:
    defn = _load(path)
    assert defn["apiVersion"] == "run.ai/v1alpha1"
    assert defn["kind"] == "Karta"
    assert defn["metadata"]["name"] == path.stem
    root = defn["spec"]["structureDefinition"]["rootComponent"]
    gvk = root["kind"]
    group = gvk["group"].replace(".", "-") if gvk["group"] else "core"
    assert path.stem == f"{group}-{gvk['kind'].lower()}-{gvk['version']}"
    assert "ownerRef" not in root
    assert "optimizationInstructions" in defn["spec"]

    names = [c["name"] for c in _components(defn)]
    assert len(names) == len(set(names)), "component names must be unique"
    for child in defn["spec"]["structureDefinition"].get("childComponents") or []:
        assert child.get("ownerRef") in names

    sd = root["statusDefinition"]
    assert set(sd["statusMappings"]) <= STATUS_KEYS
    cd = sd.get("conditionsDefinition")
    uses_conditions = any(m.get("byConditions") for ms in sd["statusMappings"].values() for m in ms)
    uses_phase = any(m.get("byPhase") for ms in sd["statusMappings"].values() for m in ms)
    if uses_conditions:
        assert cd is not None
    if uses_phase:
        assert sd.get("phaseDefinition")
    if cd is not None:
        for key in ("typeFieldName", "statusFieldName", "messageFieldName", "reasonFieldName"):
            assert cd.get(key), f"conditionsDefinition.{key} must be set explicitly"

    for comp in _components(defn):
        spec = comp.get("specDefinition") or {}
        shapes = [
            k for k in ("podTemplateSpecPath", "podSpecPath", "fragmentedPodSpecDefinition") if k in spec
        ]
        assert len(shapes) <= 1
        selector = comp.get("podSelector") or {}
        assert bool(comp.get("instanceIdPath")) == bool(selector.get("componentInstanceSelector"))
        cts = selector.get("componentTypeSelector")
        if cts is not None:
            assert cts.get("keyPath") or cts.get("matchLabels")
            if "value" in cts:
                assert cts.get("keyPath")

    gang = (defn["spec"]["optimizationInstructions"] or {}).get("gangScheduling") or {}
    for group_def in gang.get("podGroups") or []:
        for member in group_def["members"]:
            assert member["componentName"] in names

    for where, expr in _jq_strings(defn["spec"]):
        stripped = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
        assert not BANNED.search(stripped), f"{where}: forbidden jq construct in {expr!r}"


FIXTURES = sorted(LIFECYCLES.glob("*/*.yaml"))


def test_every_definition_has_fixtures() -> None:
    with_fixtures = {p.parent.name for p in FIXTURES}
    assert {p.stem for p in DEFINITIONS} <= with_fixtures


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture_shape(path: Path) -> None:
    assert (DATA / f"{path.parent.name}.yaml").exists()
    doc = _load(path)
    assert set(doc) == {"object", "expect"}
    obj, expect = doc["object"], doc["expect"]
    meta = obj["metadata"]
    for key in ("name", "namespace", "uid", "creationTimestamp", "generation"):
        assert key in meta
    if path.stem == "created":
        assert "status" not in obj
    phases = expect["phases"]
    assert phases == ["Undefined"] or (phases and [p for p in PHASE_ORDER if p in phases] == phases)
    assert isinstance(expect["gpus"], int)
    defn = _load(DATA / f"{path.parent.name}.yaml")
    scaled = {c["name"] for c in _components(defn) if c.get("scaleDefinition")}
    assert set(expect["components"]) == scaled
    for gang in expect.get("gangs") or []:
        assert gang["pod"]["kind"] == "Pod"
        assert isinstance(gang["min_member"], int)
        assert gang["name_suffix"]
