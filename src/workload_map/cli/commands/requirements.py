"""``wmap requirements -f FILE [--fit CONTEXT[,CONTEXT...]]``: what a manifest needs from a cluster.

Without ``--fit`` no cluster is needed: per component instance the desired and minimum replicas and
one pod's requests, the gangs (pods that must be placed together) with their minimum pods and
resources, and the totals (:func:`workload_map.resolve.placement.placement_needs`).

``--fit`` checks kube contexts. For each context: the schedulable nodes (not
``spec.unschedulable``, ``Ready=True``) and their free resources = ``allocatable`` minus the
requests of the non-terminated pods bound to them (``pods`` counts as a resource too). Then a
first-fit-decreasing bin packing: the minimum pods of every gang (largest first by GPU, CPU,
memory) are placed one by one on the first node that can hold them, all gangs into the same
nodes. A context fits when every gang's minimum pods are placed. Not modelled: taints and
tolerations, node selectors and affinity, topology constraints, DRA claims, and pods that
other schedulers will place meanwhile; the answer is a capacity check, not a scheduling promise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from workload_map.cli.common import Session, connection_options, output_option, resolve_output
from workload_map.cli.errors import CommandError
from workload_map.cli.live import manifest_entry, read_manifest
from workload_map.cli.main import get_state

if TYPE_CHECKING:
    from workload_map.resolve.placement import GangNeeds, PlacementNeeds
    from workload_map.resolve.resources import ResourceTotals

FORMATS = ("table", "json", "yaml")

__all__ = ["NodeCapacity", "command", "first_fit_decreasing", "pod_vector"]


def pod_vector(t: ResourceTotals) -> dict[str, int]:
    """One pod's needs as a resource vector (cpu millis, memory bytes, pods, extended)."""
    vec = {"cpu": t.cpu_millis, "memory": t.memory_bytes, "pods": 1}
    for name, value in t.extended.items():
        vec[name] = vec.get(name, 0) + value
    return {k: v for k, v in vec.items() if v}


@dataclass
class NodeCapacity:
    name: str
    free: dict[str, int] = field(default_factory=dict)

    def fits(self, need: Mapping[str, int]) -> bool:
        return all(self.free.get(k, 0) >= v for k, v in need.items())

    def take(self, need: Mapping[str, int]) -> None:
        for k, v in need.items():
            self.free[k] = self.free.get(k, 0) - v


def _size(vec: Mapping[str, int]) -> tuple[int, int, int]:
    gpus = sum(v for k, v in vec.items() if k.endswith("/gpu"))
    return gpus, vec.get("cpu", 0), vec.get("memory", 0)


def first_fit_decreasing(nodes: list[NodeCapacity], pods: Sequence[Mapping[str, int]]) -> int:
    """Place ``pods`` (largest first) on the first node with room; returns how many were placed.
    ``nodes`` are updated in place."""
    placed = 0
    for need in sorted(pods, key=_size, reverse=True):
        for node in nodes:
            if node.fits(need):
                node.take(need)
                placed += 1
                break
    return placed


def _quantities(section: Any) -> dict[str, int]:
    from workload_map.resolve.quantity import parse_quantity, to_millis, to_units

    out: dict[str, int] = {}
    if not isinstance(section, Mapping):
        return out
    for name, value in section.items():
        try:
            nanos = parse_quantity(value)
        except Exception:
            continue
        out[str(name)] = to_millis(nanos) if name == "cpu" else to_units(nanos)
    return out


def _ready(node: Mapping[str, Any]) -> bool:
    conds = (node.get("status") or {}).get("conditions") or []
    return any(
        isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True" for c in conds
    )


