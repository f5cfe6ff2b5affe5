"""Placement needs from a manifest alone: JobSet, PyTorchJob, LWS, RayCluster."""

from __future__ import annotations

import json
from typing import Any

from tests.resolve.builders import RJ_LABEL, definition, jobset_definition, lws_definition
from workload_map.resolve.placement import placement_needs


def container(cpu: str, mem: str, gpu: int = 0, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    limits: dict[str, Any] = {"nvidia.com/gpu": gpu} if gpu else {}
    limits.update(extra or {})
    return {"name": "c", "resources": {"requests": {"cpu": cpu, "memory": mem}, "limits": limits}}


def pod_spec(*containers: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"containers": list(containers), **extra}


JOBSET = jobset_definition(
    gang={
        "podGroups": [
            {
                "name": "job",
                "members": [
                    {"componentName": "replicatedjob", "groupByKeyPaths": [f'.metadata.labels["{RJ_LABEL}"]']}
                ],
            }
        ]
    },
)


def test_jobset() -> None:
    tol = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    obj = {
        "metadata": {"name": "js", "namespace": "ml", "uid": "u"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "driver",
                    "replicas": 1,
                    "template": {
                        "spec": {"parallelism": 1, "template": {"spec": pod_spec(container("1", "1Gi"))}}
                    },
                },
                {
                    "name": "workers",
                    "replicas": 3,
                    "template": {
                        "spec": {
                            "parallelism": 2,
                            "template": {
                                "spec": pod_spec(
                                    container("4", "16Gi", 8), nodeSelector={"pool": "gpu"}, tolerations=tol
                                )
                            },
                        }
                    },
                },
            ]
        },
    }
    needs = placement_needs(JOBSET, obj)
    driver, workers = needs.instances
    assert (driver.instance_id, driver.desired_replicas, driver.min_replicas) == ("driver", 1, 1)
    assert (workers.desired_replicas, workers.pod_requests.gpus, workers.pod_requests.cpu_millis) == (
        6,
        8,
        4000,
    )
    assert workers.node_selector == {"pool": "gpu"}
    assert workers.tolerations == tuple(tol)
    assert needs.desired_pods == 7 and needs.min_pods == 7
    assert needs.desired_total.gpus == 48
    assert needs.desired_total.cpu_millis == 25000
    gangs = {g.name: g for g in needs.gangs}
    assert set(gangs) == {"job/replicatedjob/driver", "job/replicatedjob/workers"}
    assert gangs["job/replicatedjob/workers"].min_pods == 6
    assert gangs["job/replicatedjob/workers"].min_resources.gpus == 48
    assert gangs["job/replicatedjob/driver"].min_resources.memory_bytes == 2**30
    json.dumps(needs.to_dict())


PYTORCH = definition(
    "pytorch",
    {"name": "pytorchjob", "kind": {"group": "kubeflow.org", "version": "v1", "kind": "PyTorchJob"}},
    {
        "name": "master",
        "ownerRef": "pytorchjob",
        "specDefinition": {"podTemplateSpecPath": ".spec.pytorchReplicaSpecs.Master.template"},
        "scaleDefinition": {"replicasPath": ".spec.pytorchReplicaSpecs.Master.replicas // 1"},
    },
    {
        "name": "worker",
        "ownerRef": "pytorchjob",
        "specDefinition": {"podTemplateSpecPath": ".spec.pytorchReplicaSpecs.Worker.template"},
        "scaleDefinition": {
            "replicasPath": ".spec.pytorchReplicaSpecs.Worker.replicas // 1",
            "minReplicasPath": ".spec.elasticPolicy.minReplicas",
            "maxReplicasPath": ".spec.elasticPolicy.maxReplicas",
        },
    },
    gang={
        "podGroups": [
            {
                "name": "job",
                "members": [
                    {
                        "componentName": "pytorchjob",
                        "groupByKeyPaths": ['.metadata.labels["training.kubeflow.org/job-name"]'],
                    }
                ],
            }
        ]
    },
)


def test_pytorchjob_elastic_with_init_and_sidecar() -> None:
    master_spec = pod_spec(
        container("2", "4Gi", 1),
        initContainers=[
            {"name": "init", "resources": {"requests": {"cpu": "8", "memory": "1Gi"}}},
            {
                "name": "sidecar",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}},
            },
        ],
        overhead={"cpu": "100m"},
    )
    aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}
    obj = {
        "metadata": {"name": "pt", "uid": "u"},
        "spec": {
            "elasticPolicy": {"minReplicas": 2, "maxReplicas": 6},
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": {"spec": master_spec}},
                "Worker": {
                    "replicas": 4,
                    "template": {
                        "spec": pod_spec(container("2", "4Gi", 1, {"nvidia.com/mig-1g.5gb": 1}), affinity=aff)
                    },
                },
            },
        },
    }
    needs = placement_needs(PYTORCH, obj)
    master, worker = needs.instances
    # max(init 8 cpu, 2 + 0.5 sidecar) + 100m overhead
    assert master.pod_requests.cpu_millis == 8100
    assert master.pod_requests.memory_bytes == 4 * 2**30 + 512 * 2**20
    assert (worker.desired_replicas, worker.min_replicas) == (4, 2)
    assert worker.affinity == aff
    assert worker.pod_requests.extended["nvidia.com/mig-1g.5gb"] == 1
    assert needs.min_pods == 3 and needs.desired_pods == 5
    assert needs.min_total.gpus == 3 and needs.desired_total.gpus == 5
    (gang,) = needs.gangs
    assert (gang.name, gang.min_pods) == ("job/pytorchjob", 3)
    assert gang.min_resources.gpus == 3


