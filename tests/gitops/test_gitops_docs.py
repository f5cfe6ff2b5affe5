"""docs/gitops.md says what the code does: its coverage table per kind is the measured one, its
mapping table is :data:`ARGO_HEALTH`."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.gitops.test_argocd_agreement import STATES
from tests.gitops.test_argocd_fixtures import PARITY, PREFIX
from workload_map.catalog import list_definitions
from workload_map.interpret.argocd import ARGO_HEALTH, ARGO_NATIVE, health_checks
from workload_map.model.definition import ResourceStatus
from workload_map.resolve import compile_definition

DOCS = Path(__file__).parents[2] / "docs" / "gitops.md"
ORDER = ["Healthy", "Progressing", "Suspended", "Degraded"]


def coverage_rows() -> list[str]:
    """The coverage table's rows, measured."""
    compiled = {cd.name: cd for cd in map(compile_definition, list_definitions())}
    states = Counter((o["apiVersion"].rpartition("/")[0], o["kind"]) for _, o in STATES)
    parity: Counter[str] = Counter()
    equal: Counter[str] = Counter()
    for case in yaml.safe_load(PARITY.read_text())["cases"]:
        where = case["source"].removeprefix(PREFIX).removesuffix("/health_test.yaml")
        parity[where] += 1
        equal[where] += case["argocd"] == case["wmap"]
    rows = []
    for c in health_checks(compiled.values()):
        phases: set[ResourceStatus] = set()
        for name in c.versions.values():
            sd = compiled[name].root.definition.status_definition
            assert sd is not None
            phases |= {p for p in ResourceStatus if sd.status_mappings.matchers_for(p)}
        statuses = sorted({ARGO_HEALTH[p] for p in phases} | {"Progressing"}, key=ORDER.index)
        where = f"{c.group}/{c.kind}" if c.group else f"core/{c.kind}"
        n = states[(c.group, c.kind)]
        fixtures = f"{equal[where]}/{parity[where]}" if parity[where] else "none"
        rows.append(
            f"| `{where}` | {', '.join(v.rpartition('/')[2] for v in c.versions)} | {', '.join(statuses)} "
            f"| {n}/{n} | {fixtures} | {'yes' if (c.group, c.kind) in ARGO_NATIVE else 'no'} |"
        )
    return sorted(rows)


@pytest.mark.skipif(len(STATES) != 253, reason="needs the upstream recordings")
def test_the_coverage_table_is_the_measured_one() -> None:
    section = DOCS.read_text().split("## Coverage per kind", 1)[1]
    documented = sorted(line for line in section.splitlines() if re.match(r"^\| `[^`]+/[^`]+` \|", line))
    assert documented == coverage_rows()


def test_the_mapping_table_is_argo_health() -> None:
    text = DOCS.read_text()
    rows = dict(re.findall(r"^\| (\w+) \| (Healthy|Progressing|Suspended|Degraded) \|", text, re.M))
    assert rows == {p.value: s for p, s in ARGO_HEALTH.items()}
