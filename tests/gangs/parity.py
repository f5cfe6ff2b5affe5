"""Running an operator-parity case: the workload through its catalog definition, the gang plan
rendered for the case's scheduler, and the facts the operator's test asserts read back from what
we render (``facts``). Shared by the parity test and the docs' per-source counts.

A case (``operator-parity.yaml``): ``source`` (repository, file and test), ``operator``,
``scheduler``, ``workload``, optional ``options`` (what cluster configuration decides: a queue,
the runtime's timeout...), optional ``component`` (whose pod template the pod facts are about),
``expect`` (the asserted values only) and, when we differ, ``deviation`` (``got``: our values for
the keys that differ, ``reason``: why we chose differently).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from workload_map.catalog import get_definition
from workload_map.errors import WorkloadMapError
from workload_map.resolve.gang_plan import PlanOptions, plan_gangs
from workload_map.resolve.quantity import parse_quantity
from workload_map.resolve.schedulers import Rendered, RenderOptions, render

DATA = Path(__file__).with_name("operator-parity.yaml")

#: Keys read from the scheduler's first gang object's ``spec``.
SPEC_KEYS = (
    "minMember",
    "minResources",
    "queue",
    "priorityClassName",
    "scheduleTimeoutSeconds",
    "networkTopology",
    "minTaskMember",
    "subGroupPolicy",
    "queueName",
)
POD_KEYS = ("podAnnotations", "podLabels", "schedulerName", "schedulingGroup")


def load_cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = yaml.safe_load(DATA.read_text())["cases"]
    return cases


def run(case: Mapping[str, Any]) -> tuple[Rendered | None, str | None]:
    """What we render for the case, or the error we raise."""
    obj = case["workload"]
    karta = get_definition(obj["apiVersion"], obj["kind"])
    assert karta is not None, f"no catalog definition for {obj['apiVersion']} {obj['kind']}"
    opts = case.get("options") or {}
    try:
        plan = plan_gangs(
            karta,
            obj,
            PlanOptions(
                queue=opts.get("queue"),
                priority_class_name=opts.get("priorityClass"),
                schedule_timeout_seconds=opts.get("scheduleTimeout"),
            ),
        )
        values = opts.get("priorityValues") or {}
        rendered = render(
            plan,
            case["scheduler"],
            RenderOptions(scheduler_name=opts.get("schedulerName"), priority_value=values.get),
        )
    except WorkloadMapError as exc:
        return None, str(exc)
    return rendered, None


def _first(rendered: Rendered, kind: str) -> dict[str, Any] | None:
    return next((o for o in rendered.objects if o.get("kind") == kind), None)


def facts(case: Mapping[str, Any], rendered: Rendered | None, error: str | None) -> dict[str, Any]:
    """Our values for the keys the case asserts (``error``: the error text, matched by substring)."""
    expect = case["expect"]
    out: dict[str, Any] = {}
    if "error" in expect:
        out["error"] = error
        return out
    if rendered is None:
        return {"error": error}
    assert rendered is not None, f"{case['source']}: {error}"
    main = {
        "kai": "PodGroup",
        "volcano": "PodGroup",
        "coscheduling": "PodGroup",
        "workload-api": "PodGroup",
        "kueue": "Workload",
    }[case["scheduler"]]
    obj = _first(rendered, main)
    spec = (obj or {}).get("spec") or {}
    for key in expect:
        if key in SPEC_KEYS:
            out[key] = spec.get(key)
        elif key == "name":
            out[key] = (obj or {}).get("metadata", {}).get("name")
        elif key == "annotations":
            out[key] = {k: (obj or {}).get("metadata", {}).get("annotations", {}).get(k) for k in expect[key]}
        elif key == "objects":
            out[key] = len(rendered.objects)
        elif key == "ownerKind":
            refs = (obj or {}).get("metadata", {}).get("ownerReferences") or [{}]
            out[key] = refs[0].get("kind")
        elif key == "minCount":
            gang = (spec.get("schedulingPolicy") or {}).get("gang") or {}
            out[key] = gang.get("minCount")
        elif key == "templates":
            workload = _first(rendered, "Workload") or {}
            out[key] = [
                {"name": t["name"], "minCount": (t["schedulingPolicy"].get("gang") or {}).get("minCount")}
                for t in workload.get("spec", {}).get("podGroupTemplates", [])
            ]
        elif key == "podGroupMinCounts":
            out[key] = [
                ((o.get("spec") or {}).get("schedulingPolicy", {}).get("gang") or {}).get("minCount")
                for o in rendered.objects
                if o.get("kind") == "PodGroup"
            ]
        elif key == "resourceClaims":
            out[key] = spec.get("resourceClaims")
        elif key == "topology":
            out[key] = (spec.get("schedulingConstraints") or {}).get("topology")
        elif key == "podSets":
            out[key] = [
                {k: ps[k] for k in ("name", "count", "minCount") if k in ps} for ps in spec.get("podSets", [])
            ]
        elif key in POD_KEYS:
            change = next(
                (c for c in rendered.template_changes if c.component == case.get("component")), None
            )
            assert change is not None, f"{case['source']}: no pod template change for {case.get('component')}"
            wanted = expect[key]
            if key == "podAnnotations":
                out[key] = {k: change.annotations.get(k) for k in wanted}
            elif key == "podLabels":
                out[key] = {k: change.labels.get(k) for k in wanted}
            elif key == "schedulerName":
                out[key] = change.scheduler_name
            else:
                out[key] = {"podGroupName": change.pod_group_name}
        else:
            raise AssertionError(f"{case['source']}: unknown expect key {key!r}")
    return out


def _norm(key: str, value: Any) -> Any:
    """Quantities compared as amounts, the rest as they are."""
    if key == "minResources" and isinstance(value, Mapping):
        return {k: parse_quantity(v) for k, v in value.items() if parse_quantity(v) != 0}
    return value


def matches(key: str, want: Any, got: Any) -> bool:
    if key == "error" and isinstance(want, str):
        return isinstance(got, str) and want in got
    if want in ("", None, {}) and got in ("", None, {}):
        return True  # Go's empty string or list is an unset field
    return bool(_norm(key, want) == _norm(key, got))


def outcome(case: Mapping[str, Any]) -> tuple[str, list[str]]:
    """``("equal" | "deviation", problems)``: problems is empty when the case holds (equal to the
    operator, or differing exactly as its documented deviation says)."""
    rendered, error = run(case)
    got = facts(case, rendered, error)
    expect = case["expect"]
    deviation = case.get("deviation")
    problems: list[str] = []
    if deviation is None:
        for key, want in expect.items():
            if not matches(key, want, got.get(key)):
                problems.append(f"{key}: operator {want!r}, ours {got.get(key)!r}")
        return "equal", problems
    ours = deviation["got"]
    if not deviation.get("reason"):
        problems.append("a deviation needs a reason")
    for key, want in expect.items():
        if key in ours:
            if not matches(key, ours[key], got.get(key)):
                problems.append(f"{key}: documented deviation {ours[key]!r}, ours now {got.get(key)!r}")
            if matches(key, want, got.get(key)):
                problems.append(f"{key}: equal to the operator now; drop the deviation")
        elif not matches(key, want, got.get(key)):
            problems.append(f"{key}: operator {want!r}, ours {got.get(key)!r}")
    return "deviation", problems