def test_lws_per_group_gangs() -> None:
    d = lws_definition(
        "lws",
        selectors=False,
        gang={"podGroups": [{"name": "group", "members": [{"componentName": "group"}]}]},
    )
    obj = {
        "metadata": {"name": "l", "uid": "u"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 4,
                "leaderTemplate": {"spec": pod_spec(container("1", "1Gi"))},
                "workerTemplate": {"spec": pod_spec(container("8", "64Gi", 8))},
            },
        },
    }
    needs = placement_needs(d, obj)
    (gang,) = needs.gangs
    # The catalog's workload-wide counts (leader 2, workers 6) under a replica-selected group of
    # 2: one gang per LWS group of (2 + 6) / 2 = 4 pods (KAI's native LWS size).
    assert gang.min_pods == 4
    assert gang.min_resources.gpus == 3 * 8
    assert gang.min_resources.cpu_millis == 1000 + 3 * 8000


RAY = definition(
    "ray",
    {"name": "raycluster", "kind": {"group": "ray.io", "version": "v1", "kind": "RayCluster"}},
    {
        "name": "head",
        "ownerRef": "raycluster",
        "specDefinition": {"podTemplateSpecPath": ".spec.headGroupSpec.template"},
        "scaleDefinition": {"replicasPath": '"1"'},
    },
    {
        "name": "worker",
        "ownerRef": "raycluster",
        "instanceIdPath": ".spec.workerGroupSpecs[].groupName",
        "specDefinition": {"podTemplateSpecPath": ".spec.workerGroupSpecs[].template"},
        "scaleDefinition": {
            "replicasPath": ".spec.workerGroupSpecs[].replicas",
            "minReplicasPath": ".spec.workerGroupSpecs[].minReplicas",
        },
        "podSelector": {"componentInstanceSelector": {"idPath": '.metadata.labels["ray.io/group"]'}},
    },
    gang={
        "podGroup": {"name": "cluster", "subGroups": [{"componentName": "head"}, {"componentName": "worker"}]}
    },
)


def test_raycluster_v2_gang_with_subgroups() -> None:
    obj = {
        "metadata": {"name": "rc", "uid": "u"},
        "spec": {
            "headGroupSpec": {"template": {"spec": pod_spec(container("2", "8Gi"))}},
            "workerGroupSpecs": [
                {
                    "groupName": "gpu",
                    "replicas": 3,
                    "minReplicas": 2,
                    "template": {"spec": pod_spec(container("4", "16Gi", 1, {"amd.com/gpu": 0}))},
                },
                {
                    "groupName": "cpu",
                    "replicas": 3,
                    "minReplicas": 1,
                    "template": {"spec": pod_spec(container("1", "2Gi"))},
                },
            ],
        },
    }
    needs = placement_needs(RAY, obj)
    assert [(i.component, i.instance_id, i.desired_replicas, i.min_replicas) for i in needs.instances] == [
        ("head", "", 1, 1),
        ("worker", "gpu", 3, 2),
        ("worker", "cpu", 3, 1),
    ]
    (gang,) = needs.gangs
    assert gang.sub_groups == (("head", 1), ("worker", 3))
    assert gang.min_pods == 4
    assert gang.min_resources.cpu_millis == 2000 + 2 * 4000 + 1000
    assert gang.min_resources.gpus == 2
    assert needs.desired_total.gpus == 3 and needs.min_total.gpus == 2
    assert needs.to_dict()["totals"]["minPods"] == 4


def test_fragmented_affinity_only() -> None:
    d = definition(
        "nim",
        {
            "name": "nimservice",
            "kind": {"group": "apps.nvidia.com", "version": "v1alpha1", "kind": "NIMService"},
            "specDefinition": {
                "fragmentedPodSpecDefinition": {
                    "resourcesPath": ".spec.resources",
                    "nodeAffinityPath": ".spec.affinity.nodeAffinity",
                }
            },
            "scaleDefinition": {"replicasPath": ".spec.replicas // 1"},
        },
    )
    na = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": []}]}}
    obj = {
        "metadata": {"name": "n", "uid": "u"},
        "spec": {
            "replicas": 2,
            "resources": {"limits": {"nvidia.com/gpu": 2}},
            "affinity": {"nodeAffinity": na},
        },
    }
    (inst,) = placement_needs(d, obj).instances
    assert inst.affinity == {"nodeAffinity": na}
    assert inst.node_selector is None and inst.tolerations is None
    assert inst.desired_total.gpus == 4
