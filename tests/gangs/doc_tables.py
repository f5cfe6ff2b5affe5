"""The generated tables of docs/gangs.md: what each scheduler gets for each catalog type (the gang
plan and the renderers run on the catalog's lifecycle fixture ``created.yaml`` of the type), and
the operator-parity counts per source with the deviations' reasons. ``test_docs.py`` keeps the doc
equal to them; ``python -m tests.gangs.doc_tables --write`` rewrites the doc's generated sections.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from tests.gangs.parity import load_cases, outcome
from workload_map.catalog import get_definition
from workload_map.errors import WorkloadMapError
from workload_map.resolve.gang_plan import GangPlan, plan_gangs
from workload_map.resolve.schedulers import SCHEDULERS, Rendered, RenderOptions, render

DOC = Path(__file__).parents[2] / "docs" / "gangs.md"
LIFECYCLES = Path(__file__).parents[1] / "catalog" / "lifecycles"
MARKERS = {
    "catalog": ("<!-- catalog-table:start -->", "<!-- catalog-table:end -->"),
    "parity": ("<!-- parity-table:start -->", "<!-- parity-table:end -->"),
}


def _gang_text(plan: GangPlan) -> str:
    if not plan.gangs:
        return "none"
    parts = []
    for g in plan.gangs:
        members = ", ".join(f"{m.task} {n}" for m, n in zip(g.members, g.required, strict=True))
        extra = f", per {g.replica_split.component}" if g.replica_split is not None else ""
        sub = f", {g.min_sub_group} of the subgroups" if g.min_sub_group is not None else ""
        pods = "pod" if g.min_member == 1 else "pods"
        parts.append(f"{g.min_member} {pods}{extra}{sub} ({members})")
    return "; ".join(parts)


def _cell(scheduler: str, rendered: Rendered) -> str:
    if not rendered.objects:
        return "—"
    kinds = Counter(o["kind"] for o in rendered.objects)
    text = ", ".join(f"{n} {k}" if n > 1 else k for k, n in kinds.items())
    spec = rendered.objects[0].get("spec") or {}
    if scheduler in ("kai", "volcano", "coscheduling") and "minMember" in spec:
        text += f" min {spec['minMember']}"
    if scheduler == "kai" and spec.get("subGroups"):
        text += f", {len(spec['subGroups'])} subgroups"
    if scheduler == "volcano":
        if spec.get("minTaskMember"):
            text += f", {len(spec['minTaskMember'])} tasks"
        if spec.get("subGroupPolicy"):
            text += ", subGroupPolicy"
    if scheduler == "kueue":
        text += f", {len(spec.get('podSets', []))} podSets"
    return text


def catalog_rows() -> list[list[str]]:
    rows: list[list[str]] = []
    for fixture in sorted(LIFECYCLES.glob("*/created.yaml")):
        obj: dict[str, Any] = yaml.safe_load(fixture.read_text())["object"]
        karta = get_definition(obj["apiVersion"], obj["kind"])
        assert karta is not None, fixture
        plan = plan_gangs(karta, obj)
        row = [f"`{obj['kind']}` {obj['apiVersion']}", _gang_text(plan)]
        for scheduler in SCHEDULERS:
            try:
                row.append(_cell(scheduler, render(plan, scheduler, RenderOptions())))
            except WorkloadMapError as exc:
                row.append(f"error: {exc}")
        rows.append(row)
    return rows


def catalog_table() -> str:
    head = ["type", "gang (required pods)", *SCHEDULERS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in catalog_rows()]
    return "\n".join(lines)


def parity_table() -> str:
    counts: Counter[tuple[str, str]] = Counter()
    reasons: dict[str, list[str]] = {}
    for case in load_cases():
        kind, problems = outcome(case)
        assert not problems, (case["source"], problems)
        counts[(case["operator"], kind)] += 1
        if kind == "deviation":
            reasons.setdefault(case["deviation"]["reason"], []).append(case["source"])
    operators = sorted({op for op, _ in counts})
    lines = ["| source | cases | equal | documented deviations |", "|---|---|---|---|"]
    for op in operators:
        eq, dev = counts[(op, "equal")], counts[(op, "deviation")]
        lines.append(f"| {op} | {eq + dev} | {eq} | {dev} |")
    total_eq = sum(n for (_, k), n in counts.items() if k == "equal")
    total_dev = sum(n for (_, k), n in counts.items() if k == "deviation")
    lines.append(f"| **all** | {total_eq + total_dev} | {total_eq} | {total_dev} |")
    lines += ["", "Deviations, by reason (cases):", ""]
    for reason, sources in reasons.items():
        lines.append(f"- ({len(sources)}) {reason}")
    return "\n".join(lines)


def generated() -> dict[str, str]:
    return {"catalog": catalog_table(), "parity": parity_table()}


def section(text: str, name: str) -> str:
    start, end = MARKERS[name]
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def rewrite(text: str) -> str:
    for name, body in generated().items():
        start, end = MARKERS[name]
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{start}\n{body}\n{end}{tail}"
    return text


if __name__ == "__main__":
    if "--write" in sys.argv:
        DOC.write_text(rewrite(DOC.read_text()))
    else:
        for body in generated().values():
            print(body, end="\n\n")
