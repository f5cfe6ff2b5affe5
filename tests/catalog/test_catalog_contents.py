"""The catalog covers every required kind, validates clean, has lifecycle fixtures for every
stage, and its gang fixtures encode KAI's native numbers (consumers.md 5.3) where KAI has a
native plugin."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.catalog.lifecycle import LC, load_fixture
from workload_map.catalog.registry import DATA_DIR, catalog
from workload_map.model.loader import load_definitions
from workload_map.model.validator import READ_ONLY_PATHS_ANNOTATION

REQUIRED: list[tuple[str, str, str]] = [
    ("", "v1", "Pod"),
    ("batch", "v1", "Job"),
    ("batch", "v1", "CronJob"),
    ("apps", "v1", "Deployment"),
    ("apps", "v1", "StatefulSet"),
    ("jobset.x-k8s.io", "v1alpha2", "JobSet"),
    ("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet"),
    ("kubeflow.org", "v1", "PyTorchJob"),
    ("kubeflow.org", "v1", "MPIJob"),
    ("kubeflow.org", "v2beta1", "MPIJob"),
    ("ray.io", "v1", "RayCluster"),
    ("ray.io", "v1", "RayJob"),
    ("ray.io", "v1", "RayService"),
    ("serving.kserve.io", "v1beta1", "InferenceService"),
    ("serving.kserve.io", "v1alpha1", "LLMInferenceService"),
    ("serving.kserve.io", "v1alpha2", "LLMInferenceService"),
    ("serving.knative.dev", "v1", "Service"),
    ("apps.nvidia.com", "v1alpha1", "NIMService"),
    ("apps.nvidia.com", "v1alpha1", "NIMCache"),
    ("milvus.io", "v1beta1", "Milvus"),
    ("grove.io", "v1alpha1", "PodCliqueSet"),
    ("nvidia.com", "v1alpha1", "DynamoGraphDeployment"),
    ("nvidia.com", "v1beta1", "DynamoGraphDeployment"),
    ("agents.x-k8s.io", "v1beta1", "Sandbox"),
    ("trainer.kubeflow.org", "v1alpha1", "TrainJob"),
    ("kubeflow.org", "v1", "TFJob"),
    ("kubeflow.org", "v1", "XGBoostJob"),
    ("kubeflow.org", "v1", "JAXJob"),
    ("batch.volcano.sh", "v1alpha1", "Job"),
    ("sparkoperator.k8s.io", "v1beta2", "SparkApplication"),
]

FILES = sorted(DATA_DIR.glob("*.yaml"))
READ_ONLY = {
    "apps-nvidia-com-nimcache-v1alpha1",
    "nvidia-com-dynamographdeployment-v1alpha1",
    "sparkoperator-k8s-io-sparkapplication-v1beta2",
}


def slug(group: str, version: str, kind: str) -> str:
    return f"{group.replace('.', '-') if group else 'core'}-{kind.lower()}-{version}"


def test_required_kinds_present_and_unique() -> None:
    entries = catalog().entries()  # raises on a duplicate GVK or name
    have = {(e.gvk.group, e.gvk.version, e.gvk.kind) for e in entries if e.gvk is not None}
    assert [r for r in REQUIRED if r not in have] == []
    assert len(have) == len(entries)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_definition_valid_named_by_slug(path: Path) -> None:
    result = load_definitions(str(path), strict=True)
    assert result.findings == ()
    (loaded,) = result.definitions
    # Zero findings, warnings included (what `wmap validate --strict` requires): computed,
    # read-only resources paths are declared with the workload-map.dev/read-only-paths annotation.
    findings = list(loaded.validate())
    assert findings == [], "\n".join(f.format() for f in findings)
    if loaded.name in READ_ONLY:
        assert READ_ONLY_PATHS_ANNOTATION in (loaded.karta.metadata.annotations or {})
    gvk = loaded.karta.root_gvk
    assert gvk is not None
    assert loaded.name == path.stem == slug(gvk.group, gvk.version, gvk.kind)
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", loaded.name)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_lifecycle_stages_present(path: Path) -> None:
    """created, initializing, running always; completed/failed unless the definition never
    reports that phase (n.a.)."""
    karta = load_definitions(str(path)).definitions[0].karta
    status = karta.spec.structure_definition.root_component.status_definition
    assert status is not None
    wanted = ["created", "initializing", "running"]
    if status.status_mappings.completed:
        wanted.append("completed")
    if status.status_mappings.failed:
        wanted.append("failed")
    have = {p.stem for p in (LC / path.stem).glob("*.yaml")}
    assert [s for s in wanted if s not in have] == []


def _gangs(slug_: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    out = []
    for p in sorted((LC / slug_).glob("*.yaml")):
        data = load_fixture(p)
        out.extend((data["object"], g) for g in data["expect"].get("gangs") or ())
    return out


def test_lws_gangs_are_kai_native_size() -> None:
    found = _gangs("leaderworkerset-x-k8s-io-leaderworkerset-v1")
    assert found
    for obj, g in found:
        assert g["min_member"] == obj["spec"]["leaderWorkerTemplate"].get("size", 1)


def test_jobset_gangs_are_kai_flat_total() -> None:
    found = _gangs("jobset-x-k8s-io-jobset-v1alpha2")
    assert found
    for obj, g in found:
        rjs = obj["spec"]["replicatedJobs"]
        flat = sum(rj.get("replicas", 1) * rj["template"]["spec"].get("parallelism", 1) for rj in rjs)
        assert g["min_member"] == flat


@pytest.mark.parametrize(
    ("slug_", "specs"),
    [
        ("kubeflow-org-pytorchjob-v1", "pytorchReplicaSpecs"),
        ("kubeflow-org-tfjob-v1", "tfReplicaSpecs"),
        ("kubeflow-org-mpijob-v2beta1", "mpiReplicaSpecs"),
    ],
)
def test_kubeflow_gangs_are_kai_sum_of_replicas(slug_: str, specs: str) -> None:
    found = _gangs(slug_)
    if not found:
        pytest.skip(f"no gang fixtures for {slug_}")
    for obj, g in found:
        total = sum(r.get("replicas", 1) for r in obj["spec"][specs].values())
        assert g["min_member"] == total
