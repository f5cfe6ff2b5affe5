"""The replica rules of ``wmap generate`` on small schemas (no corpus needed): each schema has the
shape of one real CRD (named per test), the draft is loaded, validated and resolved on objects,
and the desired pods per component are what that framework's controller creates."""

from __future__ import annotations

from typing import Any

from workload_map.generate import draft_definition
from workload_map.model.loader import load_definitions_text
from workload_map.model.validator import validate_definition
from workload_map.resolve import compile_definition, resolve

Schema = dict[str, Any]


def integer(default: int | None = None, description: str = "") -> Schema:
    out: Schema = {"type": "integer", "format": "int32"}
    if default is not None:
        out["default"] = default
    if description:
        out["description"] = description
    return out


def obj(required: tuple[str, ...] = (), **props: Schema) -> Schema:
    out: Schema = {"type": "object", "properties": props}
    if required:
        out["required"] = list(required)
    return out


def pod_spec(**extra: Schema) -> Schema:
    containers = {"type": "array", "items": obj(name={"type": "string"}, image={"type": "string"})}
    return obj(("containers",), containers=containers, **extra)


def pod_template() -> Schema:
    return obj(metadata={"type": "object"}, spec=pod_spec())


def items(item: Schema) -> Schema:
    return {"type": "array", "items": item}


def root(spec: Schema, status: Schema | None = None) -> Schema:
    return obj(("spec",), spec=spec, status=status or obj(phase={"type": "string"}))


def desired(schema: Schema, obj_: dict[str, Any], kind: str = "Widget") -> dict[str, dict[str, int]]:
    """component -> instance id -> desired pods, by the draft for ``schema``."""
    draft = draft_definition("example.com", "v1", kind, schema, source="test")
    loaded = load_definitions_text(draft.text, name="draft.yaml")
    assert not loaded.errors, [f.format() for f in loaded.errors]
    karta = loaded.definitions[0].karta
    assert [f.format() for f in validate_definition(karta) if f.severity == "error"] == []
    body = {"apiVersion": "example.com/v1", "kind": kind, "metadata": {"name": "w", "namespace": "ns"}}
    result = resolve(compile_definition(karta), {**body, **obj_})
    return {
        name: {i.id: i.desired_replicas or 0 for i in comp.instances}
        for name, comp in result.components.items()
        if name != kind.lower()
    }


LWS = root(
    obj(
        ("leaderWorkerTemplate",),
        replicas=integer(1),
        leaderWorkerTemplate=obj(
            ("workerTemplate",),
            size=integer(1, "the total number of pods in each group; the minimum is 1, the leader"),
            leaderTemplate=pod_template(),
            workerTemplate=pod_template(),
        ),
    )
)


def test_a_size_counting_the_leader_gives_one_leader_per_group_and_size_less_one_workers() -> None:
    """LeaderWorkerSet: 3 groups of 4 are 3 leaders and 9 workers."""
    tpl = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    spec = {"replicas": 3, "leaderWorkerTemplate": {"size": 4, "leaderTemplate": tpl, "workerTemplate": tpl}}
    assert desired(LWS, {"spec": spec}) == {"leader": {"": 3}, "worker": {"": 9}}
    spec = {"leaderWorkerTemplate": {"workerTemplate": tpl}}  # defaults: 1 group of 1
    assert desired(LWS, {"spec": spec}) == {"leader": {"": 1}, "worker": {"": 0}}


def test_the_leader_template_falls_back_to_the_workers() -> None:
    draft = draft_definition("example.com", "v1", "Widget", LWS, source="test")
    leader = draft.karta["spec"]["structureDefinition"]["childComponents"][0]
    assert leader["specDefinition"]["podTemplateSpecPath"] == (
        ".spec.leaderWorkerTemplate.leaderTemplate // .spec.leaderWorkerTemplate.workerTemplate"
    )
    assert "each group has a leader pod" in draft.text


def test_a_size_whose_description_does_not_count_a_leader_multiplies_everything() -> None:
    """Without the leader in the size's description both templates are size x replicas."""
    plain = root(
        obj(
            replicas=integer(1),
            groupTemplate=obj(size=integer(1), leaderTemplate=pod_template(), workerTemplate=pod_template()),
        )
    )
    tpl = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    spec = {"replicas": 2, "groupTemplate": {"size": 3, "leaderTemplate": tpl, "workerTemplate": tpl}}
    assert desired(plain, {"spec": spec}) == {"leader": {"": 6}, "worker": {"": 6}}


