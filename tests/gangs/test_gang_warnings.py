"""``workload_map.live.gang_warnings``: what live ``wmap gang`` and ``GET .../gangs`` warn about,
from the reads the caller hands it (CLI: its client; server: its client behind the caller's RBAC):
one warning per kind not served, one per unreadable object, other owners, and a read bound."""

from __future__ import annotations

from typing import Any

from tests.resolve.defs import jobset
from workload_map.catalog import get_definition
from workload_map.errors import ApiError, ForbiddenError
from workload_map.live import GangAnswer, NotServedError, gang_warnings
from workload_map.resolve.gang_plan import plan_gangs
from workload_map.resolve.schedulers import Rendered, render


def _answer(objects: list[dict[str, Any]] | None = None) -> GangAnswer:
    obj = jobset()
    karta = get_definition(obj["apiVersion"], obj["kind"])
    assert karta is not None
    plan = plan_gangs(karta, obj)
    rendered = render(plan, "volcano")
    if objects is not None:
        rendered = Rendered("volcano", tuple(objects))
    entry: Any = None  # gang_warnings reads the plan and the objects only
    return GangAnswer(entry, obj, plan, rendered)


def _pod_group(name: str, kind: str = "PodGroup") -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "ml"},
    }


def test_one_warning_per_kind_not_served_and_per_unreadable_object() -> None:
    answer = _answer([_pod_group("a"), _pod_group("b"), _pod_group("q", "Queue"), _pod_group("c")])
    calls: list[str] = []

    def read(api_version: str, kind: str, namespace: str, name: str) -> Any:
        calls.append(name)
        if kind == "Queue":
            raise NotServedError(kind)
        if name == "a":
            raise ForbiddenError(403, "Forbidden", "no")
        if name == "b":
            raise ApiError(500, "InternalError", "etcd is down")
        return None

    warnings = gang_warnings(answer, read)
    assert calls == ["a", "b", "q", "c"]
    assert warnings == [
        "not allowed to read PodGroup a: its owner was not checked",
        "could not read PodGroup b: etcd is down",
        "Queue (scheduling.volcano.sh/v1beta1) is not served by this cluster: install the scheduler's CRD "
        "before creating these objects",
    ]


def test_an_object_another_controller_holds_is_named_with_both_owners() -> None:
    answer = _answer()
    (pg,) = answer.rendered.objects
    held = {
        **pg,
        "metadata": {
            **pg["metadata"],
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": "other", "uid": "u2", "controller": True}
            ],
        },
    }
    warnings = gang_warnings(answer, lambda *_: held)
    assert warnings == [
        f"PodGroup ml/{pg['metadata']['name']} (scheduling.volcano.sh/v1beta1) is already controlled by "
        "Job/other (uid u2), not by JobSet/train: rename one of the workloads"
    ]
    assert gang_warnings(answer, lambda *_: pg) == []  # ours (same uid): no warning


def test_reads_stop_at_the_bound_and_say_how_many_were_left() -> None:
    answer = _answer([_pod_group(f"pg-{i}") for i in range(1000)])
    calls: list[str] = []

    def read(api_version: str, kind: str, namespace: str, name: str) -> Any:
        calls.append(name)
        return None

    assert gang_warnings(answer, read, max_reads=10) == [
        "990 more objects were not checked for another owner (at most 10 are read)"
    ]
    assert len(calls) == 10
