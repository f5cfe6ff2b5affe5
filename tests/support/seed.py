"""Seeding the test cluster with workloads as their controllers would leave them.

- :func:`create_jobset_tree`: a JobSet, one Job per replica and one pod per Job (labels +
  ownerReferences) as the JobSet controller would create them; :func:`running_status` for its status.
- :func:`create_lws_tree`: a LeaderWorkerSet with the chain the LWS controller creates
  (framework-shapes.md 2): leader StatefulSet ``<lws>`` -> leader Pods ``<lws>-<g>`` -> worker
  StatefulSet ``<lws>-<g>`` owned by the leader *Pod* -> worker Pods ``<lws>-<g>-<w>``, with the
  labels the LWS pod webhook sets.
- :func:`create_raycluster_tree` (RayCluster -> Pods with KubeRay's labels),
  :func:`create_deployment_tree` (Deployment -> ReplicaSet -> Pods), :func:`create_mpijob_tree`
  (MPIJob workers -> Pods, launcher -> Job -> Pod).
- :func:`jobset_pods`: named pods of a JobSet, each through its own Job; :func:`owned_pods`: pods
  controlled by one owner.
- :func:`role_pods`: pods owned directly by a workload, labelled with their role (e.g. a
  PyTorchJob's replica type, whose operator does create them so), on a node or Pending.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
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
    labels = {
        "jobset.sigs.k8s.io/jobset-name": name,
        "jobset.sigs.k8s.io/replicatedjob-name": role,
        "jobset.sigs.k8s.io/job-index": str(index),
    }
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


def jobset_pods(
    kube: KubeTestClient,
    js: Mapping[str, Any],
    pods: Iterable[tuple[str, str, str | None]],
    *,
    gpus: int = 0,
    cpu: str | None = None,
    memory: str | None = None,
    phase: str | None = None,
) -> list[dict[str, Any]]:
    """One pod per ``(name, replicated job, node)`` through the chain the JobSet controller
    creates (Pod -> Job ``<jobset>-<rjob>-<index>`` -> JobSet, :func:`job_for`), the index
    counting per replicated job; Running on ``node``, or Pending when node is None."""
    made = []
    seen: dict[str, int] = {}
    for name, role, node in pods:
        index = seen.get(role, 0)
        seen[role] = index + 1
        job = kube.create(job_for(dict(js), role, index))
        made.append(
            kube.make_pod(
                name,
                js["metadata"]["namespace"],
                owner=job,
                labels=job["metadata"]["labels"],
                gpus=gpus,
                cpu=cpu,
                memory=memory,
                node=node,
                phase=phase or ("Running" if node is not None else "Pending"),
            )
        )
    return made


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


LWS_NAME = "leaderworkerset.sigs.k8s.io/name"
LWS_GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
LWS_WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"


def owned_pods(
    kube: KubeTestClient,
    owner: Mapping[str, Any],
    names: Iterable[str],
    labels: Mapping[str, str],
    *,
    gpus: int = 0,
    owners: tuple[Mapping[str, Any], ...] = (),
) -> list[dict[str, Any]]:
    """Running pods ``names`` in ``owner``'s namespace, controlled by ``owner`` (and referencing
    ``owners`` without control), each 1 CPU / 2Gi and ``gpus`` GPUs on node-a."""
    namespace = owner["metadata"]["namespace"]
    return [
        kube.make_pod(
            n,
            namespace,
            owner=owner,
            owners=owners,
            labels=labels,
            gpus=gpus,
            cpu="1",
            memory="2Gi",
            node="node-a",
        )
        for n in names
    ]


def pod_template(gpus: int) -> dict[str, Any]:
    res = {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"nvidia.com/gpu": str(gpus)}}
    return {"spec": {"containers": [{"name": "vllm", "image": "registry.invalid/vllm:1", "resources": res}]}}


def _statefulset(
    name: str, namespace: str, owner: Mapping[str, Any], replicas: int, labels: Mapping[str, str]
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(labels),
            "ownerReferences": [owner_reference(owner)],
        },
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": dict(labels)},
            "template": {"metadata": {"labels": dict(labels)}, **pod_template(0)},
        },
    }


def lws_chain(
    kube: KubeTestClient,
    name: str,
    namespace: str,
    *,
    replicas: int = 1,
    size: int = 4,
    gpus: int = 1,
    node: str | None = "node-a",
    labels: Mapping[str, str] | None = None,
    owner: Mapping[str, Any] | None = None,
    leader_labels: Mapping[str, str] | None = None,
    worker_labels: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """LeaderWorkerSet ``name`` (owned by ``owner`` when an operator renders it, e.g. KServe's
    ``<llmisvc>-kserve-mn`` or NIM's ``<nimservice>-lws``) and the chain of the module doc;
    ``leader_labels``/``worker_labels`` are the template labels the rendering operator adds to the
    leader and worker pods on top of the LWS webhook's."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if owner is not None:
        meta["ownerReferences"] = [owner_reference(owner)]
    lws = kube.create(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": meta,
            "spec": {
                "replicas": replicas,
                "leaderWorkerTemplate": {"size": size, "workerTemplate": pod_template(gpus)},
            },
        }
    )
    base = {LWS_NAME: name}
    leader_sts = kube.create(_statefulset(name, namespace, lws, replicas, base))
    pods: list[dict[str, Any]] = []
    for g in range(replicas):
        group = {**base, LWS_GROUP_INDEX: str(g)}
        leader = kube.make_pod(
            f"{name}-{g}",
            namespace,
            owner=leader_sts,
            labels={**(leader_labels or {}), **group, LWS_WORKER_INDEX: "0"},
            annotations={"leaderworkerset.sigs.k8s.io/size": str(size)},
            gpus=gpus,
            cpu="1",
            memory="2Gi",
            node=node,
        )
        pods.append(leader)
        worker_sts = kube.create(_statefulset(f"{name}-{g}", namespace, leader, size - 1, group))
        for w in range(1, size):
            pods.append(
                kube.make_pod(
                    f"{name}-{g}-{w}",
                    namespace,
                    owner=worker_sts,
                    labels={**(worker_labels or {}), **group, LWS_WORKER_INDEX: str(w)},
                    annotations={
                        "leaderworkerset.sigs.k8s.io/size": str(size),
                        "leaderworkerset.sigs.k8s.io/leader-name": leader["metadata"]["name"],
                    },
                    gpus=gpus,
                    cpu="1",
                    memory="2Gi",
                    node=node,
                )
            )
    return lws, pods


