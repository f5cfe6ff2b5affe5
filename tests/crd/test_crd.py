"""The Karta CRD: generated from the model, shipped unchanged, accepted by a real API server."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from pydantic import BaseModel

from tests.support import crds
from tests.support.cluster import TestCluster
from tests.support.kube import KubeApiError, KubeTestClient
from workload_map.cli.main import cli
from workload_map.crd.descriptions import FIELD_DOCS
from workload_map.crd.generate import build_crd, render_crd, shipped_crd, shipped_crd_text
from workload_map.model import definition

CATALOG = Path(definition.__file__).parent.parent / "catalog" / "data"


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = build_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _at(path: str) -> dict[str, Any]:
    node = _schema()
    for part in path.split("."):
        node = node["items"] if part == "[]" else node["properties"][part]
    return node


def test_shipped_file_matches_the_model() -> None:
    assert shipped_crd_text() == render_crd(), "run: python -m workload_map.crd --write"


def test_wmap_crd_prints_the_shipped_file() -> None:
    result = CliRunner().invoke(cli, ["crd"])
    assert result.exit_code == 0, result.output
    assert result.output == shipped_crd_text()
    as_json = CliRunner().invoke(cli, ["crd", "-o", "json"])
    assert yaml.safe_load(as_json.output) == shipped_crd()


def test_every_model_field_is_documented() -> None:
    missing = []
    for obj in vars(definition).values():
        if isinstance(obj, type) and issubclass(obj, BaseModel) and obj.__module__ == definition.__name__:
            if obj.__name__ in ("Karta", "ObjectMeta", "_Model"):
                continue
            missing += [
                f"{obj.__name__}.{f}" for f in obj.model_fields if (obj.__name__, f) not in FIELD_DOCS
            ]
    assert not missing


def test_names_scope_columns_subresource() -> None:
    crd = build_crd()
    spec = crd["spec"]
    assert crd["metadata"]["name"] == "kartas.run.ai"
    assert spec["scope"] == "Cluster"
    assert spec["names"]["kind"] == "Karta" and spec["names"]["shortNames"] == ["krt"]
    version = spec["versions"][0]
    assert version["name"] == "v1alpha1" and version["subresources"] == {"status": {}}
    cols = {c["name"]: c["jsonPath"] for c in version["additionalPrinterColumns"]}
    assert cols == {
        "Framework": ".spec.structureDefinition.rootComponent.kind.kind",
        "Root Component": ".spec.structureDefinition.rootComponent.name",
        "Age": ".metadata.creationTimestamp",
    }


@pytest.mark.parametrize(
    ("path", "required"),
    [
        ("spec", ["structureDefinition"]),
        ("spec.structureDefinition", ["rootComponent"]),
        ("spec.structureDefinition.rootComponent", ["name"]),
        ("spec.structureDefinition.rootComponent.kind", ["group", "version", "kind"]),
        ("spec.structureDefinition.rootComponent.statusDefinition", ["statusMappings"]),
        ("spec.structureDefinition.rootComponent.statusDefinition.phaseDefinition", ["path"]),
        ("spec.structureDefinition.rootComponent.statusDefinition.conditionsDefinition", ["path"]),
        ("spec.structureDefinition.rootComponent.suspendDefinition", ["suspendActions", "resumeActions"]),
        ("spec.structureDefinition.rootComponent.suspendDefinition.suspendActions.[]", ["path", "value"]),
        ("spec.structureDefinition.rootComponent.podSelector.componentInstanceSelector", ["idPath"]),
        ("spec.structureDefinition.rootComponent.podSelector.replicaSelector", ["keyPath"]),
        ("spec.optimizationInstructions.gangScheduling.podGroups.[]", ["name", "members"]),
        ("spec.optimizationInstructions.gangScheduling.podGroups.[].members.[]", ["componentName"]),
        ("spec.optimizationInstructions.gangScheduling.podGroup", ["name"]),
        (
            "spec.optimizationInstructions.gangScheduling.podGroup.topology",
            ["topologyName", "preferredTopologyLevel", "requiredTopologyLevel"],
        ),
        ("spec.optimizationInstructions.gangScheduling.podGroup.subGroups.[]", ["componentName"]),
    ],
)
def test_required_fields(path: str, required: list[str]) -> None:
    assert _at(path)["required"] == required


def test_matchers_require_expression_and_type() -> None:
    matcher = _at("spec.structureDefinition.rootComponent.statusDefinition.statusMappings.running.[]")
    assert matcher["properties"]["byExpression"]["required"] == ["expression", "expectedResult"]
    assert matcher["properties"]["byConditions"]["items"]["required"] == ["type"]


def test_list_maps_sets_min_items_cel_defaults() -> None:
    sd = "spec.structureDefinition"
    assert _at(f"{sd}.childComponents")["x-kubernetes-list-map-keys"] == ["name"]
    assert _at(f"{sd}.additionalChildKinds")["x-kubernetes-list-map-keys"] == ["kind"]
    gang = "spec.optimizationInstructions.gangScheduling"
    assert _at(f"{gang}.podGroups")["x-kubernetes-list-map-keys"] == ["name"]
    assert _at(f"{gang}.podGroups.[].members")["x-kubernetes-list-map-keys"] == ["componentName"]
    assert _at(f"{gang}.podGroup.subGroups")["x-kubernetes-list-map-keys"] == ["componentName"]
    for key in ("groupByKeyPaths", "filters"):
        assert _at(f"{gang}.podGroups.[].members.[].{key}")["x-kubernetes-list-type"] == "set"
    suspend = _at(f"{sd}.rootComponent.suspendDefinition")
    assert suspend["properties"]["suspendActions"]["minItems"] == 1
    assert suspend["properties"]["resumeActions"]["minItems"] == 1
    selector = _at(f"{sd}.rootComponent.podSelector.componentTypeSelector")
    assert [r["rule"] for r in selector["x-kubernetes-validations"]] == [
        "has(self.keyPath) || has(self.matchLabels)",
        "!has(self.value) || has(self.keyPath)",
    ]
    assert selector["properties"]["keyPath"]["minLength"] == 1
    assert selector["properties"]["matchLabels"]["minProperties"] == 1
    cond = _at(f"{sd}.rootComponent.statusDefinition.conditionsDefinition")["properties"]
    assert {k: cond[k].get("default") for k in cond} == {
        "path": None,
        "typeFieldName": "type",
        "statusFieldName": "status",
        "messageFieldName": "message",
        "reasonFieldName": "reason",
    }
    # Children share the component type: same schema as the root.
    assert _at(f"{sd}.childComponents")["items"]["properties"] == _at(f"{sd}.rootComponent")["properties"]
    assert _schema()["properties"]["status"]["properties"]["conditions"]["x-kubernetes-list-map-keys"] == [
        "type"
    ]


# ------------------------------------------------------------------------- on the API server


def _catalog() -> list[dict[str, Any]]:
    return [yaml.safe_load(p.read_text()) for p in sorted(CATALOG.glob("*.yaml"))]


@pytest.mark.cluster
def test_catalog_definitions_are_accepted(kcluster: TestCluster, kkube: KubeTestClient) -> None:
    docs = _catalog()
    assert len(docs) >= 20
    for doc in docs:
        body = copy.deepcopy(doc)
        body["metadata"] = {"name": f"crdtest-{doc['metadata']['name']}"}
        created = kkube.request("POST", "/apis/run.ai/v1alpha1/kartas", body, params={"dryRun": "All"})
        # The structural schema keeps every field the catalog uses (nothing pruned).
        want = yaml.safe_load(yaml.safe_dump(doc["spec"]))
        got = created["spec"]
        _assert_subset(want, got, doc["metadata"]["name"])


def _assert_subset(want: Any, got: Any, where: str) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict), where
        for k, v in want.items():
            assert k in got, f"{where}.{k} pruned"
            _assert_subset(v, got[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), where
        for i, (a, b) in enumerate(zip(want, got, strict=True)):
            _assert_subset(a, b, f"{where}[{i}]")
    else:
        assert want == got, where


@pytest.mark.cluster
def test_schema_rejects_invalid_definitions(kcluster: TestCluster, kkube: KubeTestClient) -> None:
    base = _catalog()[0]
    cases = {
        "missing root": lambda s: s["structureDefinition"].pop("rootComponent"),
        "kind without version": lambda s: s["structureDefinition"]["rootComponent"]["kind"].pop("version"),
        "name not a string": lambda s: s["structureDefinition"]["rootComponent"].__setitem__("name", 7),
        "empty suspend actions": lambda s: s["structureDefinition"]["rootComponent"].__setitem__(
            "suspendDefinition", {"suspendActions": [], "resumeActions": [{"path": ".x", "value": "1"}]}
        ),
    }
    for label, mutate in cases.items():
        body = copy.deepcopy(base)
        body["metadata"] = {"name": "crdtest-invalid"}
        mutate(body["spec"])
        with pytest.raises(KubeApiError) as info:
            kkube.request("POST", "/apis/run.ai/v1alpha1/kartas", body, params={"dryRun": "All"})
        assert info.value.status_code == 422, label


@pytest.mark.cluster
def test_defaults_applied_by_the_api_server(kcluster: TestCluster, kkube: KubeTestClient) -> None:
    body = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "crdtest-defaults"},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "x",
                    "kind": {"group": "", "version": "v1", "kind": "Pod"},
                    "statusDefinition": {
                        "conditionsDefinition": {"path": ".status.conditions"},
                        "statusMappings": {},
                    },
                }
            }
        },
    }
    created = kkube.request("POST", "/apis/run.ai/v1alpha1/kartas", body, params={"dryRun": "All"})
    cond = created["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["conditionsDefinition"]
    assert cond == {
        "path": ".status.conditions",
        "typeFieldName": "type",
        "statusFieldName": "status",
        "messageFieldName": "message",
        "reasonFieldName": "reason",
    }


@pytest.mark.cluster
def test_downlevelled_crd_installs(kcluster: TestCluster, kkube: KubeTestClient) -> None:
    served = kkube.request("GET", "/apis/run.ai/v1alpha1")
    assert {r["name"] for r in served["resources"]} >= {"kartas", "kartas/status"}
    assert "x-kubernetes-validations" not in str(crds.downlevel_crd(shipped_crd()))
