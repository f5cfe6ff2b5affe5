"""``wmap gang TYPE/NAME --scheduler S`` and ``wmap group POD --scheduler S``: offline from a
``kubectl get -o yaml`` file and live on the test API server; exit codes and messages for bad
input; warnings for objects another controller owns and for scheduler CRDs the cluster lacks."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from tests.cli.helpers import wmap
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient, owner_reference
from tests.support.seed import create_foreign_pod_group, create_jobset_tree

EXAMPLE = Path(__file__).parents[2] / "examples" / "jobset-leader-workers.yaml"

pytestmark = pytest.mark.usefixtures("bundled_catalog")


def _jobset() -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d]
    obj: dict[str, Any] = docs[0]
    return obj


def _chain() -> list[dict[str, Any]]:
    """The example JobSet, a workers Job and its pod, as the JobSet and Job controllers label and
    own them (framework-shapes.md, JobSet)."""
    js = _jobset()
    labels = {
        "jobset.sigs.k8s.io/jobset-name": "leader-workers",
        "jobset.sigs.k8s.io/replicatedjob-name": "workers",
        "jobset.sigs.k8s.io/job-index": "1",
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "leader-workers-workers-1",
            "namespace": "ml",
            "uid": "job-uid-1",
            "labels": labels,
            "ownerReferences": [owner_reference(js)],
        },
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "leader-workers-workers-1-0-abcde",
            "namespace": "ml",
            "uid": "pod-uid-1",
            "labels": {**labels, "batch.kubernetes.io/job-name": "leader-workers-workers-1"},
            "ownerReferences": [owner_reference(job)],
        },
        "spec": {"containers": [{"name": "trainer", "image": "x"}]},
    }
    return [js, job, pod]


@pytest.fixture
def objects_file(tmp_path: Path) -> Path:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": _chain()}))
    return path


def test_gang_offline_prints_every_object_and_the_pod_template_changes(objects_file: Path) -> None:
    rc, out, err = wmap(
        "gang", "jobset/leader-workers", "-f", str(objects_file), "--scheduler", "volcano", "-o", "yaml"
    )
    assert rc == 0, err
    doc = yaml.safe_load(out)
    assert doc["scheduler"] == "volcano"
    (pg,) = doc["objects"]
    assert (pg["kind"], pg["metadata"]["name"], pg["spec"]["minMember"]) == ("PodGroup", "leader-workers", 3)
    assert pg["spec"]["minResources"] == {"cpu": "48", "memory": "384Gi", "nvidia.com/gpu": "12"}
    assert pg["metadata"]["ownerReferences"][0]["uid"] == "c4e39307-ee1b-5b27-9ae8-f1631d5c0404"
    assert doc["podTemplateChanges"] == [
        {
            "component": "replicatedjob",
            "instanceId": role,
            "annotations": {"scheduling.k8s.io/group-name": "leader-workers", "volcano.sh/task-spec": role},
            "schedulerName": "volcano",
        }
        for role in ("leader", "workers")
    ]


def test_gang_objects_only_is_a_list_kubectl_applies(objects_file: Path) -> None:
    rc, out, err = wmap(
        "gang",
        "jobset",
        "leader-workers",
        "-f",
        str(objects_file),
        "--scheduler",
        "workload-api",
        "--objects-only",
    )
    assert rc == 0, err
    doc = yaml.safe_load(out)
    assert doc["kind"] == "List"
    assert [o["kind"] for o in doc["items"]] == ["Workload", "PodGroup"]


def test_gang_table_and_default_scheduler(objects_file: Path) -> None:
    rc, out, err = wmap("gang", "jobset/leader-workers", "-f", str(objects_file))
    assert rc == 0, err
    assert "Scheduler:  kai" in out
    assert "leader=1, workers=2" in out
    assert "kai.scheduler/skip-podgrouper=true" in out


def test_gang_counts_gpus_requested_through_a_dra_claim_template_in_the_file(tmp_path: Path) -> None:
    """The example JobSet asking its 4 GPUs per pod through a ResourceClaimTemplate of
    gpu.nvidia.com (NVIDIA's DRA driver, demo/specs/quickstart/v1/gpu-test*.yaml shape) in the
    same file: the gang needs 12 GPUs as with nvidia.com/gpu, shown as DRA devices; the Volcano
    PodGroup's minResources (a ResourceList of node resources) does not carry them."""
    js = _jobset()
    for rj in js["spec"]["replicatedJobs"]:
        pod_spec = rj["template"]["spec"]["template"]["spec"]
        pod_spec["containers"][0]["resources"] = {
            "requests": {"cpu": "16", "memory": "128Gi"},
            "claims": [{"name": "gpus"}],
        }
        pod_spec["resourceClaims"] = [{"name": "gpus", "resourceClaimTemplateName": "four-gpus"}]
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "four-gpus", "namespace": "ml"},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 4}}
        ]}}},
    }  # fmt: skip
    path = tmp_path / "dra.yaml"
    path.write_text(yaml.safe_dump_all([template, js]))
    rc, out, err = wmap("gang", "jobset/leader-workers", "-f", str(path), "--scheduler", "volcano")
    assert rc == 0, err
    assert "cpu=48, memory=384Gi, gpu.nvidia.com=12 (DRA)" in out
    rc, out, err = wmap("gang", "jobset/leader-workers", "-f", str(EXAMPLE), "--scheduler", "volcano")
    assert rc == 0, err
    assert "cpu=48, memory=384Gi, nvidia.com/gpu=12" in out
    rc, out, err = wmap(
        "gang", "jobset/leader-workers", "-f", str(path), "--scheduler", "volcano", "-o", "yaml"
    )
    assert rc == 0, err
    (pg,) = yaml.safe_load(out)["objects"]
    assert pg["spec"]["minResources"] == {"cpu": "48", "memory": "384Gi"}


