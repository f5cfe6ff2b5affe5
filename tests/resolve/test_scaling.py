"""Scaling through the definition: the catalog's computed counts inverted (which field is written,
in which units), refusals naming the component and the expression, the count read back after
every write, and bounded work on hostile expressions.

The objects are the catalog's running lifecycle fixtures (tests/catalog/lifecycles/*/running.yaml,
reviewed against framework-shapes.md), so the fields written are the ones the frameworks use."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.errors import WriteBackError
from workload_map.model.definition import Karta
from workload_map.resolve import resolve
from workload_map.resolve.patch import apply_json_patch
from workload_map.resolve.scaling import MAX_DEPTH, CannotScaleError
from workload_map.resolve.writeback import scale

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "src/workload_map/catalog/data"
LIFECYCLES = ROOT / "tests/catalog/lifecycles"
SLUGS = sorted(p.name for p in LIFECYCLES.iterdir() if (p / "running.yaml").is_file())


def catalog(slug: str) -> tuple[Karta, dict[str, Any]]:
    karta = Karta.model_validate(yaml.safe_load((CATALOG / f"{slug}.yaml").read_text()))
    obj = yaml.safe_load((LIFECYCLES / slug / "running.yaml").read_text())["object"]
    return karta, obj


def counts(karta: Karta, obj: dict[str, Any], component: str) -> list[int]:
    return [i.desired_replicas for i in resolve(karta, obj).components[component].instances]


def written(change: Any) -> dict[str, Any]:
    return {op["path"]: op.get("value") for op in change.json_patch}


@pytest.mark.parametrize(
    ("slug", "component", "target", "fields"),
    [
        # plain `P // 1`
        ("apps-deployment-v1", "deployment", 5, {"/spec/replicas": 5}),
        # LWS workers = replicas x (size - 1): size is written, replicas is the group's and leader's count
        ("leaderworkerset-x-k8s-io-leaderworkerset-v1", "worker", 12, {"/spec/leaderWorkerTemplate/size": 7}),
        ("leaderworkerset-x-k8s-io-leaderworkerset-v1", "group", 4, {"/spec/replicas": 4}),
        # `if Worker then (Worker.replicas // 1) else 0 end`
        ("kubeflow-org-pytorchjob-v1", "worker", 8, {"/spec/pytorchReplicaSpecs/Worker/replicas": 8}),
        # JobSet: per replicated job, (replicas // 1) x min(parallelism, completions)
        (
            "jobset-x-k8s-io-jobset-v1alpha2",
            "replicatedjob",
            {"leader": 1, "workers": 8},
            {"/spec/replicatedJobs/1/replicas": 4},
        ),
        # Dynamo: per service (replicas // 1) x (nodeCount // 1)
        (
            "nvidia-com-dynamographdeployment-v1alpha1",
            "service",
            {"Frontend": 1, "VllmDecodeWorker": 2, "VllmPrefillWorker": 4},
            {"/spec/services/VllmPrefillWorker/replicas": 2},
        ),
        # Grove: PCS replicas ($r, a variable) x clique replicas x scaling group replicas
        ("grove-io-podcliqueset-v1alpha1", "clique", {"frontend": 3, "pleader": 2, "pworker": 6}, None),
        # LLMInferenceService workers: replicas x (pipeline - 1), the pipeline is written
        ("serving-kserve-io-llminferenceservice-v1alpha2", "worker", 6, {"/spec/parallelism/pipeline": 4}),
        # Milvus in-cluster MinIO: nested if on the values object
        ("milvus-io-milvus-v1beta1", "minio", 6, {"/spec/dependencies/storage/inCluster/values/replicas": 6}),
        # KServe predictor: no replicasPath, so its desired count is minReplicas
        ("serving-kserve-io-inferenceservice-v1beta1", "predictor", 3, {"/spec/predictor/minReplicas": 3}),
        # Knative revision: min-scale annotation through `tonumber`, written as a string
        (
            "serving-knative-dev-service-v1",
            "revision",
            4,
            {"/spec/template/metadata/annotations/autoscaling.knative.dev~1min-scale": "4"},
        ),
        # Ray workers: clamp(replicas, min, max) x numOfHosts, per group
        (
            "ray-io-raycluster-v1",
            "worker",
            {"gpu-group": 4, "multihost-group": 4},
            {"/spec/workerGroupSpecs/0/replicas": 4, "/spec/workerGroupSpecs/1/replicas": 2},
        ),
        ("trainer-kubeflow-org-trainjob-v1alpha1", "node", 8, {"/spec/trainer/numNodes": 8}),
        ("sparkoperator-k8s-io-sparkapplication-v1beta2", "executor", 5, {"/spec/executor/instances": 5}),
    ],
)
def test_catalog_counts_invert_to_the_framework_field(
    slug: str, component: str, target: Any, fields: dict[str, Any] | None
) -> None:
    karta, obj = catalog(slug)
    if isinstance(target, dict):  # fixture instance ids
        ids = [i.id for i in resolve(karta, obj).components[component].instances]
        assert sorted(target) == sorted(ids), ids
    before = copy.deepcopy(obj)
    change = scale(karta, obj, component, target)
    assert obj == before
    if fields is not None:
        assert written(change) == fields
    wanted = (
        [target[i] for i in resolve(karta, obj).components[component].instance_ids]
        if isinstance(target, dict)
        else [target] * len(counts(karta, obj, component))
    )
    assert counts(karta, change.new_object, component) == wanted
    assert apply_json_patch(obj, change.json_patch) == change.new_object


@pytest.mark.parametrize(
    ("slug", "component", "target", "message"),
    [
        (
            "ray-io-raycluster-v1",
            "head",
            2,
            "its count is the constant 1 (scaleDefinition.replicasPath: '1')",
        ),
        (
            "kubeflow-org-tfjob-v1",
            "chief",
            2,
            "its count is the constant 0, because `.spec.tfReplicaSpecs.Chief` is false on the object",
        ),
        (
            "jobset-x-k8s-io-jobset-v1alpha2",
            "replicatedjob",
            {"leader": 1, "workers": 5},
            "5 is not a multiple of 2: each unit of `.replicas // 1` is 2 pods",
        ),
        ("batch-job-v1", "job", 6, "writing 6 into `.spec.parallelism // 1` leaves the min of"),
        ("serving-knative-dev-service-v1", "revision", 6, "its maxReplicasPath reads 5, below 6"),
        (
            "serving-kserve-io-inferenceservice-v1beta1",
            "transformer",
            2,
            "the definition gives it no count here (null), because `.spec.transformer` is true",
        ),
        ("jobset-x-k8s-io-jobset-v1alpha2", "jobset", 2, "it has no scaleDefinition.replicasPath"),
        (
            "agents-x-k8s-io-sandbox-v1beta1",
            "agent",
            2,
            "its count is the constant 1, because "
            '`(.spec.operatingMode // "Running") == "Suspended"` is false',
        ),
    ],
)
def test_what_cannot_be_scaled_says_why(slug: str, component: str, target: Any, message: str) -> None:
    karta, obj = catalog(slug)
    with pytest.raises(CannotScaleError) as info:
        scale(karta, obj, component, target)
    text = str(info.value)
    assert message in text
    assert f"component '{component}' of definition '{slug}'" in text


@pytest.mark.parametrize("slug", SLUGS)
def test_every_catalog_count_reads_the_target_or_refuses(slug: str) -> None:
    """Whatever the expression, a scale either makes the resolver read exactly the number for
    every instance, or fails naming the component: never a silent near miss."""
    karta, obj = catalog(slug)
    workload = resolve(karta, obj)
    for name, comp in workload.components.items():
        for target in (0, 1, 4, 6):
            try:
                change = scale(karta, obj, name, target)
            except CannotScaleError as exc:
                assert f"component '{name}'" in str(exc)
                continue
            assert [
                i.desired_replicas for i in resolve(karta, change.new_object).components[name].instances
            ] == [target] * len(comp.instances)


# --- small definitions ------------------------------------------------------------------------


def widget(replicas: str, *, ids: str | None = None, extra: dict[str, Any] | None = None) -> Karta:
    child: dict[str, Any] = {"name": "w", "ownerRef": "root", "scaleDefinition": {"replicasPath": replicas}}
    if ids:
        child["instanceIdPath"] = ids
    child.update(extra or {})
    return Karta.model_validate(
        {
            "metadata": {"name": "widgets"},
            "spec": {
                "structureDefinition": {
                    "rootComponent": {
                        "name": "root",
                        "kind": {"group": "x.io", "version": "v1", "kind": "W"},
                    },
                    "childComponents": [child],
                }
            },
        }
    )


def test_the_count_is_read_again_after_the_write() -> None:
    # `.a + .a`: writing .a = N - .a does not give N; the check catches it and nothing is returned
    with pytest.raises(CannotScaleError, match=r"writing spec\.a=3 makes it read \[6\]"):
        scale(widget(".spec.a + .spec.a"), {"spec": {"a": 1}}, "w", 4)


def test_instance_ids_must_not_change() -> None:
    k = widget(".spec.g[].n", ids=".spec.g[].n | tostring")
    with pytest.raises(CannotScaleError, match="changes the instances"):
        scale(k, {"spec": {"g": [{"n": 1}, {"n": 2}]}}, "w", {"1": 5, "2": 2})


def test_string_fields_stay_strings_and_defs_and_bindings_pass_through() -> None:
    k = widget('def n: tonumber; .metadata.annotations["x/n"] | n')
    change = scale(k, {"metadata": {"annotations": {"x/n": "2"}}}, "w", 7)
    assert change.new_object["metadata"]["annotations"]["x/n"] == "7"
    k = widget(".spec.k as $k | (.spec.n // 1) * $k")
    assert written(scale(k, {"spec": {"k": 3}}, "w", 9)) == {"/spec/n": 3}


def test_subtraction_and_addition() -> None:
    assert written(scale(widget("(.spec.size // 1) - 1"), {"spec": {}}, "w", 3)) == {"/spec/size": 4}
    assert written(scale(widget("10 - .spec.x"), {"spec": {"x": 1}}, "w", 3)) == {"/spec/x": 7}
    with pytest.raises(CannotScaleError, match="would have to be -1"):
        scale(widget(".spec.x + 2"), {"spec": {"x": 1}}, "w", 1)


def test_a_value_already_equal_needs_no_write() -> None:
    change = scale(widget("[.spec.a, 3] | length"), {"spec": {"a": 1}}, "w", 2)
    assert not change.changed
    with pytest.raises(CannotScaleError, match="`length` computes the count"):
        scale(widget("[.spec.a, 3] | length"), {"spec": {"a": 1}}, "w", 3)


def test_hostile_expressions_end_in_an_error() -> None:
    deep = widget("(" * (MAX_DEPTH + 5) + ".spec.a" + " * 1)" * (MAX_DEPTH + 5))
    with pytest.raises(CannotScaleError, match="nested too deeply to invert"):
        scale(deep, {"spec": {}}, "w", 3)
    looping = widget("def f: f; f")
    with pytest.raises(CannotScaleError):
        scale(looping, {"spec": {}}, "w", 3)


def test_many_instances_each_get_their_own_budget() -> None:
    k = widget(".spec.g[] | (.r // 1) * (.k // 1)", ids=".spec.g[].id")
    obj = {"spec": {"g": [{"id": f"g{i}", "k": 2} for i in range(900)]}}
    change = scale(k, obj, "w", 4)
    assert all(g["r"] == 2 for g in change.new_object["spec"]["g"])


def test_bad_numbers_and_instances() -> None:
    k = widget(".spec.g[].r", ids=".spec.g[].id")
    obj = {"spec": {"g": [{"id": "a", "r": 1}]}}
    with pytest.raises(WriteBackError, match="is negative"):
        scale(k, obj, "w", -1)
    with pytest.raises(WriteBackError, match="out of range"):
        scale(k, obj, "w", 2**31)
    with pytest.raises(WriteBackError, match="not an instance"):
        scale(k, obj, "w", {"a": 1, "b": 2})
    with pytest.raises(WriteBackError, match=r"has no component \"nope\""):
        scale(k, obj, "nope", 1)
