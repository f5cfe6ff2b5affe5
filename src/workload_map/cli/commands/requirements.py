"""``wmap requirements -f FILE [--fit CONTEXT[,CONTEXT...]]``: what a manifest needs from a cluster.

Without ``--fit`` no cluster is needed: per component instance the desired and minimum replicas and
one pod's requests, the gangs (pods that must be placed together) with their minimum pods and
resources, and the totals (:func:`workload_map.resolve.placement.placement_needs`).

``--fit`` checks kube contexts. For each context it lists the nodes and the non-terminated pods
and hands them to :func:`workload_map.resolve.fit.check_fit` (pure, reusable): free resources =
``allocatable`` minus the requests of the pods bound to each node (``pods`` and extended
resources such as ``nvidia.com/gpu`` count as resources too), then a first-fit-decreasing bin
packing of every gang's minimum pods (largest first by GPU, CPU, memory), all gangs into the same
nodes, through kube-scheduler's node filters: not ``Ready`` and cordoned nodes excluded (unless
the pod tolerates ``node.kubernetes.io/unschedulable``), ``NoSchedule``/``NoExecute`` taints
must be tolerated, ``nodeSelector`` and required node affinity must match. A context fits when
every gang's minimum pods are placed; otherwise each gang says why, per component instance and
counted per node (``2 of 4 pods placed; 2 of replicatedjob/workers: 3 nodes excluded by taint
nvidia.com/gpu=present:NoSchedule, 1 by nodeSelector``). Not modelled: inter-pod affinity,
topology spread, DRA claims, and pods that other schedulers will place meanwhile; the answer is
a capacity check, not a scheduling promise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from workload_map.cli import terminal
from workload_map.cli.common import Session, connection_options, output_option, resolve_output
from workload_map.cli.errors import CommandError
from workload_map.cli.live import manifest_entry, read_manifest
from workload_map.cli.main import get_state
from workload_map.resolve.fit import NodeCapacity, check_fit, first_fit_decreasing, pod_vector

if TYPE_CHECKING:
    from workload_map.resolve.placement import PlacementNeeds

FORMATS = ("table", "json", "yaml")

__all__ = ["NodeCapacity", "command", "first_fit_decreasing", "pod_vector"]


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
    help=(
        "Check whether the nodes of these kubeconfig contexts can hold every gang's minimum pods "
        "(free capacity, taints/tolerations, nodeSelector, required node affinity, cordons)."
    ),
)
@connection_options
@output_option(FORMATS)
def command(file: str, fit: tuple[str, ...]) -> None:
    """Show what the workload in FILE needs (per component instance, per gang, in total) and, with
    --fit, which kube contexts can hold it.

    \b
    --fit places every gang's minimum pods first-fit-decreasing over each context's nodes, as
    kube-scheduler's filters would accept them:
      - free capacity = allocatable - requests of non-terminated pods (cpu, memory,
        extended resources such as nvidia.com/gpu, and the pod count);
      - nodes not Ready are excluded; cordoned nodes unless the pod tolerates
        node.kubernetes.io/unschedulable;
      - NoSchedule/NoExecute taints must be tolerated (PreferNoSchedule ignored);
      - nodeSelector labels and required node affinity (In, NotIn, Exists,
        DoesNotExist, Gt, Lt; matchFields metadata.name) must match; preferred ignored.

    A gang that does not fit says why, e.g. "2 of 4 pods placed; 2 of replicatedjob/workers: 3 nodes
    excluded by taint nvidia.com/gpu=present:NoSchedule, 1 by nodeSelector". Inter-pod affinity
    and topology are not modelled. Exit 1 when --fit finds no context that fits.
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
                        detail = " | ".join(f"{g['name']}: {g['reason']}" for g in short)
                    frows.append([res["context"], str(res["nodes"]), "yes" if res["fits"] else "no", detail])
                lines += columns(frows)
            terminal.echo("\n".join(lines))
        if contexts and not any(r["fits"] for r in results):
            raise CommandError(f"the workload fits none of the contexts: {', '.join(contexts)}")
    finally:
        session.close()
