"""Cost coverage per kind (docs/metrics.md "Coverage per kind"): for every catalog type seeded as
its controllers leave it (the 29 cases of tests/server/test_consumers_agree.py, owner chains and
labels after framework-shapes.md), the exporter gives each pod the controllers created exactly one
``wmap_pod_workload_info`` naming the logical workload, the series the cost rules join OpenCost's
per-pod cost on. The docs' table row of each case says what OpenCost sees instead: the pods'
controllers (the controller owner reference of each pod, what ``kube_pod_owner`` reports and
opencost PR 3969 attributes to), checked here against the seeded pods."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.exporter.conftest import ExporterProcess
from tests.server.test_consumers_agree import CASES, dcd_crd, exporter
from tests.support.kube import KubeTestClient

pytestmark = pytest.mark.cluster

METRICS_DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
#: fixtures shared with the consumers test: its exporter (all namespaces) and the Dynamo CRD one case needs
__all__ = ["dcd_crd", "exporter"]


def controllers(pods: list[dict[str, Any]]) -> str:
    """The pods' controller owner references as ``kind.group`` with their counts:
    ``Job.batch (3)`` (a core kind without group, ``none`` for a pod without controller)."""
    kinds: Counter[str] = Counter()
    for pod in pods:
        refs = [r for r in pod["metadata"].get("ownerReferences") or () if r.get("controller")]
        if not refs:
            kinds["none"] += 1
            continue
        group = refs[0]["apiVersion"].rpartition("/")[0]
        kinds[f"{refs[0]['kind']}.{group}" if group else refs[0]["kind"]] += 1
    return ", ".join(f"{k} ({n})" for k, n in sorted(kinds.items()))


def doc_rows() -> dict[str, list[str]]:
    """Case id -> the cells of its row in the docs' coverage table."""
    text = METRICS_DOC.read_text()
    section = text[text.index("### Coverage per kind") :]
    section = section[: section.index("\n### ", 1)]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\| `([^`]+)` \|(.*)\|$", line)
        if m:
            rows[m.group(1)] = [c.strip() for c in m.group(2).split("|")]
    return rows


def test_the_docs_table_has_a_row_per_case() -> None:
    assert sorted(doc_rows()) == sorted(CASES)


@pytest.mark.parametrize("case_id", list(CASES))
def test_each_pod_joins_its_logical_workload(
    case_id: str, kube: KubeTestClient, namespace: str, exporter: ExporterProcess, dcd_crd: None
) -> None:
    case = CASES[case_id]
    _, seeded = case.seed(kube, case.name, namespace)
    pods = sorted(p["metadata"]["name"] for p in seeded)

    def joined(e: Any) -> bool:
        return sorted(s.labels["pod"] for s in e.find("wmap_pod_workload_info", namespace=namespace)) == pods

    exp = exporter.wait_for(joined, what=f"{case_id}: one info series per seeded pod ({pods})")
    infos = exp.find("wmap_pod_workload_info", namespace=namespace)
    # one series per pod (the rules' topk keeps one anyway; two would mean two claims), all on the workload
    assert len(infos) == len(pods)
    assert {(s.labels["workload_kind"], s.labels["workload_name"]) for s in infos} == {(case.kind, case.name)}
    kind, pod_count, seen_by_opencost, workload = doc_rows()[case_id]
    assert (kind, pod_count) == (f"`{case.kind}`", str(len(pods)))
    assert seen_by_opencost == controllers(seeded), case_id
    assert workload == f"1 (`{case.kind}/{case.name}`)"
