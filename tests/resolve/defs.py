"""Definitions and objects shared by the resolver tests (built here, not from the catalog)."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from workload_map.model.definition import Karta


def karta(text_or_dict: str | dict[str, Any], name: str = "test") -> Karta:
    data = yaml.safe_load(text_or_dict) if isinstance(text_or_dict, str) else copy.deepcopy(text_or_dict)
    if "spec" not in data:
        data = {"spec": data}
    data.setdefault("metadata", {"name": name})
    return Karta.model_validate(data)


def structure(root: dict[str, Any], *children: dict[str, Any], name: str = "test") -> Karta:
    return karta(
        {"structureDefinition": {"rootComponent": root, "childComponents": list(children)}}, name=name
    )


# --- JobSet (facts from upstream-spec 4.2) -------------------------------------------------

JOBSET_KARTA = """
metadata: {name: jobset-x-k8s-io-jobset-v1alpha2}
spec:
  structureDefinition:
    rootComponent:
      name: jobset
      kind: {group: jobset.x-k8s.io, version: v1alpha2, kind: JobSet}
      statusDefinition:
        conditionsDefinition:
          path: .status.conditions
          typeFieldName: type
          statusFieldName: status
        statusMappings:
          initializing:
          - byExpression:
              expression: >-
                (.status.replicatedJobsStatus // []) | any(.[]; (.active // 0) > 0 and (.ready // 0) == 0)
                and all(.[]; (.failed // 0) == 0)
              expectedResult: "true"
          running:
          - byExpression:
              expression: >-
                (.status.replicatedJobsStatus // []) | any(.[]; (.active // 0) > 0 or (.ready // 0) > 0)
                and all(.[]; (.failed // 0) == 0)
              expectedResult: "true"
          completed:
          - byConditions: [{type: Completed, status: "True"}]
          failed:
          - byConditions: [{type: Failed, status: "True"}]
          suspended:
          - byConditions: [{type: Suspended, status: "True"}]
      suspendDefinition:
        suspendActions: [{path: .spec.suspend, value: "true"}]
        resumeActions: [{path: .spec.suspend, value: "false"}]
    childComponents:
    - name: replicatedjob
      kind: {group: batch, version: v1, kind: Job}
      ownerRef: jobset
      instanceIdPath: .spec.replicatedJobs[].name
      specDefinition:
        podTemplateSpecPath: .spec.replicatedJobs[].template.spec.template
      scaleDefinition:
        replicasPath: .spec.replicatedJobs[] | .replicas * .template.spec.parallelism
      podSelector:
        componentInstanceSelector:
          idPath: .metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]
  optimizationInstructions:
    gangScheduling:
      podGroups:
      - name: job
        members:
        - componentName: replicatedjob
          groupByKeyPaths: ['.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]']
"""


def jobset_rj(
    name: str, replicas: int, parallelism: int, gpus: int, cpu: str = "4", memory: str = "16Gi"
) -> dict[str, Any]:
    return {
        "name": name,
        "replicas": replicas,
        "template": {
            "spec": {
                "parallelism": parallelism,
                "completions": parallelism,
                "template": {
                    "metadata": {"labels": {"role": name}},
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {
                                "name": name,
                                "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                                "resources": {
                                    "limits": {"nvidia.com/gpu": str(gpus)},
                                    "requests": {"cpu": cpu, "memory": memory},
                                },
                            }
                        ],
                    },
                },
            }
        },
    }


def jobset(status: dict[str, Any] | None = None) -> dict[str, Any]:
    """The seed example: leader (1 replica) + workers (2 replicas), parallelism 1, 4 GPUs per pod."""
    obj: dict[str, Any] = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "train", "namespace": "ml", "uid": "js-uid"},
        "spec": {
            "suspend": False,
            "replicatedJobs": [jobset_rj("leader", 1, 1, 4), jobset_rj("workers", 2, 1, 4)],
        },
    }
    if status is not None:
        obj["status"] = status
    return obj


PYTORCH_KARTA = """
metadata: {name: kubeflow-org-pytorchjob-v1}
spec:
  structureDefinition:
    rootComponent:
      name: pytorchjob
      kind: {group: kubeflow.org, version: v1, kind: PyTorchJob}
      statusDefinition:
        conditionsDefinition: {path: .status.conditions, typeFieldName: type, statusFieldName: status}
        statusMappings:
          initializing: [{byConditions: [{type: Created, status: "True"}]}]
          running: [{byConditions: [{type: Running, status: "True"}]}]
          completed: [{byConditions: [{type: Succeeded, status: "True"}]}]
          failed: [{byConditions: [{type: Failed, status: "True"}]}]
          suspended: [{byConditions: [{type: Suspended, status: "True"}]}]
    childComponents:
    - name: master
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: pytorchjob
      specDefinition: {podTemplateSpecPath: .spec.pytorchReplicaSpecs.Master.template}
      scaleDefinition: {replicasPath: .spec.pytorchReplicaSpecs.Master.replicas // 1}
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: pytorchjob
      specDefinition: {podTemplateSpecPath: .spec.pytorchReplicaSpecs.Worker.template}
      scaleDefinition:
        replicasPath: .spec.pytorchReplicaSpecs.Worker.replicas // 1
        minReplicasPath: .spec.elasticPolicy.minReplicas
        maxReplicasPath: .spec.elasticPolicy.maxReplicas
"""


def pod_template(
    gpus: int = 0, cpu: str = "1", memory: str = "1Gi", gpu_name: str = "nvidia.com/gpu"
) -> dict[str, Any]:
    limits = {gpu_name: str(gpus)} if gpus else {}
    return {
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "img",
                    "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": limits},
                }
            ]
        }
    }


def pytorchjob(conditions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "pt", "namespace": "ml"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": pod_template(gpus=8, cpu="8", memory="64Gi")},
                "Worker": {"replicas": 3, "template": pod_template(gpus=8, cpu="8", memory="64Gi")},
            }
        },
        "status": {"conditions": conditions or []},
    }


RAYCLUSTER_KARTA = """
metadata: {name: ray-io-raycluster-v1}
spec:
  structureDefinition:
    rootComponent:
      name: raycluster
      kind: {group: ray.io, version: v1, kind: RayCluster}
      statusDefinition:
        phaseDefinition: {path: .status.state}
        statusMappings:
          running: [{byPhase: ready}]
          failed: [{byPhase: failed}]
          suspended:
          - byExpression:
              expression: .spec.suspend == true and (.status.state == "suspended" or (.status.state | not))
              expectedResult: "true"
    childComponents:
    - name: head
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: raycluster
      specDefinition: {podTemplateSpecPath: .spec.headGroupSpec.template}
      scaleDefinition: {replicasPath: '"1"'}
    - name: worker
      kind: {group: "", version: v1, kind: Pod}
      ownerRef: raycluster
      instanceIdPath: .spec.workerGroupSpecs[].groupName
      specDefinition: {podTemplateSpecPath: '.spec.workerGroupSpecs[].template'}
      scaleDefinition:
        replicasPath: .spec.workerGroupSpecs[].replicas
        minReplicasPath: .spec.workerGroupSpecs[].minReplicas
        maxReplicasPath: .spec.workerGroupSpecs[].maxReplicas
"""


def raycluster(state: str | None = "ready") -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": "rc", "namespace": "ray"},
        "spec": {
            "headGroupSpec": {"rayStartParams": {}, "template": pod_template(cpu="2", memory="8Gi")},
            "workerGroupSpecs": [
                {
                    "groupName": "gpu-a",
                    "replicas": 3,
                    "minReplicas": 2,
                    "maxReplicas": 5,
                    "rayStartParams": {},
                    "template": pod_template(gpus=1, cpu="4", memory="16Gi"),
                },
                {
                    "groupName": "cpu-b",
                    "replicas": 2,
                    "minReplicas": 1,
                    "maxReplicas": 4,
                    "rayStartParams": {},
                    "template": pod_template(cpu="500m", memory="1Gi"),
                },
            ],
        },
    }
    if state is not None:
        obj["status"] = {"state": state}
    return obj


LWS_KARTA = """
metadata: {name: leaderworkerset-x-k8s-io-leaderworkerset-v1}
spec:
  structureDefinition:
    rootComponent:
      name: leaderworkerset
      kind: {group: leaderworkerset.x-k8s.io, version: v1, kind: LeaderWorkerSet}
      statusDefinition:
        conditionsDefinition: {path: .status.conditions, typeFieldName: type, statusFieldName: status}
        statusMappings:
          initializing: [{byConditions: [{type: Progressing, status: "True"}]}]
          running:
          - byConditions: [{type: Available, status: "True"}]
          - byExpression:
              expression: >-
                (.status.replicas // 0) > 0 and .status.readyReplicas == .status.replicas
                and .status.updatedReplicas == .status.replicas
              expectedResult: "true"
          failed:
          - byConditions:
            - {type: Available, status: "False"}
            - {type: Progressing, status: "False"}
            - {type: UpdateInProgress, status: "False"}
    childComponents:
    - name: group
      ownerRef: leaderworkerset
      scaleDefinition: {replicasPath: .spec.replicas // 1}
      podSelector:
        replicaSelector: {keyPath: '.metadata.labels["leaderworkerset.sigs.k8s.io/group-index"]'}
    - name: leader
      kind: {group: apps, version: v1, kind: StatefulSet}
      ownerRef: group
      specDefinition: {podTemplateSpecPath: .spec.leaderWorkerTemplate.leaderTemplate}
      scaleDefinition: {replicasPath: .spec.replicas // 1}
    - name: worker
      kind: {group: apps, version: v1, kind: StatefulSet}
      ownerRef: group
      specDefinition: {podTemplateSpecPath: .spec.leaderWorkerTemplate.workerTemplate}
      scaleDefinition:
        replicasPath: (.spec.replicas // 1) * ((.spec.leaderWorkerTemplate.size // 1) - 1)
"""


def lws() -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm", "namespace": "serve"},
        "spec": {
            "replicas": 2,
            "leaderWorkerTemplate": {
                "size": 4,
                "leaderTemplate": pod_template(gpus=8, cpu="16", memory="128Gi"),
                "workerTemplate": pod_template(gpus=8, cpu="16", memory="128Gi"),
            },
        },
        "status": {
            "replicas": 2,
            "readyReplicas": 2,
            "updatedReplicas": 2,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "AllGroupsReady", "message": "ok"}
            ],
        },
    }


DYNAMO_KARTA = """
metadata: {name: nvidia-com-dynamographdeployment-v1alpha1}
spec:
  structureDefinition:
    rootComponent:
      name: dynamographdeployment
      kind: {group: nvidia.com, version: v1alpha1, kind: DynamoGraphDeployment}
      statusDefinition:
        phaseDefinition: {path: .status.state}
        statusMappings:
          initializing: [{byPhase: initializing}, {byPhase: pending}]
          running: [{byPhase: successful}]
          failed: [{byPhase: failed}]
    childComponents:
    - name: service
      ownerRef: dynamographdeployment
      instanceIdPath: .spec.services | to_entries[] | .key
      specDefinition:
        fragmentedPodSpecDefinition:
          labelsPath: .spec.services | .[] | .labels
          containerPath: .spec.services | .[] | .extraPodSpec.mainContainer
          resourcesPath: .spec.services | .[] | .resources
          imagePath: .spec.services | .[] | .extraPodSpec.mainContainer.image
      scaleDefinition:
        replicasPath: .spec.services[] | (.replicas // 1) * (.multinode.nodeCount // 1)
        minReplicasPath: .spec.services[] | .autoscaling.minReplicas
        maxReplicasPath: .spec.services[] | .autoscaling.maxReplicas
      podSelector:
        componentInstanceSelector: {idPath: '.metadata.labels["nvidia.com/dynamo-component"]'}
"""


def dynamo() -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "disagg", "namespace": "dynamo"},
        "spec": {
            "services": {
                "Frontend": {
                    "replicas": 1,
                    "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
                    "extraPodSpec": {"mainContainer": {"image": "dynamo:1"}},
                },
                "VllmDecodeWorker": {
                    "replicas": 2,
                    "multinode": {"nodeCount": 2},
                    "resources": {"requests": {"cpu": "10", "memory": "40Gi", "gpu": "8"}},
                    "extraPodSpec": {
                        "mainContainer": {
                            "image": "dynamo:1",
                            "resources": {
                                "requests": {"cpu": "10", "memory": "40Gi"},
                                "limits": {"nvidia.com/gpu": "8"},
                            },
                        }
                    },
                },
                "VllmPrefillWorker": {
                    "replicas": 1,
                    "autoscaling": {"minReplicas": 1, "maxReplicas": 4},
                    "resources": {"limits": {"nvidia.com/gpu": "4"}},
                    "extraPodSpec": {"mainContainer": {"image": "dynamo:1"}},
                },
            }
        },
        "status": {"state": "successful"},
    }


KSERVE_KARTA = """
metadata: {name: serving-kserve-io-inferenceservice-v1beta1}
spec:
  structureDefinition:
    rootComponent:
      name: inferenceservice
      kind: {group: serving.kserve.io, version: v1beta1, kind: InferenceService}
      statusDefinition:
        conditionsDefinition: {path: .status.conditions, typeFieldName: type, statusFieldName: status}
        statusMappings:
          running:
          - byConditions:
            - {type: PredictorReady, status: "True"}
            - {type: RoutesReady, status: "True"}
            - {type: LatestDeploymentReady, status: "True"}
          failed:
          - byConditions:
            - {type: PredictorReady, status: "False"}
            - {type: PredictorConfigurationReady, status: "False"}
            - {type: RoutesReady, status: "False"}
    childComponents:
    - name: predictor
      kind: {group: apps, version: v1, kind: Deployment}
      ownerRef: inferenceservice
      specDefinition:
        fragmentedPodSpecDefinition:
          schedulerNamePath: .spec.predictor.schedulerName
          labelsPath: .spec.predictor.labels
          annotationsPath: .spec.predictor.annotations
          nodeAffinityPath: .spec.predictor.affinity.nodeAffinity
          containersPath: .spec.predictor.containers
          containerPath: .spec.predictor | ( (.[]? | select(type =="object" and .storageUri)))
          priorityClassNamePath: .spec.predictor.priorityClassName
      scaleDefinition:
        minReplicasPath: .spec.predictor.minReplicas
        maxReplicasPath: .spec.predictor.maxReplicas
    - name: transformer
      kind: {group: apps, version: v1, kind: Deployment}
      ownerRef: inferenceservice
      specDefinition:
        podSpecPath: .spec.transformer
        metadataPath: .spec.transformer
"""


def isvc() -> dict[str, Any]:
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "llama", "namespace": "kserve"},
        "spec": {
            "predictor": {
                "minReplicas": 2,
                "maxReplicas": 4,
                "schedulerName": "kai-scheduler",
                "model": {
                    "modelFormat": {"name": "huggingface"},
                    "storageUri": "hf://meta-llama/Llama-3.1-8B-Instruct",
                    "resources": {
                        "requests": {"cpu": "6", "memory": "24Gi"},
                        "limits": {"nvidia.com/gpu": "1"},
                    },
                },
            }
        },
        "status": {
            "conditions": [
                {"type": "PredictorReady", "status": "True"},
                {"type": "RoutesReady", "status": "True"},
                {"type": "LatestDeploymentReady", "status": "True"},
                {"type": "Ready", "status": "True"},
            ]
        },
    }
