"""``wmap describe`` asks for the namespace's pods and events before it resolves the type (issue 24:
the API server lists them while the definitions load). These tests pin that the early answers are
used as the late ones were: their errors become the same warnings, once, at the same point; a
missing workload or an unknown type still wins; ``-n`` decides the namespace listed. On the REAL
API server (tests/support)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.cli.helpers import RUNNING_JOBSET_STATUS, jobset, wmap
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient, rule
from tests.support.seed import jobset_pods
from workload_map.cli.commands.describe import _Prefetch
from workload_map.errors import ForbiddenError

PODS_DENIED = "warning: not allowed to list pods, so the pods are not shown:"
EVENTS_DENIED = "warning: not allowed to list events, so they are not shown:"


def seed(kube: KubeTestClient, namespace: str) -> dict[str, Any]:
    """A running JobSet with a leader and two workers, owned as the JobSet controller does
    (Pod -> Job -> JobSet, tests/support/seed.py)."""
    js = kube.set_status(kube.create(jobset("train", namespace)), RUNNING_JOBSET_STATUS)
    jobset_pods(
        kube,
        js,
        (("train-leader-0", "leader", "node-a"), ("train-workers-0", "workers", "node-b")),
        gpus=4,
    )
    return js


def test_prefetch_hands_back_the_value_or_the_error_of_its_read() -> None:
    assert _Prefetch(lambda: [1, 2]).result() == [1, 2]

    def denied() -> list[int]:
        raise ForbiddenError(403, "Forbidden", "pods is forbidden")

    early = _Prefetch(denied)
    with pytest.raises(ForbiddenError, match="pods is forbidden"):
        early.result()
    with pytest.raises(ForbiddenError):  # asked twice, it says the same
        early.result()
    assert early._thread.daemon  # never keeps the process alive when it is not asked for


#: Imported only after the pods and events are asked for (about a third of describe's start-up on
#: a quiet machine: pydantic and the model classes, the resolver, the jq engine, the catalog).
LATER = (
    "pydantic",
    "workload_map.model.definition",
    "workload_map.model.loader",
    "workload_map.resolve",
    "workload_map.expr",
    "workload_map.catalog.registry",
)

_FIRST_REQUEST = """
import os, sys
import workload_map.cli.commands.describe as describe

def asked(read):  # stands for the prefetch: what is imported when the first list is asked for
    print(sorted(m for m in LATER if m in sys.modules), flush=True)
    os._exit(0)

describe._Prefetch = asked
sys.argv = ["wmap", "describe", "jobset/train", "-n", "ml", "--kubeconfig", KUBECONFIG]
from workload_map.cli.entry import main
main()
"""

KUBECONFIG_TEXT = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: ml}}]
current-context: x
"""


def test_describe_asks_for_the_pods_before_importing_the_model_and_the_resolver(tmp_path: Path) -> None:
    """The kubeconfig is read with the bounded YAML reader (model.yamldocs, no pydantic) and the
    Kubernetes vocabulary does not import the model classes, so the API server lists the pods while
    the definitions' machinery imports."""
    kc = tmp_path / "kubeconfig"
    kc.write_text(KUBECONFIG_TEXT)
    code = _FIRST_REQUEST.replace("LATER", repr(LATER)).replace("KUBECONFIG", repr(str(kc)))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.cluster
def test_describe_without_pods_or_events_permission_warns_once_and_shows_the_workload(
    cluster: TestCluster, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    seed(kube, namespace)
    kube.grant("reader", [rule(["jobset.x-k8s.io"], ["jobsets"], ["get", "list"])], namespace)
    kc = str(cluster.write_kubeconfig(tmp_path / "kc", user="reader", namespace=namespace))
    rc, out, err = wmap("describe", "jobset/train", "--kubeconfig", kc)
    assert rc == 0, err
    assert out.startswith("JobSet/train ") and "train-leader-0" not in out
    assert err.count(PODS_DENIED) == 1 and err.count(EVENTS_DENIED) == 1
    rc, out, err = wmap("describe", "jobset/train", "--show-events=false", "--kubeconfig", kc)
    assert rc == 0 and err.count(PODS_DENIED) == 1 and EVENTS_DENIED not in err
    # The workload itself missing: its error, not the early lists' warnings.
    rc, _, err = wmap("describe", "jobset/ghost", "--kubeconfig", kc)
    assert rc == 3 and f'JobSet "ghost" not found in namespace {namespace}' in err
    assert PODS_DENIED not in err and EVENTS_DENIED not in err
    # An unknown type word: the no-definition error (exit 4), nothing about pods.
    rc, _, err = wmap("describe", "nosuchtype/x", "--kubeconfig", kc)
    assert rc == 4 and PODS_DENIED not in err


@pytest.mark.cluster
def test_describe_lists_the_namespace_given_by_flag_not_the_kubeconfig_one(
    cluster: TestCluster, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    seed(kube, namespace)
    other = kube.create_namespace("describe-other")
    kube.make_pod("train-leader-0", other, node="node-z")  # same name, the other namespace
    kc = str(cluster.write_kubeconfig(tmp_path / "kc", user="admin", namespace=other))
    rc, out, err = wmap("describe", "jobset/train", "-n", namespace, "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    view = orjson.loads(out)
    assert view["namespace"] == namespace
    rows = [p for c in view["components"] for ch in c.get("children", []) for p in ch.get("pods", [])]
    assert sorted(p["name"] for p in rows) == ["train-leader-0", "train-workers-0"]
    assert {p["node"] for p in rows} == {"node-a", "node-b"}  # not node-z: the other namespace's pod
