"""Seeding the catalog types not covered by :mod:`tests.support.seed`, from their lifecycle fixtures.

Each workload is the ``object`` of ``tests/catalog/lifecycles/<slug>/running.yaml`` (a spec
reviewed against framework-shapes.md; its ``expect.components`` are the counts the definition
must read). :func:`seed_from_fixture` creates it in the test cluster and writes its running status
through ``/status``; a chain builder per kind then creates the objects and pods its controllers
create, with the owner chains and pod labels that framework-shapes.md (FS) and
framework-shapes-extra.md (FSX) give:

- Knative Service -> Configuration -> Revision -> Deployment -> ReplicaSet -> Pod (FS 7), and the
  same chain under an InferenceService in Knative mode (ksvc ``<isvc>-predictor``, FS 6);
- LLMInferenceService: single node Deployment ``<name>-kserve``, multi-node LWS
  ``<name>-kserve-mn``, scheduler Deployment ``<name>-kserve-router-scheduler`` (FS 6b);
- NIMService -> Deployment ``<name>``, or LWS ``<name>-lws`` when multi-node (FS 8);
- Milvus -> Deployment ``<name>-milvus-<component>`` per component (FS 9);
- PodCliqueSet -> PodClique ``<pcs>-<r>-<clique>`` and PodCliqueScalingGroup ``<pcs>-<r>-<sg>`` ->
  PodClique ``<pcsg>-<j>-<clique>`` -> Pods (FS 10);
- DynamoGraphDeployment, Grove path (PodCliqueSet ``<dgd>``, FSX F) and component path
  (DynamoComponentDeployment ``<dgd>-<component>`` -> Deployment or LWS);
- Sandbox -> Pod ``<sandbox>`` (FS 12); TrainJob -> JobSet -> Job -> Pod (FSX A); SparkApplication
  driver -> app, executors -> driver (controller) and app (FSX D); Volcano Job -> Pod (FSX C);
  RayService -> RayCluster -> Pod (FS 5); CronJob -> Job -> Pod; TFJob, XGBoostJob, JAXJob,
  PaddleJob -> Pod (FSX B).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from tests.support.crds import schemaless_crd
from tests.support.kube import KubeApiError, KubeTestClient, owner_reference
from tests.support.seed import (
    deployment_chain,
    inference_service,
    job_for,
    lws_chain,
    owned_pods,
    pod_template,
)

LIFECYCLES = Path(__file__).resolve().parents[1] / "catalog" / "lifecycles"

Obj = dict[str, Any]
Pods = list[Obj]
Builder = Callable[[KubeTestClient, Obj], Pods]

#: The DGD version the test API server serves (the corpus installs Dynamo's v1alpha1-era CRD).
DYNAMO_SLUG = "nvidia-com-dynamographdeployment-v1alpha1"

#: Components a live read cannot see even when the operator runs: Milvus' etcd and MinIO are Helm
#: releases matched by chart labels, not owned by the Milvus object (catalog definition header).
NOT_OWNED_COMPONENTS = {"etcd", "minio"}


def fixture(slug: str) -> dict[str, Any]:
    doc = yaml.safe_load((LIFECYCLES / slug / "running.yaml").read_text())
    assert isinstance(doc, dict)
    return doc


def seed_from_fixture(kube: KubeTestClient, slug: str, namespace: str, name: str | None = None) -> Obj:
    """Create the running fixture's object in ``namespace`` (server-set metadata dropped), then
    write its status the way the operator does (``/status``)."""
    obj = fixture(slug)["object"]
    meta = obj["metadata"]
    body = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "metadata": {
            "name": name or meta["name"],
            "namespace": namespace,
            **{k: meta[k] for k in ("labels", "annotations") if k in meta},
        },
        "spec": obj["spec"],
    }
    created = kube.create(body)
    if obj.get("status"):
        try:
            created = kube.set_status(created, obj["status"])
        except KubeApiError as exc:
            # The test API server (v1.20) reads an empty string in some CRD statuses as null and
            # rejects it (NIMService, Sandbox: required `message: ""`); the object stays without
            # status, which the pod and count checks do not read.
            if exc.status_code != 422:
                raise
    return created


def _child(
    kube: KubeTestClient,
    owner: Mapping[str, Any],
    api_version: str,
    kind: str,
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    spec: Mapping[str, Any] | None = None,
) -> Obj:
    """An object ``owner``'s controller creates: controller reference to ``owner``."""
    meta: Obj = {
        "name": name,
        "namespace": owner["metadata"]["namespace"],
        "ownerReferences": [owner_reference(owner)],
    }
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    body: Obj = {"apiVersion": api_version, "kind": kind, "metadata": meta}
    if spec is not None:
        body["spec"] = dict(spec)
    return kube.create(body)