#: A LeaderWorkerSet and the objects its controller creates (module doc): (lws, pods), leaders first.
create_lws_tree = lws_chain


def ray_cluster_spec(workers: int, gpus: int) -> dict[str, Any]:
    return {
        "headGroupSpec": {"rayStartParams": {}, "template": pod_template(0)},
        "workerGroupSpecs": [
            {
                "groupName": "gpu",
                "replicas": workers,
                "minReplicas": 0,
                "maxReplicas": 8,
                "rayStartParams": {},
                "template": pod_template(gpus),
            }
        ],
    }


def ray_pods(kube: KubeTestClient, rc: Mapping[str, Any], workers: int, gpus: int) -> list[dict[str, Any]]:
    """The head Pod and ``workers`` Pods of the "gpu" group, owned by the RayCluster ``rc``,
    with KubeRay's labels (framework-shapes.md 5: ray.io/node-type, ray.io/group, ray.io/cluster)."""
    name, namespace = rc["metadata"]["name"], rc["metadata"]["namespace"]
    common = {
        "ray.io/cluster": name,
        "ray.io/is-ray-node": "yes",
        "app.kubernetes.io/created-by": "kuberay-operator",
    }

    def node(pod: str, node_type: str, group: str, g: int) -> dict[str, Any]:
        labels = {
            **common,
            "ray.io/node-type": node_type,
            "ray.io/group": group,
            "ray.io/identifier": f"{name}-{node_type}",
        }
        return kube.make_pod(
            pod, namespace, owner=rc, labels=labels, gpus=g, cpu="1", memory="2Gi", node="node-a"
        )

    return [node(f"{name}-head-x1", "head", "headgroup", 0)] + [
        node(f"{name}-gpu-worker-{i}", "worker", "gpu", gpus) for i in range(workers)
    ]


