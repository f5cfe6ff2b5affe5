"""Why a workload is in its phase (views/why.py): the rule behind every phase of every catalog
type's lifecycle fixtures, in ``wmap explain``'s words; the components short of ready pods;
conditions with ages; events in kubectl describe's order and AGE form."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map import resolve
from workload_map.catalog import get_by_name
from workload_map.resolve import compile_definition
from workload_map.views.explain import explanation
from workload_map.views.model import build_describe
from workload_map.views.tree import render_describe
from workload_map.views.why import event_views, phase_reasons

LIFECYCLES = Path(__file__).resolve().parents[1] / "catalog" / "lifecycles"
CASES = sorted((d.name, f.name) for d in LIFECYCLES.iterdir() if d.is_dir() for f in d.glob("*.yaml"))
NOW = datetime(2026, 9, 1, 12, 0, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(("slug", "state"), CASES)
def test_every_phase_has_its_rule_in_explains_words(slug: str, state: str) -> None:
    definition = get_by_name(slug)
    assert definition is not None
    obj = yaml.safe_load((LIFECYCLES / slug / state).read_text())["object"]
    workload = resolve(compile_definition(definition), obj)
    reasons = phase_reasons(workload)
    root = workload.tree.name
    rules = (explanation(definition)["status"] or {}).get("rules") or {}
    phases = [p.value for p in workload.status.phases if p.value != "Undefined"]
    assert [r.phase for r in reasons if r.component == root] == phases
    for r in reasons:
        assert r.component == root  # the catalog's definitions give statuses to roots only
        assert r.rule in rules[r.phase], (r, rules.get(r.phase))


def _jobset(status: dict[str, Any] | None) -> tuple[Any, dict[str, Any]]:
    definition = get_by_name("jobset-x-k8s-io-jobset-v1alpha2")
    assert definition is not None
    obj = yaml.safe_load((LIFECYCLES / "jobset-x-k8s-io-jobset-v1alpha2" / "running.yaml").read_text())[
        "object"
    ]
    if status is not None:
        obj["status"] = status
    return definition, obj


def test_conditions_carry_reason_message_and_age() -> None:
    definition, obj = _jobset(
        {
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "FailedJobs",
                    "message": "job leader-0 failed",
                    "lastTransitionTime": "2026-09-01T11:55:00Z",
                }
            ]
        }
    )
    view = build_describe(resolve(compile_definition(definition), obj), obj, definition="x", origin="catalog")
    assert [(c.type, c.status, c.reason, c.message) for c in view.conditions] == [
        ("Failed", "True", "FailedJobs", "job leader-0 failed")
    ]
    text = render_describe(view, now=NOW)
    assert "Conditions:" in text
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("Failed "))
    assert line.split()[:4] == ["Failed", "True", "FailedJobs", "5m"] and line.endswith("job leader-0 failed")
    assert "  Failed: replicatedjob rule:" in text or "  Failed: jobset rule:" in text
    assert view.to_dict()["conditions"][0]["lastTransitionTime"] == "2026-09-01T11:55:00Z"


def _event(name: str, reason: str, first: str, last: str, count: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "creationTimestamp": first},
        "involvedObject": {"kind": "Pod", "name": "p", "uid": "u"},
        "type": "Warning",
        "reason": reason,
        "message": f"  {reason} happened  ",
        "source": {"component": "kubelet", "host": "node-a"},
        "firstTimestamp": first,
        "lastTimestamp": last,
        "count": count,
        **extra,
    }


def test_events_in_kubectl_order_and_age_form() -> None:
    events = [
        _event("b", "BackOff", "2026-09-01T11:50:00Z", "2026-09-01T11:58:00Z", count=7),
        _event("a", "Pulled", "2026-09-01T11:40:00Z", "2026-09-01T11:40:00Z"),
        {
            "metadata": {"name": "c", "creationTimestamp": "2026-09-01T11:59:00Z"},
            "type": "Normal",
            "reason": "Scheduled",
            "involvedObject": {"kind": "Pod", "name": "p", "uid": "u"},
            "eventTime": "2026-09-01T11:59:00.000000Z",
            "reportingController": "default-scheduler",
            "message": "Successfully assigned",
        },
        "not an object",
    ]
    views = event_views([e for e in events if isinstance(e, dict)])
    assert [v.reason for v in views] == ["Pulled", "BackOff", "Scheduled"]
    assert [v.age(NOW) for v in views] == ["20m", "2m (x7 over 10m)", "60s"]
    assert views[1].source == "kubelet" and views[2].source == "default-scheduler"
    assert views[1].message == "BackOff happened" and views[1].object == "Pod/p"
