from __future__ import annotations

from typing import Any

import pytest

from tests.resolve.defs import JOBSET_KARTA, jobset, jobset_rj, karta, structure
from workload_map import resolve
from workload_map.errors import ResolveError
from workload_map.resolve.resources import (
    EMPTY_TOTALS,
    ResourceTotals,
    fragmented_totals,
    pod_spec_totals,
    sum_totals,
)

GI = 2**30


def c(
    name: str = "c",
    requests: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    restart: str | None = None,
    claims: list[str] | None = None,
) -> dict[str, Any]:
    res: dict[str, Any] = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    if claims is not None:
        res["claims"] = [{"name": n} for n in claims]
    out: dict[str, Any] = {"name": name, "image": "i", "resources": res}
    if restart:
        out["restartPolicy"] = restart
    return out


def test_containers_are_summed() -> None:
    t = pod_spec_totals(
        {"containers": [c(requests={"cpu": "1", "memory": "1Gi"}), c(requests={"cpu": "500m"})]}
    )
    assert (t.cpu_millis, t.memory_bytes, t.gpus) == (1500, GI, 0)


def test_requests_fall_back_to_limits_per_resource() -> None:
    t = pod_spec_totals(
        {"containers": [c(requests={"cpu": "1"}, limits={"cpu": "4", "memory": "2Gi", "nvidia.com/gpu": 2})]}
    )
    assert (t.cpu_millis, t.memory_bytes, t.gpus) == (1000, 2 * GI, 2)


def test_largest_init_container_wins_when_bigger() -> None:
    spec = {
        "initContainers": [c(requests={"cpu": "4"}), c(requests={"cpu": "2", "memory": "8Gi"})],
        "containers": [c(requests={"cpu": "1", "memory": "1Gi"})],
    }
    t = pod_spec_totals(spec)
    assert t.cpu_millis == 4000  # max(init 4, regular 1)
    assert t.memory_bytes == 8 * GI


def test_sidecars_accumulate_and_add_to_regular_containers() -> None:
    spec = {
        "initContainers": [
            c("sidecar1", requests={"cpu": "1"}, restart="Always"),
            c("init", requests={"cpu": "2"}),  # needs 2 + sidecar1 = 3
            c("sidecar2", requests={"cpu": "500m"}, restart="Always"),
        ],
        "containers": [c(requests={"cpu": "1"})],
    }
    # regular + all sidecars = 1 + 1 + 0.5 = 2.5 ; init peak = 3 -> 3
    assert pod_spec_totals(spec).cpu_millis == 3000
    spec["containers"] = [c(requests={"cpu": "3"})]
    # 3 + 1.5 = 4.5 > 3
    assert pod_spec_totals(spec).cpu_millis == 4500


def test_sidecar_started_after_init_does_not_count_for_it() -> None:
    spec = {
        "initContainers": [
            c("init", requests={"cpu": "2"}),
            c("sc", requests={"cpu": "5"}, restart="Always"),
        ],
        "containers": [c(requests={"cpu": "1"})],
    }
    assert pod_spec_totals(spec).cpu_millis == 6000  # 1 + 5 ; init 2 alone


def test_pod_level_resources_replace_cpu_and_memory_only() -> None:
    spec = {
        "resources": {"requests": {"cpu": "3"}, "limits": {"memory": "4Gi"}},
        "containers": [c(requests={"cpu": "1", "memory": "1Gi"}, limits={"nvidia.com/gpu": 1})],
    }
    t = pod_spec_totals(spec)
    assert (t.cpu_millis, t.memory_bytes, t.gpus) == (3000, 4 * GI, 1)


def test_overhead_is_added() -> None:
    spec = {"overhead": {"cpu": "250m", "memory": "120Mi"}, "containers": [c(requests={"cpu": "1"})]}
    t = pod_spec_totals(spec)
    assert (t.cpu_millis, t.memory_bytes) == (1250, 120 * 2**20)


def test_gpu_kinds() -> None:
    spec = {
        "containers": [
            c(limits={"nvidia.com/gpu": "2"}),
            c(limits={"amd.com/gpu": "1"}),
            c(limits={"nvidia.com/mig-1g.5gb": "3"}),
            c(limits={"gpu.intel.com/i915": "1"}),
        ]
    }
    t = pod_spec_totals(spec)
    assert t.gpus == 3  # MIG slices and other vendors are not whole GPUs here
    assert dict(t.extended) == {
        "nvidia.com/gpu": 2,
        "amd.com/gpu": 1,
        "nvidia.com/mig-1g.5gb": 3,
        "gpu.intel.com/i915": 1,
    }


def test_dra_claims_by_template_then_claim_name() -> None:
    spec = {
        "resourceClaims": [
            {"name": "gpu", "resourceClaimTemplateName": "single-gpu"},
            {"name": "shared", "resourceClaimName": "shared-nic"},
            {"name": "bare"},
        ],
        "containers": [c(claims=["gpu", "shared"])],
    }
    assert dict(pod_spec_totals(spec).claims) == {"single-gpu": 1, "shared-nic": 1, "bare": 1}


def test_container_claims_without_pod_level_entries() -> None:
    assert dict(pod_spec_totals({"containers": [c(claims=["x"])]}).claims) == {"x": 1}


