from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import orjson
import pytest

from tests.resolve.defs import (
    DYNAMO_KARTA,
    JOBSET_KARTA,
    KSERVE_KARTA,
    LWS_KARTA,
    PYTORCH_KARTA,
    RAYCLUSTER_KARTA,
    dynamo,
    isvc,
    jobset,
    karta,
    lws,
    pytorchjob,
    raycluster,
    structure,
)
from workload_map import compile_definition, resolve
from workload_map.errors import DefinitionError, ResolveError, WorkloadMapError
from workload_map.resolve import CompiledDefinition, ResolveFieldError, Workload

ROOT = {"name": "root", "kind": {"group": "x.io", "version": "v1", "kind": "X"}}


def child(name: str, owner: str = "root", **fields: Any) -> dict[str, Any]:
    return {"name": name, "ownerRef": owner, **fields}


def multi(
    name: str,
    owner: str = "root",
    ids: str = ".spec.items[].name",
    spec: str = ".spec.items[].pod",
    **extra: Any,
) -> dict[str, Any]:
    return child(name, owner, instanceIdPath=ids, specDefinition={"podSpecPath": spec}, **extra)


def items(*names: Any) -> dict[str, Any]:
    return {"spec": {"items": [{"name": n, "pod": {"containers": []}} for n in names]}}


# --- instances -------------------------------------------------------------------------------


def test_instances_keep_declaration_order() -> None:
    w = resolve(structure(ROOT, multi("c")), items("zeta", "alpha", "mid"))
    assert w.components["c"].instance_ids == ("zeta", "alpha", "mid")
    assert [i.index for i in w.components["c"].instances] == [0, 1, 2]


def test_no_instance_id_path_means_one_unnamed_instance() -> None:
    w = resolve(structure(ROOT), {})
    assert w.root.instance_ids == ("",)


def test_numeric_ids_are_stringified_like_tostring() -> None:
    w = resolve(structure(ROOT, multi("c")), items(0, 1.0, 2.5))
    assert w.components["c"].instance_ids == ("0", "1", "2.5")


@pytest.mark.parametrize("bad", [None, True, {"a": 1}, ["x"]])
def test_non_string_ids_are_errors(bad: Any) -> None:
    with pytest.raises(ResolveFieldError, match="instance id at index 1 is"):
        resolve(structure(ROOT, multi("c")), items("a", bad))


def test_empty_id_is_an_error() -> None:
    with pytest.raises(ResolveFieldError) as info:
        resolve(structure(ROOT, multi("c")), items("a", ""))
    assert 'instance id path contained empty string values ["a", ""]' in str(info.value)
    assert info.value.component == "c"
    assert info.value.field == "instanceIdPath"
    assert info.value.definition == "test"


def test_duplicate_ids_are_an_error() -> None:
    with pytest.raises(ResolveFieldError, match=r'duplicate values \["a"\]'):
        resolve(structure(ROOT, multi("c")), items("a", "b", "a"))


def test_count_mismatch_names_definition_component_and_field() -> None:
    k = structure(ROOT, multi("c", spec=".spec.items[1:][].pod"))
    with pytest.raises(ResolveFieldError) as info:
        resolve(k, items("a", "b", "c"))
    msg = str(info.value)
    assert msg == (
        'karta "test", component "c", specDefinition.podSpecPath: '
        "instance ids count (3) does not match results count (2)"
    )


def test_single_instance_null_and_empty_stream_mean_unset() -> None:
    k = structure(
        ROOT,
        child("a", specDefinition={"podTemplateSpecPath": ".spec.missing"}),
        child("b", specDefinition={"podTemplateSpecPath": ".spec.list[]?"}),
    )
    w = resolve(k, {"spec": {"list": []}})
    assert w.components["a"].instances[0].spec.pod_template is None
    assert w.components["b"].instances[0].spec.pod_template is None


def test_single_instance_with_two_results_is_an_error() -> None:
    k = structure(ROOT, child("a", specDefinition={"podTemplateSpecPath": ".spec.list[]"}))
    with pytest.raises(
        ResolveFieldError, match=r"instance ids count \(1\) does not match results count \(2\)"
    ):
        resolve(k, {"spec": {"list": [{}, {}]}})


