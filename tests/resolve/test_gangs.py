"""Gang rules must equal KAI Scheduler's Karta fallback (consumers.md 1.4, tables of 5.3).

Definitions are written here from the upstream facts (spec 4.2) so the tests are self-contained.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.resolve.builders import definition, jobset_definition, kind, lws_definition
from workload_map.errors import WorkloadMapError
from workload_map.model.definition import Karta
from workload_map.resolve.gangs import (
    GangError,
    StructureSummary,
    effective_member,
    group_keys,
    group_pod,
    infer_pod_component,
    subtree_scale,
)

UID = "0f3c2b9e-5a1d-4c8e-9b7a-2d4e6f8a1c3b"


def pod(
    name: str, labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None, **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {}, "annotations": annotations or {}},
        "spec": spec or {"containers": [{"name": "c"}]},
    }


def owner(api_version: str, k: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": k,
        "metadata": {"name": name, "namespace": "ns", "uid": UID},
        "spec": spec,
    }


# --- the "pyflow" CRD of KAI's grouper_test.go ------------------------------------------------------


def pyflow(gang: dict[str, Any] | None) -> Karta:
    return definition(
        "pyflow",
        {"name": "pyflow", "kind": kind("example.com", "v1", "PyFlow")},
        {
            "name": "master",
            "ownerRef": "pyflow",
            "specDefinition": {"podTemplateSpecPath": ".spec.master.template"},
            "scaleDefinition": {"replicasPath": ".spec.master.replicas"},
            "podSelector": {"componentTypeSelector": {"keyPath": ".metadata.labels.role", "value": "master"}},
        },
        {
            "name": "worker",
            "ownerRef": "pyflow",
            "specDefinition": {"podTemplateSpecPath": ".spec.worker.template"},
            "scaleDefinition": {"replicasPath": ".spec.worker.replicas"},
            "podSelector": {"componentTypeSelector": {"keyPath": ".metadata.labels.role", "value": "worker"}},
        },
        gang=gang,
    )


def pyflow_obj(master: int = 1, worker: int = 2) -> dict[str, Any]:
    tpl = {"spec": {"containers": [{"name": "c"}]}}
    return owner(
        "example.com/v1",
        "PyFlow",
        "flow",
        {"master": {"replicas": master, "template": tpl}, "worker": {"replicas": worker, "template": tpl}},
    )


MASTER_POD = pod("flow-master-0", {"role": "master", "job-name": "flow"})
WORKER_POD = pod("flow-worker-0", {"role": "worker", "job-name": "flow"})

TRAINING_V2 = {
    "podGroup": {
        "name": "training",
        "topology": {
            "topologyName": "rack-topology",
            "preferredTopologyLevel": "rack",
            "requiredTopologyLevel": "zone",
        },
        "subGroups": [
            {"componentName": "master"},
            {
                "componentName": "worker",
                "topology": {
                    "topologyName": "gpu-topology",
                    "preferredTopologyLevel": "host",
                    "requiredTopologyLevel": "rack",
                },
            },
        ],
    }
}
ALPHA_ROOT = {
    "podGroups": [
        {
            "name": "job",
            "members": [{"componentName": "pyflow", "groupByKeyPaths": ['.metadata.labels["job-name"]']}],
        }
    ]
}


def test_v2_with_subgroups() -> None:
    plan = group_pod(pyflow(TRAINING_V2), pyflow_obj(), WORKER_POD)
    assert plan.name == f"pg-{UID}-training"
    assert plan.format == "podGroup"
    assert plan.min_sub_group == 2
    assert plan.min_available == 0
    assert plan.min_member is None
    assert plan.topology is not None
    assert (
        plan.topology.topology_name,
        plan.topology.preferred_topology_level,
        plan.topology.required_topology_level,
    ) == ("rack-topology", "rack", "zone")
    master, worker = plan.sub_groups
    assert (master.name, master.min_member, master.pod_is_member, master.topology, master.parent) == (
        "master",
        1,
        False,
        None,
        None,
    )
    assert (worker.name, worker.min_member, worker.pod_is_member) == ("worker", 2, True)
    assert worker.topology is not None and worker.topology.topology_name == "gpu-topology"
    assert plan.pod_labels() == {"kai.scheduler/subgroup-name": "worker"}
    assert plan.pod_annotations() == {"pod-group-name": f"pg-{UID}-training"}
    d = plan.to_dict()
    assert d["minMember"] is None and d["minSubGroup"] == 2
    assert d["topologyConstraint"] == {
        "topology": "rack-topology",
        "requiredTopologyLevel": "zone",
        "preferredTopologyLevel": "rack",
    }
    assert d["subGroups"][1]["topologyConstraint"]["preferredTopologyLevel"] == "host"


def test_v2_without_subgroups_is_whole_tree_for_every_pod() -> None:
    d = pyflow({"podGroup": {"name": "training"}})
    for p in (MASTER_POD, WORKER_POD):
        plan = group_pod(d, pyflow_obj(1, 1), p)
        assert plan.name == f"pg-{UID}-training"
        assert plan.min_available == 2
        assert plan.min_member == 2
        assert plan.min_sub_group is None
        assert plan.sub_groups == ()


def test_v2_wins_over_alpha() -> None:
    plan = group_pod(pyflow({"podGroup": {"name": "v2"}, **ALPHA_ROOT}), pyflow_obj(), WORKER_POD)
    assert plan.name == f"pg-{UID}-v2"


def test_alpha_root_member() -> None:
    for p in (MASTER_POD, WORKER_POD):
        plan = group_pod(pyflow(ALPHA_ROOT), pyflow_obj(), p)
        assert plan.name == f"pg-{UID}-flow"
        assert plan.min_available == 3
        assert plan.sub_groups == ()
        assert plan.component == "pyflow" and plan.instance_id is None and plan.pod_group == "job"


def test_alpha_invalid_dns_name_is_an_error() -> None:
    bad = pod("p", {"role": "worker", "job-name": "Not_A_DNS"})
    with pytest.raises(GangError, match="DNS-1123"):
        group_pod(pyflow(ALPHA_ROOT), pyflow_obj(), bad)


def test_alpha_no_member_filter_passes_is_an_error() -> None:
    gang = {
        "podGroups": [
            {
                "name": "job",
                "members": [{"componentName": "pyflow", "filters": ['.metadata.labels.gpu == "yes"']}],
            }
        ]
    }
    with pytest.raises(GangError, match="no pod group member matches pod flow-worker-0"):
        group_pod(pyflow(gang), pyflow_obj(), WORKER_POD)


def test_no_gang_instructions_is_the_default_grouper() -> None:
    plan = group_pod(pyflow(None), pyflow_obj(), WORKER_POD)
    assert plan.name == f"pg-flow-{UID}"
    assert plan.min_available == 1 and plan.format == "default"


def test_v2_subgroup_without_scale_is_an_error() -> None:
    d = definition(
        "x",
        {"name": "root", "kind": kind("e.com", "v1", "X")},
        {"name": "a", "ownerRef": "root", "specDefinition": {"podTemplateSpecPath": ".spec.a"}},
        {
            "name": "b",
            "ownerRef": "root",
            "specDefinition": {"podTemplateSpecPath": ".spec.b"},
            "scaleDefinition": {"replicasPath": ".spec.n"},
        },
        gang={"podGroup": {"name": "g", "subGroups": [{"componentName": "a"}]}},
    )
    with pytest.raises(GangError, match=r"^component a must expose a replica scale definition$"):
        group_pod(d, owner("e.com/v1", "X", "x", {"a": {}, "b": {}, "n": 2}), pod("p"))


# --- e2e CustomJob -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "m"), [(1, 1), (1, 4), (2, 3)])
def test_e2e_customjob(n: int, m: int) -> None:
    comps = [
        {
            "name": role,
            "ownerRef": "customjob",
            "specDefinition": {"podTemplateSpecPath": f".spec.{role}.template"},
            "scaleDefinition": {"replicasPath": f".spec.{role}.replicas"},
            "podSelector": {
                "componentTypeSelector": {
                    "keyPath": '.metadata.labels["e2e.example.com/role"]',
                    "value": role,
                }
            },
        }
        for role in ("coordinator", "worker")
    ]
    d = definition(
        "customjob",
        {"name": "customjob", "kind": kind("e2e.example.com", "v1", "CustomJob")},
        *comps,
        gang={
            "podGroup": {
                "name": "customjob",
                "subGroups": [{"componentName": "coordinator"}, {"componentName": "worker"}],
            }
        },
    )
    obj = owner(
        "e2e.example.com/v1",
        "CustomJob",
        "cj",
        {"coordinator": {"replicas": n, "template": {}}, "worker": {"replicas": m, "template": {}}},
    )
    for role in ("coordinator", "worker"):
        plan = group_pod(d, obj, pod(f"cj-{role}-0", {"e2e.example.com/role": role}))
        assert plan.name == f"pg-{UID}-customjob"
        assert plan.min_member is None and plan.min_sub_group == 2
        assert [(s.name, s.min_member) for s in plan.sub_groups] == [("coordinator", n), ("worker", m)]
        assert plan.pod_labels() == {"kai.scheduler/subgroup-name": role}


# --- consumers.md 5.3: per framework -----------------------------------------------------------------


def jobset_def(member: str, key: str) -> Karta:
    return jobset_definition(
        "jobset-x-k8s-io-jobset-v1alpha2",
        job_kind=True,
        gang={
            "podGroups": [{"name": "job", "members": [{"componentName": member, "groupByKeyPaths": [key]}]}]
        },
    )


JOBSET_OBJ = owner(
    "jobset.x-k8s.io/v1alpha2",
    "JobSet",
    "js",
    {
        "replicatedJobs": [
            {
                "name": "master",
                "replicas": 1,
                "template": {"spec": {"parallelism": 1, "template": {"spec": {}}}},
            },
            {
                "name": "worker",
                "replicas": 3,
                "template": {"spec": {"parallelism": 2, "template": {"spec": {}}}},
            },
        ]
    },
)


def js_pod(rj: str) -> dict[str, Any]:
    return pod(
        f"js-{rj}-0-0", {"jobset.sigs.k8s.io/replicatedjob-name": rj, "jobset.sigs.k8s.io/jobset-name": "js"}
    )


def lws_def(per_group: bool, gang: dict[str, Any] | None = None) -> Karta:
    """``per_group``: counts are per LWS group (leader 1, workers size-1), which gives KAI's
    native size. Otherwise the catalog's shape (group scale = replicas, leader = replicas, workers =
    replicas x (size-1))."""
    return lws_definition(
        "leaderworkerset-x-k8s-io-leaderworkerset-v1",
        per_group=per_group,
        gang=gang
        or {
            "podGroups": [
                {
                    "name": "group",
                    "members": [
                        {
                            "componentName": "group",
                            "groupByKeyPaths": [
                                '.metadata.labels["leaderworkerset.sigs.k8s.io/name"]',
                                '.metadata.labels["leaderworkerset.sigs.k8s.io/group-index"] // "0"',
                            ],
                        }
                    ],
                }
            ]
        },
    )


LWS_OBJ = owner(
    "leaderworkerset.x-k8s.io/v1",
    "LeaderWorkerSet",
    "lws",
    {
        "replicas": 2,
        "leaderWorkerTemplate": {"size": 4, "leaderTemplate": {"spec": {}}, "workerTemplate": {"spec": {}}},
    },
)


def lws_pod(group: int, worker: int) -> dict[str, Any]:
    labels = {
        "leaderworkerset.sigs.k8s.io/name": "lws",
        "leaderworkerset.sigs.k8s.io/group-index": str(group),
        "leaderworkerset.sigs.k8s.io/worker-index": str(worker),
    }
    ann = {"leaderworkerset.sigs.k8s.io/leader-name": f"lws-{group}"} if worker else {}
    return pod(f"lws-{group}-{worker}", labels, ann)


def ray_def(hosts: bool) -> Karta:
    wg = ".spec.workerGroupSpecs[]"
    factor = " * (.numOfHosts // 1)" if hosts else ""
    return definition(
        "ray-io-raycluster-v1",
        {"name": "raycluster", "kind": kind("ray.io", "v1", "RayCluster")},
        {
            "name": "head",
            "ownerRef": "raycluster",
            "specDefinition": {"podTemplateSpecPath": ".spec.headGroupSpec.template"},
            "scaleDefinition": {"replicasPath": '"1"'},
            "podSelector": {
                "componentTypeSelector": {"keyPath": '.metadata.labels["ray.io/node-type"]', "value": "head"}
            },
        },
        {
            "name": "worker",
            "ownerRef": "raycluster",
            "instanceIdPath": f"{wg}.groupName",
            "specDefinition": {"podTemplateSpecPath": f"{wg}.template"},
            "scaleDefinition": {
                "replicasPath": f"{wg} | (.replicas // 0){factor}",
                "minReplicasPath": f"{wg} | (.minReplicas // 0){factor}",
                "maxReplicasPath": f"{wg}.maxReplicas",
            },
            "podSelector": {
                "componentTypeSelector": {
                    "keyPath": '.metadata.labels["ray.io/node-type"]',
                    "value": "worker",
                },
                "componentInstanceSelector": {"idPath": '.metadata.labels["ray.io/group"]'},
            },
        },
        gang={
            "podGroups": [
                {
                    "name": "cluster",
                    "members": [
                        {
                            "componentName": "raycluster",
                            "groupByKeyPaths": ['.metadata.labels["ray.io/cluster"]'],
                        }
                    ],
                }
            ]
        },
    )


def ray_obj(hosts: tuple[int, int] | None = None) -> dict[str, Any]:
    groups = [
        {"groupName": "small", "replicas": 3, "minReplicas": 2, "maxReplicas": 5, "template": {"spec": {}}},
        {"groupName": "large", "replicas": 3, "minReplicas": 1, "maxReplicas": 5, "template": {"spec": {}}},
    ]
    if hosts:
        for g, h in zip(groups, hosts, strict=True):
            g["numOfHosts"] = h
    return owner(
        "ray.io/v1",
        "RayCluster",
        "rc",
        {"headGroupSpec": {"template": {"spec": {}}}, "workerGroupSpecs": groups},
    )


def ray_pod(node_type: str, group: str | None = None) -> dict[str, Any]:
    labels = {"ray.io/cluster": "rc", "ray.io/node-type": node_type}
    if group:
        labels["ray.io/group"] = group
    return pod(f"rc-{node_type}-{group or 'h'}", labels)


def kubeflow_def(
    name: str,
    group: str,
    version: str,
    k: str,
    specs_key: str,
    roles: dict[str, str],
    label: str,
    members: list[str],
) -> Karta:
    root = k.lower()
    comps = [
        {
            "name": comp,
            "ownerRef": root,
            "kind": kind("", "v1", "Pod"),
            "specDefinition": {"podTemplateSpecPath": f".spec.{specs_key}.{role}.template"},
            "scaleDefinition": {"replicasPath": f".spec.{specs_key}.{role}.replicas // 1"},
            "podSelector": {
                "componentTypeSelector": {"keyPath": f'.metadata.labels["{label}"]', "value": comp}
            },
        }
        for comp, role in roles.items()
    ]
    return definition(
        name,
        {"name": root, "kind": kind(group, version, k)},
        *comps,
        gang={
            "podGroups": [
                {
                    "name": "job",
                    "members": [
                        {
                            "componentName": m,
                            "groupByKeyPaths": ['.metadata.labels["training.kubeflow.org/job-name"]'],
                        }
                        for m in members
                    ],
                }
            ]
        },
    )


def kf_obj(api: str, k: str, specs_key: str, replicas: dict[str, int]) -> dict[str, Any]:
    return owner(
        api,
        k,
        "job",
        {specs_key: {r: {"replicas": n, "template": {"spec": {}}} for r, n in replicas.items()}},
    )


def kf_pod(label: str, role: str) -> dict[str, Any]:
    return pod(f"job-{role}-0", {label: role, "training.kubeflow.org/job-name": "job"})


PT_ROLES = {"master": "Master", "worker": "Worker"}
PT_LABEL = "training.kubeflow.org/replica-type"


def knative_def() -> Karta:
    ann = '.spec.template.metadata.annotations["autoscaling.knative.dev/min-scale"]'
    return definition(
        "serving-knative-dev-service-v1",
        {"name": "service", "kind": kind("serving.knative.dev", "v1", "Service")},
        {
            "name": "revision",
            "ownerRef": "service",
            "kind": kind("serving.knative.dev", "v1", "Revision"),
            "specDefinition": {"podTemplateSpecPath": ".spec.template"},
            "scaleDefinition": {"minReplicasPath": f"{ann} // 1 | tonumber"},
        },
        gang={
            "podGroups": [
                {
                    "name": "revision",
                    "members": [
                        {
                            "componentName": "revision",
                            "groupByKeyPaths": ['.metadata.labels["serving.knative.dev/revision"]'],
                        }
                    ],
                }
            ]
        },
    )


def knative_obj(min_scale: str | None) -> dict[str, Any]:
    meta = {"annotations": {"autoscaling.knative.dev/min-scale": min_scale}} if min_scale is not None else {}
    return owner("serving.knative.dev/v1", "Service", "svc", {"template": {"metadata": meta, "spec": {}}})


def isvc_def() -> Karta:
    return definition(
        "serving-kserve-io-inferenceservice-v1beta1",
        {"name": "inferenceservice", "kind": kind("serving.kserve.io", "v1beta1", "InferenceService")},
        {
            "name": "predictor",
            "ownerRef": "inferenceservice",
            "specDefinition": {
                "fragmentedPodSpecDefinition": {"containersPath": ".spec.predictor.containers"}
            },
            "scaleDefinition": {
                "minReplicasPath": ".spec.predictor.minReplicas",
                "maxReplicasPath": ".spec.predictor.maxReplicas",
            },
            "podSelector": {
                "componentTypeSelector": {"keyPath": ".metadata.labels.component", "value": "predictor"}
            },
        },
        {
            "name": "transformer",
            "ownerRef": "inferenceservice",
            "specDefinition": {"podSpecPath": ".spec.transformer", "metadataPath": ".spec.transformer"},
            "podSelector": {
                "componentTypeSelector": {"keyPath": ".metadata.labels.component", "value": "transformer"}
            },
        },
        gang={
            "podGroups": [
                {
                    "name": "service",
                    "members": [
                        {
                            "componentName": "inferenceservice",
                            "groupByKeyPaths": ['.metadata.labels["serving.kserve.io/inferenceservice"]'],
                        }
                    ],
                }
            ]
        },
    )


def grove_def() -> Karta:
    cl = ".spec.template.cliques[]"
    return definition(
        "grove-io-podcliqueset-v1alpha1",
        {"name": "podcliqueset", "kind": kind("grove.io", "v1alpha1", "PodCliqueSet")},
        {
            "name": "clique",
            "ownerRef": "podcliqueset",
            "kind": kind("grove.io", "v1alpha1", "PodClique"),
            "instanceIdPath": f"{cl}.name",
            "specDefinition": {
                "fragmentedPodSpecDefinition": {"containersPath": f"{cl}.spec.podSpec.containers"}
            },
            "scaleDefinition": {
                "replicasPath": f"(.spec.replicas // 1) * ({cl}.spec.replicas // 1)",
                "minReplicasPath": f"(.spec.replicas // 1) * ({cl}.spec.minAvailable // 1)",
            },
            "podSelector": {
                "componentInstanceSelector": {"idPath": '.metadata.labels["grove.io/podclique"]'}
            },
        },
        gang={
            "podGroups": [
                {
                    "name": "podcliqueset-replica",
                    "members": [
                        {
                            "componentName": "podcliqueset",
                            "groupByKeyPaths": [
                                '.metadata.labels["app.kubernetes.io/part-of"]',
                                '.metadata.labels["grove.io/podcliqueset-replica-index"]',
                            ],
                        }
                    ],
                }
            ]
        },
    )


def batch_job_def() -> Karta:
    return definition(
        "batch-job-v1",
        {
            "name": "job",
            "kind": kind("batch", "v1", "Job"),
            "specDefinition": {"podTemplateSpecPath": ".spec.template"},
            "scaleDefinition": {"replicasPath": ".spec.parallelism // 1"},
        },
        gang={
            "podGroups": [
                {
                    "name": "job",
                    "members": [
                        {
                            "componentName": "job",
                            "groupByKeyPaths": ['.metadata.labels["batch.kubernetes.io/job-name"]'],
                        }
                    ],
                }
            ]
        },
    )


def deployment_def() -> Karta:
    return definition(
        "apps-deployment-v1",
        {
            "name": "deployment",
            "kind": kind("apps", "v1", "Deployment"),
            "specDefinition": {"podTemplateSpecPath": ".spec.template"},
            "scaleDefinition": {"replicasPath": ".spec.replicas // 1"},
        },
        {"name": "replicaset", "ownerRef": "deployment", "kind": kind("apps", "v1", "ReplicaSet")},
    )


GROUND_TRUTH: list[tuple[str, Karta, dict[str, Any], dict[str, Any], str, int]] = [
    # (case, definition, workload, pod, expected name, expected minAvailable)
    (
        "jobset per replicated job: master",
        jobset_def("replicatedjob", '.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]'),
        JOBSET_OBJ,
        js_pod("master"),
        f"pg-{UID}-master",
        1,
    ),
    (
        "jobset per replicated job: worker",
        jobset_def("replicatedjob", '.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]'),
        JOBSET_OBJ,
        js_pod("worker"),
        f"pg-{UID}-worker",
        6,
    ),
    (
        "jobset flat (KAI 7)",
        jobset_def("jobset", '.metadata.labels["jobset.sigs.k8s.io/jobset-name"]'),
        JOBSET_OBJ,
        js_pod("worker"),
        f"pg-{UID}-js",
        7,
    ),
    ("lws group 0 leader (KAI 4)", lws_def(per_group=True), LWS_OBJ, lws_pod(0, 0), f"pg-{UID}-lws-0", 4),
    ("lws group 1 worker (KAI 4)", lws_def(per_group=True), LWS_OBJ, lws_pod(1, 2), f"pg-{UID}-lws-1", 4),
    (
        "raycluster head + (3,min 2) + (3,min 1) (KAI 4)",
        ray_def(False),
        ray_obj(),
        ray_pod("worker", "small"),
        f"pg-{UID}-rc",
        4,
    ),
    ("raycluster head pod same gang", ray_def(False), ray_obj(), ray_pod("head"), f"pg-{UID}-rc", 4),
    (
        "raycluster numOfHosts 2 and 3 (KAI 8)",
        ray_def(True),
        ray_obj((2, 3)),
        ray_pod("worker", "large"),
        f"pg-{UID}-rc",
        8,
    ),
    (
        "pytorchjob root member (KAI 4)",
        kubeflow_def(
            "kubeflow-org-pytorchjob-v1",
            "kubeflow.org",
            "v1",
            "PyTorchJob",
            "pytorchReplicaSpecs",
            PT_ROLES,
            PT_LABEL,
            ["pytorchjob"],
        ),
        kf_obj("kubeflow.org/v1", "PyTorchJob", "pytorchReplicaSpecs", {"Master": 1, "Worker": 3}),
        kf_pod(PT_LABEL, "worker"),
        f"pg-{UID}-job",
        4,
    ),
    (
        "pytorchjob catalog members: master pod (KAI caveat)",
        kubeflow_def(
            "kubeflow-org-pytorchjob-v1",
            "kubeflow.org",
            "v1",
            "PyTorchJob",
            "pytorchReplicaSpecs",
            PT_ROLES,
            PT_LABEL,
            ["master", "worker"],
        ),
        kf_obj("kubeflow.org/v1", "PyTorchJob", "pytorchReplicaSpecs", {"Master": 1, "Worker": 3}),
        kf_pod(PT_LABEL, "master"),
        f"pg-{UID}-job",
        1,
    ),
    (
        "pytorchjob catalog members: worker pod (KAI caveat)",
        kubeflow_def(
            "kubeflow-org-pytorchjob-v1",
            "kubeflow.org",
            "v1",
            "PyTorchJob",
            "pytorchReplicaSpecs",
            PT_ROLES,
            PT_LABEL,
            ["master", "worker"],
        ),
        kf_obj("kubeflow.org/v1", "PyTorchJob", "pytorchReplicaSpecs", {"Master": 1, "Worker": 3}),
        kf_pod(PT_LABEL, "worker"),
        f"pg-{UID}-job",
        3,
    ),
    (
        "mpijob launcher 1 + worker 2 (KAI 3)",
        kubeflow_def(
            "kubeflow-org-mpijob-v2beta1",
            "kubeflow.org",
            "v2beta1",
            "MPIJob",
            "mpiReplicaSpecs",
            {"launcher": "Launcher", "worker": "Worker"},
            "training.kubeflow.org/job-role",
            ["mpijob"],
        ),
        kf_obj("kubeflow.org/v2beta1", "MPIJob", "mpiReplicaSpecs", {"Launcher": 1, "Worker": 2}),
        kf_pod("training.kubeflow.org/job-role", "launcher"),
        f"pg-{UID}-job",
        3,
    ),
    (
        "tfjob ps 1 + worker 2 (KAI 3)",
        kubeflow_def(
            "kubeflow-org-tfjob-v1",
            "kubeflow.org",
            "v1",
            "TFJob",
            "tfReplicaSpecs",
            {"ps": "PS", "worker": "Worker"},
            PT_LABEL,
            ["tfjob"],
        ),
        kf_obj("kubeflow.org/v1", "TFJob", "tfReplicaSpecs", {"PS": 1, "Worker": 2}),
        kf_pod(PT_LABEL, "ps"),
        f"pg-{UID}-job",
        3,
    ),
    (
        "knative min-scale 3 (KAI 3)",
        knative_def(),
        knative_obj("3"),
        pod("r1-x", {"serving.knative.dev/revision": "svc-00001"}),
        f"pg-{UID}-svc-00001",
        3,
    ),
    (
        "knative min-scale absent (KAI 1)",
        knative_def(),
        knative_obj(None),
        pod("r1-x", {"serving.knative.dev/revision": "svc-00001"}),
        f"pg-{UID}-svc-00001",
        1,
    ),
    (
        "knative min-scale 0 (KAI 0)",
        knative_def(),
        knative_obj("0"),
        pod("r1-x", {"serving.knative.dev/revision": "svc-00001"}),
        f"pg-{UID}-svc-00001",
        0,
    ),
    (
        "kserve isvc via Karta (KAI default 1 without)",
        isvc_def(),
        owner(
            "serving.kserve.io/v1beta1",
            "InferenceService",
            "isvc",
            {"predictor": {"minReplicas": 2, "containers": [{"name": "c"}]}},
        ),
        pod("isvc-predictor-0", {"component": "predictor", "serving.kserve.io/inferenceservice": "isvc"}),
        f"pg-{UID}-isvc",
        2,
    ),
    (
        "grove podgang minReplicas [1,2] (KAI 3)",
        grove_def(),
        owner(
            "grove.io/v1alpha1",
            "PodCliqueSet",
            "pcs",
            {
                "replicas": 1,
                "template": {
                    "cliques": [
                        {"name": "router", "spec": {"replicas": 1, "minAvailable": 1, "podSpec": {}}},
                        {"name": "decode", "spec": {"replicas": 3, "minAvailable": 2, "podSpec": {}}},
                    ]
                },
            },
        ),
        pod(
            "pcs-0-decode-0",
            {
                "app.kubernetes.io/part-of": "pcs",
                "grove.io/podcliqueset-replica-index": "0",
                "grove.io/podclique": "decode",
            },
        ),
        f"pg-{UID}-pcs-0",
        3,
    ),
    (
        "batch job parallelism 6 (Karta gang = parallelism)",
        batch_job_def(),
        owner("batch/v1", "Job", "train", {"parallelism": 6, "template": {"spec": {}}}),
        pod("train-0", {"batch.kubernetes.io/job-name": "train"}),
        f"pg-{UID}-train",
        6,
    ),
    (
        "deployment: no gang rules, default grouper",
        deployment_def(),
        owner("apps/v1", "Deployment", "web", {"replicas": 3, "template": {"spec": {}}}),
        pod("web-1"),
        f"pg-web-{UID}",
        1,
    ),
]


@pytest.mark.parametrize(
    ("definition", "obj", "the_pod", "name", "min_available"),
    [pytest.param(*row[1:], id=row[0]) for row in GROUND_TRUTH],
)
def test_ground_truth(
    definition: Karta, obj: dict[str, Any], the_pod: dict[str, Any], name: str, min_available: int
) -> None:
    plan = group_pod(definition, obj, the_pod)
    assert plan.name == name
    assert plan.min_available == min_available
    assert plan.pod_annotations() == {"pod-group-name": name}


def test_lws_catalog_shape_is_per_replica_group() -> None:
    """The catalog's LWS counts are workload-wide (leader = replicas, workers = replicas x
    (size-1)) under a replica-selected ``group`` of ``replicas``. KAI's newer library treats a
    component with a replicaSelector as one gang per replica, so its subtree scale is
    children / own = (2 + 6) / 2 = 4, KAI's native LWS gang (consumers.md 1.4 and 5.3). The old
    own x children rule gave 2 x 8 = 16 here (and 4 x 8 = 32 with upstream's group = size)."""
    for group in (0, 1):
        for worker in (0, 3):
            plan = group_pod(lws_def(per_group=False), LWS_OBJ, lws_pod(group, worker))
            assert plan.name == f"pg-{UID}-lws-{group}"
            assert plan.min_available == 4


def test_lws_upstream_group_size_bug_still_wrong() -> None:
    """Upstream's catalog used ``group`` replicas = ``size`` (4): per replica that is 8 / 4 = 2,
    still not KAI's 4; the fix is in the catalog's group replicas, not in the scale rule."""
    d = lws_def(per_group=False)
    data = d.to_wire()
    data["spec"]["structureDefinition"]["childComponents"][0]["scaleDefinition"] = {
        "replicasPath": ".spec.leaderWorkerTemplate.size"
    }
    plan = group_pod(Karta.model_validate(data), LWS_OBJ, lws_pod(1, 0))
    assert plan.min_available == 2


def test_replica_selector_scale_not_dividing_keeps_children_sum() -> None:
    obj = {**LWS_OBJ, "spec": {**LWS_OBJ["spec"], "replicas": 3}}
    d = lws_def(per_group=False)
    data = d.to_wire()
    # leader count fixed at 2 while group replicas is 3: 2 + 3 x 3 = 11 does not divide by 3.
    data["spec"]["structureDefinition"]["childComponents"][1]["scaleDefinition"] = {"replicasPath": "2"}
    plan = group_pod(Karta.model_validate(data), obj, lws_pod(0, 0))
    assert plan.min_available == 11


def test_lws_missing_group_index_uses_default_key() -> None:
    p = lws_pod(0, 0)
    del p["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/group-index"]
    assert group_pod(lws_def(per_group=True), LWS_OBJ, p).name == f"pg-{UID}-lws-0"


# --- the building blocks --------------------------------------------------------------------------


def test_structure_summary_candidates_own_first_then_ancestors() -> None:
    gang = {
        "podGroups": [
            {"name": "a", "members": [{"componentName": "group"}, {"componentName": "worker"}]},
            {"name": "b", "members": [{"componentName": "leaderworkerset"}, {"componentName": "worker"}]},
        ]
    }
    d = lws_def(True, gang)
    s = StructureSummary.of(d)
    assert s.leaves == ("leader", "worker")
    assert s.has_scale
    assert [(c.pod_group, c.member.component_name) for c in s.candidates["worker"]] == [
        ("a", "worker"),
        ("b", "worker"),
        ("a", "group"),
        ("b", "leaderworkerset"),
    ]
    assert s.descendants("leaderworkerset") == ("group", "leader", "worker")


def test_infer_component_and_errors() -> None:
    d = pyflow(ALPHA_ROOT)
    assert infer_pod_component(WORKER_POD, d) == "worker"
    assert infer_pod_component(MASTER_POD, d) == "master"
    with pytest.raises(GangError, match=r"^no component found for pod stray$"):
        infer_pod_component(pod("stray", {"role": "other"}), d)
    # a single leaf claims every pod
    assert infer_pod_component(pod("any"), batch_job_def()) == "job"


def test_effective_member_filters() -> None:
    gang = {
        "podGroups": [
            {
                "name": "gpu",
                "members": [
                    {
                        "componentName": "worker",
                        "filters": ['(.spec.containers[0].resources.limits["nvidia.com/gpu"] // 0) > 0'],
                    }
                ],
            },
            {"name": "rest", "members": [{"componentName": "pyflow"}]},
        ]
    }
    d = pyflow(gang)
    gpu_pod = pod(
        "w", {"role": "worker"}, containers=[{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]
    )
    assert effective_member(gpu_pod, "worker", d).pod_group == "gpu"
    assert effective_member(WORKER_POD, "worker", d).pod_group == "rest"
    assert effective_member(WORKER_POD, "worker", d).component == "pyflow"


def test_group_keys_rules() -> None:
    p = pod("p", {"a": "x"}, annotations={"n": "1"})
    p["metadata"]["generation"] = 3
    p["metadata"]["ratio"] = 1.5
    assert group_keys(p, (".metadata.labels.a", ".metadata.generation", ".metadata.ratio", '"gpu"')) == (
        "x",
        "3",
        "1.5",
        "gpu",
    )
    assert group_keys(p, None) == ()
    with pytest.raises(GangError, match="query result is empty <nil>"):
        group_keys(p, (".metadata.labels.missing",))
    with pytest.raises(GangError, match="query result is empty"):
        group_keys(p, ('""',))
    with pytest.raises(GangError, match="expected single query result, got 2"):
        group_keys(p, (".metadata.labels.a, .metadata.labels.a",))
    with pytest.raises(GangError, match="expected single query result, got 0"):
        group_keys(p, ("empty",))


def test_subtree_scale_rules() -> None:
    d = pyflow(None)
    obj = pyflow_obj(1, 2)
    assert subtree_scale(d, obj, "pyflow") == 3
    assert subtree_scale(d, obj, "worker") == 2
    # min > 0 wins over replicas; instance restriction
    r = ray_def(False)
    assert subtree_scale(r, ray_obj(), "worker") == 3
    assert subtree_scale(r, ray_obj(), "worker", "small") == 2
    assert subtree_scale(r, ray_obj(), "worker", "large") == 1
    # no scale anywhere: count leaves (instances of multi-instance leaves)
    noscale = definition(
        "n",
        {"name": "root", "kind": kind("e.com", "v1", "X")},
        {"name": "a", "ownerRef": "root", "specDefinition": {"podTemplateSpecPath": ".spec.a"}},
        {
            "name": "b",
            "ownerRef": "root",
            "instanceIdPath": ".spec.bs[].name",
            "specDefinition": {"podTemplateSpecPath": ".spec.bs[].t"},
            "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.name"}},
        },
    )
    nobj = owner("e.com/v1", "X", "x", {"a": {}, "bs": [{"name": "b1", "t": {}}, {"name": "b2", "t": {}}]})
    assert subtree_scale(noscale, nobj, "root") == 3
    assert subtree_scale(noscale, nobj, "b") == 2
    assert subtree_scale(noscale, nobj, "b", "b1") == 1


