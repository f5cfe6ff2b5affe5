"""Every manifest in deploy/ is checked by the real API server with server-side dry-run.

The test server is Kubernetes v1.20: it serves admissionregistration v1 but not policy/v1, so the
PodDisruptionBudget is checked as its policy/v1beta1 twin (deploy/pdb-v1beta1.yaml, same spec),
and the CRD is sent down-levelled (no CEL rules; see tests/support/crds.py karta_crd_doc).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cluster import TestCluster
from tests.support.crds import karta_crd_doc
from tests.support.kube import KubeApiError, KubeTestClient, resource_path
from workload_map.crd.generate import shipped_crd, shipped_policy_crd

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
BASE = DEPLOY / "base"


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _all_docs() -> list[tuple[str, dict[str, Any]]]:
    kustomization = yaml.safe_load((BASE / "kustomization.yaml").read_text())
    out = []
    for name in kustomization["resources"]:
        out += [(name, d) for d in _docs(BASE / name)]
    return out


def test_kustomization_lists_every_manifest() -> None:
    listed = set(yaml.safe_load((BASE / "kustomization.yaml").read_text())["resources"])
    assert listed == {p.name for p in BASE.glob("*.yaml")} - {"kustomization.yaml"}


def test_crd_manifest_is_the_generated_one() -> None:
    assert _docs(BASE / "crd.yaml") == [shipped_crd()]
    assert _docs(BASE / "policy-crd.yaml") == [shipped_policy_crd()]


def test_pdb_twins_have_the_same_spec() -> None:
    (v1,) = _docs(BASE / "pdb.yaml")
    (beta,) = _docs(DEPLOY / "pdb-v1beta1.yaml")
    assert v1["spec"] == beta["spec"] and v1["metadata"] == beta["metadata"]


def test_workloads_are_hardened() -> None:
    for _name, doc in _all_docs():
        if doc["kind"] not in ("Deployment", "Job"):
            continue
        pod = doc["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        for c in pod["containers"]:
            assert c["securityContext"]["readOnlyRootFilesystem"] is True
            assert c["securityContext"]["allowPrivilegeEscalation"] is False
            assert {"requests", "limits"} <= set(c["resources"])
            if doc["kind"] == "Deployment":
                assert c["livenessProbe"]["httpGet"]["path"] == "/healthz"
                assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"


def test_operator_rbac_writes_only_what_it_needs() -> None:
    roles = {d["metadata"]["name"]: d for _n, d in _all_docs() if d["kind"] in ("ClusterRole", "Role")}
    write_verbs = {"create", "update", "patch", "delete", "deletecollection", "*"}
    cluster_writes = {
        (g, r, v)
        for rule in roles["wmap-operator"]["rules"]
        for g in rule.get("apiGroups", [])
        for r in rule.get("resources", [])
        for v in rule["verbs"]
        if v in write_verbs
    }
    assert cluster_writes == {
        ("run.ai", "kartas", "patch"),
        ("run.ai", "kartas/status", "patch"),
        ("", "events", "create"),
    }
    lease_rule = roles["wmap-operator-leases"]
    assert lease_rule["metadata"]["namespace"] == "wmap-system"
    assert {r for rule in lease_rule["rules"] for r in rule["resources"]} == {"leases"}
    exporter_verbs = {v for rule in roles["wmap-exporter"]["rules"] for v in rule["verbs"]}
    assert exporter_verbs <= {"get", "list", "watch"}
    assert all("secrets" not in rule.get("resources", []) for rule in roles["wmap-exporter"]["rules"])


def _path(kube: KubeTestClient, doc: dict[str, Any]) -> str:
    plural, namespaced = kube.plural_for(doc["apiVersion"], doc["kind"])
    ns = doc["metadata"].get("namespace") if namespaced else None
    return resource_path(doc["apiVersion"], plural, None, ns)


@pytest.mark.cluster
def test_server_side_dry_run(kcluster: TestCluster, kkube: KubeTestClient) -> None:
    try:
        kkube.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "wmap-system"}},
        )
    except KubeApiError as exc:
        if exc.status_code != 409:
            raise
    checked = []
    for name, doc in _all_docs():
        if doc["kind"] == "Namespace":
            continue
        if doc["kind"] == "CustomResourceDefinition":
            if doc["metadata"]["name"] == shipped_crd()["metadata"]["name"]:
                doc = karta_crd_doc()
            crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{doc['metadata']['name']}"
            try:  # already installed in this cluster: check it as an update (dry-run) instead
                current = kkube.request("GET", crd_path)
            except KubeApiError as exc:
                if exc.status_code != 404:
                    raise
                kkube.request("POST", _path(kkube, doc), doc, params={"dryRun": "All"})
            else:
                doc["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                kkube.request("PUT", crd_path, doc, params={"dryRun": "All"})
            checked.append((name, doc["kind"]))
            continue
        if doc["apiVersion"] == "policy/v1":
            doc = _docs(DEPLOY / "pdb-v1beta1.yaml")[0]
        kkube.request("POST", _path(kkube, doc), doc, params={"dryRun": "All"})
        checked.append((name, doc["kind"]))
    kinds = {k for _n, k in checked}
    assert kinds >= {
        "CustomResourceDefinition",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Deployment",
        "Service",
        "Job",
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "PodDisruptionBudget",
    }


def test_dockerfile_runs_as_non_root() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    assert text.startswith("#") and "FROM python:3.11-slim" in text
    assert "pip install" in text and "USER 65532" in text


@pytest.mark.parametrize("path", sorted(p.name for p in BASE.glob("*.yaml")))
def test_manifest_parses(path: str) -> None:
    assert _docs(BASE / path)