def test_zero_instances() -> None:
    w = resolve(structure(ROOT, multi("c")), {"spec": {"items": []}})
    assert w.components["c"].instances == ()
    assert w.components["c"].desired_pods == 0


def test_non_object_spec_result_is_an_error() -> None:
    k = structure(ROOT, child("a", specDefinition={"podSpecPath": ".spec.a"}))
    with pytest.raises(ResolveFieldError, match="result at index 0 is string, expected an object"):
        resolve(k, {"spec": {"a": "x"}})


def test_pod_spec_and_metadata() -> None:
    w = resolve(
        karta(KSERVE_KARTA),
        {
            **isvc(),
            "spec": {
                **isvc()["spec"],
                "transformer": {
                    "labels": {"a": "b"},
                    "containers": [{"name": "t", "resources": {"requests": {"cpu": "1"}}}],
                },
            },
        },
    )
    t = w.components["transformer"].instances[0]
    assert t.spec.pod_spec is not None and t.spec.metadata is not None
    assert t.spec.metadata["labels"] == {"a": "b"}
    assert t.spec.effective_pod_spec is t.spec.pod_spec
    assert t.resources.cpu_millis == 1000


# --- fragmented ------------------------------------------------------------------------------


def test_kserve_fragmented_predictor() -> None:
    w = resolve(karta(KSERVE_KARTA), isvc())
    p = w.components["predictor"].instances[0]
    frag = p.spec.fragmented
    assert frag is not None
    assert frag.scheduler_name == "kai-scheduler"
    assert frag.container is not None and frag.container["storageUri"].startswith("hf://")
    assert frag.containers is None and frag.labels is None
    assert p.scale.min_replicas == 2 and p.scale.replicas is None
    assert p.desired_replicas == 2
    assert p.pod_resources.gpus == 1 and p.resources.gpus == 2
    assert p.resources.cpu_millis == 12000
    # transformer absent: podSpecPath yields null -> unset, still one instance with 1 desired pod
    t = w.components["transformer"].instances[0]
    assert t.spec.pod_spec is None and t.resources.is_empty
    assert w.resources.gpus == 2


def test_fragmented_positionwise_count_is_max() -> None:
    k = structure(
        ROOT,
        child(
            "f",
            instanceIdPath=".spec.s[].n",
            specDefinition={
                "fragmentedPodSpecDefinition": {
                    "imagePath": ".spec.s[].image",
                    "labelsPath": ".spec.s[] | select(.labels) | .labels",
                }
            },
        ),
    )
    w = resolve(
        k, {"spec": {"s": [{"n": "a", "image": "i1", "labels": {"x": "1"}}, {"n": "b", "image": "i2"}]}}
    )
    frags = [i.spec.fragmented for i in w.components["f"].instances]
    assert [f.image for f in frags if f] == ["i1", "i2"]
    # position-wise, as upstream: the single labels result lands on position 0
    assert [f.labels for f in frags if f] == [{"x": "1"}, None]


def test_fragmented_count_mismatch_and_type_errors() -> None:
    k = structure(
        ROOT,
        child(
            "f",
            instanceIdPath=".spec.s[].n",
            specDefinition={"fragmentedPodSpecDefinition": {"imagePath": ".spec.s[].image, .spec.extra"}},
        ),
    )
    with pytest.raises(
        ResolveFieldError,
        match=r"fragmentedPodSpecDefinition: instance ids count \(1\) "
        r"does not match results count \(2\)",
    ):
        resolve(k, {"spec": {"s": [{"n": "a", "image": "i"}], "extra": "x"}})
    k = structure(ROOT, child("f", specDefinition={"fragmentedPodSpecDefinition": {"labelsPath": ".spec.l"}}))
    with pytest.raises(ResolveFieldError, match="labelsPath: result at index 0 is array, expected an object"):
        resolve(k, {"spec": {"l": []}})


