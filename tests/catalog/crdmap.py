"""Which CRD file of the shared corpus (``../shared/crds``) describes each catalog definition's root
kind. Built-in kinds map to ``None`` (the bundled schema subset)."""

from __future__ import annotations

from pathlib import Path

from tests.support.crds import crds_dir
from workload_map.lint import SchemaSet, builtin_schemas, load_crd_file

CRD_FILES: dict[str, str | None] = {
    "core-pod-v1": None,
    "batch-job-v1": None,
    "batch-cronjob-v1": None,
    "apps-deployment-v1": None,
    "apps-statefulset-v1": None,
    "jobset-x-k8s-io-jobset-v1alpha2": "jobset/jobset.x-k8s.io_jobsets.yaml",
    "leaderworkerset-x-k8s-io-leaderworkerset-v1": "lws/leaderworkerset.x-k8s.io_leaderworkersets.yaml",
    "kubeflow-org-pytorchjob-v1": "kubeflow-training-operator/kubeflow.org_pytorchjobs.yaml",
    "kubeflow-org-tfjob-v1": "kubeflow-training-operator/kubeflow.org_tfjobs.yaml",
    "kubeflow-org-xgboostjob-v1": "kubeflow-training-operator/kubeflow.org_xgboostjobs.yaml",
    "kubeflow-org-jaxjob-v1": "kubeflow-training-operator/kubeflow.org_jaxjobs.yaml",
    "kubeflow-org-paddlejob-v1": "kubeflow-training-operator/kubeflow.org_paddlejobs.yaml",
    # The two MPIJob versions come from two operators.
    "kubeflow-org-mpijob-v1": "kubeflow-training-operator/kubeflow.org_mpijobs.yaml",
    "kubeflow-org-mpijob-v2beta1": "mpi-operator/kubeflow.org_mpijobs.yaml",
    "trainer-kubeflow-org-trainjob-v1alpha1": "kubeflow-trainer/trainer.kubeflow.org_trainjobs.yaml",
    "ray-io-raycluster-v1": "kuberay/ray.io_rayclusters.yaml",
    "ray-io-rayjob-v1": "kuberay/ray.io_rayjobs.yaml",
    "ray-io-rayservice-v1": "kuberay/ray.io_rayservices.yaml",
    "serving-kserve-io-inferenceservice-v1beta1": "kserve/serving.kserve.io_inferenceservices.yaml",
    "serving-kserve-io-llminferenceservice-v1alpha1": "kserve/serving.kserve.io_llminferenceservices.yaml",
    "serving-kserve-io-llminferenceservice-v1alpha2": "kserve/serving.kserve.io_llminferenceservices.yaml",
    "serving-knative-dev-service-v1": "knative-serving/service.yaml",
    "apps-nvidia-com-nimservice-v1alpha1": "nim-operator/apps.nvidia.com_nimservices.yaml",
    "apps-nvidia-com-nimcache-v1alpha1": "nim-operator/apps.nvidia.com_nimcaches.yaml",
    "milvus-io-milvus-v1beta1": "milvus-operator/milvus.io_milvuses.yaml",
    "grove-io-podcliqueset-v1alpha1": "grove/grove.io_podcliquesets.yaml",
    "nvidia-com-dynamographdeployment-v1alpha1": "dynamo/nvidia.com_dynamographdeployments.yaml",
    "nvidia-com-dynamographdeployment-v1beta1": "dynamo-v1beta1/nvidia.com_dynamographdeployments.yaml",
    "agents-x-k8s-io-sandbox-v1beta1": "agent-sandbox/agents.x-k8s.io_sandboxes.yaml",
    "batch-volcano-sh-job-v1alpha1": "volcano/batch.volcano.sh_jobs.yaml",
    "sparkoperator-k8s-io-sparkapplication-v1beta2": (
        "spark-operator/sparkoperator.k8s.io_sparkapplications.yaml"
    ),
}

_CACHE: dict[str | None, SchemaSet] = {}


def schemas_for(slug: str) -> SchemaSet:
    """The schemas of the CRD file ``slug`` maps to (built-ins for ``None``)."""
    rel = CRD_FILES[slug]
    if rel not in _CACHE:
        if rel is None:
            _CACHE[rel] = SchemaSet().add(builtin_schemas())
        else:
            _CACHE[rel] = SchemaSet().add(load_crd_file(Path(crds_dir()) / rel))
    return _CACHE[rel]
