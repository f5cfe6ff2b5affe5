"""The options ``wmap group`` and ``wmap gang`` share to choose a scheduler and override the gang
policy, and how both print a workload's gang objects (table, the whole answer as YAML/JSON, or the
objects alone as a ``v1 List`` for ``kubectl apply -f -``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from workload_map.kube.schedulers import DEFAULT_SCHEDULER, SCHEDULERS

if TYPE_CHECKING:
    from workload_map.cli.common import Session
    from workload_map.live import GangAnswer
    from workload_map.resolve.gang_plan import PlanOptions
    from workload_map.resolve.schedulers import RenderOptions

F = TypeVar("F", bound=Callable[..., Any])

SCHEDULER_HELP = (
    "The scheduler whose objects to show: " + ", ".join(SCHEDULERS) + f" (default {DEFAULT_SCHEDULER})."
)


def _name(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    from workload_map.errors import WorkloadMapError
    from workload_map.resolve.gang_expressions import check_name

    try:
        return check_name(value, "name")
    except WorkloadMapError:
        raise click.BadParameter(
            f"{value!r} is not a DNS-1123 subdomain (lowercase letters, digits, '-' and '.')"
        ) from None


def _positive(_ctx: click.Context, _param: click.Parameter, value: int | None) -> int | None:
    if value is not None and not 0 <= value <= 2**31 - 1:
        raise click.BadParameter("must be a whole number of seconds from 0 to 2147483647")
    return value


def scheduler_option(f: F) -> F:
    return click.option(
        "--scheduler",
        type=click.Choice(SCHEDULERS),
        default=DEFAULT_SCHEDULER,
        show_default=True,
        help=SCHEDULER_HELP,
    )(f)


def policy_options(f: F) -> F:
    """``--queue``, ``--priority-class``, ``--schedule-timeout``, ``--scheduler-name``,
    ``--disruption-mode``: what the caller decides over the definition."""
    for decorator in reversed(
        [
            click.option(
                "--queue",
                metavar="NAME",
                callback=_name,
                help="The gang's queue (Volcano queue, Kueue LocalQueue).",
            ),
            click.option(
                "--priority-class", metavar="NAME", callback=_name, help="The gang's PriorityClass."
            ),
            click.option(
                "--schedule-timeout",
                type=int,
                callback=_positive,
                metavar="SECONDS",
                help="Seconds the gang may wait to be scheduled (coscheduling's scheduleTimeoutSeconds).",
            ),
            click.option(
                "--scheduler-name",
                metavar="NAME",
                help="The schedulerName pods get (default: the scheduler's usual one).",
            ),
            click.option(
                "--disruption-mode",
                type=click.Choice(["single", "all"]),
                help="The Workload API's disruptionMode (default: the API's, single).",
            ),
        ]
    ):
        f = decorator(f)
    return f


def plan_options(queue: str | None, priority_class: str | None, schedule_timeout: int | None) -> PlanOptions:
    from workload_map.resolve.gang_plan import PlanOptions

    return PlanOptions(
        queue=queue, priority_class_name=priority_class, schedule_timeout_seconds=schedule_timeout
    )


def render_options(
    scheduler_name: str | None,
    disruption_mode: str | None,
    priority_value: Callable[[str], int | None] | None,
) -> RenderOptions:
    from workload_map.resolve.schedulers import RenderOptions

    mode: Any = disruption_mode
    return RenderOptions(scheduler_name=scheduler_name, priority_value=priority_value, disruption_mode=mode)


def priority_values_in(objects: list[Any]) -> Callable[[str], int | None]:
    """PriorityClass values from a file's PriorityClass objects."""
    values: dict[str, int] = {}
    for o in objects:
        if o.get("kind") == "PriorityClass" and isinstance(o.get("value"), int):
            name = (o.get("metadata") or {}).get("name")
            if isinstance(name, str):
                values[name] = o["value"]
    return values.get


def live_priority_values(client: Any) -> Callable[[str], int | None]:
    """PriorityClass values read from the cluster (:func:`workload_map.live.priority_values`)."""
    from workload_map.live import priority_values

    return priority_values(client.get)


