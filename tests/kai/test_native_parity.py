"""The catalog's gang rules against KAI Scheduler's native pod-grouper plugins.

``kai-parity.yaml`` holds cases translated from the table tests of KAI's plugins
(``pkg/podgrouper/podgrouper/plugins/<framework>/*_test.go``): the top owner and the pod each
test builds and the values it asserts (facts only; ``source`` names the test). Each case is run
the way KAI runs it: the catalog definition for the owner's exact group/version/kind, then
:func:`~workload_map.resolve.gangs.group_pod` with the pods the test's fake client holds (``pods``),
as ``wmap group`` passes the pods it lists. An expected ``error`` is a substring of ours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.catalog import get_definition
from workload_map.errors import WorkloadMapError
from workload_map.resolve.gangs import PodGroupPlan, default_plan, group_pod

DATA = Path(__file__).with_name("kai-parity.yaml")
CASES: list[dict[str, Any]] = yaml.safe_load(DATA.read_text())["cases"]


def _plan(case: dict[str, Any]) -> PodGroupPlan:
    owner = case["owner"]
    karta = get_definition(owner["apiVersion"], owner["kind"])
    if karta is None:
        return default_plan(owner)
    return group_pod(karta, owner, case["pod"], case.get("pods"))


def _shape(plan: PodGroupPlan, expect: dict[str, Any]) -> dict[str, Any]:
    """The plan in the expectation's vocabulary, with only the keys the case asserts."""
    got: dict[str, Any] = {
        "name": plan.name,
        "minMember": plan.min_member,
        "minSubGroup": plan.min_sub_group,
        "subGroups": [
            {
                k: v
                for k, v in {
                    "name": sg.name,
                    "parent": sg.parent,
                    "minMember": None if sg.min_sub_group is not None else sg.min_member,
                    "minSubGroup": sg.min_sub_group,
                    "topologyConstraint": sg.to_dict()["topologyConstraint"],
                }.items()
                if v is not None
            }
            for sg in plan.sub_groups
        ],
        "podSubGroup": plan.pod_sub_group,
        "topologyConstraint": plan.to_dict()["topologyConstraint"],
    }
    return {k: got[k] for k in expect}


@pytest.mark.parametrize("case", CASES, ids=[c["source"] for c in CASES])
def test_catalog_gang_equals_kai_native_plugin(case: dict[str, Any]) -> None:
    expect = dict(case["expect"])
    error = expect.pop("error", None)
    if error is not None:
        with pytest.raises(WorkloadMapError) as info:
            _plan(case)
        assert error in str(info.value)
        return
    assert _shape(_plan(case), expect) == expect


def test_the_table_covers_every_native_plugin_the_catalog_shares() -> None:
    """A plugin added to the table without cases, or cases dropped, fails here."""
    kinds = {(c["owner"]["apiVersion"].split("/")[0], c["owner"]["kind"]) for c in CASES}
    for needed in [
        ("kubeflow.org", "TFJob"),
        ("kubeflow.org", "PyTorchJob"),
        ("kubeflow.org", "XGBoostJob"),
        ("kubeflow.org", "JAXJob"),
        ("kubeflow.org", "MPIJob"),
        ("jobset.x-k8s.io", "JobSet"),
        ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"),
        ("ray.io", "RayCluster"),
        ("ray.io", "RayJob"),
        ("ray.io", "RayService"),
        ("batch", "Job"),
        ("serving.knative.dev", "Service"),
        ("v1", "Pod"),
        ("apps", "Deployment"),
    ]:
        assert needed in kinds, needed
