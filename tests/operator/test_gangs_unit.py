"""The gang controller's parts that need no cluster: its settings (bad input refused with the
setting named), the stand-aside table, what makes an object ours, and pod linking through the
write-back (kept values, per-instance changes)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from workload_map.catalog import get_definition
from workload_map.cli.main import cli
from workload_map.kube.gang_integrations import OWN_INTEGRATIONS, own_integration
from workload_map.model.definition import Karta
from workload_map.operator.gangs import (
    MANAGED_BY,
    MANAGED_BY_LABEL,
    SPEC_HASH_ANNOTATION,
    decorated,
    spec_hash,
)
from workload_map.operator.gangs_config import GangConfig, GangConfigError, check_selector
from workload_map.operator.gangs_links import linked
from workload_map.resolve.gang_plan import plan_gangs
from workload_map.resolve.schedulers import render

LIFECYCLES = Path(__file__).parents[1] / "catalog" / "lifecycles"


def _fixture(slug: str) -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load((LIFECYCLES / slug / "created.yaml").read_text())["object"]
    return obj


def _definition(obj: dict[str, Any]) -> Karta:
    karta = get_definition(obj["apiVersion"], obj["kind"])
    assert karta is not None
    return karta


# --- settings ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "selector", ["a=b", "!a", "a", "team==ml", "a!=b", "a in (x, y),b notin (z)", "example.com/tier=gpu", ""]
)
def test_valid_selectors_pass(selector: str) -> None:
    assert check_selector(selector) == selector.strip()


@pytest.mark.parametrize(
    ("selector", "fault"),
    [
        ("a b", "'a b' is not a label selector requirement"),
        ("a=b c", "is not a label selector requirement"),
        ("a in (x", "is not a label selector requirement"),
        ("Bad Key=1", "is not a label selector requirement"),
        ("-a=b", "label key '-a'"),
        ("a=b@c", "value 'b@c' of 'a'"),
        ("x" * 5000, "longer than 4096"),
    ],
)
def test_bad_selectors_name_the_requirement(selector: str, fault: str) -> None:
    with pytest.raises(GangConfigError, match="--gang-selector") as err:
        check_selector(selector)
    assert fault in str(err.value)


def test_config_checks_every_setting() -> None:
    cfg = GangConfig.build("volcano", ["ml, team-a", "ml"], "gangs=on", "volcano-2", 2)
    assert cfg.namespaces == frozenset({"ml", "team-a"})
    assert cfg.selects_namespace("ml") and not cfg.selects_namespace("other")
    assert GangConfig.build("kai").selects_namespace("anything")
    for args, fault in [
        (("kueue",), "--gang-scheduler 'kueue'"),
        (("volcano", ["Bad_NS"]), "--gang-namespace 'Bad_NS'"),
        (("volcano", ["a" * 64]), "--gang-namespace"),
        (("volcano", (), "", "Not A Name"), "--gang-scheduler-name"),
        (("volcano", (), "", None, 0), "--gang-workers 0"),
    ]:
        with pytest.raises(GangConfigError, match=fault.replace("(", r"\(")):
            GangConfig.build(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("flags", "fault"),
    [
        (["--gang-selector", "a b"], "--gang-selector: 'a b'"),
        (["--gang-namespace", "Bad_NS"], "--gang-namespace 'Bad_NS'"),
        (["--gang-scheduler", "kueue"], "Invalid value for '--gang-scheduler'"),
        (["--no-reconcile"], "--gangs needs the reconciler"),
    ],
)
def test_operator_refuses_bad_gang_flags_before_connecting(flags: list[str], fault: str) -> None:
    result = CliRunner().invoke(cli, ["operator", "--gangs", *flags])
    assert result.exit_code == 2, result.output
    assert fault in result.output
    assert "Kubernetes configuration" not in result.output


# --- standing aside ------------------------------------------------------------------------------


def test_stand_aside_rules_follow_the_workload() -> None:
    job = _fixture("kubeflow-org-pytorchjob-v1")
    assert own_integration("kubeflow.org", "PyTorchJob", "volcano", job) is None
    with_policy = copy.deepcopy(job)
    with_policy["spec"]["runPolicy"]["schedulingPolicy"] = {}
    row = own_integration("kubeflow.org", "PyTorchJob", "volcano", with_policy)
    assert row is not None and "spec.runPolicy.schedulingPolicy" in row.why()
    assert own_integration("kubeflow.org", "PyTorchJob", "coscheduling", with_policy) is row
    assert own_integration("kubeflow.org", "PyTorchJob", "kai", with_policy) is None

    ray = _fixture("ray-io-raycluster-v1")
    assert own_integration("ray.io", "RayCluster", "volcano", ray) is None
    ray["metadata"]["labels"] = {"ray.io/scheduler-name": "volcano"}
    assert own_integration("ray.io", "RayCluster", "volcano", ray) is not None
    assert own_integration("ray.io", "RayCluster", "workload-api", ray) is None
    ray["metadata"]["labels"] = {"ray.io/gang-scheduling-enabled": "TRUE"}  # any letter case
    assert own_integration("ray.io", "RayCluster", "workload-api", ray) is not None
    assert own_integration("ray.io", "RayCluster", "coscheduling", ray) is not None
    ray["metadata"]["labels"] = {"ray.io/gang-scheduling-enabled": "false"}
    assert own_integration("ray.io", "RayCluster", "workload-api", ray) is None
    assert own_integration("ray.io", "RayCluster", "coscheduling", ray) is not None  # presence only

    assert own_integration("batch.volcano.sh", "Job", "volcano", {}) is not None
    assert own_integration("batch.volcano.sh", "Job", "coscheduling", {}) is None
    spark = {"spec": {"batchScheduler": "volcano"}}
    assert own_integration("sparkoperator.k8s.io", "SparkApplication", "volcano", spark) is not None
    assert own_integration("sparkoperator.k8s.io", "SparkApplication", "volcano", {"spec": {}}) is None


def test_the_table_names_only_controller_schedulers_and_sources() -> None:
    from workload_map.operator.gangs_config import CONTROLLER_SCHEDULERS

    for row in OWN_INTEGRATIONS:
        assert set(row.schedulers) <= set(CONTROLLER_SCHEDULERS), row
        assert row.source and row.operator
        assert (row.signal == "always") == (not row.key)
        assert all(v == v.lower() for v in row.values)


# --- what makes an object ours ---------------------------------------------------------------------


def test_decorated_objects_carry_the_label_and_a_hash_of_what_we_decide() -> None:
    obj: dict[str, Any] = {
        "apiVersion": "v",
        "kind": "PodGroup",
        "metadata": {"name": "a"},
        "spec": {"minMember": 2},
    }
    d = decorated(obj)
    assert d["metadata"]["labels"][MANAGED_BY_LABEL] == MANAGED_BY
    h = d["metadata"]["annotations"][SPEC_HASH_ANNOTATION]
    assert "annotations" not in obj["metadata"]  # the renderer's object is not changed
    bigger = copy.deepcopy(obj)
    bigger["spec"]["minMember"] = 3
    assert decorated(bigger)["metadata"]["annotations"][SPEC_HASH_ANNOTATION] != h
    assert spec_hash(d) == h  # the annotation does not count in its own hash


# --- linking pods -----------------------------------------------------------------------------------


def test_linking_adds_only_what_templates_lack_per_instance() -> None:
    # A RayJob: head and two worker groups (instances of one component), Volcano task names differ
    # per worker group, so each template gets its own annotation.
    rj = _fixture("ray-io-rayjob-v1")
    definition = _definition(rj)
    groups = rj["spec"]["rayClusterSpec"]["workerGroupSpecs"]
    groups[0]["template"]["spec"]["schedulerName"] = "custom"
    rendered = render(plan_gangs(definition, rj), "volcano")
    new, warnings = linked(definition, rj, rendered)
    spec = new["spec"]["rayClusterSpec"]
    assert spec["headGroupSpec"]["template"]["spec"]["schedulerName"] == "volcano"
    assert spec["headGroupSpec"]["template"]["metadata"]["annotations"]["volcano.sh/task-spec"] == "head"
    tasks = [
        g["template"]["metadata"]["annotations"]["volcano.sh/task-spec"] for g in spec["workerGroupSpecs"]
    ]
    assert tasks == [g["groupName"] for g in groups]
    assert spec["workerGroupSpecs"][0]["template"]["spec"]["schedulerName"] == "custom"
    assert spec["workerGroupSpecs"][1]["template"]["spec"]["schedulerName"] == "volcano"
    assert any("'custom'" in w for w in warnings)
    # The submitter's template is KubeRay's to make (K8sJobMode without submitterPodTemplate).
    assert "no pod template for submitter" in " ".join(warnings)
    assert rj["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"].get("schedulerName") is None
    again, _ = linked(definition, new, rendered)
    assert again == new  # idempotent: nothing left to add


def test_kai_links_set_the_skip_podgrouper_annotation_on_the_workload() -> None:
    job = _fixture("kubeflow-org-pytorchjob-v1")
    definition = _definition(job)
    new, _ = linked(definition, job, render(plan_gangs(definition, job), "kai"))
    assert new["metadata"]["annotations"]["kai.scheduler/skip-podgrouper"] == "true"
    tpl = new["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
    assert tpl["spec"]["schedulerName"] == "kai-scheduler"
    assert tpl["metadata"]["annotations"]["pod-group-name"] == job["metadata"]["name"]