def test_gang_policy_options_reach_the_objects(objects_file: Path) -> None:
    rc, out, err = wmap(
        "gang",
        "jobset/leader-workers",
        "-f",
        str(objects_file),
        "--scheduler",
        "coscheduling",
        "--schedule-timeout",
        "120",
        "--scheduler-name",
        "my-scheduler",
        "-o",
        "json",
    )
    assert rc == 0, err
    doc = orjson.loads(out)
    assert doc["objects"][0]["spec"]["scheduleTimeoutSeconds"] == 120
    assert {c["schedulerName"] for c in doc["podTemplateChanges"]} == {"my-scheduler"}


def test_a_conflicting_owner_in_the_file_is_warned_about(tmp_path: Path) -> None:
    other = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {
            "name": "leader-workers",
            "namespace": "ml",
            "ownerReferences": [
                {
                    "apiVersion": "ray.io/v1",
                    "kind": "RayCluster",
                    "name": "leader-workers",
                    "uid": "ray-uid",
                    "controller": True,
                }
            ],
        },
        "spec": {"minMember": 1},
    }
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*_chain(), other]}))
    rc, _, err = wmap(
        "gang", "jobset/leader-workers", "-f", str(path), "--scheduler", "volcano", "-o", "yaml"
    )
    assert rc == 0
    assert (
        "PodGroup ml/leader-workers (scheduling.volcano.sh/v1beta1) is already controlled by "
        "RayCluster/leader-workers" in err
    )


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("gang", "jobset/leader-workers", "--scheduler", "slurm"), 2, "'slurm' is not one of"),
        (("gang", "jobset"), 2, "a NAME is required"),
        (("gang", "jobset/missing"), 3, 'JobSet "missing" not found'),
        (("gang", "nosuchtype/x"), 4, 'no Karta definition covers "nosuchtype"'),
        (("gang", "jobset/leader-workers", "--schedule-timeout", "-1"), 2, "whole number of seconds"),
        (
            ("gang", "jobset/leader-workers", "--queue", "Bad Q"),
            2,
            "'Bad Q' is not a DNS-1123 subdomain",
        ),
        (("group", "leader-workers-workers-1-0-abcde", "--scheduler", "nope"), 2, "'nope' is not one of"),
    ],
)
def test_bad_input_exits_with_its_code_and_names_the_problem(
    objects_file: Path, args: tuple[str, ...], code: int, message: str
) -> None:
    rc, _, err = wmap(*args, "-f", str(objects_file))
    assert rc == code, err
    assert message in err


def test_a_limit_the_scheduler_cannot_hold_is_an_error_naming_the_workload(tmp_path: Path) -> None:
    js = _jobset()
    template = js["spec"]["replicatedJobs"][1]
    js["spec"]["replicatedJobs"] = []
    for i in range(19):
        rj = copy.deepcopy(template)
        rj["name"] = f"rj-{i}"
        js["spec"]["replicatedJobs"].append(rj)
    path = tmp_path / "wide.yaml"
    path.write_text(yaml.safe_dump(js))
    rc, out, err = wmap("gang", "jobset/leader-workers", "-f", str(path), "--scheduler", "kueue")
    assert rc == 1 and out == ""
    assert 'gang JobSet "leader-workers"' in err and "at most 18 podSets" in err


