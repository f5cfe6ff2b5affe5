"""GPUs requested through DRA resource claims count as GPUs, as ``nvidia.com/gpu`` does (issue 24).

The objects are shaped as NVIDIA's DRA driver documents them (NVIDIA/k8s-dra-driver-gpu,
``demo/specs/quickstart/{v1,v1beta1}/gpu-test*.yaml``, ``gpu-test-count.yaml`` and the
DeviceClasses of ``deployments/helm/dra-driver-nvidia-gpu/templates``): device class
``gpu.nvidia.com`` (a whole GPU; its v1 DeviceClass maps ``nvidia.com/gpu``), ``mig.nvidia.com``
(MIG slices), ``vfio.gpu.nvidia.com``; templates in the ``v1beta1`` shape (``deviceClassName`` on
the request) and the ``v1beta2``/``v1`` shape (``exactly``), a shared ResourceClaim, ``count``,
``allocationMode: All`` and ``firstAvailable`` (Kubernetes' resource.k8s.io types).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.resolve.builders import RJ_LABEL, jobset_definition
from workload_map.catalog import get_definition
from workload_map.errors import ResolveError
from workload_map.resolve import resolve
from workload_map.resolve.dra import (
    claim_devices,
    claim_essentials,
    claim_to_cache,
    objects_lookup,
    pod_claim_refs,
)
from workload_map.resolve.placement import placement_needs

Obj = dict[str, Any]
NS = "gpu-test1"


def template(name: str, *requests: Obj, version: str = "v1", ns: str = NS) -> Obj:
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"spec": {"devices": {"requests": list(requests)}}},
    }


def claim(name: str, *requests: Obj, version: str = "v1", ns: str = NS, status: Obj | None = None) -> Obj:
    out: Obj = {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"devices": {"requests": list(requests)}},
    }
    if status is not None:
        out["status"] = status
    return out


def exactly(name: str, device_class: str, **extra: Any) -> Obj:
    """A v1beta2/v1 request."""
    return {"name": name, "exactly": {"deviceClassName": device_class, **extra}}


def flat(name: str, device_class: str, **extra: Any) -> Obj:
    """A v1beta1 request."""
    return {"name": name, "deviceClassName": device_class, **extra}


def pod(name: str, claims: list[Obj], containers: list[Obj] | None = None, ns: str = NS) -> Obj:
    ctrs = containers or [
        {
            "name": "ctr",
            "image": "ubuntu:22.04",
            "resources": {"claims": [{"name": c["name"]} for c in claims]},
        }
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "containers": ctrs,
            "resourceClaims": claims,
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }


def gpus(obj: Obj, objects: list[Obj]) -> int:
    definition = get_definition(obj["apiVersion"], obj["kind"])
    return resolve(definition, obj, claims=objects_lookup(objects)).resources.gpus


# --- one claim: what it asks for ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "devices"),
    [
        # gpu-test1 (v1): one GPU per pod
        (template("single-gpu", exactly("gpu", "gpu.nvidia.com")), {"gpu.nvidia.com": 1}),
        # gpu-test1 (v1beta1)
        (template("single-gpu", flat("gpu", "gpu.nvidia.com"), version="v1beta1"), {"gpu.nvidia.com": 1}),
        # gpu-test-count (v1beta1): count 2
        (template("double-gpu", flat("gpu", "gpu.nvidia.com", count=2), version="v1beta1"),
         {"gpu.nvidia.com": 2}),
        # v1beta2 has v1's shape
        (template("double-gpu", exactly("gpu", "gpu.nvidia.com", count=2), version="v1beta2"),
         {"gpu.nvidia.com": 2}),
        # gpu-test5: two requests of the GPU class
        (template("multiple-gpus", exactly("ts-gpu", "gpu.nvidia.com"), exactly("mps-gpu", "gpu.nvidia.com")),
         {"gpu.nvidia.com": 2}),
        # gpu-test4: four MIG slices of one GPU
        (template("mig-devices", *(exactly(f"mig-{i}", "mig.nvidia.com") for i in range(4))),
         {"mig.nvidia.com": 4}),
        # allocationMode All before allocation: at least one device
        (template("all", exactly("gpu", "gpu.nvidia.com", allocationMode="All")), {"gpu.nvidia.com": 1}),
        # firstAvailable: the first (preferred) subrequest
        (template("pick", {"name": "gpu", "firstAvailable": [
            {"name": "big", "deviceClassName": "gpu.nvidia.com", "count": 2},
            {"name": "small", "deviceClassName": "mig.nvidia.com"}]}), {"gpu.nvidia.com": 2}),
        # adminAccess: monitoring access, no device of its own
        (template("monitor", exactly("gpu", "gpu.nvidia.com", adminAccess=True)), {}),
    ],
)  # fmt: skip
def test_claim_devices(obj: Obj, devices: dict[str, int]) -> None:
    assert claim_devices(obj) == devices


def test_an_allocated_claim_with_mode_all_counts_its_allocated_devices() -> None:
    results = [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-a", "device": f"gpu-{i}"}
        for i in range(8)
    ]
    results.append({"request": "other", "driver": "gpu.nvidia.com", "pool": "node-a", "device": "gpu-9"})
    status = {"allocation": {"devices": {"results": results}}}
    obj = claim("all-gpus", exactly("gpu", "gpu.nvidia.com", allocationMode="All"), status=status)
    assert claim_devices(obj) == {"gpu.nvidia.com": 8}


def test_what_a_cache_keeps_of_a_claim_counts_the_same() -> None:
    """``claim_essentials`` (what ``wmap serve`` and the exporter keep of each listed claim, whose
    list items carry no kind) counts what the whole object counts, refusals included."""
    results = [
        {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "a", "device": f"gpu-{i}"} for i in range(4)
    ]
    allocated = claim(
        "all",
        exactly("gpu", "gpu.nvidia.com", allocationMode="All"),
        status={"allocation": {"devices": {"results": results}}, "reservedFor": [{"name": "p"}]},
    )
    objects = [
        template("single-gpu", flat("gpu", "gpu.nvidia.com", count=2), version="v1beta1"),
        template("pick", {"name": "gpu", "firstAvailable": [
            {"name": "big", "deviceClassName": "gpu.nvidia.com"}]}),
        claim("shared", exactly("gpu", "gpu.nvidia.com", count=3)),
        allocated,
    ]  # fmt: skip
    for obj in objects:
        item = copy.deepcopy(obj)
        kind = item.pop("kind")
        item["metadata"].update(uid="u1", resourceVersion="7", labels={"a": "b"}, managedFields=[{}])
        kept = claim_essentials(item, kind)
        assert claim_devices(kept) == claim_devices(obj) != {}
        assert kept["metadata"] == {
            "name": obj["metadata"]["name"],
            "namespace": NS,
            "uid": "u1",
            "resourceVersion": "7",
        }
    assert "reservedFor" not in claim_essentials(allocated, "ResourceClaim")["status"]
    too_many = template("big", *(exactly(f"r{i}", "gpu.nvidia.com") for i in range(100)))
    kept = claim_essentials(too_many, "ResourceClaimTemplate")
    assert len(kept["spec"]["spec"]["devices"]["requests"]) == 33
    with pytest.raises(ResolveError, match="33 device requests, at most 32"):
        claim_devices(kept)
    assert claim_devices(claim_essentials({"metadata": {"name": "empty"}}, "ResourceClaim")) == {}


def test_a_cache_leaves_out_the_claims_made_for_one_pod() -> None:
    """The resourceclaim controller makes each pod's claim from its template with the pod as
    controller (Kubernetes' pkg/controller/resourceclaim): no pod template names it."""
    made = claim("train-0-gpu-x7k2p", exactly("gpu", "gpu.nvidia.com"))
    made["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "train-0", "uid": "1", "controller": True}
    ]
    assert claim_to_cache(made, "ResourceClaim") is None
    shared = claim("shared", exactly("gpu", "gpu.nvidia.com"))
    shared["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "name": "t",
            "uid": "2",
            "controller": True,
        }
    ]
    assert claim_to_cache(shared, "ResourceClaim") == claim_essentials(shared, "ResourceClaim")
    assert (
        claim_to_cache(template("t", exactly("gpu", "gpu.nvidia.com")), "ResourceClaimTemplate") is not None
    )