def create_raycluster_tree(
    kube: KubeTestClient, name: str, namespace: str, *, workers: int = 2, gpus: int = 1
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A RayCluster and its Pods (:func:`ray_pods`)."""
    rc = kube.create(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {"name": name, "namespace": namespace},
            "spec": ray_cluster_spec(workers, gpus),
        }
    )
    return rc, ray_pods(kube, rc, workers, gpus)


def deployment_chain(
    kube: KubeTestClient,
    name: str,
    namespace: str,
    labels: Mapping[str, str],
    *,
    replicas: int,
    gpus: int,
    owner: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Deployment ``name`` (owned by ``owner`` when given) -> ReplicaSet ``<name>-<hash>`` ->
    Pods ``<rs>-<suffix>`` carrying ``pod-template-hash``, as the Deployment and ReplicaSet
    controllers create them. Returns (deployment, pods)."""
    template = {"metadata": {"labels": dict(labels)}, **pod_template(gpus)}
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels)}
    if owner is not None:
        meta["ownerReferences"] = [owner_reference(owner)]
    dep = kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)}, "template": template},
        }
    )
    rs_labels = {**labels, "pod-template-hash": "5d9f7c"}
    rs = kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{name}-5d9f7c",
                "namespace": namespace,
                "labels": rs_labels,
                "ownerReferences": [owner_reference(dep)],
            },
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": rs_labels},
                "template": {**template, "metadata": {"labels": rs_labels}},
            },
        }
    )
    pods = owned_pods(
        kube, rs, [f"{rs['metadata']['name']}-p{i}" for i in range(replicas)], rs_labels, gpus=gpus
    )
    return dep, pods


def create_deployment_tree(
    kube: KubeTestClient, name: str, namespace: str, *, replicas: int = 2, gpus: int = 1
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A Deployment and what its controllers create (:func:`deployment_chain`)."""
    return deployment_chain(kube, name, namespace, {"app": name}, replicas=replicas, gpus=gpus)


def create_mpijob_tree(
    kube: KubeTestClient, name: str, namespace: str, *, workers: int = 2, gpus: int = 1
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An MPIJob v2beta1 as mpi-operator leaves it (framework-shapes.md, MPIJob): worker Pods
    ``<job>-worker-<i>`` owned by the MPIJob, the launcher Pod owned by Job ``<job>-launcher``
    owned by the MPIJob; labels job-name, job-role and (workers) replica-index."""

    def replica(replicas: int, g: int) -> dict[str, Any]:
        return {"replicas": replicas, "template": pod_template(g)}

    job = kube.create(
        {
            "apiVersion": "kubeflow.org/v2beta1",
            "kind": "MPIJob",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"mpiReplicaSpecs": {"Launcher": replica(1, 0), "Worker": replica(workers, gpus)}},
        }
    )
    base = {
        "training.kubeflow.org/operator-name": "mpi-operator",
        "training.kubeflow.org/job-name": name,
    }
    pods = []
    for i in range(workers):
        pods.append(
            kube.make_pod(
                f"{name}-worker-{i}",
                namespace,
                owner=job,
                labels={
                    **base,
                    "training.kubeflow.org/job-role": "worker",
                    "training.kubeflow.org/replica-index": str(i),
                },
                gpus=gpus,
                cpu="1",
                memory="2Gi",
                node="node-a",
            )
        )
    launcher_job = kube.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"{name}-launcher",
                "namespace": namespace,
                "labels": {"app": name},
                "ownerReferences": [owner_reference(job)],
            },
            "spec": {"template": {"spec": {"restartPolicy": "Never", **pod_template(0)["spec"]}}},
        }
    )
    pods.append(
        kube.make_pod(
            f"{name}-launcher-x7k2p",
            namespace,
            owner=launcher_job,
            labels={**base, "training.kubeflow.org/job-role": "launcher"},
            cpu="1",
            memory="2Gi",
            node="node-a",
        )
    )
    return job, pods


