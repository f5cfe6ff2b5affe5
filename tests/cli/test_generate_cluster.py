"""``wmap generate TYPE`` reads the served CRD from the test API server: the draft has the same
components, paths and status rules as the one drafted from the corpus file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import wmap
from tests.support.apiserver_binary import shared_dir
from tests.support.kube import KubeTestClient
from tests.support.seed import create_jobset_tree, create_raycluster_tree

pytestmark = [pytest.mark.cluster, pytest.mark.corpus]


def test_generate_from_the_cluster_equals_the_file(kc: str) -> None:
    crd = shared_dir() / "crds" / "jobset" / "jobset.x-k8s.io_jobsets.yaml"
    rc, from_file, err = wmap("generate", "--crd", str(crd))
    assert rc == 0, err
    rc, from_cluster, err = wmap("generate", "jobsets", "--kubeconfig", kc)
    assert rc == 0, err
    assert yaml.safe_load(from_cluster) == yaml.safe_load(from_file)
    assert "the cluster's CRD jobsets.jobset.x-k8s.io" in from_cluster.splitlines()[0]
    rc, _, err = wmap("generate", "deployments", "--kubeconfig", kc)
    assert rc == 2 and "built-in kind" in err
    rc, _, err = wmap("generate", "nosuchthings", "--kubeconfig", kc)
    assert rc != 0 and "nosuchthings" in err


def _partition(described: dict[str, Any]) -> set[frozenset[str]]:
    """The pods of each component leaf (or instance) of a describe -o json document."""
    out: set[frozenset[str]] = set()

    def walk(c: dict[str, Any]) -> None:
        pods = frozenset(p["name"] for p in c.get("pods") or ())
        if pods:
            out.add(pods)
        for child in c.get("children") or ():
            walk(child)

    for c in described["components"]:
        walk(c)
    return out


@pytest.mark.parametrize(
    ("word", "name", "seed"),
    [
        ("rayclusters", "rc", lambda k, ns: create_raycluster_tree(k, "rc", ns, workers=2)),
        (
            "jobsets",
            "train",
            lambda k, ns: create_jobset_tree(k, "train", ns, (("leader", 1), ("workers", 2))),
        ),
    ],
)
def test_pod_selectors_are_observed_from_the_operators_pods(
    word: str, name: str, seed: Any, kube: KubeTestClient, namespace: str, kc: str, tmp_path: Path
) -> None:
    """Seeded as the controllers create them (KubeRay's ray.io/group and node-type labels,
    JobSet -> Job -> Pod with replicatedjob-name): the draft's selectors are the labels those
    pods carry, and with them the draft tells the pods apart exactly as the catalog does."""
    seed(kube, namespace)
    rc, draft, err = wmap("generate", word, "-n", namespace, "--kubeconfig", kc)
    assert rc == 0, err
    assert "# observed: label " in draft and "guess: the CRD does not say" not in draft
    rc, unobserved, err = wmap("generate", word, "-n", namespace, "--no-observe", "--kubeconfig", kc)
    assert rc == 0 and "observed:" not in unobserved, err
    path = tmp_path / f"{word}.yaml"
    path.write_text(draft)
    assert wmap("validate", str(path))[0] == 0
    rc, catalog, err = wmap("describe", f"{word}/{name}", "-n", namespace, "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    rc, drafted, err = wmap(
        "describe",
        f"{word}/{name}",
        "-n",
        namespace,
        "-o",
        "json",
        "--definitions",
        str(path),
        "--kubeconfig",
        kc,
    )
    assert rc == 0, err
    assert json.loads(drafted)["definition"] == yaml.safe_load(draft)["metadata"]["name"]
    assert _partition(json.loads(drafted)) == _partition(json.loads(catalog))
    # the same from kubectl's output, offline: the file holds the objects, Jobs and pods
    listed = subprocess.run(
        ["kubectl", "--kubeconfig", kc, "get", f"{word},jobs,pods", "-n", namespace, "-o", "yaml"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    objects = tmp_path / "objects.yaml"
    objects.write_text(listed)
    crd = {
        "rayclusters": "kuberay/ray.io_rayclusters.yaml",
        "jobsets": "jobset/jobset.x-k8s.io_jobsets.yaml",
    }[word]
    rc, offline, err = wmap("generate", "--crd", str(shared_dir() / "crds" / crd), "-f", str(objects))
    assert rc == 0, err
    assert yaml.safe_load(offline) == yaml.safe_load(draft)


def test_without_objects_the_draft_keeps_its_guesses(kc: str, namespace: str) -> None:
    rc, draft, err = wmap("generate", "jobsets", "-n", namespace, "--kubeconfig", kc)
    assert rc == 0, err
    assert "observed:" not in draft and "guess: the CRD does not say" in draft
