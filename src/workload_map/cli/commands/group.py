"""``wmap group POD [-n NS] [-f OBJECTS]``: the PodGroup KAI Scheduler creates for a pod.

The answer is :func:`workload_map.live.kai_pod_group`: KAI's owner walk (first owner reference,
then each owner's only one), the definition matching the top owner's group/version/kind exactly
(else KAI's default grouper) and the whole ``scheduling.run.ai/v2alpha2`` PodGroup. ``-o yaml``
and ``-o json`` print that object alone, ready for ``kubectl apply --dry-run=server``; the table
adds how it was found. With ``-f`` the pod, its owners and any PriorityClasses come from a file
(a ``kubectl get -o yaml`` List or YAML documents), so no cluster is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from workload_map.cli import exit_codes
from workload_map.cli.common import Session, connection_options, output_option, resolve_output
from workload_map.cli.completion_support import complete_pod
from workload_map.cli.errors import CommandError, WorkloadNotFoundError
from workload_map.cli.main import get_state

FORMATS = ("table", "json", "yaml")

_Lookup = Callable[[str, str, str, str], Mapping[str, Any] | None]
PodLister = Callable[[str, Mapping[str, str]], Sequence[Mapping[str, Any]]]


@click.command(
    "group",
    short_help="Show the PodGroup KAI Scheduler creates for a pod.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("pod", metavar="POD", shell_complete=complete_pod)
@click.option(
    "-f",
    "--filename",
    "filename",
    metavar="FILE",
    default=None,
    help="Read the pod and its owners from FILE (a List or YAML documents; - for stdin); no cluster.",
)
@connection_options
@output_option(FORMATS)
def command(pod: str, filename: str | None) -> None:
    """Show the PodGroup (name, queue, priority, minMember or minSubGroup, subgroups, topology)
    that KAI Scheduler's pod-grouper creates for POD from the gang rules of its workload's
    definition, or from KAI's default grouper when no definition covers the type exactly."""
    from workload_map.errors import ForbiddenError, NotFoundError, WorkloadMapError
    from workload_map.live import kai_pod_group

    state = get_state()
    session = Session(state)
    try:
        fmt = resolve_output(state, FORMATS)
        if filename is not None:
            ns = str(state.conn.get("namespace") or "")
            pod_obj, lookup, exists, list_pods = _from_file(filename, pod, ns)
            defs = session.definitions(cluster=False)
        else:
            ns = session.namespace()
            client = session.client()
            try:
                pod_obj = client.get(f"/api/v1/namespaces/{ns}/pods/{pod}")
            except NotFoundError as exc:
                raise WorkloadNotFoundError(f'Pod "{pod}" not found in namespace {ns}') from exc
            except ForbiddenError as exc:
                raise CommandError(f"not allowed to read Pod: {exc}") from exc
            from workload_map.cluster.owners import make_owner_lookup, make_pod_lister
            from workload_map.resolve.gang_expressions import MAX_SELECTED_PODS

            lookup = make_owner_lookup(client, session.discovery())
            exists = _live_priority_classes(client)
            list_pods = make_pod_lister(client, MAX_SELECTED_PODS)
            defs = session.definitions()
        try:
            answer = kai_pod_group(pod_obj, lookup, defs, priority_class_exists=exists, list_pods=list_pods)
        except WorkloadMapError as exc:
            raise CommandError(f'group Pod "{pod}": {exc}') from exc
        if fmt in ("json", "yaml"):
            from workload_map.views.machine import dump

            click.echo(dump(answer.object, fmt), nl=False)
            return
        click.echo(_table(answer))
    finally:
        session.close()


