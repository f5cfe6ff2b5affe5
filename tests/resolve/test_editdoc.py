"""The edits as a document (REST /edits body, WorkloadPolicy spec.set): every key, the fixed
order, and errors that start with the field's path."""

from __future__ import annotations

from typing import Any

import pytest

from workload_map.resolve.editdoc import KEYS, MAX_ITEMS, edits_from_document
from workload_map.resolve.writeback import (
    EnvFrom,
    InvalidEditError,
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
)

EVERYTHING: dict[str, Any] = {
    "annotations": {"set": {"a": "b"}},
    "labels": {"unset": ["old"]},
    "podFields": [
        {"path": "schedulingGroup.podGroupName", "value": "pg"},
        {"path": "hostNetwork", "remove": True},
    ],
    "podAnnotations": {"set": {"n": "x"}},
    "podLabels": {"set": {"kai.scheduler/queue": "a"}},
    "tolerations": {"add": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}], "remove": ["old:NoExecute"]},
    "nodeSelector": {"set": {"pool": "a100"}, "unset": ["zone"]},
    "priorityClassName": "high",
    "schedulerName": "kai-scheduler",
    "env": [
        {"container": "main", "set": {"A": "1"}, "unset": ["B"], "from": [{"secret": "s", "prefix": "S_"}]}
    ],
    "resources": [{"limits": {"nvidia.com/gpu": "1"}, "component": "worker"}],
    "image": [{"container": "*", "image": "img:2"}],
}


def test_every_key_in_the_fixed_order() -> None:
    edits = edits_from_document(EVERYTHING, existing="keep")
    assert edits == [
        SetImage("*", "img:2"),
        SetResources(limits={"nvidia.com/gpu": "1"}, component="worker"),
        SetEnv(values={"A": "1"}, unset=("B",), env_from=(EnvFrom("secret", "s", "S_"),), container="main"),
        SetSchedulerName("kai-scheduler", "keep"),
        SetPriorityClassName("high", "keep"),
        SetNodeSelector({"pool": "a100"}, ("zone",), "keep"),
        SetTolerations(add=(Toleration("nvidia.com/gpu", "NoSchedule"),), remove=("old:NoExecute",)),
        SetPodLabels({"kai.scheduler/queue": "a"}, (), "keep"),
        SetPodAnnotations({"n": "x"}, (), "keep"),
        SetPodField(("schedulingGroup", "podGroupName"), "pg", existing="keep"),
        SetPodField(("hostNetwork",), None, remove=True, existing="keep"),
        SetLabels({}, ("old",), "keep"),
        SetAnnotations({"a": "b"}, (), "keep"),
    ]
    assert [k for k in KEYS if k in EVERYTHING] == list(KEYS)


@pytest.mark.parametrize(
    ("doc", "field", "message"),
    [
        ({"schedulerName": "Bad_Name"}, "spec.set.schedulerName", "RFC 1123 subdomain"),
        ({"schedulerName": 3}, "spec.set.schedulerName", "must be a string, got number"),
        ({"image": [{"image": ""}]}, "spec.set.image[0].image", "must not be empty"),
        ({"image": {"c": "x"}}, "spec.set.image", "must be an array, got object"),
        ({"image": [{"img": "x"}]}, "spec.set.image[0].img", "unknown field"),
        ({"resources": [{"limits": {"cpu": "abc"}}]}, "spec.set.resources[0].limits[cpu]", "quantities must"),
        ({"resources": [{"limits": {"cpu": 2}}]}, "spec.set.resources[0].limits[cpu]", "must be a string"),
        (
            {"env": [{"from": [{"secret": "a", "configMap": "b"}]}]},
            "spec.set.env[0].from[0]",
            "exactly one of",
        ),
        ({"env": [{"set": {"1X": "y"}}]}, "spec.set.env[0].env[1X]", "environment variable name"),
        (
            {"tolerations": {"add": [{"key": "g", "effect": "Often"}]}},
            "spec.set.tolerations.add[0].effect",
            "not one of",
        ),
        (
            {"tolerations": {"add": [{"key": "g", "tolerationSeconds": 5}]}},
            "spec.set.tolerations.add[0].tolerationSeconds",
            "NoExecute",
        ),
        ({"tolerations": {"remove": "g"}}, "spec.set.tolerations.remove", "must be an array"),
        ({"nodeSelector": {"set": {"a": "b c"}}}, "spec.set.nodeSelector", 'invalid node selector "a" value'),
        ({"podLabels": {"add": {"a": "b"}}}, "spec.set.podLabels.add", "unknown field"),
        (
            {"podFields": [{"path": "x", "remove": "yes"}]},
            "spec.set.podFields[0].remove",
            "must be a boolean",
        ),
        ({"podFields": [{"path": "x"}]}, "spec.set.podFields[0]", "give a value"),
        ({"image": [{"image": "x"}] * (MAX_ITEMS + 1)}, "spec.set.image", f"at most {MAX_ITEMS} entries"),
        ({"gpus": 2}, "spec.set.gpus", "unknown field (expected one of image"),
        ({}, "spec.set", "no change asked for"),
        ([], "spec.set", "must be an object"),
    ],
)
def test_errors_name_the_field(doc: Any, field: str, message: str) -> None:
    with pytest.raises(InvalidEditError) as info:
        edits_from_document(doc, "spec.set")
    assert info.value.field.startswith(field), info.value.field
    assert str(info.value).startswith(field.split("[")[0])
    assert message in str(info.value)
