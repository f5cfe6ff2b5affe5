"""``wmap group POD [-n NS] [-f OBJECTS] [--scheduler S]``: the gang object a pod joins.

With ``--scheduler kai`` (the default) the answer is :func:`workload_map.live.kai_pod_group`:
KAI's owner walk (first owner reference, then each owner's only one), the definition matching
the top owner's group/version/kind exactly (else KAI's default grouper) and the whole
``scheduling.run.ai/v2alpha2`` PodGroup KAI's pod-grouper creates. With another scheduler it is
:func:`workload_map.live.pod_gang_objects`: the same owner walk, the workload's gang plan
rendered for that scheduler and the object the pod's template is linked to (``wmap gang`` shows
them all). ``-o yaml`` and ``-o json`` print that object alone, ready for
``kubectl apply --dry-run=server``; the table adds how it was found. With ``-f`` the pod, its
owners and any PriorityClasses come from a file (a ``kubectl get -o yaml`` List or YAML
documents), so no cluster is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from workload_map.cli import exit_codes, terminal
from workload_map.cli.common import Session, connection_options, output_option, resolve_output
from workload_map.cli.completion_support import complete_pod
from workload_map.cli.errors import CommandError, WorkloadNotFoundError
from workload_map.cli.gangs import policy_options, scheduler_option
from workload_map.cli.main import get_state

if TYPE_CHECKING:
    from workload_map.resolve.dra import ClaimLookup

FORMATS = ("table", "json", "yaml")

_Lookup = Callable[[str, str, str, str], Mapping[str, Any] | None]
PodLister = Callable[[str, Mapping[str, str]], Sequence[Mapping[str, Any]]]


@click.command(
    "group",
    short_help="Show the gang object a pod joins (KAI's PodGroup by default).",
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
@scheduler_option
@policy_options
@connection_options
@output_option(FORMATS)
def command(
    pod: str,
    filename: str | None,
    scheduler: str,
    queue: str | None,
    priority_class: str | None,
    schedule_timeout: int | None,
    scheduler_name: str | None,
    disruption_mode: str | None,
) -> None:
    """Show the PodGroup (name, queue, priority, minMember or minSubGroup, subgroups, topology)
    that KAI Scheduler's pod-grouper creates for POD from the gang rules of its workload's
    definition, or from KAI's default grouper when no definition covers the type exactly.
    With --scheduler volcano, coscheduling, workload-api or kueue: the object of that scheduler
    POD's template is linked to, from the same definition (wmap gang prints all of them).

    \b
    Examples:
      wmap group llama-workers-0-0 -n ml-team -o yaml
      wmap group llama-workers-0-0 --scheduler volcano -f objects.yaml
    """
    from workload_map.errors import ForbiddenError, NotFoundError, WorkloadMapError
    from workload_map.live import kai_pod_group

    state = get_state()
    session = Session(state)
    try:
        fmt = resolve_output(state, FORMATS)
        if filename is not None:
            ns = str(state.conn.get("namespace") or "")
            pod_obj, lookup, exists, list_pods, values, claims = _from_file(filename, pod, ns)
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
            from workload_map.cli.gangs import live_priority_values
            from workload_map.cluster.owners import make_owner_lookup, make_pod_lister
            from workload_map.live import priority_class_exists
            from workload_map.resolve.gang_expressions import MAX_SELECTED_PODS

            lookup = make_owner_lookup(client, session.discovery())
            exists = priority_class_exists(client.get)
            list_pods = make_pod_lister(client, MAX_SELECTED_PODS)
            values = live_priority_values(client)
            claims = session.claims()
            defs = session.definitions()
        if scheduler != "kai":
            _other_scheduler(
                pod,
                pod_obj,
                lookup,
                defs,
                fmt,
                scheduler,
                (queue, priority_class, schedule_timeout),
                (scheduler_name, disruption_mode),
                values,
                claims,
            )
            return
        try:
            answer = kai_pod_group(pod_obj, lookup, defs, priority_class_exists=exists, list_pods=list_pods)
        except WorkloadMapError as exc:
            raise CommandError(f'group Pod "{pod}": {exc}') from exc
        if fmt in ("json", "yaml"):
            from workload_map.views.machine import dump

            click.echo(dump(answer.object, fmt), nl=False)
            return
        terminal.echo(_table(answer))
    finally:
        session.close()


def _other_scheduler(
    pod: str,
    pod_obj: Mapping[str, Any],
    lookup: _Lookup,
    defs: Any,
    fmt: str,
    scheduler: str,
    policy: tuple[str | None, str | None, int | None],
    rendering: tuple[str | None, str | None],
    values: Callable[[str], int | None],
    claims: ClaimLookup,
) -> None:
    """The object of ``scheduler`` the pod joins, from its workload's gang plan."""
    from workload_map.cli.gangs import plan_options, render_options
    from workload_map.errors import WorkloadMapError
    from workload_map.live import pod_gang_objects

    try:
        found = pod_gang_objects(
            pod_obj,
            lookup,
            defs,
            scheduler,
            plan_options(*policy),
            render_options(rendering[0], rendering[1], values),
            claims,
        )
    except WorkloadMapError as exc:
        raise CommandError(f'group Pod "{pod}": {exc}') from exc
    if found.object is None:
        raise CommandError(f'group Pod "{pod}": {found.missing()}')
    if fmt in ("json", "yaml"):
        from workload_map.views.machine import dump

        click.echo(dump(found.object, fmt), nl=False)
        return
    click.echo(_scheduler_table(found))