def test_bad_claims_are_errors_naming_the_object() -> None:
    too_many = template("big", *(exactly(f"r{i}", "gpu.nvidia.com") for i in range(33)))
    with pytest.raises(ResolveError, match='ResourceClaimTemplate "big": 33 device requests, at most 32'):
        claim_devices(too_many)
    bad = template("bad", {"name": "gpu", "firstAvailable": []})
    with pytest.raises(ResolveError, match=r'"bad": devices.requests\[0\].firstAvailable'):
        claim_devices(bad)
    odd = template("odd", exactly("gpu", "gpu.nvidia.com", count="two"))  # not an integer: the default
    assert claim_devices(odd) == {"gpu.nvidia.com": 1}


def test_pod_claim_references_both_forms() -> None:
    refs = pod_claim_refs(
        [
            {"name": "a", "resourceClaimTemplateName": "t"},
            {"name": "b", "resourceClaimName": "c"},
            {"name": "old", "source": {"resourceClaimTemplateName": "t2"}},  # before Kubernetes 1.31
            {"name": "none"},
        ]
    )
    assert refs == [("ResourceClaimTemplate", "t"), ("ResourceClaim", "c"), ("ResourceClaimTemplate", "t2")]


# --- through the resolver: totals, gangs, placement -------------------------------------------------