# ------------------------------------------------------------------------------------ Knative


def knative_chain(
    kube: KubeTestClient,
    ksvc: Mapping[str, Any],
    pods: int,
    *,
    gpus: int,
    extra_labels: Mapping[str, str] | None = None,
) -> Pods:
    """Configuration ``<ksvc>`` -> Revision ``<ksvc>-00001`` -> Deployment ``<rev>-deployment`` ->
    ReplicaSet -> Pods, with the labels Knative propagates to the pods (FS 7 "Pod labels")."""
    name, namespace = ksvc["metadata"]["name"], ksvc["metadata"]["namespace"]
    service = {"serving.knative.dev/service": name, "serving.knative.dev/serviceUID": ksvc["metadata"]["uid"]}
    template = {"spec": {"containers": pod_template(gpus)["spec"]["containers"]}}
    config = _child(
        kube,
        ksvc,
        "serving.knative.dev/v1",
        "Configuration",
        name,
        labels=service,
        spec={"template": template},
    )
    rev_name = f"{name}-00001"
    rev_labels = {
        **service,
        "serving.knative.dev/configuration": name,
        "serving.knative.dev/configurationGeneration": "1",
        "serving.knative.dev/configurationUID": config["metadata"]["uid"],
    }
    revision = _child(
        kube, config, "serving.knative.dev/v1", "Revision", rev_name, labels=rev_labels, spec=template["spec"]
    )
    pod_labels = {
        **(extra_labels or {}),
        **rev_labels,
        "serving.knative.dev/revision": rev_name,
        "serving.knative.dev/revisionUID": revision["metadata"]["uid"],
        "app": rev_name,
    }
    _, made = deployment_chain(
        kube, f"{rev_name}-deployment", namespace, pod_labels, replicas=pods, gpus=gpus, owner=revision
    )
    return made


def _min_scale(template: Mapping[str, Any]) -> int:
    annotations = (template.get("metadata") or {}).get("annotations") or {}
    return int(annotations.get("autoscaling.knative.dev/min-scale", "1"))


def build_knative_service(kube: KubeTestClient, ksvc: Obj) -> Pods:
    return knative_chain(kube, ksvc, _min_scale(ksvc["spec"]["template"]), gpus=1)


def create_isvc_knative_tree(
    kube: KubeTestClient, name: str, namespace: str, *, replicas: int = 2
) -> tuple[Obj, Pods]:
    """An InferenceService in Knative (Serverless) mode: ksvc ``<isvc>-predictor`` owned by the ISVC,
    then :func:`knative_chain`; pods also carry KServe's labels (FS 6 "Pod labels")."""
    isvc = kube.create(inference_service(name, namespace, "Knative", replicas=replicas, gpus=1))
    kserve = {"serving.kserve.io/inferenceservice": name, "component": "predictor"}
    annotations = {"autoscaling.knative.dev/min-scale": str(replicas)}
    ksvc = _child(
        kube,
        isvc,
        "serving.knative.dev/v1",
        "Service",
        f"{name}-predictor",
        labels=kserve,
        spec={"template": {"metadata": {"labels": kserve, "annotations": annotations}, **pod_template(1)}},
    )
    return isvc, knative_chain(kube, ksvc, replicas, gpus=1, extra_labels=kserve)


# ------------------------------------------------------------------------------------- KServe LLM


def _llm_labels(name: str, component: str, role: str = "both") -> dict[str, str]:
    return {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/part-of": "llminferenceservice",
        "app.kubernetes.io/component": component,
        "kserve.io/component": "workload",
        "llm-d.ai/role": role,
    }


def _lws_size(parallelism: Mapping[str, Any]) -> int:
    data = int(parallelism.get("data") or 0)
    if data > 0:
        return data // int(parallelism.get("dataLocal") or 1)
    return int(parallelism.get("pipeline") or 1)


