"""The whole-workload gang plan and its renderers, on small definitions and catalog objects: scope
per Karta format, members and their minimum/desired pods, required pods trimmed in order,
minimum resources from the resolver (init containers and sidecars), replica splits, nested
subgroups (the Workload API's CompositePodGroups), policy precedence, bounds and bad input."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import workload_map.resolve.gang_plan as gang_plan_module
from tests.resolve.defs import karta
from workload_map.catalog import get_definition
from workload_map.errors import WorkloadMapError
from workload_map.model.definition import Karta
from workload_map.resolve.gang_expressions import GangResultError
from workload_map.resolve.gang_plan import (
    MAX_NAME_LENGTH,
    PlanOptions,
    object_name,
    plan_gangs,
)
from workload_map.resolve.gangs import GangError
from workload_map.resolve.schedulers import (
    SCHEDULERS,
    KueueLimitError,
    RenderOptions,
    WorkloadApiLimitError,
    conflicts,
    render,
)


def _pod(cpu: str, gpu: int = 0, **extra: Any) -> dict[str, Any]:
    res: dict[str, Any] = {"requests": {"cpu": cpu, "memory": "1Gi"}}
    if gpu:
        res["limits"] = {"nvidia.com/gpu": gpu}
    return {"spec": {"containers": [{"name": "c", "resources": res}], **extra}}


def pytorchjob(master: int = 1, workers: int = 3, **policy: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "llama", "namespace": "ml", "uid": "uid-1"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {"replicas": master, "template": _pod("2")},
                "Worker": {"replicas": workers, "template": _pod("4", gpu=8)},
            }
        },
    }
    if policy:
        obj["spec"]["runPolicy"] = {"schedulingPolicy": policy}
    return obj


def catalog(api_version: str, kind: str) -> Karta:
    found = get_definition(api_version, kind)
    assert found is not None
    return found


PYTORCH = catalog("kubeflow.org/v1", "PyTorchJob")


def test_a_training_job_is_one_gang_of_every_pod_with_their_requests() -> None:
    plan = plan_gangs(PYTORCH, pytorchjob())
    (gang,) = plan.gangs
    assert gang.name == "llama"
    assert gang.min_member == 4
    assert [(m.component, m.min_pods, m.desired_pods) for m in gang.members] == [
        ("master", 1, 1),
        ("worker", 3, 3),
    ]
    assert gang.required == (1, 3)
    assert (gang.min_resources.cpu_millis, gang.min_resources.gpus) == (14_000, 24)


def test_min_available_trims_the_required_pods_in_definition_order() -> None:
    gang = plan_gangs(PYTORCH, pytorchjob(minAvailable=2)).gangs[0]
    assert gang.min_member == 2
    assert gang.required == (1, 1)
    assert gang.min_resources.cpu_millis == 6_000
    obj = render(plan_gangs(PYTORCH, pytorchjob(minAvailable=2)), "volcano").objects[0]
    assert obj["spec"]["minResources"] == {"cpu": "6", "memory": "2Gi", "nvidia.com/gpu": "8"}


def test_minimum_resources_follow_kubernetes_init_and_sidecar_rules() -> None:
    obj = pytorchjob(master=1, workers=0)
    del obj["spec"]["pytorchReplicaSpecs"]["Worker"]
    obj["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["initContainers"] = [
        {"name": "warm", "resources": {"requests": {"cpu": "8"}}},
        {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
    ]
    gang = plan_gangs(PYTORCH, obj).gangs[0]
    # max(regular 2 + sidecar 0.5, init 8) = 8 cores
    assert gang.min_resources.cpu_millis == 8_000


def test_policy_precedence_caller_then_definition_then_pod_template() -> None:
    job = pytorchjob(queue="team-a", priorityClass="high", scheduleTimeoutSeconds=60)
    plan = plan_gangs(PYTORCH, job)
    assert (plan.policy.queue, plan.policy.priority_class_name, plan.policy.schedule_timeout_seconds) == (
        "team-a",
        "high",
        60,
    )
    plan = plan_gangs(PYTORCH, job, PlanOptions(queue="override", schedule_timeout_seconds=5))
    assert (plan.policy.queue, plan.policy.schedule_timeout_seconds) == ("override", 5)
    job = pytorchjob()
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["priorityClassName"] = "gpu-batch"
    assert plan_gangs(PYTORCH, job).policy.priority_class_name == "gpu-batch"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("queue", "Not A Name", "is not a DNS-1123 subdomain"),
        ("scheduleTimeoutSeconds", -1, "out of range"),
        ("minResources", {"cpu": "lots"}, "is not a quantity"),
        ("minResources", {"bad name!": "1"}, "is not a resource name"),
        ("minResources", [1, 2], "expected an object of resource quantities"),
    ],
)
def test_bad_policy_values_are_errors_naming_the_expression(field: str, value: Any, message: str) -> None:
    with pytest.raises(GangResultError) as info:
        plan_gangs(PYTORCH, pytorchjob(**{field: value}))
    assert message in str(info.value)
    assert "gangScheduling.expressions" in str(info.value)


def test_a_type_without_a_gang_format_has_no_gang_and_says_why() -> None:
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns", "uid": "u"},
        "spec": {"replicas": 3, "template": _pod("1")},
    }
    plan = plan_gangs(catalog("apps/v1", "Deployment"), deploy)
    assert plan.gangs == ()
    assert "declares no gang" in plan.notes[0]
    for scheduler in SCHEDULERS:
        assert render(plan, scheduler).objects == ()
    assert "no suspend actions" in render(plan, "kueue").notes[0]  # Kueue needs no gang, but suspend


def lws(replicas: int = 2, size: int = 4) -> dict[str, Any]:
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "vllm", "namespace": "ml", "uid": "uid-lws"},
        "spec": {
            "replicas": replicas,
            "leaderWorkerTemplate": {"size": size, "workerTemplate": _pod("1", gpu=1)},
        },
    }


def test_a_replica_selected_component_repeats_the_gang_per_replica() -> None:
    plan = plan_gangs(catalog("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"), lws())
    (gang,) = plan.gangs
    split = gang.replica_split
    assert split is not None
    assert (split.label_key, split.replicas, split.size) == ("leaderworkerset.sigs.k8s.io/group-index", 2, 4)
    assert gang.min_member == 4
    assert [(m.component, m.desired_pods) for m in gang.members] == [("leader", 2), ("worker", 6)]
    assert gang.min_resources.gpus == 4  # one replica's pods
    pg = render(plan, "volcano").objects[0]
    assert pg["spec"]["minMember"] == 4
    assert pg["spec"]["subGroupPolicy"] == [
        {
            "name": "group",
            "subGroupSize": 4,
            "minSubGroups": 1,
            "matchLabelKeys": ["leaderworkerset.sigs.k8s.io/group-index"],
        }
    ]
    assert any("one PodGroup holds every replica" in n for n in render(plan, "workload-api").notes)


NESTED = """
metadata: {name: pyflow}
spec:
  structureDefinition:
    rootComponent:
      name: pyflow
      kind: {group: e2e.example.com, version: v1, kind: PyFlow}
      suspendDefinition:
        suspendActions: [{path: .spec.suspend, value: "true"}]
        resumeActions: [{path: .spec.suspend, value: "false"}]
    childComponents:
    - name: master
      ownerRef: pyflow
      specDefinition: {podTemplateSpecPath: .spec.master.template}
      scaleDefinition: {replicasPath: .spec.master.replicas}
      podSelector: {componentTypeSelector: {keyPath: '.metadata.labels["role"]', value: master}}
    - name: workers
      ownerRef: pyflow
    - name: trainer
      ownerRef: workers
      specDefinition: {podTemplateSpecPath: .spec.trainer.template}
      scaleDefinition: {replicasPath: .spec.trainer.replicas, minReplicasPath: .spec.trainer.min}
      podSelector: {componentTypeSelector: {keyPath: '.metadata.labels["role"]', value: trainer}}
    - name: evaluator
      ownerRef: workers
      specDefinition: {podTemplateSpecPath: .spec.evaluator.template}
      scaleDefinition: {replicasPath: .spec.evaluator.replicas}
      podSelector: {componentTypeSelector: {keyPath: '.metadata.labels["role"]', value: evaluator}}
  optimizationInstructions:
    gangScheduling:
      podGroup:
        name: training
        topology:
          topologyName: rack-topology
          requiredTopologyLevel: topology.kubernetes.io/zone
          preferredTopologyLevel: rack
        subGroups:
        - componentName: master
        - componentName: workers