def test_group_with_a_scheduler_prints_the_object_the_pod_joins(objects_file: Path) -> None:
    pod = "leader-workers-workers-1-0-abcde"
    rc, out, err = wmap("group", pod, "-f", str(objects_file), "--scheduler", "coscheduling", "-o", "yaml")
    assert rc == 0, err
    pg = yaml.safe_load(out)
    assert (pg["apiVersion"], pg["kind"], pg["spec"]["minMember"]) == (
        "scheduling.x-k8s.io/v1alpha1",
        "PodGroup",
        3,
    )
    rc, out, err = wmap("group", pod, "-f", str(objects_file), "--scheduler", "workload-api")
    assert rc == 0, err
    assert "PodGroup leader-workers-jobset (scheduling.k8s.io/v1beta1)" in out
    assert "schedulingGroup.podGroupName=leader-workers-jobset" in out
    # the default stays KAI's pod-grouper PodGroup, byte for byte
    rc, default, _ = wmap("group", pod, "-f", str(objects_file), "-o", "yaml")
    rc2, kai, _ = wmap("group", pod, "-f", str(objects_file), "--scheduler", "kai", "-o", "yaml")
    assert rc == rc2 == 0 and default == kai
    assert yaml.safe_load(kai)["apiVersion"] == "scheduling.run.ai/v2alpha2"


# --- live ---------------------------------------------------------------------------------------


@pytest.fixture
def kc(cluster: TestCluster, namespace: str, tmp_path: Path) -> str:
    return str(cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin", namespace=namespace))


@pytest.mark.cluster
def test_live_gang_and_group_agree_with_the_offline_answer(
    kube: KubeTestClient, namespace: str, kc: str, tmp_path: Path
) -> None:
    js, pods = create_jobset_tree(kube, "train", namespace, (("leader", 1), ("workers", 2)))
    rc, out, err = wmap("gang", "jobset/train", "--scheduler", "volcano", "-o", "yaml", "--kubeconfig", kc)
    assert rc == 0, err
    live = yaml.safe_load(out)
    (pg,) = live["objects"]
    assert pg["spec"]["minMember"] == 3
    assert pg["metadata"]["ownerReferences"][0]["uid"] == js["metadata"]["uid"]
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [kube.get_obj(js)]}))
    rc, out, err = wmap("gang", "jobset/train", "--scheduler", "volcano", "-o", "yaml", "-f", str(path))
    assert rc == 0, err
    assert yaml.safe_load(out) == live
    rc, out, err = wmap(
        "group", pods[-1]["metadata"]["name"], "--scheduler", "volcano", "-o", "yaml", "--kubeconfig", kc
    )
    assert rc == 0, err
    assert yaml.safe_load(out) == pg


@pytest.mark.cluster
def test_live_warns_once_per_missing_crd_and_about_foreign_owners(
    kube: KubeTestClient, namespace: str, kc: str
) -> None:
    js, _ = create_jobset_tree(kube, "train", namespace, (("leader", 1), ("workers", 1)))
    # v1.20 serves no scheduling.k8s.io/v1beta1 Workload API: one warning per kind, objects printed.
    rc, out, err = wmap(
        "gang", "jobset/train", "--scheduler", "workload-api", "-o", "yaml", "--kubeconfig", kc
    )
    assert rc == 0, err
    assert [o["kind"] for o in yaml.safe_load(out)["objects"]] == ["Workload", "PodGroup"]
    assert err.count("is not served by this cluster") == 2
    create_foreign_pod_group(kube, namespace, "train")
    rc, _, err = wmap("gang", "jobset/train", "--scheduler", "volcano", "--kubeconfig", kc)
    assert rc == 0
    assert (
        f"PodGroup {namespace}/train (scheduling.volcano.sh/v1beta1) is already controlled by "
        "Job/someone-else" in err
    )
    del js


@pytest.mark.parametrize(
    ("words", "want"),
    [
        (["group", "--scheduler", "vo"], ["volcano"]),
        (["gang", "--scheduler", ""], ["kai", "volcano", "coscheduling", "workload-api", "kueue"]),
        (["gang", "--scheduler", "w"], ["workload-api"]),
        (["gang", "--disruption-mode", ""], ["single", "all"]),
        (["ga"], ["gang"]),
    ],
)
def test_completion_offers_the_new_commands_and_flag_values(words: list[str], want: list[str]) -> None:
    from workload_map.cli.kubectl_complete import completions

    lines, _ = completions(words)
    assert [ln.split("\t", 1)[0] for ln in lines] == want