def create_rayjob_tree(
    kube: KubeTestClient, name: str, namespace: str, *, workers: int = 1, gpus: int = 1
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A RayJob as KubeRay leaves it in K8sJobMode (framework-shapes.md 5): RayCluster
    ``<rayjob>-<5 rand>`` owned by the RayJob with its head and worker Pods, and the submitter
    Job ``<rayjob>`` owned by the RayJob with one Pod (the Job controller's job-name label)."""
    spec = ray_cluster_spec(workers, gpus)
    rj = kube.create(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayJob",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"entrypoint": "python train.py", "rayClusterSpec": spec},
        }
    )
    cluster_name = f"{name}-x8k2q"
    origin = {"ray.io/originated-from-cr-name": name, "ray.io/originated-from-crd": "RayJob"}
    rc = kube.create(
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "metadata": {
                "name": cluster_name,
                "namespace": namespace,
                "labels": origin,
                "ownerReferences": [owner_reference(rj)],
            },
            "spec": spec,
        }
    )
    pods = ray_pods(kube, rc, workers, gpus)
    submitter = kube.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": namespace, "ownerReferences": [owner_reference(rj)]},
            "spec": {
                "template": {
                    "metadata": {"labels": origin},
                    "spec": {"restartPolicy": "Never", **pod_template(0)["spec"]},
                }
            },
        }
    )
    pods.append(
        kube.make_pod(
            f"{name}-sub12",
            namespace,
            owner=submitter,
            labels={**origin, "batch.kubernetes.io/job-name": name, "job-name": name},
            cpu="1",
            memory="2Gi",
            node="node-a",
        )
    )
    return rj, pods


def create_statefulset_tree(
    kube: KubeTestClient, name: str, namespace: str, *, replicas: int = 2, gpus: int = 1
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A StatefulSet and its Pods ``<name>-<ordinal>`` with the labels its controller sets
    (``controller-revision-hash``, ``statefulset.kubernetes.io/pod-name``,
    ``apps.kubernetes.io/pod-index``)."""
    labels = {"app": name}
    sts = kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "replicas": replicas,
                "serviceName": name,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, **pod_template(gpus)},
            },
        }
    )
    pods = [
        kube.make_pod(
            f"{name}-{i}",
            namespace,
            owner=sts,
            labels={
                **labels,
                "controller-revision-hash": f"{name}-7c9d",
                "statefulset.kubernetes.io/pod-name": f"{name}-{i}",
                "apps.kubernetes.io/pod-index": str(i),
            },
            gpus=gpus,
            cpu="1",
            memory="2Gi",
            node="node-a",
        )
        for i in range(replicas)
    ]
    return sts, pods


def create_job_tree(
    kube: KubeTestClient, name: str, namespace: str, *, parallelism: int = 2, gpus: int = 1
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A batch Job and its Pods with the Job controller's labels (``batch.kubernetes.io/job-name``,
    ``job-name``, ``controller-uid``)."""
    job = kube.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "parallelism": parallelism,
                "completions": parallelism,
                "template": {"spec": {"restartPolicy": "Never", **pod_template(gpus)["spec"]}},
            },
        }
    )
    uid = job["metadata"]["uid"]
    labels = {
        "batch.kubernetes.io/job-name": name,
        "job-name": name,
        "batch.kubernetes.io/controller-uid": uid,
        "controller-uid": uid,
    }
    pods = owned_pods(kube, job, [f"{name}-q{i}x" for i in range(parallelism)], labels, gpus=gpus)
    return job, pods


def inference_service(name: str, namespace: str, mode: str, *, replicas: int, gpus: int) -> dict[str, Any]:
    """A KServe InferenceService with a predictor of ``replicas`` x ``gpus``, in deployment ``mode``
    (``RawDeployment``/``Standard`` or ``Knative``/``Serverless``)."""
    res = {"limits": {"nvidia.com/gpu": str(gpus)}, "requests": {"cpu": "1", "memory": "2Gi"}}
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": {"serving.kserve.io/deploymentMode": mode},
        },
        "spec": {
            "predictor": {
                "minReplicas": replicas,
                "model": {"modelFormat": {"name": "sklearn"}, "storageUri": "s3://m", "resources": res},
            }
        },
    }