"""


def pyflow() -> dict[str, Any]:
    return {
        "apiVersion": "e2e.example.com/v1",
        "kind": "PyFlow",
        "metadata": {"name": "flow", "namespace": "ml", "uid": "uid-flow"},
        "spec": {
            "master": {"replicas": 1, "template": _pod("1")},
            "trainer": {"replicas": 4, "min": 2, "template": _pod("2", gpu=1)},
            "evaluator": {"replicas": 1, "template": _pod("1")},
        },
    }


def test_pod_group_format_subgroups_over_several_templates_nest() -> None:
    plan = plan_gangs(karta(NESTED), pyflow())
    (gang,) = plan.gangs
    assert [n.name for n in gang.nodes] == ["workers"]
    assert [(m.task, m.parent, m.min_pods) for m in gang.members] == [
        ("master", None, 1),
        ("trainer", "workers", 2),
        ("evaluator", "workers", 1),
    ]
    assert (gang.min_member, gang.min_sub_group, gang.depth) == (4, 2, 2)


def test_nested_gangs_become_composite_pod_groups_in_the_workload_api() -> None:
    rendered = render(plan_gangs(karta(NESTED), pyflow()), "workload-api")
    kinds = [(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in rendered.objects]
    assert kinds == [
        ("scheduling.k8s.io/v1beta1", "Workload", "flow"),
        ("scheduling.k8s.io/v1alpha3", "CompositePodGroup", "flow-training"),
        ("scheduling.k8s.io/v1alpha3", "CompositePodGroup", "flow-workers"),
        ("scheduling.k8s.io/v1beta1", "PodGroup", "flow-trainer"),
        ("scheduling.k8s.io/v1beta1", "PodGroup", "flow-evaluator"),
        ("scheduling.k8s.io/v1beta1", "PodGroup", "flow-master"),
    ]
    (root,) = rendered.objects[0]["spec"]["compositePodGroupTemplates"]
    assert root["schedulingPolicy"] == {"gang": {"minGroupCount": 2}}
    assert root["schedulingConstraints"] == {"topology": [{"key": "topology.kubernetes.io/zone"}]}
    assert [t["name"] for t in root["podGroupTemplates"]] == ["master"]
    (workers,) = root["compositePodGroupTemplates"]
    assert [(t["name"], t["schedulingPolicy"]) for t in workers["podGroupTemplates"]] == [
        ("trainer", {"gang": {"minCount": 2}}),
        ("evaluator", {"gang": {"minCount": 1}}),
    ]
    trainer = rendered.objects[3]["spec"]
    assert trainer["parentCompositePodGroupName"] == "flow-workers"
    assert trainer["workloadRef"] == {"workloadName": "flow", "templateName": "trainer"}
    links = {(c.component, c.pod_group_name) for c in rendered.template_changes}
    assert links == {("master", "flow-master"), ("trainer", "flow-trainer"), ("evaluator", "flow-evaluator")}


def test_kai_external_pod_group_nests_subgroups_and_tells_kai_to_skip_the_workload() -> None:
    rendered = render(plan_gangs(karta(NESTED), pyflow()), "kai")
    spec = rendered.objects[0]["spec"]
    assert spec["minMember"] == 4
    assert spec["subGroups"] == [
        {"name": "workers", "minSubGroup": 2},
        {"name": "master", "minMember": 1},
        {"name": "trainer", "parent": "workers", "minMember": 2},
        {"name": "evaluator", "parent": "workers", "minMember": 1},
    ]
    assert spec["topologyConstraint"]["requiredTopologyLevel"] == "topology.kubernetes.io/zone"
    assert rendered.workload_change.annotations == {"kai.scheduler/skip-podgrouper": "true"}
    labels = {c.component: dict(c.labels) for c in rendered.template_changes}
    assert labels["trainer"] == {"kai.scheduler/subgroup-name": "trainer"}


def test_kueue_one_pod_set_per_template_partial_admission_on_the_elastic_one() -> None:
    plan = plan_gangs(karta(NESTED), pyflow(), PlanOptions(queue="lq"))
    rendered = render(plan, "kueue", RenderOptions(priority_value={"high": 1000}.get))
    (wl,) = rendered.objects
    assert wl["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    assert wl["spec"]["queueName"] == "lq"
    assert [(p["name"], p["count"], p.get("minCount")) for p in wl["spec"]["podSets"]] == [
        ("master", 1, None),
        ("trainer", 4, 2),
        ("evaluator", 1, None),
    ]
    assert rendered.workload_change.suspend_actions == ((".spec.suspend", "true"),)
    assert rendered.workload_change.labels == {"kueue.x-k8s.io/queue-name": "lq"}


def test_kueue_skips_workloads_the_definition_cannot_suspend() -> None:
    text = NESTED.replace("      suspendDefinition:\n", "      x-none:\n", 1)
    text = "\n".join(ln for ln in text.splitlines() if "Actions" not in ln and "x-none" not in ln)
    rendered = render(plan_gangs(karta(text), pyflow()), "kueue")
    assert rendered.objects == ()
    assert "no suspend actions" in rendered.notes[0]


def test_kueue_refuses_more_than_18_pod_sets() -> None:
    obj = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "wide", "namespace": "ns", "uid": "u"},
        "spec": {
            "replicatedJobs": [
                {"name": f"rj-{i}", "template": {"spec": {"template": _pod("1")}}} for i in range(19)
            ]
        },
    }
    plan = plan_gangs(catalog("jobset.x-k8s.io/v1alpha2", "JobSet"), obj)
    with pytest.raises(KueueLimitError, match="19 pod templates, a Kueue Workload holds at most 18"):
        render(plan, "kueue")


def test_workload_api_limits_templates_per_level() -> None:
    text = NESTED.replace(
        "        - componentName: workers\n",
        "        - componentName: workers\n"
        + "".join(f"        - componentName: extra{i}\n" for i in range(8)),
    )
    text = text.replace(
        "  optimizationInstructions:",
        "".join(
            f"    - name: extra{i}\n      ownerRef: pyflow\n"
            f"      specDefinition: {{podTemplateSpecPath: .spec.master.template}}\n"
            f"      scaleDefinition: {{replicasPath: '1'}}\n"
            for i in range(8)
        )
        + "  optimizationInstructions:",
    )
    plan = plan_gangs(karta(text), pyflow())
    with pytest.raises(
        WorkloadApiLimitError, match="9 pod group templates under training, the Workload API allows at most 8"
    ):
        render(plan, "workload-api")


def test_members_beyond_the_bound_are_refused_before_any_object_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a lowered bound keeps each evaluation small: 1,000 ids per component once ran past the
    # 0.25 s wall-clock evaluation deadline on a loaded machine
    monkeypatch.setattr(gang_plan_module, "MAX_GANG_MEMBERS", 100)
    template = """'.spec.ids[] | {spec: {containers: [{name: "c"}]}}'"""
    comps = "".join(
        f"    - name: c{i}\n      ownerRef: root\n      specDefinition: {{podTemplateSpecPath: {template}}}\n"
        f"      instanceIdPath: .spec.ids[]\n"
        for i in range(11)
    )
    text = f"""