GROVE = root(
    obj(
        replicas=integer(0),
        template=obj(
            cliques=items(obj(name={"type": "string"}, spec=obj(replicas=integer(), podSpec=pod_spec()))),
            podCliqueScalingGroups=items(
                obj(
                    name={"type": "string"},
                    cliqueNames=items({"type": "string"}),
                    replicas=integer(1),
                )
            ),
        ),
    )
)


def test_replicas_beside_a_template_and_named_groups_multiply_the_instances() -> None:
    """PodCliqueSet: 2 replicas of the template; the scaling group "prefill" (x3) holds the
    cliques pleader (1) and pworker (2); frontend (1) is in no group."""
    pod = {"containers": [{"name": "c", "image": "x"}]}
    cliques = [
        {"name": "frontend", "spec": {"replicas": 1, "podSpec": pod}},
        {"name": "pleader", "spec": {"replicas": 1, "podSpec": pod}},
        {"name": "pworker", "spec": {"replicas": 2, "podSpec": pod}},
    ]
    groups = [{"name": "prefill", "cliqueNames": ["pleader", "pworker"], "replicas": 3}]
    spec = {"replicas": 2, "template": {"cliques": cliques, "podCliqueScalingGroups": groups}}
    assert desired(GROVE, {"spec": spec}) == {"clique": {"frontend": 2, "pleader": 6, "pworker": 12}}
    spec["replicas"] = 0  # the schema's default is 0: no replicas, no pods
    assert desired(GROVE, {"spec": spec})["clique"] == {"frontend": 0, "pleader": 0, "pworker": 0}


def test_a_count_beside_other_fields_counts_only_its_own_pods() -> None:
    """LLMInferenceService: .spec.replicas is the main pods' count; prefill and the router's
    scheduler carry their own and are optional (none while absent)."""
    schema = root(
        obj(
            replicas=integer(),
            template=pod_spec(),
            prefill=obj(replicas=integer(), template=pod_spec()),
            router=obj(scheduler=obj(replicas=integer(), template=pod_spec())),
        )
    )
    pod = {"containers": [{"name": "c", "image": "x"}]}
    got = desired(
        schema, {"spec": {"replicas": 4, "template": pod, "router": {"scheduler": {"replicas": 2}}}}
    )
    assert got == {"pods": {"": 4}, "prefill": {"": 0}, "scheduler": {"": 2}}


def test_a_parallelism_object_sizes_the_workers_beside_a_main_pod() -> None:
    """LLMInferenceService multi-node: each replica spans data / dataLocal nodes (else the
    pipeline stages); the main pod is one of them, the worker template makes the rest."""
    degrees = obj(
        data=integer(), dataLocal=integer(), pipeline=integer(), tensor=integer(), expert={"type": "boolean"}
    )
    schema = root(obj(replicas=integer(), template=pod_spec(), worker=pod_spec(), parallelism=degrees))
    pod = {"containers": [{"name": "c", "image": "x"}]}
    spec: dict[str, Any] = {
        "replicas": 2,
        "template": pod,
        "worker": pod,
        "parallelism": {"data": 8, "dataLocal": 2},
    }
    assert desired(schema, {"spec": spec}) == {"pods": {"": 2}, "worker": {"": 6}}
    spec["parallelism"] = {"pipeline": 3, "tensor": 8}
    assert desired(schema, {"spec": spec})["worker"] == {"": 4}
    del spec["worker"]
    assert desired(schema, {"spec": spec})["worker"] == {"": 0}


def test_a_node_count_one_object_down_applies_only_while_its_object_is_set() -> None:
    """Dynamo: replicas x multinode.nodeCount, whose default (2) applies to a multinode block
    without nodeCount, never to a component without the block."""
    component = obj(
        name={"type": "string"},
        replicas=integer(),
        multinode=obj(nodeCount=integer(2)),
        podTemplate=pod_template(),
    )
    schema = root(obj(components=items(component)))
    tpl = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    components = [
        {"name": "frontend", "replicas": 1, "podTemplate": tpl},
        {"name": "decode", "replicas": 2, "multinode": {"nodeCount": 4}, "podTemplate": tpl},
        {"name": "prefill", "replicas": 3, "multinode": {}, "podTemplate": tpl},
    ]
    assert desired(schema, {"spec": {"components": components}}) == {
        "component": {"frontend": 1, "decode": 8, "prefill": 6}
    }