def test_fragmented_single_instance_all_empty() -> None:
    k = structure(
        ROOT, child("f", specDefinition={"fragmentedPodSpecDefinition": {"imagePath": ".spec.x[]?"}})
    )
    frag = resolve(k, {}).components["f"].instances[0].spec.fragmented
    assert frag is not None and frag.to_dict() == {}


# --- scale -----------------------------------------------------------------------------------


def scale_karta(replicas: str, **more: str) -> CompiledDefinition:
    return compile_definition(
        structure(
            ROOT,
            child(
                "c",
                specDefinition={"podSpecPath": ".spec.pod"},
                scaleDefinition={"replicasPath": replicas, **more},
            ),
        )
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [(3, 3), ("7", 7), ("+2", 2), (0, 0), (4.0, 4), (None, None), ("007", 7)],
)
def test_scale_values(value: Any, expected: int | None) -> None:
    w = resolve(scale_karta(".spec.r"), {"spec": {"r": value}})
    assert w.components["c"].instances[0].scale.replicas == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", 'replicas value "abc" at index 0 is not a number'),
        ("", 'replicas value "" at index 0 is not a number'),
        ("1.5", 'replicas value "1.5" at index 0 is not a number'),
        (" 3", 'replicas value " 3" at index 0 is not a number'),
        (True, "replicas value true at index 0 is a boolean, not a number"),
        (2.5, "replicas value 2.5 at index 0 is not an integer"),
        (-1, "replicas value -1 at index 0 is negative"),
        ("-4", "replicas value -4 at index 0 is negative"),
        (2**31, "replicas value 2147483648 at index 0 is out of range"),
        ({"a": 1}, 'replicas value {"a":1} at index 0 is object, not a number'),
    ],
)
def test_bad_scale_values(value: Any, message: str) -> None:
    with pytest.raises(ResolveFieldError) as info:
        resolve(scale_karta(".spec.r"), {"spec": {"r": value}})
    assert str(info.value) == f'karta "test", component "c", scaleDefinition.replicasPath: {message}'


def test_knative_style_annotation_strings() -> None:
    k = scale_karta(
        '.spec.ann["autoscaling.knative.dev/min-scale"] // "1"',
        minReplicasPath='.spec.ann["autoscaling.knative.dev/min-scale"]',
        maxReplicasPath='.spec.ann["autoscaling.knative.dev/max-scale"]',
    )
    w = resolve(k, {"spec": {"ann": {"autoscaling.knative.dev/min-scale": "2"}}})
    s = w.components["c"].instances[0].scale
    assert (s.replicas, s.min_replicas, s.max_replicas) == (2, 2, None)


def test_scale_multi_instance_positionwise_and_mismatch() -> None:
    w = resolve(karta(RAYCLUSTER_KARTA), raycluster())
    worker = w.components["worker"]
    assert worker.instance_ids == ("gpu-a", "cpu-b")
    assert [(i.scale.replicas, i.scale.min_replicas, i.scale.max_replicas) for i in worker.instances] == [
        (3, 2, 5),
        (2, 1, 4),
    ]
    obj = raycluster()
    del obj["spec"]["workerGroupSpecs"][1]["replicas"]
    # null is "unset" for that index, not a mismatch
    assert resolve(karta(RAYCLUSTER_KARTA), obj).components["worker"].instances[1].scale.replicas is None
    k = structure(ROOT, multi("c", scaleDefinition={"replicasPath": ".spec.items[0].r"}))
    with pytest.raises(
        ResolveFieldError,
        match=r"scaleDefinition: instance ids count \(2\) does not match results count \(1\)",
    ):
        resolve(k, items("a", "b"))


def test_scale_from_non_null_safe_expression_error_is_typed() -> None:
    obj = jobset()
    del obj["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"]
    with pytest.raises(ResolveFieldError, match=r"scaleDefinition.replicasPath: failed to evaluate"):
        resolve(karta(JOBSET_KARTA), obj)


# --- tree scoping ----------------------------------------------------------------------------


def ids_under(node: Any) -> list[tuple[str, list[tuple[str, list[str]]]]]:
    return [
        (inst.instance.id, [(c.name, [i.instance.id for i in c.instances]) for c in inst.children])
        for inst in node.instances
    ]


