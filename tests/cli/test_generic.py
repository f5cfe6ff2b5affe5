"""``get --generic`` and ``describe --generic`` on a type no definition covers, on the test API
server: each object's phase follows kstatus's rules (Ready, Reconciling, Stalled, a generation not
yet observed, deletion), its pods are the ones its owner chain reaches (through a Deployment and
a ReplicaSet here), their requests are its totals, and every row says it is a generic reading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import wmap
from tests.support.kube import KubeTestClient
from tests.support.seed import seed_gizmos
from tests.views.schema_check import check
from workload_map.cli import exit_codes

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("bundled_catalog")]


@pytest.fixture
def gizmos(kube: KubeTestClient, namespace: str) -> str:
    return seed_gizmos(kube, namespace)


def test_get_generic_phases_pods_and_totals(gizmos: str, namespace: str, kc: str) -> None:
    word = f"gizmos.{gizmos}"  # each test installs its own group; the plural alone may name another
    rc, out, err = wmap("get", word, "-n", namespace, "--kubeconfig", kc)
    assert rc == exit_codes.NO_DEFINITION, err
    # the error names the flag that works (issue 24)
    assert f'"{word}" is served by the cluster: `wmap get {word} --generic` reads it without' in err
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
    rc, _, err = wmap("describe", f"gizmos.{gizmos}/ready", "-n", namespace, "--kubeconfig", kc)
    assert rc == exit_codes.NO_DEFINITION
    assert f"`wmap describe gizmos.{gizmos}/ready --generic` reads it" in err
    # a type the cluster does not serve gets no such hint: --generic could not read it either
    rc, _, err = wmap("get", "nosuchkinds", "--kubeconfig", kc)
    assert rc == exit_codes.NO_DEFINITION and "--generic" not in err
