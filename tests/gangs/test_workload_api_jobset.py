"""JobSet under the Workload API, from the catalog definition alone: one PodGroup for the JobSet in
the default (AnyOrder) start-up, one PodGroup per ReplicatedJob when the definition's
``minSubGroup`` says one replicated job starts at a time (InOrder), as JobSet's own integration
does (kubernetes-sigs/jobset keps/969-WAS-integration, "Controller Integration" and "Sequenced
Startup"; the parity cases in operator-parity.yaml carry its asserted values). Every object is
validated against Kubernetes' OpenAPI documents (the test API server predates the API)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.resolve.defs import jobset_rj
from tests.support.openapi_schema import openapi_dir, validate
from workload_map.catalog import get_definition
from workload_map.resolve.gang_plan import PlanOptions, plan_gangs
from workload_map.resolve.schedulers import RenderOptions, WorkloadApiLimitError, render


def _jobset(order: str | None, jobs: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicatedJobs": jobs}
    if order is not None:
        spec["startupPolicy"] = {"startupPolicyOrder": order}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "ml", "uid": "0b5e0c5e-2f4c-4a53-9d7e-0d2f0c2a9f11"},
        "spec": spec,
    }


def _render(obj: dict[str, Any], **options: Any) -> Any:
    karta = get_definition(obj["apiVersion"], obj["kind"])
    assert karta is not None
    plan = plan_gangs(karta, obj, PlanOptions(priority_class_name="high"))
    return render(plan, "workload-api", RenderOptions(**options))


LEADER_WORKERS = [jobset_rj("leader", 1, 1, 1), jobset_rj("workers", 2, 3, 1)]


def test_in_order_start_up_gives_one_pod_group_per_replicated_job() -> None:
    rendered = _render(_jobset("InOrder", copy.deepcopy(LEADER_WORKERS)))
    workload, *pod_groups = rendered.objects
    assert [t["name"] for t in workload["spec"]["podGroupTemplates"]] == ["leader", "workers"]
    assert [(pg["metadata"]["name"], pg["spec"]["schedulingPolicy"]) for pg in pod_groups] == [
        ("js-leader", {"gang": {"minCount": 1}}),
        ("js-workers", {"gang": {"minCount": 6}}),
    ]
    assert [pg["spec"]["workloadRef"] for pg in pod_groups] == [
        {"workloadName": "js", "templateName": "leader"},
        {"workloadName": "js", "templateName": "workers"},
    ]
    assert {(c.instance_id, c.pod_group_name) for c in rendered.template_changes} == {
        ("leader", "js-leader"),
        ("workers", "js-workers"),
    }
    assert rendered.object_for("replicatedjob", "workers") == pod_groups[1]
    assert any("one of its 2 subgroups must be placed at a time" in n for n in rendered.notes)


def test_any_order_start_up_stays_one_pod_group_for_the_jobset() -> None:
    for order in (None, "AnyOrder"):
        rendered = _render(_jobset(order, copy.deepcopy(LEADER_WORKERS)))
        workload, pod_group = rendered.objects
        assert len(workload["spec"]["podGroupTemplates"]) == 1
        assert pod_group["spec"]["schedulingPolicy"] == {"gang": {"minCount": 7}}
        assert {c.pod_group_name for c in rendered.template_changes} == {pod_group["metadata"]["name"]}


@pytest.mark.corpus
@pytest.mark.parametrize("order", [None, "InOrder"])
@pytest.mark.parametrize("mode", [None, "all"])
def test_the_objects_match_the_upstream_openapi_schema(order: str | None, mode: str | None) -> None:
    if not openapi_dir().is_dir():
        pytest.skip(f"{openapi_dir()} not found")
    rendered = _render(_jobset(order, copy.deepcopy(LEADER_WORKERS)), disruption_mode=mode)
    assert rendered.objects
    for sent in rendered.objects:
        assert validate(sent) == [], (sent["kind"], validate(sent))


def test_more_replicated_jobs_than_the_api_allows_templates_is_an_error() -> None:
    jobs = [jobset_rj(f"rj-{i}", 1, 1, 1) for i in range(9)]
    with pytest.raises(WorkloadApiLimitError, match=r"JobSet/js: 9 pod groups, .* at most 8 templates"):
        _render(_jobset("InOrder", jobs))
    # in the default start-up the nine are one gang: one template
    assert len(_render(_jobset(None, jobs)).objects) == 2
