from __future__ import annotations

from typing import Any

import pytest

from tests.resolve.defs import (
    JOBSET_KARTA,
    LWS_KARTA,
    PYTORCH_KARTA,
    RAYCLUSTER_KARTA,
    jobset,
    karta,
    lws,
    pytorchjob,
    raycluster,
    structure,
)
from workload_map import resolve
from workload_map.model.definition import STATUS_MATCH_ORDER, ResourceStatus
from workload_map.resolve import ResolveFieldError, WorkloadStatus

RS = ResourceStatus


def status_karta(
    mappings: dict[str, Any], phase: str | None = ".status.phase", conditions: dict[str, Any] | None = None
) -> Any:
    sd: dict[str, Any] = {"statusMappings": mappings}
    if phase is not None:
        sd["phaseDefinition"] = {"path": phase}
    if conditions is not None:
        sd["conditionsDefinition"] = conditions
    return structure(
        {"name": "root", "kind": {"group": "x", "version": "v1", "kind": "X"}, "statusDefinition": sd}
    )


COND = {"path": ".status.conditions"}  # CRD defaults apply: type/status/message/reason


def test_root_without_status_definition_is_undefined() -> None:
    w = resolve(structure({"name": "root", "kind": {"group": "x", "version": "v1", "kind": "X"}}), {})
    assert w.phases == (RS.UNDEFINED,)
    assert w.primary_phase is RS.UNDEFINED
    assert w.status.phase is None and w.root.status is None


def test_by_phase() -> None:
    k = status_karta({"running": [{"byPhase": "Running"}], "completed": [{"byPhase": "Succeeded"}]})
    assert resolve(k, {"status": {"phase": "Running"}}).phases == (RS.RUNNING,)
    assert resolve(k, {"status": {"phase": "Succeeded"}}).phases == (RS.COMPLETED,)
    assert resolve(k, {"status": {"phase": "running"}}).phases == (RS.UNDEFINED,)
    assert resolve(k, {}).phases == (RS.UNDEFINED,)


def test_phase_is_first_result_and_stringified() -> None:
    k = status_karta({"running": [{"byPhase": "3"}]}, phase=".status.a, .status.b")
    w = resolve(k, {"status": {"a": 3, "b": "x"}})
    assert w.status.phase == "3" and w.phases == (RS.RUNNING,)
    assert resolve(k, {"status": {"a": True}}).status.phase == "true"
    assert resolve(k, {"status": {"a": None}}).status.phase is None


def test_conditions_read_with_field_names_and_full_list_kept() -> None:
    k = status_karta(
        {"failed": [{"byConditions": [{"type": "Ready", "status": "False", "reason": "Crash"}]}]},
        phase=None,
        conditions={
            "path": ".status.c",
            "typeFieldName": "kind",
            "statusFieldName": "state",
            "reasonFieldName": "why",
            "messageFieldName": "msg",
        },
    )
    obj = {
        "status": {
            "c": [
                {"kind": "Ready", "state": "True", "why": "Ok", "msg": "m1"},
                {"kind": "Other", "state": 1},
                {"kind": "Ready", "state": "False", "why": "Crash", "msg": "m2"},
                {"state": "True"},
                "junk",
                {"kind": 5, "state": "True"},
            ]
        }
    }
    w = resolve(k, obj)
    assert [(c.type, c.status, c.reason, c.message) for c in w.status.conditions] == [
        ("Ready", "True", "Ok", "m1"),
        ("Other", "", None, None),
        ("Ready", "False", "Crash", "m2"),
    ]
    assert w.status.condition("Ready") is not None
    assert w.status.condition("Ready").reason == "Crash"  # type: ignore[union-attr]
    assert w.phases == (RS.FAILED,)


def test_reason_matchers_never_fire_without_reason_field() -> None:
    k = status_karta(
        {"failed": [{"byConditions": [{"type": "Ready", "reason": "Crash"}]}]},
        phase=None,
        conditions={"path": ".status.conditions", "reasonFieldName": None},
    )
    w = resolve(k, {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "Crash"}]}})
    assert w.status.conditions[0].reason is None
    assert w.phases == (RS.UNDEFINED,)


def test_by_conditions_all_must_hold_empty_status_means_dont_care() -> None:
    k = status_karta(
        {"running": [{"byConditions": [{"type": "A", "status": "True"}, {"type": "B"}]}]},
        phase=None,
        conditions=COND,
    )
    assert resolve(
        k, {"status": {"conditions": [{"type": "A", "status": "True"}, {"type": "B", "status": "x"}]}}
    ).phases == (RS.RUNNING,)
    assert resolve(k, {"status": {"conditions": [{"type": "A", "status": "True"}]}}).phases == (RS.UNDEFINED,)
    assert resolve(
        k, {"status": {"conditions": [{"type": "A", "status": "False"}, {"type": "B"}]}}
    ).phases == (RS.UNDEFINED,)