def build_llmisvc(kube: KubeTestClient, llm: Obj) -> Pods:
    """Single node: Deployment ``<name>-kserve``; multi-node: LWS ``<name>-kserve-mn`` (size from
    the parallelism); plus the scheduler Deployment when ``.spec.router.scheduler`` is set."""
    name, namespace, spec = llm["metadata"]["name"], llm["metadata"]["namespace"], llm["spec"]
    replicas = int(spec.get("replicas") or 1)
    pods: Pods
    if spec.get("worker"):
        _, pods = lws_chain(
            kube,
            f"{name}-kserve-mn",
            namespace,
            owner=llm,
            replicas=replicas,
            size=_lws_size(spec.get("parallelism") or {}),
            gpus=8,
            leader_labels=_llm_labels(name, "llminferenceservice-workload-leader"),
            worker_labels=_llm_labels(name, "llminferenceservice-workload-worker"),
        )
    else:
        _, pods = deployment_chain(
            kube,
            f"{name}-kserve",
            namespace,
            _llm_labels(name, "llminferenceservice-workload"),
            replicas=replicas,
            gpus=1,
            owner=llm,
        )
    if (spec.get("router") or {}).get("scheduler") is not None:
        labels = {
            **_llm_labels(name, "llminferenceservice-router-scheduler"),
            "kserve.io/component": "router",
        }
        _, scheduler = deployment_chain(
            kube, f"{name}-kserve-router-scheduler", namespace, labels, replicas=1, gpus=0, owner=llm
        )
        pods += scheduler
    return pods


def create_llmisvc_single_tree(kube: KubeTestClient, name: str, namespace: str) -> tuple[Obj, Pods]:
    """The single-node example of FS 6b (``replicas: 2``, one GPU each, no router)."""
    llm = kube.create(
        {
            "apiVersion": "serving.kserve.io/v1alpha2",
            "kind": "LLMInferenceService",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "model": {"uri": "hf://Qwen/Qwen2.5-7B-Instruct", "name": "Qwen/Qwen2.5-7B-Instruct"},
                "replicas": 2,
                "template": {"containers": pod_template(1)["spec"]["containers"]},
            },
        }
    )
    return llm, build_llmisvc(kube, llm)


# ------------------------------------------------------------------------------------ NIM, Milvus


def _nim_labels(name: str, app: str) -> dict[str, str]:
    return {
        "app": app,
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/instance": name,
        "app.kubernetes.io/part-of": "nim-service",
        "app.kubernetes.io/managed-by": "k8s-nim-operator",
    }


def build_nimservice(kube: KubeTestClient, nim: Obj) -> Pods:
    name, namespace, spec = nim["metadata"]["name"], nim["metadata"]["namespace"], nim["spec"]
    replicas = int(spec.get("replicas") or 1)
    multi = spec.get("multiNode")
    if multi:
        size = int(((multi.get("parallelism") or {}).get("pipeline")) or 1)
        _, pods = lws_chain(
            kube,
            f"{name}-lws",
            namespace,
            owner=nim,
            replicas=replicas,
            size=size,
            gpus=1,
            leader_labels={**_nim_labels(name, f"{name}-lws"), "nim-llm-role": "leader"},
            worker_labels=_nim_labels(name, f"{name}-lws"),
        )
        return pods
    _, pods = deployment_chain(
        kube, name, namespace, _nim_labels(name, name), replicas=replicas, gpus=1, owner=nim
    )
    return pods


def create_nimservice_lws_tree(kube: KubeTestClient, name: str, namespace: str) -> tuple[Obj, Pods]:
    """The running fixture's NIMService made multi-node: pipeline parallelism 2 -> LWS size 2."""
    spec = dict(fixture("apps-nvidia-com-nimservice-v1alpha1")["object"]["spec"])
    spec["replicas"] = 1
    spec["multiNode"] = {"parallelism": {"pipeline": 2, "tensor": 1}}
    nim = kube.create(
        {
            "apiVersion": "apps.nvidia.com/v1alpha1",
            "kind": "NIMService",
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec,
        }
    )
    return nim, build_nimservice(kube, nim)


