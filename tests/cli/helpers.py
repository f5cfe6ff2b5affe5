"""Running ``wmap`` in-process with captured streams, and workload factories for the cluster."""

from __future__ import annotations

import copy
import subprocess
from typing import Any

import click
from click.testing import CliRunner

from workload_map.cli.main import run


def wmap(*args: str, input: str | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``wmap ARGS`` through the real top-level handler."""
    holder: dict[str, int] = {}

    def entry() -> None:
        holder["rc"] = run(list(args))

    result = CliRunner().invoke(
        click.Command("wrap", callback=entry), [], input=input, catch_exceptions=False
    )
    return holder["rc"], result.stdout, result.stderr


def kubectl(kc: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``kubectl --kubeconfig KC ARGS`` (the real kubectl the tests compare with), not checked."""
    return subprocess.run(["kubectl", "--kubeconfig", kc, *args], capture_output=True, text=True, timeout=60)


def kubectl_out(kc: str, *args: str) -> str:
    """The stdout of a kubectl run that must succeed."""
    done = kubectl(kc, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def container(name: str, gpus: int, cpu: str = "4", memory: str = "16Gi") -> dict[str, Any]:
    res: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}}
    if gpus:
        res["limits"] = {"nvidia.com/gpu": str(gpus)}
    return {"name": name, "image": "registry.invalid/x:1", "resources": res}


def jobset(
    name: str,
    namespace: str,
    roles: tuple[tuple[str, int], ...] = (("leader", 1), ("workers", 2)),
    gpus: int = 4,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    rjs = []
    for role, replicas in roles:
        rjs.append(
            {
                "name": role,
                "replicas": replicas,
                "template": {
                    "spec": {
                        "parallelism": 1,
                        "completions": 1,
                        "template": {
                            "spec": {"restartPolicy": "Never", "containers": [container(role, gpus)]}
                        },
                    }
                },
            }
        )
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": meta,
        "spec": {"replicatedJobs": rjs},
    }


RUNNING_JOBSET_STATUS = {
    "replicatedJobsStatus": [
        {"name": "leader", "active": 1, "ready": 1, "failed": 0, "succeeded": 0, "suspended": 0}
    ]
}


def pytorchjob(name: str, namespace: str, workers: int = 2) -> dict[str, Any]:
    def spec(replicas: int) -> dict[str, Any]:
        return {
            "replicas": replicas,
            "restartPolicy": "OnFailure",
            "template": {"spec": {"containers": [container("pytorch", 8, "8", "64Gi")]}},
        }

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"pytorchReplicaSpecs": {"Master": spec(1), "Worker": spec(workers)}},
    }


def raycluster(name: str, namespace: str) -> dict[str, Any]:
    tpl = {"spec": {"containers": [container("ray", 0, "2", "8Gi")]}}
    wtpl = {"spec": {"containers": [container("ray", 1, "8", "32Gi")]}}
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": tpl},
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "replicas": 2,
                    "minReplicas": 1,
                    "maxReplicas": 4,
                    "rayStartParams": {},
                    "template": copy.deepcopy(wtpl),
                }
            ],
        },
    }


def lws(name: str, namespace: str) -> dict[str, Any]:
    tpl = {"spec": {"containers": [container("vllm", 8, "16", "128Gi")]}}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {"size": 2, "leaderTemplate": tpl, "workerTemplate": copy.deepcopy(tpl)},
        },
    }