def create_isvc_tree(
    kube: KubeTestClient, name: str, namespace: str, *, replicas: int = 2, gpus: int = 1
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A KServe InferenceService in Standard (raw deployment) mode (framework-shapes.md, KServe):
    Deployment ``<isvc>-predictor`` owned by the ISVC -> ReplicaSet -> Pods labelled
    ``serving.kserve.io/inferenceservice``, ``component=predictor``, ``app=isvc.<isvc>-predictor``."""
    isvc = kube.create(inference_service(name, namespace, "RawDeployment", replicas=replicas, gpus=gpus))
    labels = {
        "serving.kserve.io/inferenceservice": name,
        "component": "predictor",
        "app": f"isvc.{name}-predictor",
    }
    _, pods = deployment_chain(
        kube, f"{name}-predictor", namespace, labels, replicas=replicas, gpus=gpus, owner=isvc
    )
    return isvc, pods


# --- a stuck Deployment and its Events (describe's "why", the UI's workload page) -------------

SCHEDULING = "0/8 nodes are available: 8 Insufficient nvidia.com/gpu."


def ago(minutes: float) -> str:
    # Whole minutes past 10: kubectl's ages are then minute-granular ("21m"), the same in both
    # runs however many seconds pass between them.
    return (datetime.now(timezone.utc) - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def seed_event(
    kube: KubeTestClient,
    obj: dict[str, Any],
    name: str,
    reason: str,
    message: str,
    *,
    kind: str,
    first: float,
    last: float,
    count: int = 1,
    type_: str = "Warning",
    component: str = "kubelet",
) -> None:
    meta = obj["metadata"]
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": meta["namespace"]},
            "involvedObject": {
                "apiVersion": obj.get("apiVersion", "v1"),
                "kind": kind,
                "name": meta["name"],
                "namespace": meta["namespace"],
                "uid": meta["uid"],
            },
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": component, "host": "node-a"},
            "count": count,
            "firstTimestamp": ago(first),
            "lastTimestamp": ago(last),
        }
    )


def stuck_deployment(
    kube: KubeTestClient, namespace: str
) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """Deployment web (3 replicas, condition Available=False) -> ReplicaSet -> one Running pod,
    one in CrashLoopBackOff, one Pending that cannot be scheduled."""
    labels = {"app": "web", "pod-template-hash": "5d9f7c"}
    container = {"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    tpl = {"metadata": {"labels": labels}, "spec": {"containers": [container]}}
    dep = kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace, "labels": {"app": "web"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": tpl},
        }
    )
    dep = kube.set_status(
        dep,
        {
            "replicas": 3,
            "readyReplicas": 1,
            "updatedReplicas": 3,
            "availableReplicas": 1,
            "observedGeneration": 1,
            "conditions": [
                {
                    "type": "Available",
                    "status": "False",
                    "reason": "MinimumReplicasUnavailable",
                    "message": "Deployment does not have minimum availability.",
                    "lastTransitionTime": ago(7),
                    "lastUpdateTime": ago(7),
                },
                {
                    "type": "Progressing",
                    "status": "True",
                    "reason": "ReplicaSetUpdated",
                    "message": 'ReplicaSet "web-5d9f7c" is progressing.',
                    "lastTransitionTime": ago(8),
                    "lastUpdateTime": ago(1),
                },
            ],
        },
    )
    rs = kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": "web-5d9f7c",
                "namespace": namespace,
                "labels": labels,
                "ownerReferences": [owner_reference(dep)],
            },
            "spec": {"replicas": 3, "selector": {"matchLabels": labels}, "template": tpl},
        }
    )
    pods = owned_pods(kube, rs, ["web-5d9f7c-ok"], labels, gpus=1)
    pods.append(
        kube.make_pod(
            "web-5d9f7c-crash",
            namespace,
            owner=rs,
            labels=labels,
            gpus=1,
            node="node-a",
            container_reason="CrashLoopBackOff",
            restarts=7,
        )
    )
    pods.append(
        kube.make_pod(
            "web-5d9f7c-wait", namespace, owner=rs, labels=labels, gpus=1, phase="Pending", message=SCHEDULING
        )
    )
    return dep, rs, pods


def stuck_events(
    kube: KubeTestClient, dep: dict[str, Any], rs: dict[str, Any], pods: list[dict[str, Any]]
) -> None:
    """The Events the controllers and the kubelet would have written about :func:`stuck_deployment`
    (oldest first: scaling, pod creation, scheduling failures, back-off)."""
    crash, wait = pods[1], pods[2]
    seed_event(
        kube,
        {**crash, "apiVersion": "v1"},
        "crash.1",
        "BackOff",
        "Back-off restarting failed container main",
        kind="Pod",
        first=39,
        last=21,
        count=7,
    )
    seed_event(
        kube,
        {**wait, "apiVersion": "v1"},
        "wait.1",
        "FailedScheduling",
        SCHEDULING,
        kind="Pod",
        first=36,
        last=22,
        count=3,
        component="default-scheduler",
    )
    seed_event(
        kube,
        rs,
        "rs.1",
        "SuccessfulCreate",
        "Created pod: web-5d9f7c-wait",
        kind="ReplicaSet",
        first=38,
        last=38,
        type_="Normal",
        component="replicaset-controller",
    )
    seed_event(
        kube,
        dep,
        "dep.1",
        "ScalingReplicaSet",
        "Scaled up replica set web-5d9f7c to 3",
        kind="Deployment",
        first=40,
        last=40,
        type_="Normal",
        component="deployment-controller",
    )


def create_foreign_pod_group(kube: KubeTestClient, namespace: str, name: str) -> dict[str, Any]:
    """A Volcano PodGroup ``name`` whose controller is another workload (a Job "someone-else"),
    as a second operator would leave one; returns that Job."""
    other = kube.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "someone-else", "namespace": namespace},
            "spec": {
                "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}
            },
        }
    )
    kube.create(
        {
            "apiVersion": "scheduling.volcano.sh/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace, "ownerReferences": [owner_reference(other)]},
            "spec": {"minMember": 1},
        }
    )
    return other


# --- a type no definition covers, in every kstatus state (generic reading) -----------------------


def seed_gizmos(kube: KubeTestClient, namespace: str) -> str:
    """Gizmos (a schemaless CRD of a fresh group, no definition covers it) in every state kstatus
    tells apart, and a Deployment (-> ReplicaSet -> 2 pods, 2 GPUs each) owned by ``ready``.
    Returns the group."""
    from tests.support.crds import install_crds, schemaless_crd

    group = f"g{secrets.token_hex(3)}.example.com"
    install_crds(kube, [schemaless_crd(group, "Gizmo", "gizmos")], downlevel=False)
    api = f"{group}/v1"

    def make(name: str, status: dict | None = None, finalizer: bool = False) -> dict:
        meta: dict = {"name": name, "namespace": namespace}
        if finalizer:
            meta["finalizers"] = ["example.com/hold"]
        obj = kube.create({"apiVersion": api, "kind": "Gizmo", "metadata": meta, "spec": {"size": 1}})
        if status is not None:
            obj = kube.update({**obj, "status": status})
        return obj

    ready = make("ready", {"conditions": [{"type": "Ready", "status": "True", "message": "all good"}]})
    make("starting", {"conditions": [{"type": "Ready", "status": "False", "reason": "Waiting"}]})
    make("reconciling", {"conditions": [{"type": "Reconciling", "status": "True", "message": "rolling out"}]})
    make("stalled", {"conditions": [{"type": "Stalled", "status": "True", "message": "quota exceeded"}]})
    old = make("behind", {"observedGeneration": 1})
    kube.update({**old, "spec": {"size": 2}})  # generation 2, observed 1
    make("plain")
    gone = make("leaving", {"conditions": [{"type": "Ready", "status": "True"}]}, finalizer=True)
    kube.delete_obj(gone)
    deployment_chain(kube, "ready-web", namespace, {"app": "ready-web"}, replicas=2, gpus=2, owner=ready)
    return group
