"""Lifecycle fixtures (``tests/catalog/lifecycles/<slug>/<stage>.yaml``: ``object`` + ``expect``):
each object is valid against the real CRD (our structural validator, and a server-side dry-run
create on the test API server), resolves to the expected phases, replicas and GPUs, and gives
the expected KAI PodGroups."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.catalog.crdmap import CRD_FILES, schemas_for
from tests.catalog.lifecycle import LC, catalog_definition, load_fixture
from workload_map.cases import check_case
from workload_map.lint.objects import validate_object
from workload_map.resolve.gangs import group_pod

pytestmark = pytest.mark.corpus  # reads the framework CRDs (tests/catalog/crdmap.py)

FIXTURES = sorted(LC.glob("*/*.yaml"))
IDS = [f"{p.parent.name}/{p.stem}" for p in FIXTURES]


def test_fixture_dirs_are_catalog_slugs() -> None:
    assert {p.parent.name for p in FIXTURES} <= set(CRD_FILES)


@pytest.mark.parametrize("path", FIXTURES, ids=IDS)
def test_object_valid_against_crd_schema(path: Path) -> None:
    obj = load_fixture(path)["object"]
    findings = validate_object(obj, schemas_for(path.parent.name))
    assert findings == [], "\n".join(f.format() for f in findings)


@pytest.mark.parametrize("path", FIXTURES, ids=IDS)
def test_resolves_to_expected(path: Path) -> None:
    """Phases, replicas per component and instance, GPUs and KAI's PodGroups, checked by the
    same code ``wmap test`` runs (workload_map.cases)."""
    result = check_case(catalog_definition(path.parent.name), path.name, load_fixture(path))
    assert result.passed, "\n".join(d.text() for d in result.differences)
    assert result.checks >= 2  # every fixture pins at least its phases and its replicas


@pytest.fixture(scope="module")
def dry_run_ns(kube: Any) -> str:
    ns: str = kube.create_namespace("wmap-lc")
    return ns


# The test cluster serves one CRD per name: mpi-operator's v2beta1 MPIJob and the v1alpha1-only
# Dynamo CRD (tests/support/crds.py DEFAULT_PREFER); fixtures of the other versions cannot be
# dry-run there.
NOT_SERVED = {"kubeflow-org-mpijob-v1", "nvidia-com-dynamographdeployment-v1beta1"}


@pytest.mark.parametrize(
    "path",
    [p for p in FIXTURES if p.parent.name not in NOT_SERVED],
    ids=[i for p, i in zip(FIXTURES, IDS, strict=True) if p.parent.name not in NOT_SERVED],
)
def test_server_side_dry_run_create(path: Path, kube: Any, dry_run_ns: str) -> None:
    """kube-apiserver v1.20 validates the object against the (down-levelled) structural schema."""
    from tests.support.kube import resource_path

    obj = load_fixture(path)["object"]
    meta = {k: v for k, v in obj["metadata"].items() if k in ("name", "labels", "annotations")}
    namespace = dry_run_ns
    body = {**obj, "metadata": {**meta, "namespace": namespace}}
    body.pop("status", None)
    if (obj["apiVersion"], obj["kind"]) == ("batch/v1", "CronJob"):
        # kube-apiserver v1.20 serves CronJob only as batch/v1beta1 (same fields the catalog reads).
        body["apiVersion"] = "batch/v1beta1"
        obj = body
    plural, namespaced = kube.plural_for(obj["apiVersion"], obj["kind"])
    url = resource_path(obj["apiVersion"], plural, namespace=namespace if namespaced else None)
    created = kube.request("POST", url, body, params={"dryRun": "All"})
    assert created["metadata"]["name"] == meta["name"]


@pytest.mark.parametrize("replicas", [1, 2, 3])
def test_grove_gang_is_one_base_podgang_per_replica(replicas: int) -> None:
    # Grove creates one PodGang per PodCliqueSet replica (framework-shapes.md): its size must not
    # grow with the number of replicas (issue #11: replicas 2 asked for each gang twice).
    import copy

    path = LC / "grove-io-podcliqueset-v1alpha1" / "running.yaml"
    data = load_fixture(path)
    obj = copy.deepcopy(data["object"])
    obj["spec"]["replicas"] = replicas
    gang = data["expect"]["gangs"][0]
    plan = group_pod(catalog_definition("grove-io-podcliqueset-v1alpha1"), obj, gang["pod"])
    assert plan.min_available == gang["min_member"]