def test_tree_root_single_instance_holds_children_in_declaration_order() -> None:
    w = resolve(karta(PYTORCH_KARTA), pytorchjob())
    assert list(w.components) == ["pytorchjob", "master", "worker"]
    assert ids_under(w.tree) == [("", [("master", [""]), ("worker", [""])])]
    assert w.components["worker"].parent == "pytorchjob"
    assert w.components["pytorchjob"].children == ("master", "worker")


def test_lws_group_leader_worker() -> None:
    w = resolve(karta(LWS_KARTA), lws())
    (root_inst,) = w.tree.instances
    (group,) = root_inst.children
    assert group.name == "group"
    (g,) = group.instances
    assert [c.name for c in g.children] == ["leader", "worker"]
    assert w.components["group"].desired_pods is None
    assert w.components["leader"].desired_pods == 2
    assert w.components["worker"].desired_pods == 6
    assert w.desired_pods == 8
    assert w.resources.gpus == 64


GROVE_LIKE = [
    ROOT,
    multi("clique", ids=".spec.cliques[].name", spec=".spec.cliques[].pod"),
]


def test_child_ids_matching_parent_ids_attach_by_id() -> None:
    k = structure(
        ROOT,
        child(
            "svc",
            instanceIdPath=".spec.s | keys_unsorted[]",
            scaleDefinition={"replicasPath": ".spec.s[] | .r"},
        ),
        child("part", "svc", instanceIdPath=".spec.p[].svc", specDefinition={"podSpecPath": ".spec.p[].pod"}),
    )
    obj = {
        "spec": {
            "s": {"b": {"r": 1}, "a": {"r": 2}},
            "p": [{"svc": "a", "pod": {}}, {"svc": "b", "pod": {}}, {"svc": "a", "pod": {}}],
        }
    }
    with pytest.raises(ResolveFieldError, match="duplicate"):
        resolve(k, obj)
    obj["spec"]["p"] = [{"svc": "a", "pod": {}}, {"svc": "b", "pod": {}}]
    w = resolve(k, obj)
    (root_inst,) = w.tree.instances
    (svc,) = root_inst.children
    assert [(i.instance.id, [n.instance.id for n in i.children[0].instances]) for i in svc.instances] == [
        ("b", ["b"]),
        ("a", ["a"]),
    ]


def test_child_one_per_parent_instance_attaches_positionally() -> None:
    k = structure(
        ROOT,
        child("grp", instanceIdPath=".spec.g[].name"),
        child(
            "leader",
            "grp",
            instanceIdPath=".spec.g[].leader",
            specDefinition={"podSpecPath": ".spec.g[].pod"},
        ),
    )
    w = resolve(
        k,
        {
            "spec": {
                "g": [{"name": "g0", "leader": "l0", "pod": {}}, {"name": "g1", "leader": "l1", "pod": {}}]
            }
        },
    )
    grp = w.tree.instances[0].children[0]
    assert [
        (i.instance.id, i.children[0].instances[0].instance.id, i.children[0].instances[0].shared)
        for i in grp.instances
    ] == [("g0", "l0", False), ("g1", "l1", False)]


def test_single_child_instance_is_shared_under_every_parent_instance() -> None:
    k = structure(
        ROOT,
        child("grp", instanceIdPath=".spec.g[].name"),
        child("common", "grp", specDefinition={"podSpecPath": ".spec.common"}),
    )
    w = resolve(k, {"spec": {"g": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "common": {}}})
    grp = w.tree.instances[0].children[0]
    shared = [
        (i.instance.id, [(n.instance.id, n.shared) for n in i.children[0].instances]) for i in grp.instances
    ]
    assert shared == [("a", [("", True)]), ("b", [("", True)]), ("c", [("", True)])]
    # counted once in the flat index and the totals
    assert w.components["common"].desired_pods == 1


