"""``get --generic`` and ``describe --generic`` on a type no definition covers, on the test API
server: each object's phase follows kstatus's rules (Ready, Reconciling, Stalled, a generation not
yet observed, deletion), its pods are the ones its owner chain reaches (through a Deployment and
a ReplicaSet here), their requests are its totals, and every row says it is a generic reading."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from tests.cli.helpers import wmap
from tests.support.crds import install_crds, schemaless_crd
from tests.support.kube import KubeTestClient
from tests.support.seed import deployment_chain
from tests.views.schema_check import check
from workload_map.cli import exit_codes

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("bundled_catalog")]


@pytest.fixture
def gizmos(kube: KubeTestClient, namespace: str) -> str:
    group = f"g{secrets.token_hex(3)}.example.com"
    install_crds(kube, [schemaless_crd(group, "Gizmo", "gizmos")], downlevel=False)
    api = f"{group}/v1"

    def make(name: str, status: dict | None = None, finalizer: bool = False) -> dict:
        meta: dict = {"name": name, "namespace": namespace}
        if finalizer:
            meta["finalizers"] = ["example.com/hold"]
        obj = kube.create({"apiVersion": api, "kind": "Gizmo", "metadata": meta, "spec": {"size": 1}})
        if status is not None:
            obj = kube.update({**obj, "status": status})
        return obj

    ready = make("ready", {"conditions": [{"type": "Ready", "status": "True", "message": "all good"}]})
    make("starting", {"conditions": [{"type": "Ready", "status": "False", "reason": "Waiting"}]})
    make("reconciling", {"conditions": [{"type": "Reconciling", "status": "True", "message": "rolling out"}]})
    make("stalled", {"conditions": [{"type": "Stalled", "status": "True", "message": "quota exceeded"}]})
    old = make("behind", {"observedGeneration": 1})
    kube.update({**old, "spec": {"size": 2}})  # generation 2, observed 1
    make("plain")
    gone = make("leaving", {"conditions": [{"type": "Ready", "status": "True"}]}, finalizer=True)
    kube.delete_obj(gone)
    deployment_chain(kube, "ready-web", namespace, {"app": "ready-web"}, replicas=2, gpus=2, owner=ready)
    return group


def test_get_generic_phases_pods_and_totals(gizmos: str, namespace: str, kc: str) -> None:
    word = f"gizmos.{gizmos}"  # each test installs its own group; the plural alone may name another
    rc, out, err = wmap("get", word, "-n", namespace, "--kubeconfig", kc)
    assert rc == exit_codes.NO_DEFINITION, err
    rc, out, err = wmap("get", word, "-n", namespace, "--generic", "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    doc = json.loads(out)
    by_name = {i["name"]: i for i in doc["items"]}
    assert {n: i["phases"] for n, i in by_name.items()} == {
        "ready": ["Running"],
        "starting": ["Initializing"],
        "reconciling": ["Initializing"],
        "stalled": ["Failed"],
        "behind": ["Initializing"],
        "plain": ["Running"],
        "leaving": ["Undefined"],
    }
    assert all(i["definition"] == "generic" and i["origin"] == "generic" for i in doc["items"])
    for item in doc["items"]:
        check(item, "view.v1.json")
    ready = by_name["ready"]
    assert ready["pods"] == {"ready": 2, "total": 2} and ready["resources"]["gpus"] == 4
    assert by_name["plain"]["pods"] == {"ready": 0, "total": 0}
    rc, out, err = wmap(
        "get", "gizmos", "-n", namespace, "--generic", "--phase", "Failed", "--kubeconfig", kc
    )
    assert rc == 0 and [ln.split()[0] for ln in out.splitlines()[1:]] == ["stalled"], out + err


def test_describe_generic(gizmos: str, namespace: str, kc: str, tmp_path: Path) -> None:
    rc, out, err = wmap(
        "describe", f"gizmos.{gizmos}/ready", "-n", namespace, "--generic", "--kubeconfig", kc
    )
    assert rc == 0, err
    assert "definition: generic (generic)" in out.splitlines()[0]
    assert "(generic reading, no definition covers Gizmo: kstatus Current: all good)" in out
    assert "ready-web-5d9f7c-p0" in out and "ready-web-5d9f7c-p1" in out
    rc, out, _ = wmap(
        "describe", f"gizmos.{gizmos}/stalled", "-n", namespace, "--generic", "-o", "json", "--kubeconfig", kc
    )
    doc = json.loads(out)
    check(doc, "describe-view.v1.json")
    assert doc["phases"] == ["Failed"] and doc["reading"].endswith("kstatus Failed: quota exceeded")
    rc, _, err = wmap("describe", f"gizmos.{gizmos}/none", "-n", namespace, "--generic", "--kubeconfig", kc)
    assert rc == exit_codes.NOT_FOUND and 'Gizmo "none" not found' in err
    rc, _, err = wmap("describe", "nosuchkind/x", "--generic", "--kubeconfig", kc)
    assert rc == exit_codes.NO_DEFINITION
