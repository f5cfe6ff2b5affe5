"""Each upstream catalog bug our definitions fix (upstream-spec 8 item 20, expressions quoted from
upstream-spec 4.2): the UPSTREAM expression evaluated on a lifecycle fixture gives the wrong
answer, ours the right one."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.catalog.lifecycle import LC, load_fixture
from tests.catalog.lifecycle import catalog_definition as ours
from workload_map.errors import ExpressionError
from workload_map.expr import compile_expression
from workload_map.model.definition import Karta
from workload_map.resolve import resolve
from workload_map.resolve.gangs import group_pod, has_gang_instructions


def fixture(slug: str, stage: str) -> dict[str, Any]:
    path = LC / slug / f"{stage}.yaml"
    if not path.is_file():
        pytest.skip(f"no lifecycle fixture {slug}/{stage} yet")
    obj: dict[str, Any] = load_fixture(path)["object"]
    return obj


def test_lws_group_replicas() -> None:
    slug = "leaderworkerset-x-k8s-io-leaderworkerset-v1"
    obj = fixture(slug, "running")
    upstream = compile_expression(".spec.leaderWorkerTemplate.size").all(obj)
    w = resolve(ours(slug), obj)
    leader = w.components["leader"].instances[0].desired_replicas
    group = w.components["group"].instances[0].desired_replicas
    assert upstream == [4] and upstream[0] != leader  # upstream: group 4 vs leader 2
    assert group == leader == obj["spec"]["replicas"]


def test_jobset_parallelism_null_safe() -> None:
    slug = "jobset-x-k8s-io-jobset-v1alpha2"
    obj = copy.deepcopy(fixture(slug, "running"))
    for rj in obj["spec"]["replicatedJobs"]:
        rj["template"]["spec"].pop("parallelism", None)  # defaulted to 1 by the Job API
    upstream = compile_expression(".spec.replicatedJobs[] | .replicas * .template.spec.parallelism")
    with pytest.raises(ExpressionError):
        upstream.all(obj)
    w = resolve(ours(slug), obj)
    got = {i.id: i.desired_replicas for i in w.components["replicatedjob"].instances}
    assert got == {rj["name"]: rj.get("replicas", 1) for rj in obj["spec"]["replicatedJobs"]}


def test_raycluster_worker_paths_null_safe() -> None:
    slug = "ray-io-raycluster-v1"
    obj = copy.deepcopy(fixture(slug, "running"))
    obj["spec"].pop("workerGroupSpecs", None)  # a head-only cluster is valid
    with pytest.raises(ExpressionError):
        compile_expression(".spec.workerGroupSpecs[].groupName").all(obj)
    w = resolve(ours(slug), obj)
    assert w.components["worker"].instances == ()


def _without_initializing(karta: Karta) -> Karta:
    data = karta.to_wire()
    data["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"].pop(
        "initializing", None
    )
    return Karta.model_validate(data)


@pytest.mark.parametrize("slug", ["ray-io-raycluster-v1", "serving-kserve-io-inferenceservice-v1beta1"])
def test_initializing_mapping_added(slug: str) -> None:
    """Upstream maps no Initializing for RayCluster and KServe: a starting workload is Undefined."""
    obj = fixture(slug, "initializing")
    upstream = resolve(_without_initializing(ours(slug)), obj)
    assert [p.value for p in upstream.status.phases] == ["Undefined"]
    assert "Initializing" in [p.value for p in resolve(ours(slug), obj).status.phases]


def test_deployment_degraded_mapping_added() -> None:
    slug = "apps-deployment-v1"
    obj = fixture(slug, "degraded")
    data = ours(slug).to_wire()
    data["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]["statusMappings"].pop("degraded")
    upstream = resolve(Karta.model_validate(data), obj)
    assert "Degraded" not in [p.value for p in upstream.status.phases]
    assert "Degraded" in [p.value for p in resolve(ours(slug), obj).status.phases]


# Upstream-spec 4.1 rows whose Gang column is "none".
UPSTREAM_NO_GANG = (
    "batch-cronjob-v1",
    "apps-deployment-v1",
    "apps-statefulset-v1",
    "core-pod-v1",
    "apps-nvidia-com-nimcache-v1alpha1",
)
GANG_ADDED = tuple(slug for slug in UPSTREAM_NO_GANG if has_gang_instructions(ours(slug)))


def _without_expressions(karta: Karta) -> Karta:
    """What KAI's Karta plugin reads (it ignores the native-parity ``expressions``)."""
    data = karta.to_wire()
    data["spec"]["optimizationInstructions"]["gangScheduling"].pop("expressions", None)
    return Karta.model_validate(data)


def _without_gang(karta: Karta) -> Karta:
    data = karta.to_wire()
    data["spec"]["optimizationInstructions"] = {}
    return Karta.model_validate(data)


def test_gang_added_where_upstream_has_none() -> None:
    """Of the types upstream leaves without gang rules, ours adds them for the bare Pod only;
    the others keep KAI's native grouping (the catalog files say why)."""
    assert GANG_ADDED == ("core-pod-v1",)


@pytest.mark.parametrize("slug", GANG_ADDED)
def test_gang_rules_added(slug: str) -> None:
    """Upstream's definition has no gang instructions, so KAI's Karta fallback builds no PodGroup
    and the default grouper (``pg-<owner name>-<owner uid>``, 1) applies; ours yields the group
    name and size the lifecycle fixture expects (for the bare Pod: 1, KAI's per-pod number in
    consumers.md 5.3)."""
    path = LC / slug / "running.yaml"
    data = load_fixture(path)
    obj, gangs = data["object"], data["expect"]["gangs"]
    assert gangs
    meta = obj["metadata"]
    upstream = _without_gang(ours(slug))
    assert not has_gang_instructions(upstream)
    for gang in gangs:
        plan = group_pod(upstream, obj, gang["pod"])
        default = ("default", f"pg-{meta['name']}-{meta['uid']}", 1)
        assert (plan.format, plan.name, plan.min_available) == default
        plan = group_pod(_without_expressions(ours(slug)), obj, gang["pod"])
        assert plan.format == "podGroups"
        assert plan.name == f"pg-{meta['uid']}-{gang['name_suffix']}"
        assert plan.min_available == gang["min_member"]
    if slug == "core-pod-v1":
        assert [(g["name_suffix"], g["min_member"]) for g in gangs] == [(meta["name"], 1)]