def _scheduler_table(found: Any) -> str:
    from workload_map.views.format import columns

    obj, plan = found.object, found.answer.plan
    pod_meta = found.pod.get("metadata") or {}
    spec = obj.get("spec") or {}
    change = found.template_change
    rows = [
        ["Pod:", f"{pod_meta.get('namespace')}/{pod_meta.get('name')}"],
        ["Top owner:", f"{plan.kind}/{plan.name}"],
        ["Definition:", f"{found.answer.entry.name} ({found.answer.entry.origin})"],
        ["Component:", found.component + (f" ({found.instance_id})" if found.instance_id else "")],
        ["Object:", f"{obj['kind']} {obj['metadata']['name']} ({obj['apiVersion']})"],
    ]
    for key in ("minMember", "queue", "priorityClassName", "scheduleTimeoutSeconds", "queueName"):
        if key in spec:
            rows.append([f"{key}:", str(spec[key])])
    if "minResources" in spec:
        rows.append(["minResources:", ", ".join(f"{k}={v}" for k, v in spec["minResources"].items())])
    if change is not None:
        links = [f"{k}={v}" for k, v in {**change.labels, **change.annotations}.items()]
        if change.pod_group_name:
            links.append(f"schedulingGroup.podGroupName={change.pod_group_name}")
        if change.scheduler_name:
            links.append(f"schedulerName={change.scheduler_name}")
        rows.append(["Pod template:", ", ".join(links)])
    return "\n".join(columns(rows, pads=1))


def _from_file(
    path: str, pod: str, namespace: str
) -> tuple[
    Mapping[str, Any], _Lookup, Callable[[str], bool], PodLister, Callable[[str], int | None], ClaimLookup
]:
    """The pod named ``pod`` (in ``namespace`` when given), an owner lookup over the file's
    objects, a PriorityClass check (every name exists when the file lists none), the file's pods
    as a lister (what KAI would list: the MPIJob launcher pods, as the file holds them), the
    values of the file's PriorityClasses and its DRA claims and templates."""
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

    from workload_map.cli.gangs import priority_values_in
    from workload_map.resolve.dra import objects_lookup

    return pods[0], lookup, exists, list_pods, priority_values_in(list(objects)), objects_lookup(objects)


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