#: Milvus CR component keys -> the component label value the operator sets (FS 9).
MILVUS_COMPONENTS = {
    "proxy": "proxy",
    "mixCoord": "mixcoord",
    "dataNode": "datanode",
    "indexNode": "indexnode",
    "queryNode": "querynode",
}


def build_milvus(kube: KubeTestClient, mv: Obj) -> Pods:
    name, namespace = mv["metadata"]["name"], mv["metadata"]["namespace"]
    components = mv["spec"]["components"]
    pods: Pods = []
    for key, component in MILVUS_COMPONENTS.items():
        spec = components.get(key)
        if not isinstance(spec, dict):
            continue
        labels = {
            "app.kubernetes.io/instance": name,
            "app.kubernetes.io/name": "milvus",
            "app.kubernetes.io/component": component,
            "app.kubernetes.io/managed-by": "milvus-operator",
        }
        if component == "proxy":
            labels["milvus.io/service"] = "true"
        gpus = int(((spec.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu", 0))
        _, made = deployment_chain(
            kube,
            f"{name}-milvus-{component}",
            namespace,
            labels,
            replicas=int(spec.get("replicas", 1)),
            gpus=gpus,
            owner=mv,
        )
        pods += made
    return pods


# ------------------------------------------------------------------------------------ Grove, Dynamo


def _grove_pods(
    kube: KubeTestClient,
    pcs_name: str,
    clique: Obj,
    count: int,
    labels: Mapping[str, str],
    gpus: int,
) -> Pods:
    pclq = clique["metadata"]["name"]
    base = {
        **labels,
        "app.kubernetes.io/managed-by": "grove-operator",
        "app.kubernetes.io/part-of": pcs_name,
        "app.kubernetes.io/name": pclq,
        "grove.io/podclique": pclq,
        "grove.io/podcliqueset-replica-index": "0",
        "grove.io/podgang": f"{pcs_name}-0",
        "grove.io/pod-template-hash": "6c7d9b8f5",
    }
    namespace = clique["metadata"]["namespace"]
    return [
        kube.make_pod(
            f"{pclq}-x{i}k2q",
            namespace,
            owner=clique,
            labels={**base, "grove.io/podclique-pod-index": str(i)},
            gpus=gpus,
            cpu="1",
            memory="2Gi",
            node="node-a",
        )
        for i in range(count)
    ]


def grove_chain(
    kube: KubeTestClient,
    pcs: Obj,
    cliques: list[tuple[str, int, int, Mapping[str, str]]],
    groups: list[tuple[str, int, list[str]]],
) -> Pods:
    """One PodCliqueSet replica (index 0) of ``pcs``: ``cliques`` are (name, replicas, gpus,
    template labels); ``groups`` (scaling group name, replicas, clique names). FS 10 "Objects"."""
    pcs_name, grouped = pcs["metadata"]["name"], {c for _, _, names in groups for c in names}
    by_name = {c[0]: c for c in cliques}
    pods: Pods = []
    gv = "grove.io/v1alpha1"
    for cname, replicas, gpus, labels in cliques:
        if cname in grouped:
            continue
        pclq = _child(
            kube,
            pcs,
            gv,
            "PodClique",
            f"{pcs_name}-0-{cname}",
            spec={"roleName": cname, "replicas": replicas, "podSpec": pod_template(gpus)["spec"]},
        )
        pods += _grove_pods(
            kube, pcs_name, pclq, replicas, {**labels, "app.kubernetes.io/component": "pcs-podclique"}, gpus
        )
    for gname, greplicas, names in groups:
        pcsg = _child(
            kube,
            pcs,
            gv,
            "PodCliqueScalingGroup",
            f"{pcs_name}-0-{gname}",
            spec={"replicas": greplicas, "cliqueNames": names},
        )
        for j in range(greplicas):
            for cname in names:
                _, replicas, gpus, labels = by_name[cname]
                pclq = _child(
                    kube,
                    pcsg,
                    gv,
                    "PodClique",
                    f"{pcsg['metadata']['name']}-{j}-{cname}",
                    spec={"roleName": cname, "replicas": replicas, "podSpec": pod_template(gpus)["spec"]},
                )
                group_labels = {
                    **labels,
                    "app.kubernetes.io/component": "pcsg-podclique",
                    "grove.io/podcliquescalinggroup": pcsg["metadata"]["name"],
                    "grove.io/podcliquescalinggroup-replica-index": str(j),
                }
                pods += _grove_pods(kube, pcs_name, pclq, replicas, group_labels, gpus)
    return pods


def _gpus(container_holder: Mapping[str, Any]) -> int:
    total = 0
    for c in container_holder.get("containers") or ():
        total += int(((c.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu", 0))
    return total


def build_podcliqueset(kube: KubeTestClient, pcs: Obj) -> Pods:
    template = pcs["spec"]["template"]
    cliques = [
        (c["name"], int(c["spec"].get("replicas", 1)), _gpus(c["spec"]["podSpec"]), c.get("labels") or {})
        for c in template["cliques"]
    ]
    groups = [
        (g["name"], int(g.get("replicas", 1)), list(g["cliqueNames"]))
        for g in template.get("podCliqueScalingGroups") or []
    ]
    return grove_chain(kube, pcs, cliques, groups)


class DynamoComponent(NamedTuple):
    name: str
    type: str
    replicas: int
    nodes: int
    gpus: int


def dynamo_components(dgd: Mapping[str, Any]) -> list[DynamoComponent]:
    """The components of a DGD in either version: v1beta1 ``.spec.components[]`` (a real pod
    template) or v1alpha1 ``.spec.services`` (a map; GPUs in Dynamo's ``resources.limits.gpu``)."""
    spec = dgd["spec"]
    out = []
    for c in spec.get("components") or ():
        nodes = int((c.get("multinode") or {}).get("nodeCount") or 1)
        out.append(
            DynamoComponent(
                c["name"],
                c.get("type", "main"),
                int(c.get("replicas", 1)),
                nodes,
                _gpus(c["podTemplate"]["spec"]),
            )
        )
    for name, c in (spec.get("services") or {}).items():
        nodes = int((c.get("multinode") or {}).get("nodeCount") or 1)
        gpus = int(((c.get("resources") or {}).get("limits") or {}).get("gpu", 0))
        out.append(
            DynamoComponent(name, c.get("componentType", "main"), int(c.get("replicas", 1)), nodes, gpus)
        )
    return out


def _dynamo_labels(dgd: str, component: DynamoComponent) -> dict[str, str]:
    """FS 11 / FSX F "Pod labels"."""
    return {
        "nvidia.com/selector": f"{dgd}-{component.name.lower()}",
        "nvidia.com/dynamo-graph-deployment-name": dgd,
        "nvidia.com/dynamo-component": component.name,
        "nvidia.com/dynamo-component-type": component.type,
        "nvidia.com/dynamo-namespace": dgd,
        "nvidia.com/metrics-enabled": "true",
    }


def build_dynamo_grove(kube: KubeTestClient, dgd: Obj) -> Pods:
    """Grove path: PodCliqueSet ``<dgd>`` owned by the DGD; a single-node component is a clique
    ``lower(name)``, a multinode one a scaling group ``lower(name)`` with cliques ``-ldr`` (1) and
    ``-wkr`` (nodeCount - 1)."""
    name = dgd["metadata"]["name"]
    pcs = _child(
        kube,
        dgd,
        "grove.io/v1alpha1",
        "PodCliqueSet",
        name,
        spec={"replicas": 1, "template": {"cliques": []}},
    )
    cliques: list[tuple[str, int, int, Mapping[str, str]]] = []
    groups: list[tuple[str, int, list[str]]] = []
    for comp in dynamo_components(dgd):
        lower, labels = comp.name.lower(), _dynamo_labels(name, comp)
        if comp.nodes > 1:
            cliques += [
                (f"{lower}-ldr", 1, comp.gpus, labels),
                (f"{lower}-wkr", comp.nodes - 1, comp.gpus, labels),
            ]
            groups.append((lower, comp.replicas, [f"{lower}-ldr", f"{lower}-wkr"]))
        else:
            cliques.append((lower, comp.replicas, comp.gpus, labels))
    return grove_chain(kube, pcs, cliques, groups)


#: A stand-in for Dynamo's DynamoComponentDeployment CRD, which the corpus does not hold: only the
#: object's identity matters for the owner chain (DGD -> DCD -> Deployment/LWS).
DCD_CRD = schemaless_crd(
    "nvidia.com",
    "DynamoComponentDeployment",
    "dynamocomponentdeployments",
    version="v1alpha1",
    short_names=("dcd",),
)


def build_dynamo_components(kube: KubeTestClient, dgd: Obj) -> Pods:
    """Component path: DCD ``<dgd>-<lower(name)>`` per component -> Deployment (single node) or
    LeaderWorkerSet (multinode, size nodeCount) named like the DCD."""
    name, namespace = dgd["metadata"]["name"], dgd["metadata"]["namespace"]
    pods: Pods = []
    for comp in dynamo_components(dgd):
        dcd_name, labels = f"{name}-{comp.name.lower()}", _dynamo_labels(name, comp)
        dcd = _child(kube, dgd, "nvidia.com/v1alpha1", "DynamoComponentDeployment", dcd_name, spec={})
        if comp.nodes > 1:
            _, made = lws_chain(
                kube,
                dcd_name,
                namespace,
                owner=dcd,
                replicas=comp.replicas,
                size=comp.nodes,
                gpus=comp.gpus,
                leader_labels=labels,
                worker_labels=labels,
            )
        else:
            _, made = deployment_chain(
                kube, dcd_name, namespace, labels, replicas=comp.replicas, gpus=comp.gpus, owner=dcd
            )
        pods += made
    return pods


def create_dynamo_components_tree(kube: KubeTestClient, name: str, namespace: str) -> tuple[Obj, Pods]:
    """The running DGD fixture (:data:`DYNAMO_SLUG`) with Grove turned off
    (``nvidia.com/enable-grove: "false"``)."""
    obj = fixture(DYNAMO_SLUG)["object"]
    dgd = kube.create(
        {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "metadata": {
                "name": name,
                "namespace": namespace,
                "annotations": {
                    "nvidia.com/enable-grove": "false",
                    "nvidia.com/workload-provider": "component",
                },
            },
            "spec": obj["spec"],
        }
    )
    return dgd, build_dynamo_components(kube, dgd)


# ------------------------------------------------------------------------------- batch and training


def fnv1a_32(text: str) -> str:
    """FNV-1a 32 as 8 hex chars: the Sandbox controller's ``sandbox-name-hash`` label (FS 12)."""
    h = 0x811C9DC5
    for byte in text.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{h:08x}"


def build_sandbox(kube: KubeTestClient, sb: Obj) -> Pods:
    name = sb["metadata"]["name"]
    template_labels = ((sb["spec"].get("podTemplate") or {}).get("metadata") or {}).get("labels") or {}
    return owned_pods(
        kube, sb, [name], {**template_labels, "agents.x-k8s.io/sandbox-name-hash": fnv1a_32(name)}
    )


def build_trainjob(kube: KubeTestClient, tj: Obj) -> Pods:
    """JobSet ``<trainjob>`` owned by the TrainJob, replicated job ``node`` (1 replica, parallelism
    = numNodes, as the torch-distributed runtime renders it) -> Job -> numNodes Pods."""
    name, trainer = tj["metadata"]["name"], tj["spec"]["trainer"]
    nodes = int(trainer.get("numNodes", 1))
    js_spec = {
        "replicatedJobs": [
            {
                "name": "node",
                "replicas": 1,
                "template": {
                    "spec": {
                        "parallelism": nodes,
                        "completions": nodes,
                        "template": {"spec": {"restartPolicy": "Never", **pod_template(8)["spec"]}},
                    }
                },
            }
        ]
    }
    js = _child(kube, tj, "jobset.x-k8s.io/v1alpha2", "JobSet", name, spec=js_spec)
    job = kube.create(job_for(js, "node", 0))
    labels = {**job["metadata"]["labels"], "batch.kubernetes.io/job-name": job["metadata"]["name"]}
    return owned_pods(
        kube, job, [f"{job['metadata']['name']}-{i}-x7k2q" for i in range(nodes)], labels, gpus=8
    )


def build_spark(kube: KubeTestClient, app: Obj) -> Pods:
    """Driver Pod ``<app>-driver`` (controller: the app); executors whose controller is the driver
    Pod and which carry a non-controller reference to the app (FSX D "Owner chain")."""
    name = app["metadata"]["name"]
    common = {
        "sparkoperator.k8s.io/app-name": name,
        "sparkoperator.k8s.io/launched-by-spark-operator": "true",
        "sparkoperator.k8s.io/submission-id": "5f1c2b7e-0d7a-4c1b-9f61-2d3e4f5a6b7c",
        "spark-app-selector": "spark-3b9f0c1d2e",
        "spark-version": "3.5.5",
    }
    driver_labels = {**(app["spec"]["driver"].get("labels") or {}), **common, "spark-role": "driver"}
    driver = owned_pods(kube, app, [f"{name}-driver"], driver_labels)
    executors = [
        kube.make_pod(
            f"{name}-3b9f0c1d2e-exec-{i}",
            app["metadata"]["namespace"],
            owner=driver[0],
            owners=(app,),
            labels={**common, "spark-role": "executor", "spark-exec-id": str(i)},
            gpus=1,
            cpu="8",
            memory="32Gi",
            node="node-a",
        )
        for i in range(1, int(app["spec"]["executor"].get("instances", 1)) + 1)
    ]
    return driver + executors


def build_volcano(kube: KubeTestClient, vj: Obj) -> Pods:
    name, namespace = vj["metadata"]["name"], vj["metadata"]["namespace"]
    pods: Pods = []
    for task in vj["spec"]["tasks"]:
        for i in range(int(task.get("replicas", 1))):
            labels = {
                "volcano.sh/job-name": name,
                "volcano.sh/job-namespace": namespace,
                "volcano.sh/task-spec": task["name"],
                "volcano.sh/task-index": str(i),
                "volcano.sh/queue-name": vj["spec"].get("queue", "default"),
            }
            pods += owned_pods(
                kube, vj, [f"{name}-{task['name']}-{i}"], labels, gpus=_gpus(task["template"]["spec"])
            )
    return pods


def build_rayservice(kube: KubeTestClient, rs: Obj) -> Pods:
    """The active RayCluster ``<name>-<5 rand>`` owned by the RayService with its head and worker
    Pods (KubeRay labels, FS 5; multi-host workers with their replica labels)."""
    name, config = rs["metadata"]["name"], rs["spec"]["rayClusterConfig"]
    cluster = f"{name}-k2x8q"
    rc = _child(
        kube,
        rs,
        "ray.io/v1",
        "RayCluster",
        cluster,
        labels={"ray.io/originated-from-cr-name": name, "ray.io/originated-from-crd": "RayService"},
        spec=config,
    )
    common = {
        "ray.io/cluster": cluster,
        "ray.io/is-ray-node": "yes",
        "app.kubernetes.io/name": "kuberay",
        "app.kubernetes.io/created-by": "kuberay-operator",
    }
    head = {
        **common,
        "ray.io/node-type": "head",
        "ray.io/group": "headgroup",
        "ray.io/identifier": f"{cluster}-head",
    }
    pods = owned_pods(kube, rc, [f"{cluster}-head-x1"], head)
    for group in config.get("workerGroupSpecs") or ():
        hosts = int(group.get("numOfHosts", 1))
        for r in range(int(group.get("replicas", 0))):
            for h in range(hosts):
                labels = {
                    **common,
                    "ray.io/node-type": "worker",
                    "ray.io/group": group["groupName"],
                    "ray.io/identifier": f"{cluster}-worker",
                    "ray.io/worker-group-replica-index": str(r),
                }
                if hosts > 1:
                    labels["ray.io/worker-group-replica-name"] = f"{group['groupName']}-r{r}"
                    labels["ray.io/replica-host-index"] = str(h)
                pods += owned_pods(
                    kube,
                    rc,
                    [f"{cluster}-{group['groupName']}-worker-{r}{h}"],
                    labels,
                    gpus=_gpus(group["template"]["spec"]),
                )
    return pods


def build_cronjob(kube: KubeTestClient, cj: Obj) -> Pods:
    """The current run: Job ``<cronjob>-<scheduled minute>`` owned by the CronJob -> Pods."""
    name, job_spec = cj["metadata"]["name"], cj["spec"]["jobTemplate"]["spec"]
    job = _child(kube, cj, "batch/v1", "Job", f"{name}-29012520", spec=job_spec)
    uid = job["metadata"]["uid"]
    labels = {
        "batch.kubernetes.io/job-name": job["metadata"]["name"],
        "job-name": job["metadata"]["name"],
        "batch.kubernetes.io/controller-uid": uid,
        "controller-uid": uid,
    }
    count = min(int(job_spec.get("parallelism", 1)), int(job_spec.get("completions", 1)))
    return owned_pods(
        kube,
        job,
        [f"{job['metadata']['name']}-q{i}x" for i in range(count)],
        labels,
        gpus=_gpus(job_spec["template"]["spec"]),
    )


def kubeflow_builder(controller: str, master_types: tuple[str, ...] | None) -> Builder:
    """Training Operator v1 jobs: Pods ``<job>-<type>-<i>`` owned by the job with the labels of
    FSX B (``replica-type`` lower case; ``job-role=master`` on ``master_types``, else on Worker 0;
    ``None``: on index 0 of every type, as JAXJob does)."""

    def build(kube: KubeTestClient, job: Obj) -> Pods:
        name = job["metadata"]["name"]
        specs = next(v for k, v in job["spec"].items() if k.endswith("ReplicaSpecs"))
        has_master = master_types is not None and any(t in specs for t in master_types)
        pods: Pods = []
        for rtype, rspec in specs.items():
            for i in range(int(rspec.get("replicas", 1))):
                labels = {
                    "training.kubeflow.org/operator-name": controller,
                    "training.kubeflow.org/job-name": name,
                    "training.kubeflow.org/replica-type": rtype.lower(),
                    "training.kubeflow.org/replica-index": str(i),
                }
                if master_types is None:
                    is_master = i == 0
                elif has_master:
                    is_master = rtype in master_types
                else:
                    is_master = rtype == "Worker" and i == 0
                if is_master:
                    labels["training.kubeflow.org/job-role"] = "master"
                gpus = _gpus(rspec["template"]["spec"])
                pods += owned_pods(kube, job, [f"{name}-{rtype.lower()}-{i}"], labels, gpus=gpus)
        return pods

    return build


#: slug of the running fixture -> the chain its controllers build.
BUILDERS: dict[str, Builder] = {
    "serving-knative-dev-service-v1": build_knative_service,
    "serving-kserve-io-llminferenceservice-v1alpha2": build_llmisvc,
    "apps-nvidia-com-nimservice-v1alpha1": build_nimservice,
    "milvus-io-milvus-v1beta1": build_milvus,
    "grove-io-podcliqueset-v1alpha1": build_podcliqueset,
    "nvidia-com-dynamographdeployment-v1alpha1": build_dynamo_grove,
    "nvidia-com-dynamographdeployment-v1beta1": build_dynamo_grove,
    "agents-x-k8s-io-sandbox-v1beta1": build_sandbox,
    "trainer-kubeflow-org-trainjob-v1alpha1": build_trainjob,
    "sparkoperator-k8s-io-sparkapplication-v1beta2": build_spark,
    "batch-volcano-sh-job-v1alpha1": build_volcano,
    "ray-io-rayservice-v1": build_rayservice,
    "batch-cronjob-v1": build_cronjob,
    "kubeflow-org-tfjob-v1": kubeflow_builder("tfjob-controller", ("Chief", "Master")),
    "kubeflow-org-xgboostjob-v1": kubeflow_builder("xgboostjob-controller", ("Master",)),
    "kubeflow-org-jaxjob-v1": kubeflow_builder("jaxjob-controller", None),
    "kubeflow-org-paddlejob-v1": kubeflow_builder("paddlejob-controller", ("Master",)),
}


def seed_catalog_type(
    kube: KubeTestClient, slug: str, namespace: str, name: str | None = None
) -> tuple[Obj, Pods]:
    """The running fixture ``slug`` and everything its controllers create. Returns (workload, pods)."""
    obj = seed_from_fixture(kube, slug, namespace, name)
    return obj, BUILDERS[slug](kube, obj)


def expected_counts(slug: str) -> tuple[int, int]:
    """(desired pods, pods a live read owns) of the running fixture: its ``expect.components``
    summed, the second without :data:`NOT_OWNED_COMPONENTS`."""
    comps = fixture(slug)["expect"]["components"]
    desired = sum(sum(v.values()) for v in comps.values())
    owned = sum(sum(v.values()) for c, v in comps.items() if c not in NOT_OWNED_COMPONENTS)
    return desired, owned