def test_a_pod_spec_component_reads_its_own_autoscaling_minimum_and_is_absent_when_unset() -> None:
    """InferenceService: predictor/explainer are pod specs with minReplicas beside containers."""
    schema = root(
        obj(
            ("predictor",),
            predictor=pod_spec(minReplicas=integer(), maxReplicas=integer()),
            explainer=pod_spec(minReplicas=integer()),
        )
    )
    pod = {"containers": [{"name": "c", "image": "x"}]}
    got = desired(schema, {"spec": {"predictor": {**pod, "minReplicas": 3}}})
    assert got == {"predictor": {"": 3}, "explainer": {"": 0}}
    draft = draft_definition("example.com", "v1", "Widget", schema, source="test")
    predictor = draft.karta["spec"]["structureDefinition"]["childComponents"][0]
    assert predictor["scaleDefinition"]["maxReplicasPath"] == ".spec.predictor.maxReplicas"


def test_a_bare_optional_template_is_one_the_operator_defaults() -> None:
    """RayJob's submitterPodTemplate: optional, no count of its own, one submitter pod."""
    schema = root(obj(entrypoint={"type": "string"}, submitterPodTemplate=pod_template()))
    assert desired(schema, {"spec": {"entrypoint": "python x.py"}}) == {}  # own root holds it
    draft = draft_definition("example.com", "v1", "Widget", schema, source="test")
    root_scale = draft.karta["spec"]["structureDefinition"]["rootComponent"]["scaleDefinition"]
    assert root_scale == {"replicasPath": "1"}


def test_a_mode_enum_with_suspended_is_the_suspend_switch_and_stops_the_pod() -> None:
    """Sandbox: operatingMode Running | Suspended (default Running)."""
    mode = {"type": "string", "enum": ["Running", "Suspended"], "default": "Running"}
    schema = root(obj(operatingMode=mode, podTemplate=pod_template()))
    draft = draft_definition("example.com", "v1", "Sandbox", schema, source="test")
    rc = draft.karta["spec"]["structureDefinition"]["rootComponent"]
    assert rc["suspendDefinition"] == {
        "suspendActions": [{"path": ".spec.operatingMode", "value": '"Suspended"'}],
        "resumeActions": [{"path": ".spec.operatingMode", "value": '"Running"'}],
    }
    assert rc["statusDefinition"]["statusMappings"]["suspended"] == [
        {
            "byExpression": {
                "expression": '(.spec.operatingMode // "Running") == "Suspended"',
                "expectedResult": "true",
            }
        }
    ]
    loaded = load_definitions_text(draft.text, name="sandbox.yaml")
    compiled = compile_definition(loaded.definitions[0].karta)
    tpl = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    body = {"apiVersion": "example.com/v1", "kind": "Sandbox", "metadata": {"name": "s", "namespace": "n"}}
    for mode_value, pods in (("Running", 1), ("Suspended", 0), (None, 1)):
        spec: dict[str, Any] = {"podTemplate": tpl}
        if mode_value:
            spec["operatingMode"] = mode_value
        result = resolve(compiled, {**body, "spec": spec})
        assert result.components["sandbox"].instances[0].desired_replicas == pods, mode_value


def test_a_boolean_suspend_does_not_change_the_count() -> None:
    """JobSet-like ``suspend: true`` keeps the spec's count (the catalog reads it so)."""
    schema = root(obj(suspend={"type": "boolean"}, replicas=integer(), template=pod_template()))
    tpl = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    draft = draft_definition("example.com", "v1", "Widget", schema, source="test")
    rc = draft.karta["spec"]["structureDefinition"]["rootComponent"]
    assert rc["suspendDefinition"]["suspendActions"] == [{"path": ".spec.suspend", "value": "true"}]
    compiled = compile_definition(load_definitions_text(draft.text, name="w.yaml").definitions[0].karta)
    body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "n"}}
    result = resolve(compiled, {**body, "spec": {"suspend": True, "replicas": 3, "template": tpl}})
    assert result.components["widget"].instances[0].desired_replicas == 3


