"""JobSets with Jobs and pods (labels + ownerReferences) as the JobSet controller would create them."""

from __future__ import annotations

from typing import Any

from tests.support.kube import KubeTestClient, owner_reference


def jobset(name: str, namespace: str, roles: tuple[tuple[str, int], ...], gpus: int = 2) -> dict[str, Any]:
    rjs = []
    for role, replicas in roles:
        res = {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": str(gpus)}}
        rjs.append(
            {
                "name": role,
                "replicas": replicas,
                "template": {
                    "spec": {
                        "parallelism": 1,
                        "completions": 1,
                        "template": {
                            "spec": {
                                "restartPolicy": "Never",
                                "containers": [
                                    {"name": role, "image": "registry.invalid/x:1", "resources": res}
                                ],
                            }
                        },
                    }
                },
            }
        )
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicatedJobs": rjs},
    }


def job_for(js: dict[str, Any], role: str, index: int) -> dict[str, Any]:
    name = js["metadata"]["name"]
    labels = {"jobset.sigs.k8s.io/jobset-name": name, "jobset.sigs.k8s.io/replicatedjob-name": role}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"{name}-{role}-{index}",
            "namespace": js["metadata"]["namespace"],
            "labels": labels,
            "ownerReferences": [owner_reference(js)],
        },
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "registry.invalid/x:1"}],
                },
            },
        },
    }


def create_jobset_tree(
    kube: KubeTestClient,
    name: str,
    namespace: str,
    roles: tuple[tuple[str, int], ...] = (("leader", 1), ("workers", 2)),
    *,
    gpus: int = 2,
    ready: bool = True,
    node: str | None = "node-a",
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A JobSet, one Job per replica, one pod per Job. Returns (jobset, pods)."""
    js = kube.create(jobset(name, namespace, roles, gpus))
    pods = []
    for role, replicas in roles:
        for i in range(replicas):
            job = kube.create(job_for(js, role, i))
            pods.append(
                kube.make_pod(
                    f"{job['metadata']['name']}-pod",
                    namespace,
                    owner=job,
                    labels=job["metadata"]["labels"],
                    gpus=gpus,
                    cpu="500m",
                    memory="1Gi",
                    ready=ready,
                    node=node,
                )
            )
    return js, pods


def running_status(roles: tuple[tuple[str, int], ...]) -> dict[str, Any]:
    return {
        "replicatedJobsStatus": [
            {"name": r, "active": n, "ready": n, "failed": 0, "succeeded": 0, "suspended": 0}
            for r, n in roles
        ]
    }