def cluster_capacity(
    nodes: Sequence[Mapping[str, Any]], pods: Sequence[Mapping[str, Any]]
) -> list[NodeCapacity]:
    from workload_map.resolve.resources import pod_spec_totals

    caps: dict[str, NodeCapacity] = {}
    for n in nodes:
        if (n.get("spec") or {}).get("unschedulable") or not _ready(n):
            continue
        name = str((n.get("metadata") or {}).get("name"))
        caps[name] = NodeCapacity(name, _quantities((n.get("status") or {}).get("allocatable")))
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        phase = (p.get("status") or {}).get("phase")
        if not node or node not in caps or phase in ("Succeeded", "Failed"):
            continue
        caps[node].take(pod_vector(pod_spec_totals(p.get("spec"))))
    return sorted(caps.values(), key=lambda c: c.name)


def _descendants(karta: Any, component: str) -> set[str]:
    children: dict[str, list[str]] = {}
    for c in karta.spec.structure_definition.child_components:
        if c.owner_ref:
            children.setdefault(c.owner_ref, []).append(c.name)
    out = {component}
    todo = [component]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def gang_pods(karta: Any, needs: PlacementNeeds, gang: GangNeeds) -> list[dict[str, int]]:
    """The minimum pods of one gang, as resource vectors."""
    roots = [c for c, _ in gang.sub_groups] if gang.sub_groups else [gang.component]
    members: set[str] = set()
    for r in roots:
        members |= _descendants(karta, r)
    pods: list[dict[str, int]] = []
    for inst in needs.instances:
        if inst.component not in members:
            continue
        if (
            gang.instance_id is not None
            and inst.component == gang.component
            and inst.instance_id != gang.instance_id
        ):
            continue
        pods += [pod_vector(inst.pod_requests)] * inst.min_replicas
    return pods


def _all_gangs_pods(karta: Any, needs: PlacementNeeds) -> list[tuple[str, list[dict[str, int]]]]:
    if needs.gangs:
        return [(g.name, gang_pods(karta, needs, g)) for g in needs.gangs]
    # no gang rules: every pod is its own gang of one; check the minimum pods as one set
    pods: list[dict[str, int]] = []
    for inst in needs.instances:
        pods += [pod_vector(inst.pod_requests)] * inst.min_replicas
    return [("(all pods)", pods)]