def _from_file(
    path: str, pod: str, namespace: str
) -> tuple[Mapping[str, Any], _Lookup, Callable[[str], bool], PodLister]:
    """The pod named ``pod`` (in ``namespace`` when given), an owner lookup over the file's
    objects, a PriorityClass check (every name exists when the file lists none) and the file's
    pods as a lister (what KAI would list: the MPIJob launcher pods, as the file holds them)."""
    from workload_map.cli.live import read_objects
    from workload_map.kube.objects import has_labels, name_of, namespace_of
    from workload_map.kube.owners import lookup_in

    objects = read_objects(path)
    pods = [
        o
        for o in objects
        if o.get("kind") == "Pod"
        and name_of(o) == pod
        and (not namespace or namespace_of(o) in (namespace, ""))
    ]
    if not pods:
        where = f" in namespace {namespace}" if namespace else ""
        raise WorkloadNotFoundError(f'Pod "{pod}" not found{where} in {path}')
    if len(pods) > 1:
        raise CommandError(
            f'{path} holds {len(pods)} Pods named "{pod}"; choose one with -n', exit_codes.AMBIGUOUS
        )
    lookup = lookup_in(objects)

    classes = {
        name_of(o)
        for o in objects
        if o.get("kind") == "PriorityClass" and str(o.get("apiVersion", "")).startswith("scheduling.k8s.io/")
    }

    def exists(name: str) -> bool:
        return not classes or name in classes

    all_pods = [o for o in objects if o.get("kind") == "Pod" and str(o.get("apiVersion")) == "v1"]

    def list_pods(ns: str, labels: Mapping[str, str]) -> Sequence[Mapping[str, Any]]:
        return [p for p in all_pods if namespace_of(p) == ns and has_labels(p, labels)]

    return pods[0], lookup, exists, list_pods


def _live_priority_classes(client: Any) -> Callable[[str], bool]:
    """KAI keeps a pod's priority class only if the PriorityClass exists; one GET per name.
    A forbidden read counts as existing (the name is what the user asked for)."""
    from workload_map.errors import ForbiddenError, NotFoundError

    cache: dict[str, bool] = {}

    def exists(name: str) -> bool:
        if name not in cache:
            try:
                client.get(f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}")
                cache[name] = True
            except NotFoundError:
                cache[name] = False
            except ForbiddenError:
                cache[name] = True
        return cache[name]

    return exists


def _table(answer: Any) -> str:
    from workload_map.views.format import columns

    plan, obj = answer.plan, answer.object
    pod_meta = answer.pod.get("metadata") or {}
    top_meta = answer.top.get("metadata") or {}
    spec = obj["spec"]
    definition = (
        f"{answer.entry.name} ({answer.entry.origin})"
        if answer.entry is not None
        else "none covers this type exactly: KAI's default grouper"
    )
    rows = [
        ["Pod:", f"{pod_meta.get('namespace')}/{pod_meta.get('name')}"],
        ["Top owner:", f"{answer.top.get('kind')}/{top_meta.get('name')}"],
        ["Definition:", definition],
        ["PodGroup:", plan.name],
        ["Format:", plan.format],
        ["Queue:", spec["queue"]],
        ["PriorityClass:", spec["priorityClassName"]],
    ]
    if "preemptibility" in spec:
        rows.append(["Preemptibility:", spec["preemptibility"]])
    if plan.min_sub_group is not None:
        rows.append(["MinSubGroup:", str(plan.min_sub_group)])
    else:
        rows.append(["MinMember:", str(plan.min_available)])
    if plan.component:
        rows.append(["Component:", plan.component + (f" ({plan.instance_id})" if plan.instance_id else "")])
    topo = spec.get("topologyConstraint")
    if topo:
        rows.append(["Topology:", ", ".join(f"{k}={v}" for k, v in topo.items() if v)])
    lines = columns(rows, pads=1)
    if plan.sub_groups:
        lines += ["", "SubGroups:"]
        sub = [["NAME", "PARENT", "MIN-MEMBER", "MIN-SUBGROUP", "POD-IS-MEMBER"]]
        sub += [
            [
                s.name,
                s.parent or "-",
                "-" if s.min_sub_group is not None else str(s.min_member),
                "-" if s.min_sub_group is None else str(s.min_sub_group),
                "yes" if s.pod_is_member else "no",
            ]
            for s in plan.sub_groups
        ]
        lines += columns(sub)
    return "\n".join(lines)
