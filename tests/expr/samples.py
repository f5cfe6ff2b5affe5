"""Realistic workload objects used as inputs by the expression tests."""

from __future__ import annotations

from typing import Any

JOBSET: dict[str, Any] = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {
        "name": "pretrain",
        "namespace": "team-a",
        "labels": {
            "app": "pretrain",
            "kueue.x-k8s.io/queue-name": "gpu",
            "nvidia.com/dynamo-component": "Frontend",
        },
        "annotations": {"autoscaling.knative.dev/min-scale": "2", "note": "x"},
        "generation": 3,
    },
    "spec": {
        "suspend": False,
        "replicatedJobs": [
            {
                "name": "driver",
                "replicas": 1,
                "template": {
                    "spec": {
                        "parallelism": 1,
                        "template": {
                            "metadata": {"labels": {"role": "driver"}},
                            "spec": {
                                "schedulerName": "kai-scheduler",
                                "containers": [
                                    {"name": "main", "image": "img:1", "resources": {"limits": {"cpu": "4"}}}
                                ],
                            },
                        },
                    }
                },
            },
            {
                "name": "workers",
                "replicas": 3,
                "template": {
                    "spec": {
                        "parallelism": 2,
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": "main",
                                        "image": "img:2",
                                        "resources": {"limits": {"nvidia.com/gpu": "8"}},
                                    },
                                    {"name": "sidecar", "image": "img:1"},
                                ]
                            }
                        },
                    }
                },
            },
        ],
    },
    "status": {
        "conditions": [
            {"type": "Completed", "status": "False", "reason": "Running"},
            {"type": "Suspended", "status": "False"},
            {"type": "Failed", "status": "False", "message": "ok"},
        ],
        "replicatedJobsStatus": [
            {"name": "driver", "ready": 1, "active": 1, "failed": 0},
            {"name": "workers", "ready": 0, "active": 3, "succeeded": 0},
        ],
        "restarts": 0,
        "ratio": 1.5,
    },
}

PYTORCHJOB: dict[str, Any] = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "ptj", "namespace": "default"},
    "spec": {
        "runPolicy": {"suspend": True},
        "elasticPolicy": {"minReplicas": 1, "maxReplicas": 4},
        "pytorchReplicaSpecs": {
            "Master": {
                "replicas": 1,
                "template": {"spec": {"containers": [{"name": "pytorch", "image": "pt"}]}},
            },
            "Worker": {"template": {"spec": {"containers": [{"name": "pytorch", "image": "pt"}]}}},
        },
    },
    "status": {"conditions": [{"type": "Created", "status": "True"}, {"type": "Running", "status": "True"}]},
}

RAYCLUSTER: dict[str, Any] = {
    "apiVersion": "ray.io/v1",
    "kind": "RayCluster",
    "metadata": {"name": "rc", "namespace": "ray"},
    "spec": {
        "suspend": True,
        "headGroupSpec": {"template": {"spec": {"containers": [{"name": "head"}]}}},
        "workerGroupSpecs": [
            {
                "groupName": "small",
                "replicas": 2,
                "minReplicas": 1,
                "maxReplicas": 5,
                "template": {"spec": {}},
            },
            {"groupName": "gpu", "minReplicas": 0, "template": {"spec": {}}},
        ],
    },
    "status": {"state": "suspended"},
}

LWS: dict[str, Any] = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "lws"},
    "spec": {
        "replicas": 3,
        "leaderWorkerTemplate": {"size": 4, "leaderTemplate": {"spec": {}}, "workerTemplate": {"spec": {}}},
    },
    "status": {
        "replicas": 3,
        "readyReplicas": 3,
        "updatedReplicas": 3,
        "conditions": [{"type": "Available", "status": "True"}],
    },
}

MISC: dict[str, Any] = {
    "a": {"b": [1, 2, {"c": "x"}], "d": None, "e": False},
    "nums": [3, 1, 2.5, -4, 0],
    "strs": ["b", "a", "c", "a"],
    "mixed": [None, True, False, 1, "s", [1], {"k": 1}],
    "s": "Hello, World",
    "o": {"z": 1, "y": {"x": 2}},
    "t": "2015-03-05T23:51:47Z",
    "csv": ["a", 1, None, True, 'q"t'],
}

INPUTS: list[Any] = [None, {}, JOBSET, PYTORCHJOB, RAYCLUSTER, LWS, MISC, [1, "a", None], "text", 42]
