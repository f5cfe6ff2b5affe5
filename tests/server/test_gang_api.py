"""The gang routes of ``wmap serve``: ``GET .../workloads/{type}/{name}/gangs?scheduler=S`` and
``GET .../pods/{name}/podgroup?scheduler=S`` answer what ``wmap gang`` and ``wmap group`` print
for the same live objects (both go through :func:`workload_map.live.gang_objects`), with the
CLI's warnings as a ``warnings`` field; bad parameters are refused before anything is read."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.cli.helpers import jobset, wmap
from tests.server.conftest import AppFactory
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient, rule
from tests.support.seed import create_foreign_pod_group, create_jobset_tree, jobset_pods
from workload_map.kube.schedulers import SCHEDULERS

Headers = Callable[[str], dict[str, str]]

pytestmark = pytest.mark.cluster

PRIORITY_CLASS = "wmap-gang-api-high"
#: wmap gang/group's options -> the routes' query parameters (same values).
POLICY = {
    "queue": ("--queue", "team-a"),
    "priorityClass": ("--priority-class", "wmap-gang-api-high"),
    "scheduleTimeoutSeconds": ("--schedule-timeout", "120"),
    "schedulerName": ("--scheduler-name", "my-scheduler"),
    "disruptionMode": ("--disruption-mode", "all"),
}


@pytest.fixture(scope="module")
def ro(make_app: AppFactory) -> TestClient:
    return make_app(enable_writes=False)


@pytest.fixture
def kc(cluster: TestCluster, namespace: str, tmp_path: Path) -> str:
    return str(cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin", namespace=namespace))


def _ok(ro: TestClient, bearer: Headers, path: str, **params: str) -> Any:
    """The JSON answer of a GET that must succeed (as admin)."""
    r = ro.get(path, params=params, headers=bearer("admin"))
    assert r.status_code == 200, r.text
    return r.json()


def _cli(*args: str) -> tuple[Any, str]:
    rc, out, err = wmap(*args, "-o", "json")
    assert rc == 0, err
    return json.loads(out), err


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_the_routes_answer_what_wmap_gang_and_group_print(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str, kc: str, scheduler: str
) -> None:
    js, pods = create_jobset_tree(kube, "train", namespace, (("leader", 1), ("workers", 2)))
    body = _ok(
        ro, bearer, f"/api/v1/namespaces/{namespace}/workloads/jobsets/train/gangs", scheduler=scheduler
    )
    warnings = body.pop("warnings")
    cli, err = _cli("gang", "jobset/train", "--scheduler", scheduler, "--kubeconfig", kc)
    assert body == cli
    assert (
        body["objects"]
        and body["objects"][0]["metadata"]["ownerReferences"][0]["uid"] == js["metadata"]["uid"]
    )
    for warning in warnings:  # the CLI warned about the same things
        assert warning in err
    if scheduler == "workload-api":  # v1.20 serves no scheduling.k8s.io/v1beta1: said once per kind
        assert sum("is not served by this cluster" in w for w in warnings) == 2
    # the pod route: the object the pod joins, as wmap group prints it
    pod = pods[-1]["metadata"]["name"]
    doc = _ok(ro, bearer, f"/api/v1/namespaces/{namespace}/pods/{pod}/podgroup", scheduler=scheduler)
    cli, _ = _cli("group", pod, "--scheduler", scheduler, "--kubeconfig", kc)
    assert doc["scheduler"] == scheduler and doc["object"] == cli
    assert (doc["topOwner"]["kind"], doc["topOwner"]["name"]) == ("JobSet", "train")
    if scheduler == "kai":
        assert "podGroup" in doc and "podTemplateChange" not in doc
    else:
        assert (doc["component"], doc["instanceId"]) == ("replicatedjob", "workers")
        assert doc["object"] in body["objects"]
        assert doc["podTemplateChange"] is None or doc["podTemplateChange"] in body["podTemplateChanges"]


@pytest.mark.parametrize("scheduler", ["volcano", "coscheduling", "workload-api", "kueue"])
def test_policy_parameters_act_as_the_cli_options(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str, kc: str, scheduler: str
) -> None:
    if kube.status_of("GET", f"/apis/scheduling.k8s.io/v1/priorityclasses/{PRIORITY_CLASS}") == 404:
        kube.create(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": PRIORITY_CLASS},
                "value": 1000,
            }
        )
    create_jobset_tree(kube, "tuned", namespace, (("leader", 1), ("workers", 1)))
    path = f"/api/v1/namespaces/{namespace}/workloads/jobsets/tuned/gangs"
    body = _ok(ro, bearer, path, scheduler=scheduler, **{k: v for k, (_, v) in POLICY.items()})
    body.pop("warnings")
    options = [part for flag, value in POLICY.values() for part in (flag, value)]
    cli, _ = _cli("gang", "jobset/tuned", "--scheduler", scheduler, *options, "--kubeconfig", kc)
    assert body == cli
    plain = _ok(ro, bearer, path, scheduler=scheduler)
    plain.pop("warnings")
    assert plain != body  # the parameters changed the answer
    if scheduler == "kueue":  # the queue and the PriorityClass's value, read from the cluster
        assert body["workloadChanges"]["labels"] == {"kueue.x-k8s.io/queue-name": "team-a"}
        assert body["objects"][0]["spec"]["priority"] == 1000
    else:
        assert {c.get("schedulerName") for c in body["podTemplateChanges"]} == {"my-scheduler"}


def test_a_foreign_owner_is_a_warning(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    create_jobset_tree(kube, "train", namespace, (("leader", 1), ("workers", 1)))
    other = create_foreign_pod_group(kube, namespace, "train")
    path = f"/api/v1/namespaces/{namespace}/workloads/jobsets/train/gangs"
    assert _ok(ro, bearer, path, scheduler="volcano")["warnings"] == [
        f"PodGroup {namespace}/train (scheduling.volcano.sh/v1beta1) is already controlled by "
        f"Job/someone-else (uid {other['metadata']['uid']}), not by JobSet/train: rename one of the workloads"
    ]


def test_bad_parameters_and_unknown_objects(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    _, pods = create_jobset_tree(kube, "train", namespace, (("leader", 1), ("workers", 1)))
    admin = bearer("admin")
    wl = f"/api/v1/namespaces/{namespace}/workloads/jobsets"
    pod = f"/api/v1/namespaces/{namespace}/pods/{pods[0]['metadata']['name']}/podgroup"
    for path in (f"{wl}/train/gangs", pod):
        r = ro.get(path, params={"scheduler": "slurm"}, headers=admin)
        assert r.status_code == 422, r.text
        assert r.json()["field"] == "scheduler"
        assert all(name in r.json()["message"] for name in SCHEDULERS) and "slurm" in r.json()["message"]
    bad = [
        ({"queue": "Bad Q"}, "queue must be a DNS-1123 subdomain"),
        ({"priorityClass": "x" * 300}, "priorityClass must be a DNS-1123 subdomain"),
        ({"scheduleTimeoutSeconds": "-1"}, "scheduleTimeoutSeconds must be between 0 and 2147483647"),
        ({"scheduleTimeoutSeconds": "soon"}, "scheduleTimeoutSeconds must be an integer"),
        ({"disruptionMode": "some"}, "disruptionMode must be single or all"),
        ({"schedulerName": "a/b"}, "schedulerName must be a Kubernetes name"),
    ]
    for params, message in bad:
        r = ro.get(f"{wl}/train/gangs", params={"scheduler": "volcano", **params}, headers=admin)
        assert r.status_code == 400 and message in r.json()["message"], (params, r.text)
    missing = ro.get(f"{wl}/missing/gangs", params={"scheduler": "volcano"}, headers=admin)
    assert missing.status_code == 404 and missing.json()["message"] == (
        f'JobSet "missing" not found in namespace {namespace}'
    )
    assert (
        ro.get(f"/api/v1/namespaces/{namespace}/workloads/nosuchtype/x/gangs", headers=admin).status_code
        == 404
    )
    assert ro.get("/api/v1/workloads/jobsets/train/gangs", headers=admin).status_code == 404  # namespaced
    gone = ro.get(f"/api/v1/namespaces/{namespace}/pods/nope/podgroup?scheduler=volcano", headers=admin)
    assert gone.status_code == 404
    nobody = ro.get(f"{wl}/train/gangs", params={"scheduler": "volcano"}, headers=bearer("nobody"))
    assert nobody.status_code == 403


def test_a_limit_the_scheduler_cannot_hold_is_a_422_naming_the_workload(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    wide = jobset("wide", namespace)
    template = wide["spec"]["replicatedJobs"][-1]
    wide["spec"]["replicatedJobs"] = []
    for i in range(19):
        rj = copy.deepcopy(template)
        rj["name"] = f"rj-{i}"
        wide["spec"]["replicatedJobs"].append(rj)
    kube.create(wide)
    r = ro.get(
        f"/api/v1/namespaces/{namespace}/workloads/jobsets/wide/gangs",
        params={"scheduler": "kueue"},
        headers=bearer("admin"),
    )
    assert r.status_code == 422, r.text
    assert 'gang JobSet "wide"' in r.json()["message"] and "at most 18 podSets" in r.json()["message"]


def test_objects_the_caller_may_not_read_are_not_checked_for_them(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    """The server reads with its own identity: a caller who may get the JobSet but not Volcano's
    PodGroups learns nothing about the existing one (not even its owner), only that it was not
    checked; the pod route needs get on the pod."""
    _, pods = create_jobset_tree(kube, "train", namespace, (("leader", 1), ("workers", 1)))
    create_foreign_pod_group(kube, namespace, "train")
    kube.grant("reader", [rule(["jobset.x-k8s.io"], ["jobsets"], ["get"])], namespace)
    r = ro.get(
        f"/api/v1/namespaces/{namespace}/workloads/jobsets/train/gangs",
        params={"scheduler": "volcano"},
        headers=bearer("reader"),
    )
    assert r.status_code == 200, r.text
    assert r.json()["warnings"] == ["not allowed to read PodGroup train: its owner was not checked"]
    pod = pods[0]["metadata"]["name"]
    r = ro.get(
        f"/api/v1/namespaces/{namespace}/pods/{pod}/podgroup",
        params={"scheduler": "volcano"},
        headers=bearer("reader"),
    )
    assert r.status_code == 403


def test_kai_keeps_only_a_priority_class_that_exists_as_wmap_group_does(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str, kc: str
) -> None:
    """KAI's pod-grouper takes the owner's priorityClassName label only when that PriorityClass
    exists (resolve/kai_podgroup.py); the REST route checks it as wmap group does."""
    js = kube.create(jobset("prio", namespace, labels={"priorityClassName": "no-such-class-here"}))
    (pod,) = jobset_pods(kube, js, (("prio-workers-0", "workers", "n1"),))
    name = pod["metadata"]["name"]
    doc = _ok(ro, bearer, f"/api/v1/namespaces/{namespace}/pods/{name}/podgroup")
    cli, _ = _cli("group", name, "--kubeconfig", kc)
    assert doc["object"] == cli
    assert doc["object"]["spec"]["priorityClassName"] != "no-such-class-here"
