"""``wmap group POD [-n NS]``: the PodGroup the definition's gang rules give a pod.

The pod's top owner is found by climbing controller owner references (at most 6 levels); the
definition covering the top owner's type then decides the group through
:func:`workload_map.resolve.gangs.group_pod` (KAI Scheduler's Karta fallback).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from workload_map.cli.common import Session, connection_options, output_option, resolve_output
from workload_map.cli.errors import CommandError, NoDefinitionError, WorkloadNotFoundError
from workload_map.cli.main import get_state
from workload_map.live import definitions_for, pod_group_document, top_owner

FORMATS = ("table", "json", "yaml")


@click.command(
    "group",
    short_help="Show the PodGroup the gang rules give a pod.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("pod", metavar="POD")
@connection_options
@output_option(FORMATS)
def command(pod: str) -> None:
    """Show the PodGroup (name, minMember, subgroups, topology) that the gang rules of the pod's
    workload definition give POD, as KAI Scheduler's Karta fallback would create it."""
    from workload_map.cluster.owners import make_owner_lookup
    from workload_map.errors import ForbiddenError, NotFoundError, WorkloadMapError
    from workload_map.resolve.gangs import group_pod

    state = get_state()
    session = Session(state)
    try:
        fmt = resolve_output(state, FORMATS)
        ns = session.namespace()
        client = session.client()
        try:
            pod_obj = client.get(f"/api/v1/namespaces/{ns}/pods/{pod}")
        except NotFoundError as exc:
            raise WorkloadNotFoundError(f'Pod "{pod}" not found in namespace {ns}') from exc
        except ForbiddenError as exc:
            raise CommandError(f"not allowed to read Pod: {exc}") from exc
        lookup = make_owner_lookup(client, session.discovery())

        def forbidden(ref: Mapping[str, Any], exc: Exception) -> None:
            if isinstance(exc, ForbiddenError):
                raise CommandError(f"not allowed to read {ref.get('kind')} {ref.get('name')}: {exc}") from exc

        top = top_owner(pod_obj, lookup, on_error=forbidden)
        if top is None:
            raise CommandError(f'Pod "{pod}" has no controller owner, so no workload defines its gang')
        found, gvk_text = definitions_for(session.definitions(), top)
        if not found:
            raise NoDefinitionError(f"no Karta definition covers this workload type: {gvk_text}")
        if len(found) > 1:
            names = ", ".join(f'"{e.name}"' for e in found)
            raise CommandError(f"{len(found)} Karta definitions claim {gvk_text}: {names}", 2)
        entry = found[0]
        try:
            plan = group_pod(entry.karta, top, pod_obj)
        except WorkloadMapError as exc:
            raise CommandError(f'group Pod "{pod}": {exc}') from exc
        kind = str(top.get("kind"))
        top_meta = top.get("metadata") or {}
        data = pod_group_document(pod, ns, top, entry, plan)
        if fmt in ("json", "yaml"):
            from workload_map.views.machine import dump

            click.echo(dump(data, fmt), nl=False)
            return
        from workload_map.views.format import columns

        rows = [
            ["Pod:", f"{ns}/{pod}"],
            ["Workload:", f"{kind}/{top_meta.get('name')}"],
            ["Definition:", f"{entry.name} ({entry.origin})"],
            ["PodGroup:", plan.name],
            ["Format:", plan.format],
            ["MinMember:", "-" if plan.min_member is None else str(plan.min_member)],
        ]
        if plan.min_sub_group is not None:
            rows.append(["MinSubGroup:", str(plan.min_sub_group)])
        if plan.component:
            rows.append(
                ["Component:", plan.component + (f" ({plan.instance_id})" if plan.instance_id else "")]
            )
        topo = data["podGroup"].get("topologyConstraint")
        if topo:
            rows.append(["Topology:", ", ".join(f"{k}={v}" for k, v in topo.items() if v)])
        lines = columns(rows, pads=1)
        if plan.sub_groups:
            lines += ["", "SubGroups:"]
            sub = [["NAME", "MIN-MEMBER", "POD-IS-MEMBER"]]
            sub += [[s.name, str(s.min_member), "yes" if s.pod_is_member else "no"] for s in plan.sub_groups]
            lines += columns(sub)
        click.echo("\n".join(lines))
    finally:
        session.close()