def test_ephemeral_storage_and_hugepages_in_extended() -> None:
    t = pod_spec_totals({"containers": [c(requests={"ephemeral-storage": "1Gi", "hugepages-2Mi": "4Mi"})]})
    assert dict(t.extended) == {"ephemeral-storage": GI, "hugepages-2Mi": 4 * 2**20}
    assert t.gpus == 0


def test_rounding_happens_per_pod() -> None:
    t = pod_spec_totals({"containers": [c(requests={"cpu": "0.0003"}), c(requests={"cpu": "0.0003"})]})
    assert t.cpu_millis == 1  # 0.6m exact, rounded up once
    assert t.times(3).cpu_millis == 3


def test_fragmented_sum_then_cr_level_fallback() -> None:
    t = fragmented_totals(
        [c(requests={"cpu": "1"})], c(requests={"cpu": "2"}, limits={"nvidia.com/gpu": 1}), None, None
    )
    assert (t.cpu_millis, t.gpus) == (3000, 1)
    t = fragmented_totals(None, None, {"requests": {"cpu": "6"}, "limits": {"nvidia.com/gpu": "2"}}, None)
    assert (t.cpu_millis, t.gpus) == (6000, 2)
    t = fragmented_totals(None, None, None, [{"name": "g", "resourceClaimTemplateName": "tpl"}])
    assert dict(t.claims) == {"tpl": 1}


def test_totals_arithmetic() -> None:
    a = ResourceTotals(cpu_millis=1, memory_bytes=2, gpus=1, extended={"nvidia.com/gpu": 1}, claims={"x": 1})
    b = ResourceTotals(cpu_millis=10, extended={"amd.com/gpu": 2}, gpus=2)
    s = a + b
    assert (s.cpu_millis, s.memory_bytes, s.gpus) == (11, 2, 3)
    assert dict(s.extended) == {"nvidia.com/gpu": 1, "amd.com/gpu": 2}
    assert a.times(0) == EMPTY_TOTALS
    assert sum_totals([a, a, a]).gpus == 3
    assert s.to_dict()["cpuMillis"] == 11


def test_garbage_in_resources_is_ignored_or_typed_error() -> None:
    assert pod_spec_totals({"containers": "nope", "initContainers": [1, None]}) == EMPTY_TOTALS
    with pytest.raises(ResolveError):
        pod_spec_totals({"containers": [c(requests={"cpu": "lots"})]})


# --- through resolve -------------------------------------------------------------------------


def test_seed_jobset_totals_12_gpus() -> None:
    w = resolve(karta(JOBSET_KARTA), jobset())
    rj = w.components["replicatedjob"]
    assert [i.id for i in rj.instances] == ["leader", "workers"]
    assert [i.desired_replicas for i in rj.instances] == [1, 2]
    assert [i.pod_resources.gpus for i in rj.instances] == [4, 4]
    assert [i.resources.gpus for i in rj.instances] == [4, 8]
    assert rj.resources.gpus == 12
    assert w.resources.gpus == 12
    assert w.resources.cpu_millis == 3 * 4000
    assert w.resources.memory_bytes == 3 * 16 * GI
    assert w.desired_pods == 3


def test_jobset_pods_are_replicas_times_parallelism() -> None:
    obj = jobset()
    obj["spec"]["replicatedJobs"] = [jobset_rj("master", 1, 1, 0), jobset_rj("worker", 3, 2, 8)]
    w = resolve(karta(JOBSET_KARTA), obj)
    assert w.components["replicatedjob"].desired_pods == 7
    assert w.resources.gpus == 48


def test_desired_replicas_fall_back_to_min_then_one() -> None:
    k = structure(
        {"name": "root", "kind": {"group": "x", "version": "v1", "kind": "X"}},
        {
            "name": "a",
            "ownerRef": "root",
            "specDefinition": {"podSpecPath": ".spec.a"},
            "scaleDefinition": {"minReplicasPath": ".spec.amin", "maxReplicasPath": ".spec.amax"},
        },
        {"name": "b", "ownerRef": "root", "specDefinition": {"podSpecPath": ".spec.b"}},
    )
    spec = {"containers": [c(limits={"nvidia.com/gpu": 1})]}
    w = resolve(k, {"spec": {"a": spec, "b": spec, "amin": 3, "amax": 9}})
    assert w.components["a"].resources.gpus == 3
    assert w.components["b"].resources.gpus == 1
    assert w.resources.gpus == 4


def test_grouping_components_do_not_count() -> None:
    k = structure(
        {
            "name": "root",
            "kind": {"group": "x", "version": "v1", "kind": "X"},
            "scaleDefinition": {"replicasPath": "5"},
        },
        {"name": "a", "ownerRef": "root", "specDefinition": {"podSpecPath": ".spec.a"}},
    )
    w = resolve(k, {"spec": {"a": {"containers": [c(requests={"cpu": "1"})]}}})
    assert w.components["root"].resources == EMPTY_TOTALS
    assert w.components["root"].desired_pods is None
    assert w.resources.cpu_millis == 1000


def test_bad_quantity_names_component_and_instance() -> None:
    obj = jobset()
    obj["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["containers"][0]["resources"][
        "requests"
    ]["cpu"] = "four"
    with pytest.raises(
        ResolveError, match=r"component \"replicatedjob\", instance 'workers' resources: .*four"
    ):
        resolve(karta(JOBSET_KARTA), obj)
