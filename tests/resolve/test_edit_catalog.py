"""Every write-back verb and scale on every catalog type, offline, on the running lifecycle
fixtures (objects shaped as the frameworks' recordings show them, tests/catalog/lifecycles):

* a verb either shows in every pod location the resolver reads (all templates, pod specs and
  fragments of every instance the object holds), or is refused with a message naming the
  component and the field; the refusals are exactly the matrix below (the issue's per-type matrix);
* the diff between the object before and after touches only paths the definition names;
* a scale makes the resolver read the asked count, or is refused naming the component.

``python -m tests.resolve.test_edit_catalog`` prints the matrix as a Markdown table.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.edits import VERBS, outside_named_paths, pod_seen, scale_targets
from workload_map.errors import WriteBackError
from workload_map.model.definition import Karta
from workload_map.resolve import resolve
from workload_map.resolve.writeback import CannotScaleError, apply_edits, scale

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "src/workload_map/catalog/data"
LIFECYCLES = ROOT / "tests/catalog/lifecycles"
SLUGS = sorted(p.name for p in LIFECYCLES.iterdir() if (p / "running.yaml").is_file())

# (type, verb) -> a piece of the refusal. Every pair not listed works on every pod location.
NO_TOLERATIONS = "its fragmentedPodSpecDefinition has no path for tolerations"
REFUSED: dict[tuple[str, str], str] = {
    # NIMCache: the definition reads only its resources, computed: nothing can be written
    **{
        ("apps-nvidia-com-nimcache-v1alpha1", verb): why
        for verb, why in {
            "image": "has no imagePath",
            "resources": "'{requests: .spec.resources}' is not an assignable path",
            "env": "has no containerPath or containersPath",
            "scheduler": "has no schedulerNamePath",
            "node-selector": "has no nodeAffinityPath",
            "tolerations": NO_TOLERATIONS,
            "priority-class": "has no priorityClassNamePath",
            "label": "has no labelsPath",
            "annotate": "has no annotationsPath",
        }.items()
    },
    # NIMService: image is {repository, tag}, not located; no container, no tolerations
    ("apps-nvidia-com-nimservice-v1alpha1", "image"): "has no imagePath",
    ("apps-nvidia-com-nimservice-v1alpha1", "env"): "has no containerPath or containersPath",
    ("apps-nvidia-com-nimservice-v1alpha1", "tolerations"): NO_TOLERATIONS,
    # Grove cliques, Dynamo v1alpha1 services, KServe predictor: fragments without tolerations
    ("grove-io-podcliqueset-v1alpha1", "tolerations"): NO_TOLERATIONS,
    ("nvidia-com-dynamographdeployment-v1alpha1", "tolerations"): NO_TOLERATIONS,
    ("serving-kserve-io-inferenceservice-v1beta1", "tolerations"): NO_TOLERATIONS,
    # Dynamo v1alpha1 resources are computed from Dynamo's own keys (read-only in the catalog)
    (
        "nvidia-com-dynamographdeployment-v1alpha1",
        "resources",
    ): "cannot write resourcesPath of component 'service'",
    # Milvus: the in-cluster etcd and MinIO are Helm values that only locate resources
    ("milvus-io-milvus-v1beta1", "image"): "cannot set image on component 'etcd'",
    ("milvus-io-milvus-v1beta1", "env"): "has no containerPath or containersPath",
    ("milvus-io-milvus-v1beta1", "scheduler"): "cannot set schedulerName on component 'etcd'",
    ("milvus-io-milvus-v1beta1", "node-selector"): "cannot set nodeSelector on component 'etcd'",
    ("milvus-io-milvus-v1beta1", "tolerations"): NO_TOLERATIONS,
    ("milvus-io-milvus-v1beta1", "priority-class"): "cannot set priorityClassName on component 'etcd'",
    ("milvus-io-milvus-v1beta1", "label"): "cannot set labels on component 'etcd'",
    ("milvus-io-milvus-v1beta1", "annotate"): "cannot set annotations on component 'etcd'",
    # LLMInferenceService: bare pod specs without metadataPath
    ("serving-kserve-io-llminferenceservice-v1alpha1", "label"): "it has podSpecPath but no metadataPath",
    ("serving-kserve-io-llminferenceservice-v1alpha1", "annotate"): "it has podSpecPath but no metadataPath",
    ("serving-kserve-io-llminferenceservice-v1alpha2", "label"): "it has podSpecPath but no metadataPath",
    ("serving-kserve-io-llminferenceservice-v1alpha2", "annotate"): "it has podSpecPath but no metadataPath",
    # SparkApplication: resources computed from cores/memory; driver/executor env not located
    (
        "sparkoperator-k8s-io-sparkapplication-v1beta2",
        "resources",
    ): "cannot write resourcesPath of component 'driver'",
    ("sparkoperator-k8s-io-sparkapplication-v1beta2", "env"): "has no containerPath or containersPath",
    ("sparkoperator-k8s-io-sparkapplication-v1beta2", "tolerations"): NO_TOLERATIONS,
    # TrainJob: the trainer overrides only image and resources per node
    **{
        ("trainer-kubeflow-org-trainjob-v1alpha1", verb): why
        for verb, why in {
            "env": "has no containerPath or containersPath",
            "scheduler": "has no schedulerNamePath",
            "node-selector": "has no nodeAffinityPath",
            "tolerations": NO_TOLERATIONS,
            "priority-class": "has no priorityClassNamePath",
            "label": "has no labelsPath",
            "annotate": "has no annotationsPath",
        }.items()
    },
}


def load(slug: str) -> tuple[Karta, dict[str, Any]]:
    karta = Karta.model_validate(yaml.safe_load((CATALOG / f"{slug}.yaml").read_text()))
    return karta, yaml.safe_load((LIFECYCLES / slug / "running.yaml").read_text())["object"]


def outcome(slug: str, verb: str) -> str:
    karta, obj = load(slug)
    try:
        apply_edits(karta, obj, list(VERBS[verb].edits))
    except WriteBackError as exc:
        return f"refused: {exc}"
    return "works"


@pytest.mark.parametrize("verb", sorted(VERBS))
@pytest.mark.parametrize("slug", SLUGS)
def test_verb_on_catalog_type(slug: str, verb: str) -> None:
    karta, obj = load(slug)
    before = copy.deepcopy(obj)
    expected = REFUSED.get((slug, verb))
    if expected is not None:
        with pytest.raises(WriteBackError) as info:
            apply_edits(karta, obj, list(VERBS[verb].edits))
        assert expected in str(info.value)
        assert obj == before
        return
    change = apply_edits(karta, obj, list(VERBS[verb].edits))
    assert obj == before
    assert outside_named_paths(karta, obj, change.new_object, change.json_patch) == []
    shown = 0
    for comp in resolve(karta, change.new_object).components.values():
        for inst in comp.instances:
            seen = pod_seen(inst.spec)
            if seen is None:
                continue
            assert VERBS[verb].shows(seen), f"{comp.name}/{inst.id}: {seen}"
            shown += 1
    assert shown > 0


#: The components that scale through their definition, per type (a target from scale_targets is
#: taken); every other component is refused naming itself and why (a constant count, no
#: replicasPath, a computed count). Kept here so a regression in the inversion shows.
SCALES: dict[str, tuple[str, ...]] = {
    "apps-deployment-v1": ("deployment",),
    "apps-nvidia-com-nimservice-v1alpha1": ("nimservice",),
    "apps-statefulset-v1": ("statefulset",),
    "batch-cronjob-v1": ("cronjob",),  # the job template's parallelism, down only as for Job
    "batch-job-v1": ("job",),  # down only: the count is min(parallelism, completions)
    "batch-volcano-sh-job-v1alpha1": ("task",),
    "grove-io-podcliqueset-v1alpha1": ("clique",),
    "jobset-x-k8s-io-jobset-v1alpha2": ("replicatedjob",),
    "kubeflow-org-jaxjob-v1": ("worker",),
    "kubeflow-org-mpijob-v1": ("launcher", "worker"),
    "kubeflow-org-mpijob-v2beta1": ("launcher", "worker"),
    "kubeflow-org-paddlejob-v1": ("master", "worker"),
    "kubeflow-org-pytorchjob-v1": ("master", "worker"),
    "kubeflow-org-tfjob-v1": ("ps", "worker"),
    "kubeflow-org-xgboostjob-v1": ("master", "worker"),
    "leaderworkerset-x-k8s-io-leaderworkerset-v1": ("group", "leader", "worker"),
    "milvus-io-milvus-v1beta1": ("proxy", "mixcoord", "datanode", "querynode", "indexnode", "etcd", "minio"),
    "nvidia-com-dynamographdeployment-v1alpha1": ("service",),
    "nvidia-com-dynamographdeployment-v1beta1": ("component",),
    "ray-io-raycluster-v1": ("worker",),  # within [minReplicas, maxReplicas], whole hosts
    "ray-io-rayjob-v1": ("worker",),
    "ray-io-rayservice-v1": ("worker",),
    "serving-knative-dev-service-v1": ("revision",),
    "serving-kserve-io-inferenceservice-v1beta1": ("predictor",),
    "serving-kserve-io-llminferenceservice-v1alpha1": ("main", "worker", "router-scheduler"),
    "serving-kserve-io-llminferenceservice-v1alpha2": ("main", "worker", "router-scheduler"),
    "sparkoperator-k8s-io-sparkapplication-v1beta2": ("executor",),
    "trainer-kubeflow-org-trainjob-v1alpha1": ("node",),
}


def scaled_by(karta: Karta, obj: dict[str, Any], name: str) -> tuple[dict[str, int], Any] | str:
    """(target, change) for the first target of scale_targets the component takes, else the last
    refusal's text."""
    desired = {i.id: i.desired_replicas for i in resolve(karta, obj).components[name].instances}
    refusal = f"component '{name}' has no instance"
    for target in scale_targets(desired):
        try:
            return target, scale(karta, obj, name, target)
        except CannotScaleError as exc:
            refusal = str(exc)
    return refusal


@pytest.mark.parametrize("slug", SLUGS)
def test_scale_on_catalog_type(slug: str) -> None:
    karta, obj = load(slug)
    scaled = []
    for name in resolve(karta, obj).components:
        found = scaled_by(karta, obj, name)
        if isinstance(found, str):
            assert f"component '{name}'" in found
            continue
        target, change = found
        assert outside_named_paths(karta, obj, change.new_object, change.json_patch) == []
        after = resolve(karta, change.new_object).components[name]
        assert {i.id: i.desired_replicas for i in after.instances} == target
        scaled.append(name)
    assert tuple(scaled) == SCALES.get(slug, ())


def matrix() -> str:
    verbs = sorted(VERBS)
    lines = ["| type | " + " | ".join([*verbs, "scale"]) + " |", "|---" * (len(verbs) + 2) + "|"]
    for slug in SLUGS:
        karta, obj = load(slug)
        cells = ["works" if outcome(slug, v) == "works" else "refused" for v in verbs]
        scaled = [n for n in resolve(karta, obj).components if not isinstance(scaled_by(karta, obj, n), str)]
        cells.append(", ".join(scaled) or "none")
        lines.append(f"| {slug} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(matrix())
