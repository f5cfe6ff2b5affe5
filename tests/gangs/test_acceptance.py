"""Every gang object we render is accepted as it is: created on the test API server under the real
scheduler CRDs (Volcano, scheduler-plugins, KAI, Kueue from ``$WMAP_SHARED_DIR/crds``) and read
back unchanged (a field the CRD's structural schema does not know would be pruned, and fail the
comparison), then garbage-collected with its workload; Workload API objects (a group v1.20 does
not serve) are validated against Kubernetes' OpenAPI v3 documents instead.

The workloads are the catalog's lifecycle fixtures (``tests/catalog/lifecycles/*/created.yaml``,
each shaped as its framework's controller or user creates it), created first so the objects'
owner references carry their real uids.

Garbage collection: the test API server runs without a controller-manager (``shared/bin/README.md``),
so :func:`collect_garbage` plays kube's garbage collector for these objects by its rule (an object
whose owner references all point at absent owners is deleted). Before the workload is deleted, the
test checks what that rule relies on: each owner reference names the live workload exactly
(apiVersion, kind, name, uid), so the real collector would find it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.kube import KubeApiError, KubeTestClient
from tests.support.openapi_schema import openapi_dir, validate
from workload_map.catalog import get_definition
from workload_map.resolve.gang_plan import PlanOptions, plan_gangs
from workload_map.resolve.schedulers import SCHEDULERS, DisruptionMode, RenderOptions, render

LIFECYCLES = Path(__file__).parents[1] / "catalog" / "lifecycles"
FIXTURES = sorted(LIFECYCLES.glob("*/created.yaml"))
SERVED = ("kai", "volcano", "coscheduling", "kueue")


def _workload(path: Path, namespace: str) -> dict[str, Any]:
    obj: dict[str, Any] = copy.deepcopy(yaml.safe_load(path.read_text())["object"])
    meta = obj["metadata"]
    for key in (
        "uid",
        "resourceVersion",
        "creationTimestamp",
        "generation",
        "managedFields",
        "ownerReferences",
    ):
        meta.pop(key, None)
    meta["namespace"] = namespace
    obj.pop("status", None)
    return obj


def _subset(sent: Any, stored: Any, path: str = "$") -> list[str]:
    """Where ``stored`` lost or changed what was ``sent`` (defaults added by the CRD are fine)."""
    if isinstance(sent, Mapping):
        if not isinstance(stored, Mapping):
            return [f"{path}: stored {stored!r}"]
        out: list[str] = []
        for k, v in sent.items():
            if k not in stored:
                out.append(f"{path}.{k}: pruned")
            else:
                out.extend(_subset(v, stored[k], f"{path}.{k}"))
        return out
    if isinstance(sent, list):
        if not isinstance(stored, list) or len(stored) != len(sent):
            return [f"{path}: stored {stored!r}"]
        return [
            e
            for i, (a, b) in enumerate(zip(sent, stored, strict=True))
            for e in _subset(a, b, f"{path}[{i}]")
        ]
    return [] if sent == stored or str(sent) == str(stored) else [f"{path}: sent {sent!r}, stored {stored!r}"]


def collect_garbage(kube: KubeTestClient, objects: Sequence[Mapping[str, Any]]) -> list[str]:
    """kube's garbage-collector rule, for ``objects``: delete each whose owners are all gone
    (no object at the reference's apiVersion/kind/name, or one with another uid). Returns the
    names deleted."""
    deleted: list[str] = []
    for obj in objects:
        current = kube.get_obj(obj)
        refs = current["metadata"].get("ownerReferences") or []
        alive = False
        for ref in refs:
            plural, _ = kube.plural_for(ref["apiVersion"], ref["kind"])
            try:
                owner = kube.get(ref["apiVersion"], plural, ref["name"], current["metadata"]["namespace"])
            except KubeApiError as exc:
                if exc.status_code == 404:
                    continue
                raise
            alive = alive or owner["metadata"]["uid"] == ref["uid"]
        if refs and not alive:
            kube.delete_obj(current)
            deleted.append(current["metadata"]["name"])
    return deleted


@pytest.mark.cluster
@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.parent.name for p in FIXTURES])
def test_objects_are_accepted_by_the_real_crds_and_collected_with_their_workload(
    kube: KubeTestClient, fixture: Path
) -> None:
    namespace = kube.create_namespace("wmap-gang")
    obj = _workload(fixture, namespace)
    karta = get_definition(obj["apiVersion"], obj["kind"])
    assert karta is not None
    try:
        kube.plural_for(obj["apiVersion"], obj["kind"], wait=0)
    except LookupError:
        pytest.skip(f"the test API server serves no {obj['kind']} in {obj['apiVersion']}")
    workload = kube.create(obj)
    plan = plan_gangs(karta, workload, PlanOptions(queue="team-a", priority_class_name="high"))
    created: list[dict[str, Any]] = []
    for scheduler in SERVED:
        rendered = render(plan, scheduler, RenderOptions(priority_value={"high": 1000}.get))
        for sent in rendered.objects:
            stored = kube.create(sent)
            assert not _subset(sent, stored), (scheduler, sent["kind"], _subset(sent, stored))
            created.append(stored)
    # What the garbage collector relies on: every owner reference names the live workload.
    for stored in created:
        (ref,) = stored["metadata"]["ownerReferences"]
        assert (ref["apiVersion"], ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
            workload["apiVersion"],
            workload["kind"],
            workload["metadata"]["name"],
            workload["metadata"]["uid"],
            True,
        )
    assert collect_garbage(kube, created) == []  # the owner is alive: nothing goes
    # As kubectl deletes: in the background (batch/v1 Jobs default to orphaning their dependents).
    kube.request("DELETE", kube.path_of(workload), {"propagationPolicy": "Background"})
    assert sorted(collect_garbage(kube, created)) == sorted(o["metadata"]["name"] for o in created)
    for stored in created:
        plural, _ = kube.plural_for(stored["apiVersion"], stored["kind"])
        assert (
            kube.status_of(
                "GET",
                f"/apis/{stored['apiVersion']}/namespaces/{namespace}/{plural}/{stored['metadata']['name']}",
            )
            == 404
        )


@pytest.mark.corpus
@pytest.mark.parametrize("fixture", FIXTURES, ids=[p.parent.name for p in FIXTURES])
def test_workload_api_objects_match_the_upstream_openapi_schema(fixture: Path) -> None:
    if not openapi_dir().is_dir():
        pytest.skip(f"{openapi_dir()} not found")
    obj = _workload(fixture, "ml")
    obj["metadata"]["uid"] = "0b5e0c5e-2f4c-4a53-9d7e-0d2f0c2a9f11"
    karta = get_definition(obj["apiVersion"], obj["kind"])
    assert karta is not None
    plan = plan_gangs(karta, obj, PlanOptions(priority_class_name="high"))
    modes: tuple[DisruptionMode | None, ...] = (None, "all")
    for mode in modes:
        rendered = render(plan, "workload-api", RenderOptions(disruption_mode=mode))
        for sent in rendered.objects:
            assert validate(sent) == [], (sent["kind"], validate(sent))


def test_the_validator_refuses_what_the_api_server_would() -> None:
    if not openapi_dir().is_dir():
        pytest.skip(f"{openapi_dir()} not found")
    good: dict[str, Any] = {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": "ns"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}},
    }
    assert validate(good) == []
    bad = copy.deepcopy(good)
    bad["spec"]["schedulingPolicy"]["gang"] = {"minCount": 2**31, "extra": True}
    bad["spec"]["priority"] = "high"
    del bad["metadata"]["name"]
    bad["metadata"]["nam"] = "typo"
    assert sorted(validate(bad)) == [
        "$.metadata: unknown field 'nam'",
        "$.spec.priority: 'high' is not an integer",
        "$.spec.schedulingPolicy.gang.minCount: 2147483648 does not fit int32",
        "$.spec.schedulingPolicy.gang: unknown field 'extra'",
    ]
    assert validate({**good, "spec": {}}) == ["$.spec: missing required field 'schedulingPolicy'"]


def test_every_scheduler_is_checked() -> None:
    assert set(SERVED) | {"workload-api"} == set(SCHEDULERS)