def test_conditions_last_duplicate_wins_for_matching() -> None:
    k = status_karta(
        {"running": [{"byConditions": [{"type": "Ready", "status": "True"}]}]}, phase=None, conditions=COND
    )
    conds = [{"type": "Ready", "status": "False"}, {"type": "Ready", "status": "True"}]
    assert resolve(k, {"status": {"conditions": conds}}).phases == (RS.RUNNING,)
    assert resolve(k, {"status": {"conditions": conds[::-1]}}).phases == (RS.UNDEFINED,)


def test_conditions_path_flattening() -> None:
    k = status_karta(
        {"running": [{"byConditions": [{"type": "X"}]}]},
        phase=None,
        conditions={"path": ".status.a, .status.b, .status.c"},
    )
    w = resolve(
        k, {"status": {"a": [{"type": "W", "status": "True"}], "b": {"type": "X", "status": "True"}, "c": 7}}
    )
    assert [c.type for c in w.status.conditions] == ["W", "X"]
    assert w.phases == (RS.RUNNING,)


@pytest.mark.parametrize(
    ("expression", "expected", "obj", "match"),
    [
        (".status.ready > 0", "true", {"status": {"ready": 1}}, True),
        (".status.ready > 0", "true", {"status": {"ready": 0}}, False),
        (".status.n", "3", {"status": {"n": 3}}, True),
        (".status.n", "3", {"status": {"n": 3.0}}, True),
        (".status.s", "ok", {"status": {"s": "ok"}}, True),
        (".status.missing", "null", {}, False),  # null first result never matches
        ("empty", "", {}, False),  # no result never matches
        (".status.list[]", "a", {"status": {"list": ["a", "b"]}}, True),  # first result only
        (".status.list[]", "b", {"status": {"list": ["a", "b"]}}, False),
        (".status.o", '{"a":1,"b":2}', {"status": {"o": {"b": 2, "a": 1}}}, True),
    ],
)
def test_by_expression(expression: str, expected: str, obj: dict[str, Any], match: bool) -> None:
    k = status_karta(
        {"running": [{"byExpression": {"expression": expression, "expectedResult": expected}}]}, phase=None
    )
    assert resolve(k, obj).phases == ((RS.RUNNING,) if match else (RS.UNDEFINED,))


def test_by_expression_errors_are_resolve_errors() -> None:
    k = status_karta(
        {"running": [{"byExpression": {"expression": ".status.x[]", "expectedResult": "1"}}]}, phase=None
    )
    with pytest.raises(ResolveFieldError) as info:
        resolve(k, {"status": {"x": 5}})
    assert "failed to match status: failed to evaluate matcher: " in str(info.value)
    assert info.value.field == "statusDefinition.statusMappings.running[0].byExpression.expression"


