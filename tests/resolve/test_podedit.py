"""apply_edits: every edit on every spec shape (templates, pod specs + metadataPath, fragments),
refusals that name the component and field with nothing written, Kubernetes' value rules checked
before writing, idempotence, and patches that reproduce the new object.

Objects are shaped as the framework-shapes recordings show them (PyTorchJob replica specs, JobSet
replicated jobs, an LWS without leaderTemplate, a KServe predictor with a model and containers,
Dynamo services keyed by name)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.errors import WorkloadMapError, WriteBackError
from workload_map.model.definition import Karta
from workload_map.resolve import resolve
from workload_map.resolve.patch import apply_json_patch, apply_merge_patch
from workload_map.resolve.writeback import (
    Change,
    EnvFrom,
    InvalidEditError,
    NotAssignableError,
    SetAnnotations,
    SetEnv,
    SetImage,
    SetLabels,
    SetNodeSelector,
    SetPodAnnotations,
    SetPodField,
    SetPodLabels,
    SetPriorityClassName,
    SetResources,
    SetSchedulerName,
    SetTolerations,
    Toleration,
    apply_edits,
    pod_locations,
)


def karta(name: str, root: dict[str, Any], *children: dict[str, Any]) -> Karta:
    return Karta.model_validate(
        {
            "metadata": {"name": name},
            "spec": {"structureDefinition": {"rootComponent": root, "childComponents": list(children)}},
        }
    )


def reproduces(old: dict[str, Any], change: Change) -> None:
    assert apply_json_patch(old, change.json_patch) == change.new_object
    if change.merge_patch is not None:
        assert apply_merge_patch(old, change.merge_patch) == change.new_object


PYTORCH = karta(
    "pytorch",
    {"name": "pytorchjob", "kind": {"group": "kubeflow.org", "version": "v1", "kind": "PyTorchJob"}},
    {
        "name": "master",
        "ownerRef": "pytorchjob",
        "specDefinition": {"podTemplateSpecPath": ".spec.pytorchReplicaSpecs.Master.template"},
    },
    {
        "name": "worker",
        "ownerRef": "pytorchjob",
        "specDefinition": {"podTemplateSpecPath": ".spec.pytorchReplicaSpecs.Worker.template"},
    },
)


def pytorch(worker: bool = True) -> dict[str, Any]:
    def tpl(extra: dict[str, Any] | None = None) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "initContainers": [{"name": "fetch", "image": "busybox"}],
            "containers": [
                {
                    "name": "pytorch",
                    "image": "train:1",
                    "env": [{"name": "A", "value": "0"}, {"name": "B", "value": "1"}],
                    "resources": {"requests": {"cpu": "4"}, "limits": {"cpu": "8"}},
                },
                {"name": "sidecar", "image": "log:1"},
            ],
        }
        return {"metadata": {"labels": {"app": "t"}}, "spec": {**spec, **(extra or {})}}

    specs: dict[str, Any] = {"Master": {"replicas": 1, "template": tpl({"futureField": 1})}}
    if worker:
        specs["Worker"] = {"replicas": 3, "template": tpl()}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "job", "namespace": "ml", "labels": {"team": "a"}},
        "spec": {"pytorchReplicaSpecs": specs},
    }


LWS = karta(
    "lws",
    {
        "name": "lws",
        "kind": {"group": "leaderworkerset.x-k8s.io", "version": "v1", "kind": "LeaderWorkerSet"},
    },
    {
        "name": "leader",
        "ownerRef": "lws",
        "specDefinition": {
            "podTemplateSpecPath": (
                ".spec.leaderWorkerTemplate"
                " | if .leaderTemplate then .leaderTemplate else .workerTemplate end"
            )
        },
    },
    {
        "name": "worker",
        "ownerRef": "lws",
        "specDefinition": {"podTemplateSpecPath": ".spec.leaderWorkerTemplate.workerTemplate"},
    },
)


def lws(leader: bool = False) -> dict[str, Any]:
    lwt: dict[str, Any] = {
        "size": 4,
        "workerTemplate": {"spec": {"containers": [{"name": "vllm", "image": "v:1"}]}},
    }
    if leader:
        lwt["leaderTemplate"] = {"spec": {"containers": [{"name": "vllm-leader", "image": "v:1"}]}}
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "l"},
        "spec": {"replicas": 2, "leaderWorkerTemplate": lwt},
    }


KSERVE = karta(
    "kserve",
    {
        "name": "isvc",
        "kind": {"group": "serving.kserve.io", "version": "v1beta1", "kind": "InferenceService"},
    },
    {
        "name": "predictor",
        "ownerRef": "isvc",
        "specDefinition": {
            "fragmentedPodSpecDefinition": {
                "schedulerNamePath": ".spec.predictor.schedulerName",
                "labelsPath": ".spec.predictor.labels",
                "annotationsPath": ".spec.predictor.annotations",
                "nodeAffinityPath": ".spec.predictor.affinity.nodeAffinity",
                "podAffinityPath": ".spec.predictor.affinity.podAffinity",
                "containersPath": ".spec.predictor.containers",
                "containerPath": '.spec.predictor[]? | select(type == "object" and has("storageUri"))',
                "priorityClassNamePath": ".spec.predictor.priorityClassName",
            }
        },
    },
    {
        "name": "transformer",
        "ownerRef": "isvc",
        "specDefinition": {"podSpecPath": ".spec.transformer", "metadataPath": ".spec.transformer"},
    },
    {"name": "explainer", "ownerRef": "isvc", "specDefinition": {"podSpecPath": ".spec.explainer"}},
)


def isvc(transformer: bool = True, explainer: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "predictor": {
            "model": {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://m", "name": "kserve-container"},
            "containers": [{"name": "agent", "image": "agent:1"}],
        }
    }
    if transformer:
        spec["transformer"] = {"containers": [{"name": "t", "image": "t:1"}]}
    if explainer:
        spec["explainer"] = {"containers": [{"name": "e", "image": "e:1"}]}
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "i"},
        "spec": spec,
    }


SPARK = karta(
    "spark",
    {
        "name": "app",
        "kind": {"group": "sparkoperator.k8s.io", "version": "v1beta2", "kind": "SparkApplication"},
    },
    {
        "name": "driver",
        "ownerRef": "app",
        "specDefinition": {
            "fragmentedPodSpecDefinition": {
                "imagePath": ".spec.driver.image",
                "resourcesPath": ".spec.driver | {requests: {cpu: .cores}}",
                "schedulerNamePath": ".spec.driver.schedulerName",
            }
        },
    },
    {
        "name": "standby",
        "ownerRef": "app",
        "specDefinition": {
            "fragmentedPodSpecDefinition": {"schedulerNamePath": ".spec.standby.schedulerName"}
        },
    },
)


def spark() -> dict[str, Any]:
    return {
        "apiVersion": "sparkoperator.k8s.io/v1beta2",
        "kind": "SparkApplication",
        "metadata": {"name": "s"},
        "spec": {"driver": {"image": "spark:3", "cores": 1}},
    }


DYNAMO = karta(
    "dynamo",
    {"name": "dgd", "kind": {"group": "nvidia.com", "version": "v1alpha1", "kind": "DynamoGraphDeployment"}},
    {
        "name": "service",
        "ownerRef": "dgd",
        "instanceIdPath": ".spec.services | to_entries[] | .key",
        "specDefinition": {
            "fragmentedPodSpecDefinition": {
                "labelsPath": ".spec.services[].extraPodMetadata.labels",
                "containerPath": ".spec.services[].extraPodSpec.mainContainer",
                "imagePath": ".spec.services[].extraPodSpec.mainContainer.image",
            }
        },
        "podSelector": {"componentInstanceSelector": {"idPath": '.metadata.labels["c"]'}},
    },
)


def dynamo() -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "d"},
        "spec": {
            "services": {
                "Frontend": {"extraPodSpec": {"mainContainer": {"image": "f:1"}}},
                "Worker": {"extraPodMetadata": {"labels": {"a": "1"}}, "extraPodSpec": {"mainContainer": {}}},
            }
        },
    }


# --- locations ----------------------------------------------------------------------------------


def test_locations_per_shape_skip_what_the_object_lacks() -> None:
    locs = pod_locations(PYTORCH, pytorch(worker=False))
    assert [(loc.component, loc.shape, loc.spec) for loc in locs] == [
        ("master", "template", ("spec", "pytorchReplicaSpecs", "Master", "template", "spec"))
    ]
    locs = pod_locations(KSERVE, isvc(transformer=True))
    assert [(loc.component, loc.shape) for loc in locs] == [
        ("predictor", "fragmented"),
        ("transformer", "spec"),
    ]
    assert locs[1].metadata == ("spec", "transformer")
    assert [loc.instance for loc in pod_locations(DYNAMO, dynamo())] == ["Frontend", "Worker"]
    # Spark's standby component is not in the object: its fragment's parent is absent
    assert [loc.component for loc in pod_locations(SPARK, spark())] == ["driver"]


def test_unknown_component_lists_the_candidates() -> None:
    with pytest.raises(WriteBackError, match=r"component 'nope' not found .*master, worker"):
        apply_edits(PYTORCH, pytorch(), [SetSchedulerName("kai")], components=["nope"])
    with pytest.raises(WriteBackError, match=r"component 'pytorchjob' .* has no pod definition"):
        apply_edits(PYTORCH, pytorch(), [SetSchedulerName("kai")], components=["pytorchjob"])
    with pytest.raises(WriteBackError, match="component 'nope' not found"):
        apply_edits(PYTORCH, pytorch(), [SetImage("pytorch", "x", component="nope")])


# --- template shape ------------------------------------------------------------------------------


def test_every_pod_edit_on_templates() -> None:
    obj = pytorch()
    before = copy.deepcopy(obj)
    change = apply_edits(
        PYTORCH,
        obj,
        [
            SetImage("pytorch", "train:2"),
            SetResources(limits={"nvidia.com/gpu": "2"}, container="pytorch"),
            SetEnv(values={"B": "2", "C": "3"}, unset=("A",), env_from=(EnvFrom("secret", "creds"),)),
            SetSchedulerName("kai-scheduler"),
            SetPriorityClassName("train"),
            SetNodeSelector({"pool": "a100"}),
            SetTolerations(add=(Toleration("nvidia.com/gpu", "NoSchedule"),)),
            SetPodLabels({"kai.scheduler/queue": "q"}),
            SetPodAnnotations({"note": "x"}),
            SetPodField(("schedulingGroup", "podGroupName"), "pg-1"),
            SetLabels({"owner": "me"}),
        ],
    )
    assert obj == before
    reproduces(obj, change)
    for role in ("Master", "Worker"):
        tpl = change.new_object["spec"]["pytorchReplicaSpecs"][role]["template"]
        spec = tpl["spec"]
        main = spec["containers"][0]
        assert main["image"] == "train:2"
        assert spec["containers"][1]["image"] == "log:1"  # only the named container
        assert main["resources"] == {"requests": {"cpu": "4"}, "limits": {"cpu": "8", "nvidia.com/gpu": "2"}}
        assert main["env"] == [{"name": "B", "value": "2"}, {"name": "C", "value": "3"}]
        assert spec["initContainers"][0]["envFrom"] == [{"secretRef": {"name": "creds"}}]
        assert spec["schedulerName"] == "kai-scheduler"
        assert spec["priorityClassName"] == "train"
        assert spec["nodeSelector"] == {"pool": "a100"}
        assert spec["tolerations"] == [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        ]
        assert spec["schedulingGroup"] == {"podGroupName": "pg-1"}
        assert tpl["metadata"] == {
            "labels": {"app": "t", "kai.scheduler/queue": "q"},
            "annotations": {"note": "x"},
        }
    assert change.new_object["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["futureField"] == 1
    assert change.new_object["metadata"]["labels"] == {"team": "a", "owner": "me"}
    # the resolver reads the change in every template
    w = resolve(PYTORCH, change.new_object)
    assert {
        i.spec.pod_template["spec"]["schedulerName"]
        for c in w.components.values()
        for i in c.instances
        if i.spec.pod_template
    } == {"kai-scheduler"}


def test_edits_are_idempotent() -> None:
    edits = [
        SetImage("*", "x:1"),
        SetEnv(values={"A": "9"}, env_from=(EnvFrom("configMap", "cfg", "P_"),)),
        SetTolerations(add=(Toleration("k", "NoExecute", "v", toleration_seconds=30),)),
        SetNodeSelector({"a": "b"}, unset=("c",)),
        SetResources(requests={"cpu": "1"}),
    ]
    once = apply_edits(PYTORCH, pytorch(), edits)
    assert once.changed
    twice = apply_edits(PYTORCH, once.new_object, edits)
    assert not twice.changed


def test_star_reaches_init_containers_as_kubectl_does() -> None:
    change = apply_edits(PYTORCH, pytorch(worker=False), [SetImage("*", "x:1")])
    spec = change.new_object["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    assert [c["image"] for c in spec["initContainers"] + spec["containers"]] == ["x:1", "x:1", "x:1"]


def test_unknown_container_is_an_error_listing_containers() -> None:
    with pytest.raises(WriteBackError, match='unable to find container named "nope"') as info:
        apply_edits(PYTORCH, pytorch(), [SetImage("nope", "x")])
    assert "master/pytorch" in str(info.value) and "worker/sidecar" in str(info.value)
    with pytest.raises(WriteBackError, match='unable to find container named "pytorch" of component'):
        apply_edits(
            PYTORCH,
            pytorch(worker=False),
            [SetEnv(values={"A": "1"}, container="pytorch", component="worker")],
        )


def test_component_prefix_limits_a_container_edit() -> None:
    change = apply_edits(PYTORCH, pytorch(), [SetImage("pytorch", "w:2", component="worker")])
    specs = change.new_object["spec"]["pytorchReplicaSpecs"]
    assert specs["Worker"]["template"]["spec"]["containers"][0]["image"] == "w:2"
    assert specs["Master"]["template"]["spec"]["containers"][0]["image"] == "train:1"


def test_shared_template_is_written_once_and_component_scope_still_applies() -> None:
    obj = lws(leader=False)
    change = apply_edits(LWS, obj, [SetEnv(values={"X": "1"}), SetTolerations(add=(Toleration("g"),))])
    worker = change.new_object["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    assert worker["containers"][0]["env"] == [{"name": "X", "value": "1"}]
    assert worker["tolerations"] == [{"key": "g", "operator": "Exists"}]
    scoped = apply_edits(LWS, obj, [SetImage("vllm", "v:2", component="worker")])
    assert (
        scoped.new_object["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["image"]
        == "v:2"
    )
    both = apply_edits(LWS, lws(leader=True), [SetImage("vllm-leader", "l:2", component="leader")])
    assert (
        both.new_object["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["image"]
        == "l:2"
    )


def test_no_pod_location_present_is_an_error() -> None:
    with pytest.raises(WriteBackError, match="holds no pod template"):
        apply_edits(PYTORCH, {"spec": {"pytorchReplicaSpecs": {}}}, [SetSchedulerName("kai")])


# --- existing values --------------------------------------------------------------------------


def test_existing_values_overwrite_keep_or_error() -> None:
    obj = pytorch()
    with pytest.raises(WriteBackError, match=r"'app' already has a value \(t\), and --overwrite is false"):
        apply_edits(PYTORCH, obj, [SetPodLabels({"app": "u"}, existing="error")])
    with pytest.raises(WriteBackError, match=r"'team' already has a value \(a\)"):
        apply_edits(PYTORCH, obj, [SetLabels({"team": "b"}, existing="error")])
    kept = apply_edits(PYTORCH, obj, [SetPodLabels({"app": "u", "new": "1"}, existing="keep")])
    labels = kept.new_object["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["metadata"]["labels"]
    assert labels == {"app": "t", "new": "1"}
    assert any("app is already 't', kept" in w for w in kept.warnings)
    same = apply_edits(PYTORCH, obj, [SetPodLabels({"app": "t"}, existing="error")])
    assert not same.changed  # the same value is no conflict
    gone = apply_edits(PYTORCH, obj, [SetPodLabels(unset=("app", "absent"))])
    assert "labels" not in gone.new_object["spec"]["pytorchReplicaSpecs"]["Worker"]["template"][
        "metadata"
    ] or (gone.new_object["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["metadata"]["labels"] == {})


def test_toleration_replaces_the_same_key_and_effect_and_removes() -> None:
    obj = pytorch(worker=False)
    spec = obj["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    spec["tolerations"] = [
        {"key": "gpu", "operator": "Equal", "value": "a", "effect": "NoSchedule"},
        {"key": "gpu", "operator": "Exists", "effect": "NoExecute"},
        {"key": "other", "operator": "Exists"},
    ]
    change = apply_edits(
        PYTORCH,
        obj,
        [SetTolerations(add=(Toleration("gpu", "NoSchedule", "b"),), remove=("other", "gpu:NoExecute"))],
    )
    got = change.new_object["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["tolerations"]
    assert got == [{"key": "gpu", "operator": "Equal", "value": "b", "effect": "NoSchedule"}]


# --- pod spec + metadataPath ------------------------------------------------------------------


def test_pod_spec_shape_and_missing_metadata_path_refused() -> None:
    obj = isvc(transformer=True, explainer=True)
    change = apply_edits(KSERVE, obj, [SetSchedulerName("kai")], components=["transformer", "explainer"])
    assert change.new_object["spec"]["transformer"]["schedulerName"] == "kai"
    assert change.new_object["spec"]["explainer"]["schedulerName"] == "kai"
    with pytest.raises(WriteBackError) as info:
        apply_edits(KSERVE, obj, [SetPodLabels({"q": "1"})])
    text = str(info.value)
    assert "cannot set labels on component 'explainer': it has podSpecPath but no metadataPath" in text
    assert "nothing was changed" in text and "--component" in text
    ok = apply_edits(KSERVE, obj, [SetPodLabels({"q": "1"})], components=["transformer", "predictor"])
    assert ok.new_object["spec"]["transformer"]["labels"] == {"q": "1"}
    assert ok.new_object["spec"]["predictor"]["labels"] == {"q": "1"}


# --- fragmented -------------------------------------------------------------------------------


def test_fragmented_edits_go_to_the_fragment_paths() -> None:
    obj = isvc(transformer=False)
    change = apply_edits(
        KSERVE,
        obj,
        [
            SetSchedulerName("kai"),
            SetPriorityClassName("p"),
            SetPodAnnotations({"a": "b"}),
            SetImage("kserve-container", "model:2"),
            SetImage("agent", "agent:2"),
            SetEnv(values={"X": "1"}),
            SetResources(limits={"nvidia.com/gpu": "1"}, container="kserve-container"),
            SetNodeSelector({"pool": "a100"}),
            SetPodField(("affinity", "podAffinity"), {"x": 1}),
        ],
    )
    pred = change.new_object["spec"]["predictor"]
    assert pred["schedulerName"] == "kai" and pred["priorityClassName"] == "p"
    assert pred["annotations"] == {"a": "b"}
    assert pred["model"]["image"] == "model:2"
    assert pred["model"]["env"] == [{"name": "X", "value": "1"}]
    assert pred["model"]["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    assert pred["containers"][0]["image"] == "agent:2"
    assert pred["containers"][0]["env"] == [{"name": "X", "value": "1"}]
    assert pred["affinity"]["podAffinity"] == {"x": 1}
    assert pred["affinity"]["nodeAffinity"] == {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a100"]}]}
            ]
        }
    }
    reproduces(obj, change)


def test_node_selector_joins_every_existing_term_and_unsets() -> None:
    obj = isvc(transformer=False)
    obj["spec"]["predictor"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
                ]
            },
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}],
        }
    }
    added = apply_edits(KSERVE, obj, [SetNodeSelector({"pool": "a100"})], components=["predictor"])
    terms = added.new_object["spec"]["predictor"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert all({"key": "pool", "operator": "In", "values": ["a100"]} in t["matchExpressions"] for t in terms)
    removed = apply_edits(
        KSERVE, added.new_object, [SetNodeSelector(unset=("pool",))], components=["predictor"]
    )
    assert removed.new_object == obj


def test_fragment_without_the_field_is_refused_naming_component_and_field() -> None:
    obj = isvc(transformer=False)
    before = copy.deepcopy(obj)
    with pytest.raises(WriteBackError) as info:
        apply_edits(KSERVE, obj, [SetTolerations(add=(Toleration("gpu"),))])
    assert "cannot set tolerations on component 'predictor'" in str(info.value)
    assert "(definition 'kserve')" in str(info.value)
    with pytest.raises(WriteBackError, match=r"cannot set spec.hostNetwork on component 'predictor'"):
        apply_edits(KSERVE, obj, [SetPodField(("hostNetwork",), True)])
    assert obj == before


def test_unnamed_main_container_answers_to_star_and_component_name() -> None:
    obj = spark()
    for selector in ("*", "driver"):
        change = apply_edits(SPARK, obj, [SetImage(selector, "spark:4")])
        assert change.new_object["spec"]["driver"]["image"] == "spark:4"
    with pytest.raises(WriteBackError, match='unable to find container named "spark-kubernetes-driver"'):
        apply_edits(SPARK, obj, [SetImage("spark-kubernetes-driver", "spark:4")])
    # resources are located by a computed path: refused, naming the field and the expression
    with pytest.raises(NotAssignableError, match="cannot write resourcesPath of component 'driver'"):
        apply_edits(SPARK, obj, [SetResources(requests={"cpu": "2"})])
    with pytest.raises(WriteBackError, match="has no containerPath or containersPath"):
        apply_edits(SPARK, obj, [SetEnv(values={"A": "1"})])


def test_per_instance_fragments() -> None:
    obj = dynamo()
    change = apply_edits(
        DYNAMO, obj, [SetImage("*", "d:2"), SetPodLabels({"q": "1"}), SetEnv(values={"E": "1"})]
    )
    services = change.new_object["spec"]["services"]
    assert services["Frontend"]["extraPodSpec"]["mainContainer"] == {
        "image": "d:2",
        "env": [{"name": "E", "value": "1"}],
    }
    assert services["Worker"]["extraPodSpec"]["mainContainer"]["image"] == "d:2"
    assert services["Worker"]["extraPodMetadata"]["labels"] == {"a": "1", "q": "1"}
    assert services["Frontend"]["extraPodMetadata"]["labels"] == {"q": "1"}
    reproduces(obj, change)


# --- values -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: SetResources(limits={"cpu": "abc"}), "quantities must match the regular expression"),
        (lambda: SetResources(limits={"cpu": "1" * 5000}), "is not a quantity"),
        (lambda: SetResources(limits={"cpu": "1e999999"}), "quantities must match"),
        (lambda: SetResources(limits={"cpu": "-1"}), "greater than or equal to 0"),
        (lambda: SetResources(limits={"nvidia.com/gpu": "0.5"}), "must be an integer"),
        (lambda: SetResources(limits={"bad name!": "1"}), "invalid resource name"),
        (lambda: SetResources(), "give requests or limits"),
        (lambda: SetImage("c", ""), "invalid image"),
        (lambda: SetImage("c", "a b"), "white space"),
        (lambda: SetImage("c", "x" * 5000), "invalid image"),
        (lambda: SetEnv(values={"1BAD": "x"}), "a valid environment variable name"),
        (lambda: SetEnv(values={"A": "x"}, unset=("A",)), "both set and removed"),
        (lambda: SetPodLabels({"k": "v" * 64}), "must be no more than 63 characters"),
        (lambda: SetPodLabels({"-bad": "v"}), "invalid label key"),
        (lambda: SetPodLabels({f"k{i}": "v" for i in range(1001)}), "too many label entries"),
        (lambda: SetPodAnnotations({"k": "v" * (300 * 1024)}), "larger than 262144 bytes"),
        (lambda: SetSchedulerName("Kai_Scheduler"), "RFC 1123 subdomain"),
        (lambda: SetPriorityClassName("x" * 300), "no more than 253"),
        (lambda: Toleration("k", "Sometimes"), "is not one of NoSchedule"),
        (lambda: Toleration("k", value="v", operator="Exists"), "takes no value"),
        (lambda: Toleration("k", "NoSchedule", toleration_seconds=5), "needs effect NoExecute"),
        (lambda: SetTolerations(), "give tolerations"),
        (lambda: SetNodeSelector({"a": "b/c"}), r"invalid node selector \"a\" value"),
        (lambda: SetPodField(()), "give 1 to 32 field names"),
        (lambda: EnvFrom("secret", "Bad_Name"), "invalid secret name"),
    ],
)
def test_values_are_checked_with_kubernetes_rules(build: Any, message: str) -> None:
    with pytest.raises(InvalidEditError, match=message):
        build()


def test_resources_end_valid_or_are_refused() -> None:
    obj = pytorch(worker=False)
    with pytest.raises(InvalidEditError, match=r"nvidia\.com/gpu is an extended resource"):
        apply_edits(PYTORCH, obj, [SetResources(requests={"nvidia.com/gpu": "1"}, container="pytorch")])
    with pytest.raises(
        InvalidEditError, match=r"the cpu request \(4\) must be less than or equal to the cpu limit \(2\)"
    ):
        apply_edits(PYTORCH, obj, [SetResources(limits={"cpu": "2"}, container="pytorch")])
    ok = apply_edits(
        PYTORCH, obj, [SetResources(requests={"nvidia.com/gpu": "1"}, limits={"nvidia.com/gpu": "1"})]
    )
    assert ok.changed


def test_not_an_edit() -> None:
    with pytest.raises(WriteBackError, match="not an edit"):
        apply_edits(PYTORCH, pytorch(), ["image=x"])  # type: ignore[list-item]


def test_annotations_of_the_object() -> None:
    change = apply_edits(PYTORCH, {"kind": "PyTorchJob"}, [SetAnnotations({"a": "b"})])
    assert change.new_object == {"kind": "PyTorchJob", "metadata": {"annotations": {"a": "b"}}}


# --- robustness -------------------------------------------------------------------------------

_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.text(max_size=3)),
    lambda c: st.one_of(
        st.lists(c, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [
                    "spec",
                    "predictor",
                    "containers",
                    "template",
                    "Master",
                    "pytorchReplicaSpecs",
                    "services",
                    "name",
                    "model",
                    "storageUri",
                    "labels",
                    "affinity",
                    "nodeAffinity",
                ]
            ),
            c,
            max_size=3,
        ),
    ),
    max_leaves=12,
)
_edits = st.sampled_from(
    [
        SetImage("*", "x"),
        SetEnv(values={"A": "1"}),
        SetNodeSelector({"a": "b"}),
        SetTolerations(add=(Toleration("k"),)),
        SetPodLabels({"a": "b"}),
        SetResources(limits={"cpu": "1"}),
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=_json, edit=_edits, which=st.sampled_from([PYTORCH, KSERVE, DYNAMO]))
def test_random_objects_only_raise_library_errors(obj: Any, edit: Any, which: Karta) -> None:
    before = copy.deepcopy(obj)
    try:
        change = apply_edits(which, obj, [edit])
    except WorkloadMapError:
        assert obj == before
        return
    assert obj == before
    assert apply_json_patch(obj, change.json_patch) == change.new_object


def test_the_api_servers_default_scheduler_is_not_a_choice_to_keep() -> None:
    obj = pytorch(worker=False)
    obj["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["schedulerName"] = "default-scheduler"
    change = apply_edits(PYTORCH, obj, [SetSchedulerName("kai-scheduler", existing="keep")])
    spec = change.new_object["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    assert spec["schedulerName"] == "kai-scheduler"
    assert change.warnings == ()


def hostile(path: str) -> Karta:
    return karta(
        "hostile",
        {"name": "root", "kind": {"group": "x.io", "version": "v1", "kind": "W"}},
        {"name": "w", "ownerRef": "root", "specDefinition": {"podTemplateSpecPath": path}},
    )


@pytest.mark.parametrize(
    ("path", "obj", "message"),
    [
        # reads fine, cannot be written: named, nothing changed
        ("[.spec.t][0]", {"spec": {"t": {"spec": {}}}}, "'[.spec.t][0]' is not an assignable path"),
        # more locations than the engine returns: a bounded error, not a long write
        (
            ".spec.t[]",
            {"spec": {"t": [{"spec": {}} for _ in range(5000)]}},
            "cannot write podTemplateSpecPath",
        ),
        # a path that never ends: the step budget stops it
        ("def f: .spec | f; f", {"spec": {}}, "cannot write podTemplateSpecPath"),
    ],
)
def test_hostile_write_back_paths_end_in_an_error(path: str, obj: dict[str, Any], message: str) -> None:
    before = copy.deepcopy(obj)
    with pytest.raises(WriteBackError) as info:
        apply_edits(hostile(path), obj, [SetSchedulerName("kai")])
    assert message in str(info.value)
    assert obj == before


def test_instances_limit_the_edit_to_those_templates() -> None:
    """``instances=[(component, instance id)]`` edits those pod templates only (one Kueue podSet);
    a pair naming no template present is "no pod template", nothing written."""
    obj = pytorch()
    change = apply_edits(
        PYTORCH, obj, [SetPodField(("nodeSelector",), {"pool": "a"})], instances=[("worker", "")]
    )
    reproduces(obj, change)
    specs = change.new_object["spec"]["pytorchReplicaSpecs"]
    assert specs["Worker"]["template"]["spec"]["nodeSelector"] == {"pool": "a"}
    assert "nodeSelector" not in specs["Master"]["template"]["spec"]
    with pytest.raises(WriteBackError, match="holds no pod template"):
        apply_edits(
            PYTORCH, obj, [SetPodField(("nodeSelector",), {"pool": "a"})], instances=[("worker", "w-0")]
        )