def test_a_pod_with_a_gpu_template_has_a_gpu() -> None:
    tpl = template("single-gpu", exactly("gpu", "gpu.nvidia.com"))
    p = pod("pod1", [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}])
    workload = resolve(get_definition("v1", "Pod"), p, claims=objects_lookup([tpl]))
    assert workload.resources.gpus == 1
    assert dict(workload.resources.devices) == {"gpu.nvidia.com": 1}
    assert dict(workload.resources.claims) == {"single-gpu": 1}
    # without the claims the resolver names the claim but knows no device
    assert resolve(get_definition("v1", "Pod"), p).resources.gpus == 0


def test_containers_sharing_one_claim_share_its_gpu() -> None:
    """gpu-test2: two containers name one claim from a single-GPU template: one GPU."""
    tpl = template("single-gpu", exactly("gpu", "gpu.nvidia.com"))
    ctrs = [
        {"name": f"ctr{i}", "image": "x", "resources": {"claims": [{"name": "shared-gpu"}]}} for i in range(2)
    ]
    p = pod("pod", [{"name": "shared-gpu", "resourceClaimTemplateName": "single-gpu"}], ctrs)
    assert gpus(p, [tpl]) == 1


def test_a_shared_resource_claim_is_counted_once() -> None:
    """gpu-test3: pods naming one ResourceClaim share its GPU; a Deployment of 3 such pods asks
    for that one GPU, not three (it is in the totals once, not in each pod's requests)."""
    shared = claim("single-gpu", exactly("gpu", "gpu.nvidia.com"))
    p = pod("pod1", [{"name": "shared-gpu", "resourceClaimName": "single-gpu"}])
    assert gpus(p, [shared]) == 1
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {"replicas": 3, "template": {"metadata": {"labels": {"app": "web"}}, "spec": p["spec"]}},
    }
    workload = resolve(get_definition("apps/v1", "Deployment"), dep, claims=objects_lookup([shared]))
    assert workload.resources.gpus == 1
    inst = workload.components["deployment"].instances[0]
    assert inst.pod_resources.gpus == 0 and inst.resources.gpus == 1


def test_mig_slices_are_devices_not_gpus() -> None:
    """gpu-test4: a Deployment of 4 pods, each with four MIG devices of one GPU."""
    tpl = template("mig-devices", *(exactly(f"mig-{i}", "mig.nvidia.com") for i in range(4)), ns="gpu-test4")
    spec = pod("p", [{"name": "mig-devices", "resourceClaimTemplateName": "mig-devices"}], ns="gpu-test4")[
        "spec"
    ]
    dep = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "pod", "namespace": "gpu-test4"},
        "spec": {"replicas": 4, "template": {"metadata": {"labels": {"app": "pod"}}, "spec": spec}},
    }
    workload = resolve(get_definition("apps/v1", "Deployment"), dep, claims=objects_lookup([tpl]))
    assert workload.resources.gpus == 0 and dict(workload.resources.devices) == {"mig.nvidia.com": 16}