def test_matcher_parts_are_anded() -> None:
    k = status_karta(
        {
            "running": [
                {
                    "byPhase": "Up",
                    "byConditions": [{"type": "Ready", "status": "True"}],
                    "byExpression": {"expression": ".spec.ok", "expectedResult": "true"},
                }
            ]
        },
        conditions=COND,
    )
    good: dict[str, Any] = {
        "spec": {"ok": True},
        "status": {"phase": "Up", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    assert resolve(k, good).phases == (RS.RUNNING,)
    for path, value in (("phase", "Down"), ("conditions", [])):
        bad = {**good, "status": {**good["status"], path: value}}
        assert resolve(k, bad).phases == (RS.UNDEFINED,)
    assert resolve(k, {**good, "spec": {"ok": False}}).phases == (RS.UNDEFINED,)


def test_matchers_under_one_status_are_ored() -> None:
    k = status_karta({"initializing": [{"byPhase": "Pending"}, {"byPhase": "Creating"}]})
    assert resolve(k, {"status": {"phase": "Creating"}}).phases == (RS.INITIALIZING,)


def test_every_match_reported_in_upstream_order_and_primary_by_severity() -> None:
    always = [{"byExpression": {"expression": "true", "expectedResult": "true"}}]
    mappings = {s.value.lower(): always for s in ResourceStatus if s is not RS.UNDEFINED}
    w = resolve(status_karta(mappings, phase=None), {})
    assert w.phases == STATUS_MATCH_ORDER
    assert w.phases[:4] == (RS.RESUMING, RS.SUSPENDING, RS.SUSPENDED, RS.RUNNING)
    assert w.primary_phase is RS.FAILED
    k = status_karta({"running": always, "degraded": always, "completed": always}, phase=None)
    w = resolve(k, {})
    assert w.phases == (RS.RUNNING, RS.COMPLETED, RS.DEGRADED)
    assert w.primary_phase is RS.DEGRADED


def test_empty_matcher_matches_unconditionally() -> None:
    w = resolve(status_karta({"running": [{}]}, phase=None), {})
    assert w.phases == (RS.RUNNING,)


def test_primary_phase_order() -> None:
    assert WorkloadStatus(phases=(RS.RUNNING, RS.COMPLETED)).primary_phase is RS.RUNNING
    assert WorkloadStatus(phases=(RS.SUSPENDED, RS.RESUMING)).primary_phase is RS.RESUMING
    assert WorkloadStatus(phases=(RS.INITIALIZING, RS.RUNNING)).primary_phase is RS.INITIALIZING
    assert WorkloadStatus().primary_phase is RS.UNDEFINED


# --- realistic -------------------------------------------------------------------------------


def js_status(*rjs: tuple[int, int, int], conditions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "restarts": 0,
        "replicatedJobsStatus": [
            {"name": f"rj{i}", "active": a, "ready": r, "failed": f, "succeeded": 0, "suspended": 0}
            for i, (a, r, f) in enumerate(rjs)
        ],
        "conditions": conditions or [],
    }


@pytest.mark.parametrize(
    ("status", "phases"),
    [
        (None, (RS.UNDEFINED,)),
        (js_status((1, 0, 0), (2, 0, 0)), (RS.RUNNING, RS.INITIALIZING)),
        (js_status((1, 1, 0), (2, 2, 0)), (RS.RUNNING,)),
        (js_status((1, 1, 0), (2, 1, 1)), (RS.UNDEFINED,)),
        (
            js_status(
                (0, 0, 0), conditions=[{"type": "Completed", "status": "True", "reason": "AllJobsCompleted"}]
            ),
            (RS.COMPLETED,),
        ),
        (
            js_status((0, 0, 1), conditions=[{"type": "Failed", "status": "True", "reason": "FailedJobs"}]),
            (RS.FAILED,),
        ),
        (js_status(conditions=[{"type": "Suspended", "status": "True"}]), (RS.SUSPENDED,)),
    ],
)
def test_jobset_status(status: dict[str, Any] | None, phases: tuple[ResourceStatus, ...]) -> None:
    assert resolve(karta(JOBSET_KARTA), jobset(status)).phases == phases


@pytest.mark.parametrize(
    ("conds", "phase"),
    [
        ([{"type": "Created", "status": "True"}], RS.INITIALIZING),
        ([{"type": "Created", "status": "True"}, {"type": "Running", "status": "True"}], RS.INITIALIZING),
        (
            [
                {"type": "Created", "status": "True"},
                {"type": "Running", "status": "False"},
                {"type": "Succeeded", "status": "True"},
            ],
            RS.INITIALIZING,
        ),
        ([{"type": "Failed", "status": "True"}], RS.FAILED),
    ],
)
def test_pytorchjob_status(conds: list[dict[str, Any]], phase: ResourceStatus) -> None:
    w = resolve(karta(PYTORCH_KARTA), pytorchjob(conds))
    assert w.primary_phase is phase


def test_pytorchjob_structure_and_resources() -> None:
    w = resolve(karta(PYTORCH_KARTA), pytorchjob())
    assert w.components["master"].desired_pods == 1
    assert w.components["worker"].desired_pods == 3
    assert w.resources.gpus == 32


def test_raycluster_status_and_workers() -> None:
    k = karta(RAYCLUSTER_KARTA)
    assert resolve(k, raycluster("ready")).phases == (RS.RUNNING,)
    assert resolve(k, raycluster(None)).phases == (RS.UNDEFINED,)
    obj = raycluster(None)
    obj["spec"]["suspend"] = True
    assert resolve(k, obj).phases == (RS.SUSPENDED,)
    w = resolve(k, raycluster())
    assert w.components["head"].desired_pods == 1
    assert w.components["worker"].desired_pods == 5
    assert w.resources.gpus == 3
    assert w.resources.cpu_millis == 2000 + 3 * 4000 + 2 * 500


def test_lws_status() -> None:
    w = resolve(karta(LWS_KARTA), lws())
    assert w.phases == (RS.RUNNING,)
    assert w.status.conditions[0].reason == "AllGroupsReady"
    assert w.status.conditions[0].message == "ok"
