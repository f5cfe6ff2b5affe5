"""Write-back: per-instance updates, fragmented skip rules, suspend/resume, shape-blind pod
patches, patches that reproduce the new object, and never corrupting or mutating the input."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workload_map.errors import WorkloadMapError, WriteBackError
from workload_map.model.definition import Karta
from workload_map.resolve.patch import apply_json_patch, apply_merge_patch
from workload_map.resolve.types import FragmentedPodSpec
from workload_map.resolve.writeback import (
    CannotScaleError,
    Change,
    NotAssignableError,
    actions_not_kept,
    patch_all_pod_specs,
    resume,
    scale,
    set_scheduler_name,
    suspend,
    update_fragmented,
    update_pod_metadata,
    update_pod_spec,
    update_pod_template,
)


def karta(name: str, root: dict[str, Any], *children: dict[str, Any]) -> Karta:
    return Karta.model_validate(
        {
            "metadata": {"name": name},
            "spec": {"structureDefinition": {"rootComponent": root, "childComponents": list(children)}},
        }
    )


PYTORCH = karta(
    "kubeflow-org-pytorchjob-v1",
    {
        "name": "pytorchjob",
        "kind": {"group": "kubeflow.org", "version": "v1", "kind": "PyTorchJob"},
        "suspendDefinition": {
            "suspendActions": [{"path": ".spec.runPolicy.suspend", "value": "true"}],
            "resumeActions": [{"path": ".spec.runPolicy.suspend", "value": "false"}],
        },
    },
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


def pytorch_obj(with_worker: bool = True) -> dict[str, Any]:
    specs: dict[str, Any] = {
        "Master": {
            "replicas": 1,
            "template": {
                "metadata": {"labels": {"app": "m"}, "x-unknown": 1},
                "spec": {"containers": [{"name": "pytorch", "image": "img"}], "futureField": {"a": 1}},
            },
        }
    }
    if with_worker:
        specs["Worker"] = {
            "replicas": 3,
            "template": {"spec": {"containers": [{"name": "pytorch", "image": "img"}]}},
        }
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "job", "uid": "u1"},
        "spec": {"pytorchReplicaSpecs": specs},
    }


JOBSET = karta(
    "jobset",
    {
        "name": "jobset",
        "kind": {"group": "jobset.x-k8s.io", "version": "v1alpha2", "kind": "JobSet"},
        "suspendDefinition": {
            "suspendActions": [
                {"path": ".spec.suspend", "value": "true"},
                {"path": '.metadata.annotations["x/state"]', "value": '"Suspended"'},
            ],
            "resumeActions": [
                {"path": ".spec.suspend", "value": "false"},
                {"path": '.metadata.annotations["x/state"]', "value": "null"},
            ],
        },
    },
    {
        "name": "replicatedjob",
        "ownerRef": "jobset",
        "instanceIdPath": ".spec.replicatedJobs[].name",
        "specDefinition": {"podTemplateSpecPath": ".spec.replicatedJobs[].template.spec.template"},
        "podSelector": {
            "componentInstanceSelector": {
                "idPath": '.metadata.labels["jobset.sigs.k8s.io/replicatedjob-name"]'
            }
        },
    },
)


def jobset_obj() -> dict[str, Any]:
    def rj(name: str) -> dict[str, Any]:
        return {
            "name": name,
            "replicas": 1,
            "template": {"spec": {"parallelism": 2, "template": {"spec": {"containers": [{"name": name}]}}}},
        }

    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "uid": "u2"},
        "spec": {"replicatedJobs": [rj("leader"), rj("workers")]},
    }


KSERVE = karta(
    "serving-kserve-io-inferenceservice-v1beta1",
    {
        "name": "inferenceservice",
        "kind": {"group": "serving.kserve.io", "version": "v1beta1", "kind": "InferenceService"},
    },
    {
        "name": "predictor",
        "ownerRef": "inferenceservice",
        "specDefinition": {
            "fragmentedPodSpecDefinition": {
                "schedulerNamePath": ".spec.predictor.schedulerName",
                "priorityClassNamePath": ".spec.predictor.priorityClassName",
                "labelsPath": ".spec.predictor.labels",
                "annotationsPath": ".spec.predictor.annotations",
                "containersPath": ".spec.predictor.containers",
                "nodeAffinityPath": ".spec.predictor.affinity.nodeAffinity",
                "imagePath": ".spec.predictor.image // .spec.predictor.model.image",
            }
        },
    },
    {
        "name": "transformer",
        "ownerRef": "inferenceservice",
        "specDefinition": {"podSpecPath": ".spec.transformer", "metadataPath": ".spec.transformer"},
    },
)


def kserve_obj(with_transformer: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "predictor": {
            "labels": {"team": "a"},
            "model": {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://x"},
            "containers": [{"name": "kserve-container"}],
        }
    }
    if with_transformer:
        spec["transformer"] = {"containers": [{"name": "t"}]}
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "isvc", "uid": "u3"},
        "spec": spec,
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
                "labelsPath": ".spec.services[] | .labels",
                "schedulerNamePath": ".spec.services[] | .extraPodSpec.schedulerName",
                "resourcesPath": ".spec.services[] | .resources",
            }
        },
        "podSelector": {
            "componentInstanceSelector": {"idPath": '.metadata.labels["nvidia.com/dynamo-component"]'}
        },
    },
)


def dynamo_obj() -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "dgd", "uid": "u4"},
        "spec": {
            "services": {
                "Frontend": {"replicas": 1, "labels": {"a": "1"}},
                "Worker": {"replicas": 2, "resources": {"limits": {"gpu": "1"}}},
            }
        },
    }


def assert_patches_reproduce(old: dict[str, Any], change: Change) -> None:
    assert apply_json_patch(old, change.json_patch) == change.new_object
    if change.merge_patch is not None:
        assert apply_merge_patch(old, change.merge_patch) == change.new_object


# --- whole-object updates ----------------------------------------------------------------------


def test_update_pod_template_writes_dict_as_is_and_keeps_unknown_fields() -> None:
    obj = pytorch_obj()
    before = copy.deepcopy(obj)
    new_tpl = {
        "metadata": {"labels": {"a": "b"}, "x-unknown": 2},
        "spec": {"containers": [], "futureField": 3},
    }
    change = update_pod_template(PYTORCH, obj, "master", {"": new_tpl})
    assert obj == before
    assert change.new_object["spec"]["pytorchReplicaSpecs"]["Master"]["template"] == new_tpl
    assert change.new_object["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] == 1
    assert_patches_reproduce(obj, change)
    assert all(op["path"].startswith("/spec/pytorchReplicaSpecs/Master/template") for op in change.json_patch)
    # the new object does not share the given template
    new_tpl["spec"]["futureField"] = 99
    assert change.new_object["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["futureField"] == 3


def test_update_pod_template_per_instance() -> None:
    obj = jobset_obj()
    t1 = {"spec": {"containers": [{"name": "L"}], "schedulerName": "kai"}}
    t2 = {"spec": {"containers": [{"name": "W"}]}}
    change = update_pod_template(JOBSET, obj, "replicatedjob", {"workers": t2, "leader": t1})
    rjs = change.new_object["spec"]["replicatedJobs"]
    assert rjs[0]["template"]["spec"]["template"] == t1
    assert rjs[1]["template"]["spec"]["template"] == t2
    assert rjs[0]["template"]["spec"]["parallelism"] == 2
    assert_patches_reproduce(obj, change)


def test_missing_and_unknown_instance_ids() -> None:
    with pytest.raises(WriteBackError, match="value not found for instance id: workers"):
        update_pod_template(JOBSET, jobset_obj(), "replicatedjob", {"leader": {}})
    with pytest.raises(WriteBackError, match="not an instance"):
        update_pod_template(JOBSET, jobset_obj(), "replicatedjob", {"leader": {}, "workers": {}, "x": {}})
    with pytest.raises(WriteBackError, match="must be an object"):
        update_pod_template(PYTORCH, pytorch_obj(), "master", {"": None})  # type: ignore[dict-item]


def test_wrong_shape_and_unknown_component() -> None:
    with pytest.raises(WriteBackError, match="has no podSpecPath"):
        update_pod_spec(PYTORCH, pytorch_obj(), "master", {"": {}})
    with pytest.raises(WriteBackError, match="nope"):
        update_pod_template(PYTORCH, pytorch_obj(), "nope", {"": {}})


def test_update_pod_spec_and_metadata() -> None:
    obj = kserve_obj(with_transformer=True)
    change = update_pod_spec(KSERVE, obj, "transformer", {"": {"containers": [{"name": "t2"}]}})
    assert change.new_object["spec"]["transformer"] == {"containers": [{"name": "t2"}]}
    meta = update_pod_metadata(KSERVE, obj, "transformer", {"": {"labels": {"x": "y"}}})
    assert meta.new_object["spec"]["transformer"] == {"labels": {"x": "y"}}
    assert_patches_reproduce(obj, meta)


# --- fragmented ---------------------------------------------------------------------------------


def test_fragmented_writes_only_non_empty_fields_and_never_null() -> None:
    obj = kserve_obj()
    frag = FragmentedPodSpec(scheduler_name="kai-scheduler", labels={"team": "b", "q": "x"})
    change = update_fragmented(KSERVE, obj, "predictor", {"": frag})
    pred = change.new_object["spec"]["predictor"]
    assert pred["schedulerName"] == "kai-scheduler"
    assert pred["labels"] == {"team": "b", "q": "x"}
    # unset fields are not written at all (no nulls)
    for key in ("priorityClassName", "annotations", "affinity", "image"):
        assert key not in pred
    assert pred["containers"] == [{"name": "kserve-container"}]
    assert_patches_reproduce(obj, change)
    assert {op["op"] for op in change.json_patch} <= {"add", "replace"}


def test_fragmented_accepts_wire_name_mappings() -> None:
    change = update_fragmented(KSERVE, kserve_obj(), "predictor", {"": {"priorityClassName": "high"}})
    assert change.new_object["spec"]["predictor"]["priorityClassName"] == "high"
    with pytest.raises(WriteBackError, match="unknown fragmented pod spec field 'bogus'"):
        update_fragmented(KSERVE, kserve_obj(), "predictor", {"": {"bogus": 1}})


def test_fragmented_all_empty_is_a_no_op() -> None:
    obj = kserve_obj()
    change = update_fragmented(KSERVE, obj, "predictor", {"": FragmentedPodSpec(labels={}, containers=[])})
    assert not change.changed
    assert change.new_object == obj
    assert change.merge_patch == {}


def test_fragmented_path_undefined_with_values_fails() -> None:
    with pytest.raises(
        WriteBackError, match=r"^failed to update resources: path is not defined and values are not empty$"
    ):
        update_fragmented(
            KSERVE, kserve_obj(), "predictor", {"": FragmentedPodSpec(resources={"limits": {}})}
        )


def test_fragmented_not_assignable_names_definition_component_field() -> None:
    with pytest.raises(NotAssignableError) as info:
        update_fragmented(KSERVE, kserve_obj(), "predictor", {"": FragmentedPodSpec(image="img:2")})
    err = info.value
    assert str(err).startswith(
        "failed to update image: cannot write imagePath of component 'predictor': "
        "'.spec.predictor.image // .spec.predictor.model.image' is not an assignable path"
    )
    assert "serving-kserve-io-inferenceservice-v1beta1" in str(err)
    assert (err.definition, err.component, err.field) == (
        "serving-kserve-io-inferenceservice-v1beta1",
        "predictor",
        "imagePath",
    )


def test_fragmented_mixed_instances_leave_empty_ones_untouched() -> None:
    obj = dynamo_obj()
    change = update_fragmented(
        DYNAMO,
        obj,
        "service",
        {
            "Frontend": FragmentedPodSpec(labels={"b": "2"}),
            "Worker": FragmentedPodSpec(scheduler_name="kai"),
        },
    )
    services = change.new_object["spec"]["services"]
    assert services["Frontend"]["labels"] == {"b": "2"}
    assert "labels" not in services["Worker"]  # upstream would write null here
    assert services["Worker"]["extraPodSpec"] == {"schedulerName": "kai"}
    assert "extraPodSpec" not in services["Frontend"]
    assert services["Worker"]["resources"] == {"limits": {"gpu": "1"}}
    assert_patches_reproduce(obj, change)


def test_fragmented_field_order_reported_first_error() -> None:
    # schedulerName comes before labels in upstream's order: its error is the one raised
    bad = karta(
        "bad",
        {
            "name": "r",
            "kind": {"group": "g", "version": "v1", "kind": "K"},
            "specDefinition": {"fragmentedPodSpecDefinition": {"labelsPath": "{a: .x}"}},
        },
    )
    with pytest.raises(WriteBackError, match="failed to update schedulerName"):
        update_fragmented(bad, {"x": 1}, "r", {"": FragmentedPodSpec(scheduler_name="s", labels={"a": "b"})})
    with pytest.raises(NotAssignableError, match="failed to update labels: cannot write labelsPath"):
        update_fragmented(bad, {"x": 1}, "r", {"": FragmentedPodSpec(labels={"a": "b"})})


def test_array_length_mismatch() -> None:
    # instance ids from one array, the written path over a filtered subset: counts differ
    d = karta(
        "m",
        {"name": "r", "kind": {"group": "g", "version": "v1", "kind": "K"}},
        {
            "name": "c",
            "ownerRef": "r",
            "instanceIdPath": ".spec.items[].name",
            "specDefinition": {
                "fragmentedPodSpecDefinition": {"labelsPath": ".spec.items[] | select(.on) | .labels"}
            },
            "podSelector": {"componentInstanceSelector": {"idPath": ".metadata.name"}},
        },
    )
    obj = {"spec": {"items": [{"name": "a", "on": True}, {"name": "b"}]}}
    with pytest.raises(WriteBackError, match="array length mismatch: expected 1 values but got 2"):
        update_fragmented(d, obj, "c", {"a": {"labels": {"x": "1"}}, "b": {"labels": {"y": "1"}}})


# --- suspend / resume ---------------------------------------------------------------------------


def test_suspend_and_resume_in_order() -> None:
    obj = jobset_obj()
    s = suspend(JOBSET, obj)
    assert s.new_object["spec"]["suspend"] is True
    assert s.new_object["metadata"]["annotations"] == {"x/state": "Suspended"}
    assert {"op": "add", "path": "/metadata/annotations", "value": {"x/state": "Suspended"}} in s.json_patch
    assert_patches_reproduce(obj, s)
    r = resume(JOBSET, s.new_object)
    assert r.new_object["spec"]["suspend"] is False
    assert r.new_object["metadata"]["annotations"] == {"x/state": None}
    # setting a member to null is not expressible as a merge patch
    assert r.merge_patch is None
    assert apply_json_patch(s.new_object, r.json_patch) == r.new_object


def test_suspend_creates_missing_intermediates() -> None:
    obj = pytorch_obj()
    change = suspend(PYTORCH, obj)
    assert change.new_object["spec"]["runPolicy"] == {"suspend": True}
    assert change.json_patch == [{"op": "add", "path": "/spec/runPolicy", "value": {"suspend": True}}]
    assert change.merge_patch == {"spec": {"runPolicy": {"suspend": True}}}


def test_actions_not_kept_lists_what_the_answer_lacks() -> None:
    """The API server's answer to a suspend may lack a field its schema does not know (a v1.20
    Job prunes spec.suspend): each action whose value the answer does not hold is named."""
    obj = jobset_obj()
    suspended = suspend(JOBSET, obj).new_object
    assert actions_not_kept(JOBSET, suspended, None, "suspend") == []
    pruned = {**suspended, "spec": {k: v for k, v in suspended["spec"].items() if k != "suspend"}}
    missing = actions_not_kept(JOBSET, pruned, None, "suspend")
    assert len(missing) == 1 and missing[0].startswith(".spec.suspend = true (")
    assert "suspendActions[0].path" in missing[0]
    assert len(actions_not_kept(JOBSET, obj, None, "suspend")) == 2  # neither action holds yet
    with pytest.raises(WriteBackError, match="component 'nope' not found"):
        actions_not_kept(JOBSET, obj, "nope", "suspend")


def test_suspend_without_actions_and_bad_action() -> None:
    with pytest.raises(WriteBackError, match="defines no suspendActions"):
        suspend(KSERVE, kserve_obj())
    bad = karta(
        "bad",
        {
            "name": "r",
            "kind": {"group": "g", "version": "v1", "kind": "K"},
            "suspendDefinition": {
                "suspendActions": [
                    {"path": ".spec.a", "value": "1"},
                    {"path": ".spec.a // .spec.b", "value": "true"},
                ],
                "resumeActions": [{"path": ".spec.a", "value": "0"}],
            },
        },
    )
    with pytest.raises(NotAssignableError, match=r"suspendActions\[1\]"):
        suspend(bad, {"spec": {}})
    assert resume(bad, {"spec": {"a": 1}}).new_object == {"spec": {"a": 0}}


# --- shape-blind patch ---------------------------------------------------------------------------


def test_patch_all_pod_specs_template_shape() -> None:
    obj = pytorch_obj(with_worker=True)
    change = patch_all_pod_specs(
        PYTORCH,
        obj,
        scheduler_name="kai-scheduler",
        priority_class_name="train",
        labels={"kai.scheduler/queue": "team-a"},
        annotations={"x": "y"},
    )
    specs = change.new_object["spec"]["pytorchReplicaSpecs"]
    for role in ("Master", "Worker"):
        tpl = specs[role]["template"]
        assert tpl["spec"]["schedulerName"] == "kai-scheduler"
        assert tpl["spec"]["priorityClassName"] == "train"
        assert tpl["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
        assert tpl["metadata"]["annotations"] == {"x": "y"}
    assert specs["Master"]["template"]["metadata"]["labels"]["app"] == "m"  # merged, not replaced
    assert specs["Master"]["template"]["spec"]["futureField"] == {"a": 1}
    assert_patches_reproduce(obj, change)
    assert {
        "op": "add",
        "path": "/spec/pytorchReplicaSpecs/Master/template/metadata/labels/kai.scheduler~1queue",
        "value": "team-a",
    } in change.json_patch


def test_patch_all_skips_absent_templates() -> None:
    obj = pytorch_obj(with_worker=False)
    change = set_scheduler_name(PYTORCH, obj, "kai-scheduler")
    assert "Worker" not in change.new_object["spec"]["pytorchReplicaSpecs"]
    assert change.json_patch == [
        {
            "op": "add",
            "path": "/spec/pytorchReplicaSpecs/Master/template/spec/schedulerName",
            "value": "kai-scheduler",
        }
    ]


def test_patch_all_instances_and_fragmented_and_podspec_shapes() -> None:
    js = set_scheduler_name(JOBSET, jobset_obj(), "kai")
    for rj in js.new_object["spec"]["replicatedJobs"]:
        assert rj["template"]["spec"]["template"]["spec"]["schedulerName"] == "kai"
    obj = kserve_obj(with_transformer=True)
    change = patch_all_pod_specs(KSERVE, obj, scheduler_name="kai", labels={"q": "1"})
    pred = change.new_object["spec"]["predictor"]
    assert pred["schedulerName"] == "kai"
    assert pred["labels"] == {"team": "a", "q": "1"}
    tr = change.new_object["spec"]["transformer"]
    assert tr["schedulerName"] == "kai"
    assert tr["labels"] == {"q": "1"}
    assert_patches_reproduce(obj, change)
    dg = patch_all_pod_specs(DYNAMO, dynamo_obj(), scheduler_name="kai", labels={"q": "1"})
    services = dg.new_object["spec"]["services"]
    assert services["Frontend"]["labels"] == {"a": "1", "q": "1"}
    assert services["Worker"]["labels"] == {"q": "1"}
    assert services["Worker"]["extraPodSpec"]["schedulerName"] == "kai"


def test_patch_all_missing_fragment_path_is_an_error() -> None:
    with pytest.raises(WriteBackError, match="has no annotationsPath") as info:
        patch_all_pod_specs(DYNAMO, dynamo_obj(), annotations={"a": "b"})
    assert "service" in str(info.value) and "dynamo" in str(info.value)
    with pytest.raises(WriteBackError, match="no pod definition"):
        patch_all_pod_specs(DYNAMO, dynamo_obj(), scheduler_name="x", components=["dgd"])


# --- robustness -------------------------------------------------------------------------------------

_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.text(max_size=3)),
    lambda c: st.one_of(
        st.lists(c, max_size=3),
        st.dictionaries(
            st.sampled_from(
                ["spec", "predictor", "services", "labels", "replicatedJobs", "name", "template", "a"]
            ),
            c,
            max_size=3,
        ),
    ),
    max_leaves=10,
)
_frag = st.builds(
    FragmentedPodSpec,
    scheduler_name=st.one_of(st.none(), st.text(max_size=3)),
    labels=st.one_of(st.none(), st.dictionaries(st.text(max_size=2), st.text(max_size=2), max_size=2)),
    resources=st.one_of(st.none(), st.just({}), st.just({"limits": {"cpu": "1"}})),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=_json, frag=_frag, which=st.sampled_from(["kserve", "dynamo", "jobset", "pytorch"]))
def test_random_objects_only_raise_library_errors(obj: Any, frag: FragmentedPodSpec, which: str) -> None:
    before = copy.deepcopy(obj)
    try:
        if which == "kserve":
            change = update_fragmented(KSERVE, obj, "predictor", {"": frag})
        elif which == "dynamo":
            change = patch_all_pod_specs(DYNAMO, obj, scheduler_name="s", labels={"a": "b"})
        elif which == "jobset":
            change = suspend(JOBSET, obj)
        else:
            change = set_scheduler_name(PYTORCH, obj, "kai")
    except WorkloadMapError:
        assert obj == before
        return
    assert obj == before
    assert apply_json_patch(obj, change.json_patch) == change.new_object


# --- scale ----------------------------------------------------------------------------------------


SCALED = karta(
    "scaled",
    {"name": "root", "kind": {"group": "x.io", "version": "v1", "kind": "Widget"}},
    {
        "name": "workers",
        "ownerRef": "root",
        "instanceIdPath": ".spec.groups[].name",
        "scaleDefinition": {"replicasPath": ".spec.groups[].replicas"},
    },
    {"name": "fixed", "ownerRef": "root", "scaleDefinition": {"replicasPath": "1"}},
    {"name": "plain", "ownerRef": "root", "scaleDefinition": {"replicasPath": ".spec.plain.replicas"}},
    {"name": "none", "ownerRef": "root"},
)


def scaled_obj() -> dict[str, Any]:
    return {"spec": {"groups": [{"name": "a", "replicas": 1}, {"name": "b", "replicas": 2}], "plain": {}}}


def test_scale_writes_the_replicas_path_per_instance_or_for_all() -> None:
    obj = scaled_obj()
    one = scale(SCALED, obj, "workers", {"a": 3, "b": 4})
    assert [g["replicas"] for g in one.new_object["spec"]["groups"]] == [3, 4]
    assert_patches_reproduce(obj, one)
    every = scale(SCALED, obj, "workers", 5)
    assert [g["replicas"] for g in every.new_object["spec"]["groups"]] == [5, 5]
    created = scale(SCALED, obj, "plain", 2)
    assert created.new_object["spec"]["plain"] == {"replicas": 2}
    assert obj == scaled_obj()


def test_scale_refuses_what_it_cannot_write() -> None:
    obj = scaled_obj()
    with pytest.raises(CannotScaleError, match="component 'none' of definition 'scaled' cannot be scaled"):
        scale(SCALED, obj, "none", 1)
    with pytest.raises(
        CannotScaleError, match=r"'fixed' .* cannot be scaled to 2: its count is the constant 1"
    ):
        scale(SCALED, obj, "fixed", 2)
    assert not scale(SCALED, obj, "fixed", 1).changed  # already what it reads
    with pytest.raises(WriteBackError, match="is negative"):
        scale(SCALED, obj, "plain", -1)
    with pytest.raises(WriteBackError, match="out of range"):
        scale(SCALED, obj, "plain", 2**31)
    with pytest.raises(WriteBackError, match="must be an integer"):
        scale(SCALED, obj, "plain", True)
    with pytest.raises(WriteBackError, match="value not found for instance id: b"):
        scale(SCALED, obj, "workers", {"a": 1})
    with pytest.raises(WriteBackError, match="not an instance"):
        scale(SCALED, obj, "workers", {"a": 1, "b": 1, "c": 1})
