"""The REST API with a hostile definition (issue #10): the list answers 200 with every workload,
the failing ones marked; the definition is quarantined and reported on its workload type; health
stays immediate; the other types are untouched."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.helpers import RUNNING_JOBSET_STATUS, jobset, pytorchjob
from tests.server.conftest import AppFactory
from tests.support.hostile import NAME, write_hostile_jobset
from tests.support.kube import KubeTestClient
from tests.views.schema_check import check

pytestmark = pytest.mark.cluster


def test_a_hostile_definition_never_fails_the_list(
    make_app: AppFactory,
    bearer: Callable[[str], dict[str, str]],
    kube: KubeTestClient,
    namespace: str,
    tmp_path: Path,
) -> None:
    for i in range(6):
        kube.set_status(kube.create(jobset(f"js-{i}", namespace)), RUNNING_JOBSET_STATUS)
    kube.create(pytorchjob("torch", namespace))
    client = make_app(local_paths=(str(write_hostile_jobset(tmp_path)),))
    admin = bearer("admin")

    def listed() -> dict[str, object]:
        answer = client.get("/api/v1/workloads", params={"namespace": namespace}, headers=admin)
        assert answer.status_code == 200, answer.text
        body: dict[str, object] = answer.json()
        return body

    kube.wait_until(lambda: listed()["total"] == 7, timeout=30)
    body = listed()
    items = body["items"]
    assert isinstance(items, list)
    by_name = {i["name"]: i for i in items}
    torch = by_name.pop("torch")
    assert "error" not in torch and torch["definition"] != NAME  # another definition: unaffected
    assert len(by_name) == 6
    for row in by_name.values():
        check(
            {k: v for k, v in row.items() if k not in ("uid", "ageSeconds", "resourceVersion")},
            "view.v1.json",
        )
        assert row["primaryPhase"] == "Undefined" and row["definition"] == NAME
        # Whichever guard stops it first: the cost budget, or the deadline on a loaded machine.
        assert "exceeded its cost budget" in row["error"] or "exceeded its time limit" in row["error"]
    assert any("could not resolve JobSet" in w for w in body["warnings"])  # type: ignore[union-attr]

    kind = client.get(f"/api/v1/workload-types/{NAME}", headers=admin).json()
    record = kind["quarantine"]
    assert record["quarantined"] is True and record["consecutiveFailures"] >= 3
    assert record["retryInSeconds"] > 0
    assert "cost budget" in record["lastError"] or "time limit" in record["lastError"]
    assert client.get("/healthz").status_code == 200
    # While quarantined nothing is evaluated: the next list marks every JobSet as quarantined.
    again = listed()["items"]
    assert isinstance(again, list)
    assert all(f'"{NAME}" is quarantined' in i["error"] for i in again if i["name"] != "torch")
