"""``wmap group`` for an MPIJob with ``launcherCreationPolicy: WaitForWorkersReady`` (issue 24):
KAI's MPIJob grouper subtracts the launcher from minMember while no (non-terminating) pod
labelled with the job's name and role ``launcher`` exists in its namespace
(kai-scheduler ``plugins/kubeflow/mpi/mpi-grouper.go``; its table cases are in
tests/kai/kai-parity.yaml). Offline the pods come from the ``-f`` objects, live from a
labelSelector list; both give the same PodGroup.

The objects are mpi-operator v0.8's (framework-shapes.md, MPIJob): worker Pods
``<job>-worker-<i>`` owned by the MPIJob, the launcher Pod ``<job>-launcher-<rand>`` owned by the
Job ``<job>-launcher`` owned by the MPIJob; labels job-name, job-role (and replica-index).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import wmap
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient, owner_reference

pytestmark = pytest.mark.usefixtures("bundled_catalog")  # the catalog's gang rules are under test

JOB = "nccl-allreduce"
NS = "ml"
LABELS = {"training.kubeflow.org/operator-name": "mpi-operator", "training.kubeflow.org/job-name": JOB}


def _mpijob(policy: str = "WaitForWorkersReady", workers: int = 2) -> dict[str, Any]:
    def replicas(n: int, gpus: int) -> dict[str, Any]:
        resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
        container = {"name": "mpi", "image": "mpioperator/openmpi:v0.8.0", "resources": resources}
        return {"replicas": n, "template": {"spec": {"containers": [container]}}}

    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": JOB, "namespace": NS, "uid": "6b1f0c52-8a3e-4f5e-9c1a-1d2e3f405162"},
        "spec": {
            "slotsPerWorker": 8,
            "launcherCreationPolicy": policy,
            "mpiReplicaSpecs": {"Launcher": replicas(1, 0), "Worker": replicas(workers, 8)},
        },
    }


def _pod(name: str, owner: dict[str, Any], role: str, **extra_meta: Any) -> dict[str, Any]:
    labels = {**LABELS, "training.kubeflow.org/job-role": role}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "labels": labels,
            "ownerReferences": [owner_reference(owner)],
            **extra_meta,
        },
        "spec": {"containers": [{"name": "mpi", "image": "mpioperator/openmpi:v0.8.0"}]},
    }


def _launcher(job: dict[str, Any], **extra_meta: Any) -> list[dict[str, Any]]:
    launcher_job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"{JOB}-launcher",
            "namespace": NS,
            "uid": "uid-launcher-job",
            "labels": {"app": JOB},
            "ownerReferences": [owner_reference(job)],
        },
    }
    return [launcher_job, _pod(f"{JOB}-launcher-x7k2p", launcher_job, "launcher", **extra_meta)]


def _group(tmp_path: Path, objects: list[dict[str, Any]], pod: str = f"{JOB}-worker-0") -> dict[str, Any]:
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    rc, out, err = wmap("group", pod, "-f", str(path), "-o", "yaml")
    assert rc == 0, err
    pod_group: dict[str, Any] = yaml.safe_load(out)
    return pod_group


def _workers(job: dict[str, Any], n: int = 2) -> list[dict[str, Any]]:
    return [_pod(f"{JOB}-worker-{i}", job, "worker") for i in range(n)]


def test_offline_without_a_launcher_pod_the_launcher_is_not_counted(tmp_path: Path) -> None:
    job = _mpijob()
    assert _group(tmp_path, [job, *_workers(job)])["spec"]["minMember"] == 2


def test_offline_with_a_launcher_pod_it_is(tmp_path: Path) -> None:
    job = _mpijob()
    objects = [job, *_workers(job), *_launcher(job)]
    assert _group(tmp_path, objects)["spec"]["minMember"] == 3
    # the launcher's own PodGroup is the same one
    assert _group(tmp_path, objects, f"{JOB}-launcher-x7k2p")["spec"]["minMember"] == 3


def test_offline_a_terminating_launcher_pod_does_not_count(tmp_path: Path) -> None:
    job = _mpijob()
    objects = [job, *_workers(job), *_launcher(job, deletionTimestamp="2026-08-20T09:05:00Z")]
    assert _group(tmp_path, objects)["spec"]["minMember"] == 2


def test_offline_a_launcher_of_another_job_or_namespace_does_not_count(tmp_path: Path) -> None:
    job = _mpijob()
    other_job = _launcher(job)
    other_job[1]["metadata"]["labels"]["training.kubeflow.org/job-name"] = "other"
    elsewhere = _launcher(job)
    elsewhere[1]["metadata"]["namespace"] = "other-ns"
    elsewhere[1]["metadata"]["name"] += "-b"
    objects = [job, *_workers(job), other_job[1], elsewhere[1], other_job[0]]
    assert _group(tmp_path, objects)["spec"]["minMember"] == 2


def test_offline_launched_at_startup_always_counts_the_launcher(tmp_path: Path) -> None:
    job = _mpijob(policy="AtStartup")
    assert _group(tmp_path, [job, *_workers(job)])["spec"]["minMember"] == 3


@pytest.mark.cluster
def test_live_counts_the_launcher_once_its_pod_exists(
    cluster: TestCluster, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    kc = str(cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin", namespace=namespace))
    spec = _mpijob()
    spec["metadata"] = {"name": JOB, "namespace": namespace}
    job = kube.create(spec)
    for i in range(2):
        kube.make_pod(f"{JOB}-worker-{i}", namespace, owner=job,
                      labels={**LABELS, "training.kubeflow.org/job-role": "worker"})  # fmt: skip

    def min_member() -> int:
        rc, out, err = wmap("--kubeconfig", kc, "group", f"{JOB}-worker-0", "-o", "yaml")
        assert rc == 0, err
        return int(yaml.safe_load(out)["spec"]["minMember"])

    assert min_member() == 2
    launcher_job = kube.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": f"{JOB}-launcher", "namespace": namespace, "labels": {"app": JOB},
                         "ownerReferences": [owner_reference(job)]},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "mpi", "image": "x"}]}}},
        }
    )  # fmt: skip
    kube.make_pod(f"{JOB}-launcher-x7k2p", namespace, owner=launcher_job,
                  labels={**LABELS, "training.kubeflow.org/job-role": "launcher"})  # fmt: skip
    assert min_member() == 3
