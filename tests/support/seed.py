"""Seeding the test cluster with workloads as their controllers would leave them.

- :func:`create_jobset_tree`: a JobSet, one Job per replica and one pod per Job (labels +
  ownerReferences) as the JobSet controller would create them; :func:`running_status` for its status.
- :func:`role_pods`: pods owned directly by a workload, labelled with their role (e.g. a JobSet's
  replicated job or a PyTorchJob's replica type), on a node or Pending.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tests.support.kube import KubeTestClient, owner_reference

#: The role label of JobSet pods (the replicated job's name) and of Kubeflow training pods.
JOBSET_ROLE = "jobset.sigs.k8s.io/replicatedjob-name"
PYTORCH_ROLE = "training.kubeflow.org/replica-type"


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


def role_pods(
    kube: KubeTestClient,
    owner: Mapping[str, Any],
    label: str,
    pods: Iterable[tuple[str, str, str | None]],
    *,
    labels: Mapping[str, str] | None = None,
    gpus: int = 0,
    cpu: str | None = None,
    memory: str | None = None,
) -> list[dict[str, Any]]:
    """One pod per ``(name, role, node)``, owned by ``owner``, in its namespace, labelled
    ``{label: role, **labels}``: Running on ``node``, or Pending (unscheduled) when node is None."""
    namespace = owner["metadata"]["namespace"]
    made = []
    for name, role, node in pods:
        made.append(
            kube.make_pod(
                name,
                namespace,
                owner=owner,
                labels={label: role, **(labels or {})},
                gpus=gpus,
                cpu=cpu,
                memory=memory,
                node=node,
                phase="Running" if node is not None else "Pending",
            )
        )
    return made
