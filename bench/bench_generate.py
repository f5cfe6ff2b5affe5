"""How much of each hand-written catalog definition ``wmap generate`` reproduces from the CRD alone.

For every catalog definition whose root kind has a CRD in ``$WMAP_SHARED_DIR/crds`` (default
``../shared/crds``), draft a definition from that CRD at the definition's version and compare:

- **pods**: the catalog's pod locations (the pod spec a podTemplateSpecPath, podSpecPath or
  fragmented ``containersPath`` points at, lists and map keys as ``*``) found among the draft's
  (each draft component by its first path: a fallback after ``//`` is not its own location);
- **replicas**: for each catalog component with a replicasPath whose pod location the draft
  found, the integer fields that path reads (``replicas``, ``parallelism``, ``numOfHosts``...)
  that the draft's replicasPath for the same location reads too;
- **counts**: on the catalog's lifecycle fixtures (real objects), the (object, pod location)
  pairs where the draft's replicas give the catalog's desired pods;
- **status**: the catalog root's phase path and conditions path, equal in the draft.

Prints one row per definition and the totals; ``--assert`` exits 1 when a pod location or a
replicas field of the catalog is not reproduced. Run: ``.venv/bin/python -m bench.bench_generate``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml
from tests.support.apiserver_binary import shared_dir

from workload_map.catalog.registry import DATA_DIR
from workload_map.generate import draft_from_schemas
from workload_map.lint import KindSchema, load_crd_file
from workload_map.model.loader import load_definitions

LIFECYCLES = Path(__file__).resolve().parents[1] / "tests" / "catalog" / "lifecycles"
_CHAIN = re.compile(r'(?:\.[A-Za-z_][A-Za-z0-9_]*|\["[^"]+"\]|\[\d*\]\??)+')
_STEP = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*)|\["([^"]+)"\]|(\[\d*\]\??)')
#: Integer fields that count pods (what "replicas fields" compares).
COUNTING = {"replicas", "parallelism", "completions", "numOfHosts", "minReplicas", "maxReplicas", "size"}

Location = tuple[str, ...]


def _steps(chain: str) -> Location:
    out: list[str] = []
    for field, quoted, index in _STEP.findall(chain):
        out.append("*" if index else field or quoted)
    return tuple(out)


def _locations(expr: str) -> list[Location]:
    """Candidate paths an expression points at: each chain, and the first chain joined with
    the chains after a pipe (``.spec.lwt | .leaderTemplate``)."""
    chains = [_steps(m.group(0)) for m in _CHAIN.finditer(expr) if m.group(0).startswith(".")]
    chains = [c for c in chains if c]
    if "|" in expr and chains:
        head = chains[0]
        return [head, *(head + c for c in chains[1:]), *chains[1:]]
    return chains


def _pod_locations(component: Any) -> list[Location]:
    spec = component.spec_definition
    if spec is None:
        return []
    if spec.pod_template_spec_path:
        return [(*loc, "spec") for loc in _locations(spec.pod_template_spec_path)]
    if spec.pod_spec_path:
        return _locations(spec.pod_spec_path)
    frag = spec.fragmented_pod_spec_definition
    if frag is not None and frag.containers_path:
        return [loc[:-1] for loc in _locations(frag.containers_path) if loc and loc[-1] == "containers"]
    return []


def _matches(catalog: Location, draft: Location) -> bool:
    return len(catalog) == len(draft) and all(d in ("*", c) for c, d in zip(catalog, draft, strict=True))


def _fields(expr: str | None) -> set[str]:
    return {name for name in re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)", expr or "") if name in COUNTING}


def _components(karta: Any) -> list[Any]:
    s = karta.spec.structure_definition
    return [s.root_component, *s.child_components]


def _crd_index(crds: Path) -> dict[tuple[str, str], list[KindSchema]]:
    out: dict[tuple[str, str], list[KindSchema]] = {}
    for path in sorted(crds.glob("*/*.yaml")):
        try:
            schemas = load_crd_file(path)
        except Exception:
            continue
        for s in schemas:
            out.setdefault((s.group, s.kind), []).append(s)
    return out


def compare(karta: Any, schemas: Sequence[KindSchema]) -> dict[str, Any]:
    gvk = karta.root_gvk
    draft = draft_from_schemas(schemas, kind=gvk.kind, version=gvk.version, source="bench")
    drafted = load_definitions(draft.text).definitions[0].karta
    draft_pods = [(loc, c) for c in _components(drafted) for loc in _pod_locations(c)[:1]]
    pods_total = pods_found = fields_total = fields_found = 0
    missing: list[str] = []
    for comp in _components(karta):
        locations = _pod_locations(comp)
        if not locations:
            continue
        pods_total += 1
        hit = next((dc for loc in locations for dloc, dc in draft_pods if _matches(loc, dloc)), None)
        if hit is None:
            missing.append(f"pods of {comp.name} ({'.'.join(locations[0])})")
            continue
        pods_found += 1
        scale = comp.scale_definition
        want = _fields(scale.replicas_path if scale else None)
        got = _fields(hit.scale_definition.replicas_path if hit.scale_definition else None)
        got |= _fields(hit.scale_definition.min_replicas_path if hit.scale_definition else None)
        got |= _fields(hit.scale_definition.max_replicas_path if hit.scale_definition else None)
        fields_total += len(want)
        fields_found += len(want & got)
        missing += [f"{comp.name} replicas field {f}" for f in sorted(want - got)]
    root_status = karta.spec.structure_definition.root_component.status_definition
    draft_status = drafted.spec.structure_definition.root_component.status_definition
    status_total = status_found = 0
    for what in ("phase", "conditions"):
        ours = _status_path(root_status, what)
        if ours is None:
            continue
        status_total += 1
        if _status_path(draft_status, what) == ours:
            status_found += 1
        else:
            missing.append(f"status {what} {ours}")
    return {
        "pods": (pods_found, pods_total),
        "fields": (fields_found, fields_total),
        "status": (status_found, status_total),
        "missing": missing,
    }


def counts_agree(
    karta: Any, schemas: Sequence[KindSchema], objects: Sequence[dict[str, Any]]
) -> tuple[int, int]:
    """On real objects (the lifecycle fixtures): for how many (object, catalog pod location)
    pairs the draft's replicas give the catalog's desired pods (summed over instances)."""
    from workload_map.errors import WorkloadMapError
    from workload_map.resolve import compile_definition, resolve

    gvk = karta.root_gvk
    drafted = (
        load_definitions(draft_from_schemas(schemas, kind=gvk.kind, version=gvk.version, source="bench").text)
        .definitions[0]
        .karta
    )
    theirs, ours = compile_definition(karta), compile_definition(drafted)
    agree = total = 0
    for obj in objects:
        try:
            want, got = resolve(theirs, obj), resolve(ours, obj)
        except WorkloadMapError:
            continue
        for comp in _components(karta):
            pairs = [
                (loc, d, dc)
                for loc in _pod_locations(comp)
                for dc in _components(drafted)
                for d in _pod_locations(dc)[:1]
                if _matches(loc, d)
            ]
            if not pairs or comp.name not in want.components:
                continue
            loc, dloc, hit = pairs[0]
            # A concrete key where the draft iterates a map (Kubeflow's Master): that instance only.
            keys = {c for c, d in zip(loc, dloc, strict=True) if d == "*" and c != "*"}
            instances = [i for i in got.components[hit.name].instances if not keys or i.id in keys]
            total += 1
            expected = sum(i.desired_replicas or 0 for i in want.components[comp.name].instances)
            agree += expected == sum(i.desired_replicas or 0 for i in instances)
    return agree, total


def _status_path(status: Any, what: str) -> str | None:
    if status is None:
        return None
    node = status.phase_definition if what == "phase" else status.conditions_definition
    return None if node is None else str(node.path)


def _cell(pair: tuple[int, int]) -> str:
    found, total = pair
    return f"{found}/{total}" if total else "-"


def measure(crds: Path) -> list[tuple[str, dict[str, Any]]]:
    """One result per catalog definition whose root kind has a CRD in ``crds``."""
    index = _crd_index(crds)
    rows = []
    for path in sorted(DATA_DIR.glob("*.yaml")):
        karta = load_definitions(str(path)).definitions[0].karta
        gvk = karta.root_gvk
        schemas = [s for s in index.get((gvk.group, gvk.kind), []) if s.version == gvk.version]
        if not schemas:
            continue
        result = compare(karta, schemas)
        fixtures = (
            sorted((LIFECYCLES / path.stem).glob("*.yaml")) if (LIFECYCLES / path.stem).is_dir() else []
        )
        objects = [yaml.safe_load(f.read_text())["object"] for f in fixtures]
        result["counts"] = counts_agree(karta, schemas, objects)
        rows.append((karta.name, result))
    return rows


COLUMNS = (("pods", 8), ("fields", 9), ("counts", 8), ("status", 8))


def totals(rows: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, tuple[int, int]]:
    return {key: (sum(r[key][0] for _, r in rows), sum(r[key][1] for _, r in rows)) for key, _ in COLUMNS}


def table(rows: Sequence[tuple[str, dict[str, Any]]], *, missed: bool = True) -> list[str]:
    """The printed table (docs/new-type.md carries it without the ``missed`` column)."""
    width = max(len(name) for name, _ in rows)

    def line(name: str, cells: dict[str, tuple[int, int]], tail: str) -> str:
        text = " ".join(f"{_cell(cells[k]):<{w}}" for k, w in COLUMNS)
        return f"{name:<{width}}  {text}{' ' + tail if tail else ''}".rstrip()

    header = f"{'definition':<{width}}  pods     replicas  counts   status" + ("   missed" if missed else "")
    out = [header]
    for name, r in rows:
        out.append(line(name, r, ("; ".join(r["missing"]) or "-") if missed else ""))
    out.append(
        line("TOTAL", totals(rows), f"({len(rows)} definitions with a CRD in the corpus)" if missed else "")
    )
    return out


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--assert",
        dest="check",
        action="store_true",
        help="exit 1 if a pod location or replicas field is missed",
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    crds = shared_dir() / "crds"
    if not crds.is_dir():
        print(f"no CRD corpus at {crds} (set WMAP_SHARED_DIR)", file=sys.stderr)
        return 2
    rows = measure(crds)
    print("\n".join(table(rows)))
    sums = totals(rows)
    complete = sums["pods"][0] == sums["pods"][1] and sums["fields"][0] == sums["fields"][1]
    return 1 if args.check and not complete else 0


if __name__ == "__main__":
    raise SystemExit(main())