def test_alpha_instance_mismatch_is_an_error() -> None:
    d = jobset_def("replicatedjob", '.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]')
    with pytest.raises(
        GangError, match=r'could not match instance id "nope". existing instance ids \[master worker\]'
    ):
        group_pod(d, JOBSET_OBJ, js_pod("nope"))


def test_top_owner_without_uid() -> None:
    obj = dict(JOBSET_OBJ)
    obj["metadata"] = {"name": "js"}
    with pytest.raises(GangError, match=r"metadata\.uid"):
        group_pod(jobset_def("jobset", '"x"'), obj, js_pod("master"))


# --- robustness ----------------------------------------------------------------------------------

_label_values = st.one_of(
    st.text(max_size=4), st.sampled_from(["master", "worker", "head", "small", "0", "1"])
)
_pods = st.builds(
    lambda labels, ann, name: {"metadata": {"name": name, "labels": labels, "annotations": ann}},
    st.dictionaries(
        st.sampled_from(
            [
                "role",
                "job-name",
                "ray.io/cluster",
                "ray.io/node-type",
                "ray.io/group",
                "leaderworkerset.sigs.k8s.io/name",
                "leaderworkerset.sigs.k8s.io/group-index",
                "leaderworkerset.sigs.k8s.io/worker-index",
            ]
        ),
        _label_values,
        max_size=5,
    ),
    st.dictionaries(st.sampled_from(["leaderworkerset.sigs.k8s.io/leader-name"]), _label_values, max_size=1),
    st.text(max_size=5),
) | st.one_of(st.none(), st.integers(), st.lists(st.integers(), max_size=2), st.just({"metadata": None}))
_objs = st.sampled_from(
    [pyflow_obj(), ray_obj(), LWS_OBJ, JOBSET_OBJ, {"spec": None}, {"metadata": {"uid": 5}}, {}]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=_pods, obj=_objs, which=st.integers(0, 4))
def test_random_pods_only_raise_library_errors(p: Any, obj: dict[str, Any], which: int) -> None:
    d = [
        pyflow(ALPHA_ROOT),
        pyflow(TRAINING_V2),
        ray_def(False),
        lws_def(True),
        jobset_def("replicatedjob", '.metadata.labels["x"]'),
    ][which]
    try:
        plan = group_pod(d, obj, p)
    except WorkloadMapError:
        return
    assert plan.name.startswith("pg-")
    assert plan.min_available >= 0