metadata: {{name: many}}
spec:
  structureDefinition:
    rootComponent: {{name: root, kind: {{group: x.io, version: v1, kind: Many}}}}
    childComponents:
{comps}
  optimizationInstructions:
    gangScheduling:
      podGroup: {{name: all}}
"""
    obj = {
        "apiVersion": "x.io/v1",
        "kind": "Many",
        "metadata": {"name": "m", "namespace": "ns", "uid": "u"},
        "spec": {"t": _pod("1"), "ids": [f"i{n}" for n in range(10)]},
    }
    with pytest.raises(GangError, match="more than 100 gang members"):
        plan_gangs(karta(text), obj)


def test_hostile_expressions_fail_with_the_field_named() -> None:
    text = NESTED.replace(
        "      podGroup:\n",
        '      expressions:\n        minMember: "[range(0; 1e9)] | length"\n      podGroup:\n',
    )
    with pytest.raises(WorkloadMapError):
        plan_gangs(karta(text), pyflow())


@pytest.mark.parametrize(
    "bad", [None, [], "text", {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "spec": []}]
)
def test_bad_workloads_are_errors_not_crashes(bad: Any) -> None:
    with pytest.raises(WorkloadMapError):
        plan_gangs(PYTORCH, bad)


def test_names_stay_dns_labels_and_distinct() -> None:
    long = "a" * 80
    assert len(object_name(long)) == MAX_NAME_LENGTH
    assert object_name(long) != object_name(long + "b")
    assert object_name("Train_Job") != object_name("train-job")
    assert object_name("train-job") == "train-job"


def test_without_a_uid_objects_carry_no_owner_and_say_so() -> None:
    job = pytorchjob()
    del job["metadata"]["uid"]
    rendered = render(plan_gangs(PYTORCH, job), "volcano")
    assert "ownerReferences" not in rendered.objects[0]["metadata"]
    assert "no metadata.uid" in rendered.notes[0]


def test_conflicting_owner_of_the_same_name_is_reported() -> None:
    plan = plan_gangs(PYTORCH, pytorchjob())
    rendered = render(plan, "volcano")
    other = copy.deepcopy(rendered.objects[0])
    other["metadata"]["ownerReferences"] = [
        {"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": "llama", "uid": "other", "controller": True}
    ]
    (message,) = conflicts(plan, rendered, [other])
    assert "already controlled by RayCluster/llama (uid other), not by PyTorchJob/llama" in message
    assert conflicts(plan, rendered, [rendered.objects[0]]) == []  # our own object is no conflict


def test_coscheduling_needs_at_least_one_pod() -> None:
    ksvc = {
        "apiVersion": "serving.knative.dev/v1",
        "kind": "Service",
        "metadata": {"name": "scale-zero", "namespace": "ns", "uid": "u"},
        "spec": {
            "template": {
                "metadata": {"annotations": {"autoscaling.knative.dev/min-scale": "0"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            }
        },
    }
    plan = plan_gangs(catalog("serving.knative.dev/v1", "Service"), ksvc)
    assert plan.gangs[0].min_member == 0
    rendered = render(plan, "coscheduling")
    assert rendered.objects == ()
    assert "minMember >= 1" in rendered.notes[0]
    assert render(plan, "workload-api").objects[1]["spec"]["schedulingPolicy"] == {"basic": {}}
