"""A hostile definition against live workloads (issue #10): ``wmap get`` lists every workload,
marks the ones it could not resolve, and stops evaluating the definition after three limit
failures (quarantine) instead of paying a full evaluation deadline per workload."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.cli.helpers import RUNNING_JOBSET_STATUS, jobset, wmap
from tests.support.cluster import TestCluster
from tests.support.hostile import NAME, write_hostile_jobset
from tests.support.kube import KubeTestClient
from tests.views.schema_check import check

pytestmark = pytest.mark.cluster


def test_get_with_a_hostile_definition_lists_every_workload_marked(
    cluster: TestCluster, karta_crd: str, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    kc = str(cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin", namespace=namespace))
    for i in range(8):
        kube.set_status(kube.create(jobset(f"js-{i}", namespace)), RUNNING_JOBSET_STATUS)
    hostile = write_hostile_jobset(tmp_path)
    rc, out, err = wmap("get", "jobsets", "-o", "json", "--definitions", str(hostile), "--kubeconfig", kc)
    assert rc == 0, err
    data = orjson.loads(out)
    check(data, "view.v1.json")
    assert data["count"] == 8
    assert all(item["definition"] == NAME and item["primaryPhase"] == "Undefined" for item in data["items"])
    errors = [item["error"] for item in data["items"]]
    evaluated = [e for e in errors if "is quarantined" not in e]
    # three times (the budget, or on a loaded machine the deadline, whichever comes first)...
    assert len(evaluated) == 3
    assert all("exceeded its cost budget" in e or "exceeded its time limit" in e for e in evaluated)
    assert sum(f'"{NAME}" is quarantined' in e for e in errors) == 5  # ...then not any more
    # One warning per evaluated failure, one for the quarantine: not one per workload.
    assert err.count("could not resolve") == 4, err

    rc, out, err = wmap("get", "jobsets", "--definitions", str(hostile), "--kubeconfig", kc)
    assert rc == 0 and len(out.splitlines()) == 9 and all("Undefined" in ln for ln in out.splitlines()[1:])