def test_a_hostile_schema_is_refused_not_drafted_partly() -> None:
    """Work is bounded before it grows: more pod specs than MAX_SOURCES, more properties for the
    scale searches than MAX_READS, or more nodes than MAX_NODES is a GenerateError naming it."""
    import pytest

    from workload_map.generate import GenerateError
    from workload_map.generate.infer import MAX_NODES, MAX_READS, MAX_SOURCES

    many = root(obj(**{f"c{i}": pod_spec() for i in range(MAX_SOURCES + 1)}))
    with pytest.raises(GenerateError, match=f"more than {MAX_SOURCES} pod templates"):
        draft_definition("example.com", "v1", "Widget", many, source="test")
    # 40 pod specs beside a wide object: each one's scale search reads all of it
    specs = {f"p{i}": pod_spec() for i in range(40)}
    wide = root(obj(**specs, **{f"n{i}": integer() for i in range(MAX_READS // 100)}))
    with pytest.raises(GenerateError, match=f"more than {MAX_READS:,} properties to read"):
        draft_definition("example.com", "v1", "Widget", wide, source="test")
    huge = root(obj(**{f"n{i}": integer() for i in range(MAX_NODES)}))
    with pytest.raises(GenerateError, match=f"more than {MAX_NODES:,} schema nodes to visit"):
        draft_definition("example.com", "v1", "Widget", huge, source="test")


def test_the_cli_names_the_file_of_a_refused_schema(tmp_path: Any) -> None:
    import yaml

    from tests.cli.helpers import wmap
    from tests.support.crds import schemaless_crd
    from workload_map.generate.infer import MAX_SOURCES

    schema = root(obj(**{f"c{i}": pod_spec() for i in range(MAX_SOURCES + 1)}))
    crd = schemaless_crd("example.com", "Widget", "widgets")
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema
    path = tmp_path / "widgets.yaml"
    path.write_text(yaml.safe_dump(crd))
    rc, out, err = wmap("generate", "--crd", str(path))
    assert rc == 2 and out == "" and f"widgets.yaml: the schema has more than {MAX_SOURCES} pod" in err


def opaque_pod_template() -> Schema:
    """A PodTemplateSpec whose containers are kept without a schema, as CRDs that trim the
    PodSpec declare them: an array of objects with ``x-kubernetes-preserve-unknown-fields`` and
    no properties."""
    containers = {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return obj(metadata={"type": "object"}, spec=obj(("containers",), containers=containers))


def test_a_template_whose_containers_are_opaque_is_a_pod_template() -> None:
    schema = root(obj(workers=obj(replicas=integer(1), template=opaque_pod_template())))
    draft = draft_definition("example.com", "v1", "Widget", schema, source="test")
    assert 'podTemplateSpecPath: ".spec.workers.template"' in draft.text
    assert desired(schema, {"spec": {"workers": {"replicas": 3, "template": {}}}}) == {"workers": {"": 3}}


def test_an_opaque_pod_spec_in_a_list_is_a_pod_spec_per_item() -> None:
    item = obj(
        ("name",),
        name={"type": "string"},
        replicas=integer(1),
        containers={"type": "array", "items": {"x-kubernetes-preserve-unknown-fields": True}},
    )
    schema = root(obj(groups=items(item)))
    spec = {"groups": [{"name": "a", "replicas": 2, "containers": [{}]}, {"name": "b", "containers": [{}]}]}
    assert desired(schema, {"spec": spec}) == {"group": {"a": 2, "b": 1}}


def test_containers_must_still_be_objects() -> None:
    """An array of strings named ``containers`` is not a pod spec, nor an opaque field that is not
    an array, nor items that declare fields of another kind."""
    for containers in (
        {"type": "array", "items": {"type": "string"}},
        {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        {"type": "array", "items": obj(port={"type": "integer"})},
    ):
        schema = root(obj(box=obj(containers=containers), other=obj(template=pod_template())))
        draft = draft_definition("example.com", "v1", "Widget", schema, source="test")
        assert ".spec.box" not in draft.text and ".spec.other.template" in draft.text


def test_wmap_generate_crd_drafts_the_opaque_template_and_lints_clean(tmp_path: Any) -> None:
    """Through the CLI, as the issue saw it: the draft from the CRD file has the component, and
    ``wmap lint --crd`` on the same CRD finds nothing (opaque containers accept any field)."""
    import yaml

    from tests.cli.helpers import wmap
    from tests.support.crds import schemaless_crd

    crd = schemaless_crd("example.com", "Widget", "widgets")
    schema = root(obj(workers=obj(replicas=integer(1), template=opaque_pod_template())))
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema
    path = tmp_path / "widgets.yaml"
    path.write_text(yaml.safe_dump(crd))
    rc, out, err = wmap("generate", "--crd", str(path))
    assert rc == 0, err
    assert 'podTemplateSpecPath: ".spec.workers.template"' in out
    draft = tmp_path / "widget.yaml"
    draft.write_text(out)
    rc, out, err = wmap("lint", str(draft), "--crd", str(path))
    assert rc == 0 and out.startswith("OK"), out + err