def test_unscopable_child_is_an_error() -> None:
    k = structure(
        ROOT,
        child("grp", instanceIdPath=".spec.g[]"),
        child("x", "grp", instanceIdPath=".spec.x[]"),
    )
    with pytest.raises(ResolveFieldError, match=r'cannot scope 3 instances .* of parent "grp"'):
        resolve(k, {"spec": {"g": ["a", "b"], "x": ["p", "q", "r"]}})


def test_children_of_empty_parent_are_not_in_tree() -> None:
    k = structure(ROOT, child("grp", instanceIdPath=".spec.g[]"), child("x", "grp"))
    w = resolve(k, {"spec": {"g": []}})
    assert w.tree.instances[0].children[0].instances == ()
    assert w.components["x"].instance_ids == ("",)


def test_dynamo_services_map() -> None:
    w = resolve(karta(DYNAMO_KARTA), dynamo())
    svc = w.components["service"]
    assert svc.instance_ids == ("Frontend", "VllmDecodeWorker", "VllmPrefillWorker")
    assert [i.desired_replicas for i in svc.instances] == [1, 4, 1]
    decode = svc.instance("VllmDecodeWorker")
    assert decode is not None and decode.spec.fragmented is not None
    assert decode.spec.fragmented.image == "dynamo:1"
    # container requests win over the CR-level resources
    assert decode.pod_resources.gpus == 8 and decode.resources.gpus == 32
    prefill = svc.instance("VllmPrefillWorker")
    assert prefill is not None
    assert prefill.scale.min_replicas == 1 and prefill.scale.max_replicas == 4
    assert prefill.pod_resources.gpus == 4  # CR-level fallback (container has no resources)
    frontend = svc.instance("Frontend")
    assert frontend is not None and frontend.pod_resources.cpu_millis == 1000
    # "gpu" is an extended resource name like any other
    assert w.resources.gpus == 36
    assert w.primary_phase.value == "Running"


# --- front door ------------------------------------------------------------------------------


def test_json_text_and_bytes() -> None:
    k = compile_definition(karta(JOBSET_KARTA))
    a = resolve(k, jobset())
    b = resolve(k, json.dumps(jobset()))
    c = resolve(k, orjson.dumps(jobset()))
    assert a.to_dict() == b.to_dict() == c.to_dict()


@pytest.mark.parametrize("bad", ["{", "[1]", b"\xff", "null", 42])
def test_bad_objects(bad: Any) -> None:
    with pytest.raises(ResolveError):
        resolve(karta(JOBSET_KARTA), bad)


def test_definition_type_checked() -> None:
    with pytest.raises(ResolveError):
        resolve({"spec": {}}, {})  # type: ignore[arg-type]


def test_to_dict_is_json_ready_camel_case() -> None:
    w = resolve(karta(JOBSET_KARTA), jobset())
    d = w.to_dict()
    text = orjson.dumps(d)
    assert b"desiredReplicas" in text and b"podTemplateSpec" in text
    assert d["kind"] == "JobSet" and d["name"] == "train" and d["namespace"] == "ml" and d["uid"] == "js-uid"
    assert d["resources"]["gpus"] == 12
    assert d["status"]["phases"] == ["Undefined"] and d["status"]["primaryPhase"] == "Undefined"
    assert [c["name"] for c in d["components"]] == ["jobset", "replicatedjob"]
    assert d["tree"]["instances"][0]["children"][0]["name"] == "replicatedjob"


def test_compile_once_resolve_many() -> None:
    k = karta(JOBSET_KARTA)
    c1 = compile_definition(k)
    assert compile_definition(k) is c1
    locations = [e.location for e in c1.root_expressions()]
    assert "replicatedjob.instanceIdPath" in locations
    assert "replicatedjob.specDefinition.podTemplateSpecPath" in locations
    assert c1.root.suspend_actions[0].value is True
    assert c1.component("replicatedjob").pod_selector is not None
    assert [m.component_name for m in c1.gang_members["job"]] == ["replicatedjob"]
    assert c1.ancestors_of("replicatedjob")[0].name == "jobset"
    ws = [resolve(c1, jobset()) for _ in range(3)]
    assert all(isinstance(w, Workload) for w in ws)