def test_a_template_in_another_namespace_is_not_the_one() -> None:
    tpl = template("single-gpu", exactly("gpu", "gpu.nvidia.com"), ns="elsewhere")
    p = pod("pod1", [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}])
    assert gpus(p, [tpl]) == 0


def _dra_jobset() -> tuple[Obj, Obj]:
    tpl = template("two-gpus", exactly("gpu", "gpu.nvidia.com", count=2), ns="ml")
    spec = {
        "containers": [
            {"name": "c", "image": "x", "resources": {"requests": {"cpu": "4"}, "claims": [{"name": "g"}]}}
        ],
        "resourceClaims": [{"name": "g", "resourceClaimTemplateName": "two-gpus"}],
    }
    obj = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js", "namespace": "ml", "uid": "u"},
        "spec": {"replicatedJobs": [{"name": "workers", "replicas": 3,
                                     "template": {"spec": {"parallelism": 2, "template": {"spec": spec}}}}]},
    }  # fmt: skip
    return obj, tpl


def test_gangs_and_placement_count_dra_gpus_as_nvidia_gpu() -> None:
    """The same JobSet with 2 GPUs per pod through a claim template and through nvidia.com/gpu:
    totals, per-pod requests and the gang's minimum resources agree on the GPUs."""
    member = {"componentName": "replicatedjob", "groupByKeyPaths": [f'.metadata.labels["{RJ_LABEL}"]']}
    gang = {"podGroups": [{"name": "job", "members": [member]}]}
    definition = jobset_definition(gang=gang)
    obj, tpl = _dra_jobset()
    classic = copy.deepcopy(obj)
    pod_spec = classic["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod_spec.pop("resourceClaims")
    pod_spec["containers"][0]["resources"] = {"requests": {"cpu": "4"}, "limits": {"nvidia.com/gpu": 2}}

    dra = placement_needs(definition, obj, claims=objects_lookup([tpl]))
    plain = placement_needs(definition, classic)
    assert dra.desired_total.gpus == plain.desired_total.gpus == 12
    assert (
        [i.pod_requests.gpus for i in dra.instances] == [i.pod_requests.gpus for i in plain.instances] == [2]
    )
    assert [g.min_resources.gpus for g in dra.gangs] == [g.min_resources.gpus for g in plain.gangs] == [12]
    assert dra.to_dict()["totals"]["desired"]["devices"] == {"gpu.nvidia.com": 12}
    # unknown claims: named, not counted
    assert placement_needs(definition, obj).desired_total.gpus == 0


def test_the_gang_plan_counts_dra_gpus_in_its_minimum_resources() -> None:
    """wmap gang's plan (resolve.gang_plan): the DRA JobSet's gang needs the GPUs the
    nvidia.com/gpu one does; its devices are kept by class, and a replica split divides them."""
    from workload_map.resolve.gang_plan import plan_gangs
    from workload_map.resolve.gangs import divided

    member = {"componentName": "replicatedjob", "groupByKeyPaths": [f'.metadata.labels["{RJ_LABEL}"]']}
    definition = jobset_definition(gang={"podGroups": [{"name": "job", "members": [member]}]})
    obj, tpl = _dra_jobset()
    classic = copy.deepcopy(obj)
    pod_spec = classic["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod_spec.pop("resourceClaims")
    pod_spec["containers"][0]["resources"] = {"requests": {"cpu": "4"}, "limits": {"nvidia.com/gpu": 2}}

    dra = plan_gangs(definition, obj, claims=objects_lookup([tpl]))
    plain = plan_gangs(definition, classic)
    assert [g.min_resources.gpus for g in dra.gangs] == [g.min_resources.gpus for g in plain.gangs]
    assert sum(g.min_resources.gpus for g in dra.gangs) == 12
    assert [m.pod_requests.gpus for g in dra.gangs for m in g.members] == [2] * len(dra.gangs)
    assert sum(g.min_resources.devices["gpu.nvidia.com"] for g in dra.gangs) == 12
    # without the template the claim is named, its GPUs unknown
    assert sum(g.min_resources.gpus for g in plan_gangs(definition, obj).gangs) == 0
    first = dra.gangs[0].min_resources
    assert divided(first, 2).devices == {"gpu.nvidia.com": first.devices["gpu.nvidia.com"] // 2}