def live_conflicts(session: Session, answer: GangAnswer) -> list[str]:
    """Warnings for the objects that already exist under another controller, and one warning
    per object kind whose CRD the cluster does not serve (:func:`workload_map.live.gang_warnings`)."""
    from workload_map.errors import NotFoundError
    from workload_map.live import NotServedError, gang_warnings

    discovery = session.discovery()
    client = session.client()

    def read(api_version: str, kind: str, namespace: str, name: str) -> Any:
        res = discovery.resource_for_kind(api_version, kind)
        if res is None:
            raise NotServedError(kind)
        try:
            return client.get(res.path(namespace, name))
        except NotFoundError:
            return None

    return gang_warnings(answer, read)


def emit(answer: GangAnswer, fmt: str, objects_only: bool, warn: Callable[[str], None]) -> None:
    """Print the answer; with ``--objects-only`` its notes become warnings (the List has no room)."""
    from workload_map.views.machine import dump

    rendered, plan = answer.rendered, answer.plan
    if objects_only:
        for note in (*plan.notes, *rendered.notes):
            warn(note)
        doc = {"apiVersion": "v1", "kind": "List", "items": rendered.to_dict(plan)["objects"]}
        click.echo(dump(doc, "json" if fmt == "json" else "yaml"), nl=False)
        return
    if fmt in ("json", "yaml"):
        click.echo(dump(answer.to_dict(), fmt), nl=False)
        return
    click.echo(table(answer))


def table(answer: GangAnswer) -> str:
    """The answer for a terminal: the workload, each gang, the objects, the changes, the notes."""
    from workload_map.views.format import columns

    plan, rendered = answer.plan, answer.rendered
    rows = [
        [
            "Workload:",
            f"{plan.kind}/{plan.name}" + (f" (namespace {plan.namespace})" if plan.namespace else ""),
        ],
        ["Definition:", f"{answer.entry.name} ({answer.entry.origin})"],
        ["Scheduler:", rendered.scheduler],
    ]
    lines = columns(rows, pads=1)
    if plan.gangs:
        lines += ["", "Gangs:"]
        gang_rows = [["NAME", "MIN-MEMBER", "MIN-SUBGROUP", "MEMBERS", "MIN-RESOURCES"]]
        from workload_map.resolve.schedulers import quantities

        for g in plan.gangs:
            res = quantities(g.min_resources)
            # DRA devices are not node resources (no ResourceList carries them): shown apart
            dra = [f"{k}={v} (DRA)" for k, v in sorted(g.min_resources.devices.items()) if v > 0]
            gang_rows.append(
                [
                    g.name,
                    str(g.min_member),
                    "-" if g.min_sub_group is None else str(g.min_sub_group),
                    ", ".join(f"{m.task}={n}" for m, n in zip(g.members, g.required, strict=True)),
                    ", ".join([*(f"{k}={v}" for k, v in res.items()), *dra]) or "-",
                ]
            )
        lines += columns(gang_rows)
    if rendered.objects:
        lines += ["", "Objects:"]
        lines += [f"  {o['kind']} {o['metadata']['name']} ({o['apiVersion']})" for o in rendered.objects]
    if rendered.template_changes:
        lines += ["", "Pod templates:"]
        for c in rendered.template_changes:
            what = [f"{k}={v}" for k, v in {**c.labels, **c.annotations}.items()]
            if c.scheduler_name:
                what.append(f"schedulerName={c.scheduler_name}")
            if c.pod_group_name:
                what.append(f"schedulingGroup.podGroupName={c.pod_group_name}")
            target = c.component + (f"[{c.instance_id}]" if c.instance_id else "")
            lines.append(f"  {target}: {', '.join(what)}")
    if not rendered.workload_change.is_empty:
        wc = rendered.workload_change
        what = [f"{k}={v}" for k, v in {**wc.labels, **wc.annotations}.items()]
        what += [f"{p} = {v}" for p, v in wc.suspend_actions]
        lines += ["", f"{plan.kind}/{plan.name}: {', '.join(what)}"]
    notes = list(plan.notes) + list(rendered.notes)
    if notes:
        lines += ["", "Notes:"] + [f"  {n}" for n in notes]
    return "\n".join(lines)