def check_fit(
    karta: Any, needs: PlacementNeeds, nodes: Sequence[Mapping[str, Any]], pods: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    caps = cluster_capacity(nodes, pods)
    gangs = []
    fits = True
    for name, gpods in _all_gangs_pods(karta, needs):
        placed = first_fit_decreasing(caps, gpods)
        ok = placed == len(gpods)
        fits = fits and ok
        gangs.append({"name": name, "minPods": len(gpods), "placed": placed, "fits": ok})
    return {"nodes": len(caps), "fits": fits, "gangs": gangs}


def _fit_context(session: Session, context: str, karta: Any, needs: PlacementNeeds) -> dict[str, Any]:
    from workload_map.cluster.client import KubeClient
    from workload_map.cluster.kubeconfig import load_cluster_config
    from workload_map.errors import WorkloadMapError

    result: dict[str, Any] = {"context": context}
    try:
        config = load_cluster_config(session.options(context=context))
        with KubeClient(config) as client:
            nodes = client.list_all("/api/v1/nodes")
            pods = client.list_all(
                "/api/v1/pods", field_selector="status.phase!=Succeeded,status.phase!=Failed"
            )
    except WorkloadMapError as exc:
        result.update(nodes=0, fits=False, gangs=[], error=str(exc))
        return result
    result.update(check_fit(karta, needs, nodes, pods))
    return result


@click.command(
    "requirements",
    short_help="Placement needs of a manifest; --fit checks kube contexts.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "-f", "--file", "file", required=True, metavar="FILE", help="The workload manifest (or - for stdin)."
)
@click.option(
    "--fit",
    "fit",
    multiple=True,
    metavar="CONTEXT[,CONTEXT...]",
    help="Check whether the nodes of these kubeconfig contexts can hold every gang's minimum pods.",
)
@connection_options
@output_option(FORMATS)
def command(file: str, fit: tuple[str, ...]) -> None:
    """Show what the workload in FILE needs (per component instance, per gang, in total) and, with
    --fit, which kube contexts have the free capacity for it (first-fit-decreasing over nodes;
    taints, affinity and topology are not modelled). Exit 1 when --fit finds no context that fits.
    """
    from workload_map.errors import WorkloadMapError
    from workload_map.resolve.placement import placement_needs
    from workload_map.views.format import columns, cpu_text, memory_text

    state = get_state()
    session = Session(state)
    try:
        fmt = resolve_output(state, FORMATS)
        obj = read_manifest(file)
        entry = manifest_entry(session, obj, fmt)
        try:
            needs = placement_needs(entry.karta, obj)
        except WorkloadMapError as exc:
            raise CommandError(
                f'requirements {obj["kind"]} "{(obj.get("metadata") or {}).get("name")}": {exc}'
            ) from exc
        contexts = [c.strip() for value in fit for c in value.split(",") if c.strip()]
        results = [_fit_context(session, c, entry.karta, needs) for c in contexts]
        if fmt in ("json", "yaml"):
            from workload_map.views.machine import dump

            data: dict[str, Any] = {"definition": entry.name, "origin": entry.origin, **needs.to_dict()}
            if contexts:
                data["fit"] = results
            click.echo(dump(data, fmt), nl=False)
        else:
            name = (obj.get("metadata") or {}).get("name") or "<none>"
            lines = [f"{obj['kind']}/{name}   definition: {entry.name} ({entry.origin})", ""]
            rows = [["COMPONENT", "INSTANCE", "REPLICAS", "MIN", "GPU/POD", "CPU/POD", "MEMORY/POD"]]
            for i in needs.instances:
                r = i.pod_requests
                rows.append(
                    [
                        i.component,
                        i.instance_id or "-",
                        str(i.desired_replicas),
                        str(i.min_replicas),
                        str(r.gpus),
                        cpu_text(r.cpu_millis),
                        memory_text(r.memory_bytes),
                    ]
                )
            lines += columns(rows)
            if needs.gangs:
                lines += ["", "Gangs:"]
                grows = [["GANG", "MIN-PODS", "GPU", "CPU", "MEMORY"]]
                for g in needs.gangs:
                    t = g.min_resources
                    grows.append(
                        [
                            g.name,
                            str(g.min_pods),
                            str(t.gpus),
                            cpu_text(t.cpu_millis),
                            memory_text(t.memory_bytes),
                        ]
                    )
                lines += columns(grows)
            d, m = needs.desired_total, needs.min_total
            lines += [
                "",
                f"Total: {needs.desired_pods} pods (gpu {d.gpus}, cpu {cpu_text(d.cpu_millis)}, "
                f"memory {memory_text(d.memory_bytes)}); minimum {needs.min_pods} pods (gpu {m.gpus}, "
                f"cpu {cpu_text(m.cpu_millis)}, memory {memory_text(m.memory_bytes)})",
            ]
            if contexts:
                lines += ["", "Fit (first-fit-decreasing over free node capacity):"]
                frows = [["CONTEXT", "NODES", "FITS", "DETAIL"]]
                for res in results:
                    if "error" in res:
                        detail = f"error: {res['error']}"
                    else:
                        short = [g for g in res["gangs"] if not g["fits"]]
                        detail = "; ".join(
                            f"{g['name']}: {g['placed']} of {g['minPods']} pods placed" for g in short
                        )
                    frows.append([res["context"], str(res["nodes"]), "yes" if res["fits"] else "no", detail])
                lines += columns(frows)
            click.echo("\n".join(lines))
        if contexts and not any(r["fits"] for r in results):
            raise CommandError(f"the workload fits none of the contexts: {', '.join(contexts)}")
    finally:
        session.close()
