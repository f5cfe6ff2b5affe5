"""Deterministic ~20 KB JobSet objects for the expression benchmark (bench_expr.py).

Shape per the dependency evaluation: three replicatedJobs, each with two containers carrying
~22 env vars, resources with ``nvidia.com/gpu``, volumes and tolerations; managedFields, a 4 KB
last-applied annotation, 3 conditions and replicatedJobsStatus. Same index -> same object.
"""

from __future__ import annotations

import random
from typing import Any

import orjson


def _container(rng: random.Random, name: str, gpus: int) -> dict[str, Any]:
    env = [
        {
            "name": f"ENV_{name.upper()}_{i}",
            "value": f"v{rng.randrange(10**8):08d}-{'x' * rng.randrange(18, 40)}",
        }
        for i in range(22)
    ]
    return {
        "name": name,
        "image": f"nvcr.io/nvidia/pytorch:{rng.choice(['24.01', '24.12', '25.01'])}-py3",
        "command": ["torchrun", "--nnodes=4", "--nproc-per-node=8", "/workspace/train.py"],
        "env": env,
        "resources": {
            "limits": {"cpu": str(rng.choice([8, 16, 32])), "memory": "256Gi", "nvidia.com/gpu": str(gpus)},
            "requests": {"cpu": "4", "memory": "128Gi", "nvidia.com/gpu": str(gpus)},
        },
        "volumeMounts": [
            {"name": "dshm", "mountPath": "/dev/shm"},
            {"name": "data", "mountPath": "/data", "readOnly": True},
        ],
        "ports": [{"containerPort": 29500 + rng.randrange(10), "name": "c10d"}],
    }


def jobset(index: int) -> dict[str, Any]:
    rng = random.Random(index * 7919 + 17)
    name = f"llm-pretrain-{index:05d}"
    rjobs = []
    statuses = []
    for j, rj in enumerate(["driver", "workers", "evaluator"]):
        gpus = [0, 8, 4][j]
        replicas = rng.randrange(1, 5)
        rjobs.append(
            {
                "name": rj,
                "replicas": replicas,
                "template": {
                    "metadata": {"labels": {"app": name, "role": rj}},
                    "spec": {
                        "parallelism": rng.randrange(1, 4),
                        "completions": 4,
                        "backoffLimit": 0,
                        "template": {
                            "metadata": {
                                "labels": {"app": name, "jobset.sigs.k8s.io/replicatedjob-name": rj}
                            },
                            "spec": {
                                "schedulerName": rng.choice(["default-scheduler", "kai-scheduler"]),
                                "restartPolicy": "Never",
                                "containers": [_container(rng, "main", gpus), _container(rng, "sidecar", 0)],
                                "volumes": [
                                    {"name": "dshm", "emptyDir": {"medium": "Memory"}},
                                    {"name": "data", "persistentVolumeClaim": {"claimName": f"data-{index}"}},
                                ],
                                "tolerations": [
                                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                                    {
                                        "key": "dedicated",
                                        "operator": "Equal",
                                        "value": "ml",
                                        "effect": "NoSchedule",
                                    },
                                ],
                            },
                        },
                    },
                },
            }
        )
        statuses.append(
            {
                "name": rj,
                "ready": rng.randrange(0, 3),
                "active": rng.randrange(0, 3),
                "succeeded": rng.randrange(0, 2),
                "failed": rng.choice([0, 0, 0, 1]),
                "suspended": 0,
            }
        )
    obj: dict[str, Any] = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": name,
            "namespace": rng.choice(["team-a", "team-b", "research"]),
            "uid": f"{rng.getrandbits(128):032x}",
            "generation": rng.randrange(1, 5),
            "labels": {
                "app": name,
                "team": rng.choice(["nlp", "vision"]),
                "kueue.x-k8s.io/queue-name": "gpu",
            },
            "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration": "{" + "a" * 4096 + "}",
                "owner": "ml-platform",
            },
            "managedFields": [
                {
                    "manager": m,
                    "operation": "Update",
                    "apiVersion": "jobset.x-k8s.io/v1alpha2",
                    "time": "2026-11-29T09:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:spec": {"f:replicatedJobs": {}, "f:suspend": {}},
                        "f:status": {"f:conditions": {}},
                    },
                }
                for m in ("kubectl", "jobset-controller")
            ],
        },
        "spec": {
            "suspend": rng.choice([False, False, True]),
            "replicatedJobs": rjobs,
            "network": {"enableDNSHostnames": True},
        },
        "status": {
            "conditions": [
                {
                    "type": t,
                    "status": rng.choice(["True", "False"]),
                    "reason": f"{t}Reason",
                    "message": f"jobset {t}",
                    "lastTransitionTime": "2026-11-29T09:00:00Z",
                }
                for t in ("Completed", "Failed", "Suspended")
            ],
            "replicatedJobsStatus": statuses,
            "restarts": rng.randrange(0, 3),
        },
    }
    return obj


def jsonl_lines(n: int) -> list[bytes]:
    return [orjson.dumps(jobset(i)) for i in range(n)]