@pytest.mark.parametrize(
    ("components", "message"),
    [
        ([ROOT, child("a", instanceIdPath=".spec[")], "instanceIdPath: invalid jq"),
        ([ROOT, child("a", owner="nope")], 'owner "nope" is not a component'),
        ([ROOT, child("a"), child("a")], "component names must be unique"),
        ([ROOT, child("a", owner="b"), child("b", owner="a")], "cycle"),
        ([{**ROOT, "ownerRef": "x"}], "root component must not have an ownerRef"),
        ([ROOT, {"name": "a"}], "child component must have an ownerRef"),
        (
            [ROOT, child("a", suspendDefinition={"suspendActions": [{"path": ".spec.s", "value": "tru"}]})],
            "is not valid JSON",
        ),
    ],
)
def test_definition_errors(components: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(DefinitionError, match=message):
        compile_definition(structure(*components))


def test_runtime_errors_are_typed() -> None:
    k = structure(ROOT, multi("c"))
    with pytest.raises(ResolveFieldError, match="instanceIdPath: failed to evaluate") as info:
        resolve(k, {"spec": {"items": "not a list"}})
    assert isinstance(info.value, WorkloadMapError)


def test_import_workload_map_is_light() -> None:
    code = (
        "import sys, workload_map; assert 'pydantic' not in sys.modules, 'pydantic'; "
        "assert 'workload_map.resolve' not in sys.modules; "
        "from workload_map import resolve, compile_definition; print(callable(resolve))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_front_door_survives_submodule_imports() -> None:
    code = (
        "import workload_map.resolve.resources as r; import workload_map.resolve.tree; "
        "from workload_map import resolve; import workload_map; "
        "assert workload_map.resolve is resolve and callable(resolve); "
        "assert resolve.compile_definition is workload_map.compile_definition; "
        "assert r.pod_spec_totals({}).is_empty; print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_dotted_component_names_keep_field_names() -> None:
    k = structure(ROOT, multi("svc.v1", spec=".spec.items[1:][].pod"))
    with pytest.raises(ResolveFieldError) as info:
        resolve(k, items("a", "b"))
    assert info.value.component == "svc.v1"
    assert info.value.field == "specDefinition.podSpecPath"


def test_gang_member_expressions_are_compiled() -> None:
    k = karta(
        {
            "structureDefinition": {"rootComponent": ROOT},
            "optimizationInstructions": {
                "gangScheduling": {
                    "podGroups": [{"name": "g", "members": [{"componentName": "root", "filters": [".x["]}]}]
                }
            },
        }
    )
    with pytest.raises(DefinitionError) as info:
        compile_definition(k)
    assert "podGroups[g].members[0].filters[0]: invalid jq" in str(info.value)
    assert 'component ""' not in str(info.value)


def test_resolved_objects_are_ordinary_frozen_dataclasses() -> None:
    import dataclasses

    w = resolve(karta(JOBSET_KARTA), jobset())
    inst = w.components["replicatedjob"].instances[1]
    for obj in (inst, inst.scale, inst.spec, inst.resources, w.components["replicatedjob"], w.resources):
        assert dataclasses.replace(obj) == obj
        with pytest.raises(dataclasses.FrozenInstanceError):
            obj.x = 1  # type: ignore[union-attr]


def test_resolve_many_and_mapping_input() -> None:
    from types import MappingProxyType

    from workload_map.resolve import resolve_many

    ws = resolve_many(karta(JOBSET_KARTA), [jobset(), json.dumps(jobset()), MappingProxyType(jobset())])
    assert [w.resources.gpus for w in ws] == [12, 12, 12]


def test_child_components_with_status_definitions_get_their_own_status() -> None:
    k = structure(
        ROOT,
        child(
            "svc",
            statusDefinition={
                "phaseDefinition": {"path": ".status.svc"},
                "statusMappings": {"running": [{"byPhase": "up"}]},
            },
        ),
    )
    w = resolve(k, {"status": {"svc": "up"}})
    assert w.phases[0].value == "Undefined"
    svc_status = w.components["svc"].status
    assert svc_status is not None and svc_status.primary_phase.value == "Running"
