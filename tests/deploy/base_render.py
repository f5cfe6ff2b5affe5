"""The kustomize base (deploy/base) is rendered from the Helm chart (deploy/helm/workload-map).

``python -m tests.deploy.base_render --write`` renders the chart with its default values for
namespace ``wmap-system`` on Kubernetes 1.30 (PodDisruptionBudget ``policy/v1``; the 1.20 twin is
deploy/pdb-v1beta1.yaml), drops the labels only Helm sets, and writes one file per part;
tests/deploy/test_helm_chart.py checks that the files are up to date. The CRD (``wmap crd
--write``) and the Namespace are not rendered: the chart installs into an existing namespace and
marks its CRD ``helm.sh/resource-policy: keep``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.support.helm_binary import ensure_helm

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "workload-map"
BASE = ROOT / "deploy" / "base"
NAMESPACE = "wmap-system"
RELEASE = "wmap"
HELM_ONLY_LABELS = ("app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "helm.sh/chart")
HEADER = (
    "# Generated from deploy/helm/workload-map (default values, namespace wmap-system) by\n"
    "# `python -m tests.deploy.base_render --write`: edit the chart, then re-render.\n"
)

Doc = dict[str, Any]


def helm_template(*args: str, chart: Path = CHART) -> list[Doc]:
    """``helm template`` of the chart as parsed documents."""
    done = subprocess.run(
        [str(ensure_helm()), "template", RELEASE, str(chart), "--namespace", NAMESPACE, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"helm template failed: {done.stderr.strip()}")
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def _file_for(doc: Doc) -> str | None:
    kind, name = doc["kind"], doc["metadata"]["name"]
    if kind in ("CustomResourceDefinition", "Namespace"):
        return None
    if kind in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"):
        return "rbac.yaml"
    if kind.endswith("WebhookConfiguration"):
        return "webhooks.yaml"
    if kind == "Job":
        return "certs-job.yaml"
    if kind == "PodDisruptionBudget":
        return "pdb.yaml"
    for part in ("operator", "exporter", "serve"):
        if name == f"wmap-{part}" or (part == "operator" and name == "wmap-webhook"):
            return f"{part}.yaml"
    raise ValueError(f"no base file for {kind} {name}")


def _without_helm_labels(doc: Doc) -> Doc:
    labels = doc["metadata"].get("labels") or {}
    for key in HELM_ONLY_LABELS:
        labels.pop(key, None)
    return doc


def rendered_base() -> dict[str, list[Doc]]:
    """File name -> documents, as the base must hold them."""
    out: dict[str, list[Doc]] = {}
    for doc in helm_template("--kube-version", "1.30.0"):
        name = _file_for(doc)
        if name is not None:
            out.setdefault(name, []).append(_without_helm_labels(doc))
    return out


def rendered_pdb_v1beta1() -> Doc:
    """The operator's PodDisruptionBudget as the chart renders it for Kubernetes 1.20."""
    (pdb,) = [d for d in helm_template("--kube-version", "1.20.0") if d["kind"] == "PodDisruptionBudget"]
    assert pdb["apiVersion"] == "policy/v1beta1"
    return _without_helm_labels(pdb)


def _dump(docs: list[Doc]) -> str:
    return HEADER + "---\n".join(yaml.safe_dump(d, sort_keys=False, width=110) for d in docs)


def write() -> None:
    for name, docs in rendered_base().items():
        (BASE / name).write_text(_dump(docs))
    (BASE.parent / "pdb-v1beta1.yaml").write_text(_dump([rendered_pdb_v1beta1()]))


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python -m tests.deploy.base_render --write")
    write()
