"""``wmap gang TYPE/NAME [--scheduler S] [-f OBJECTS]``: every gang object of a workload.

The workload's gang plan (:mod:`workload_map.resolve.gang_plan`) rendered for the scheduler
(:mod:`workload_map.resolve.schedulers`): its objects (PodGroups, Workloads...), the pod-template
changes that link its pods to them and the change to the workload itself, as
:func:`workload_map.live.gang_objects` gives them. Live, objects of the same name that another
controller already owns, and scheduler CRDs the cluster does not serve, are warned about. With
``-f`` the workload (and any PriorityClasses or existing objects) come from a file (a ``kubectl
get -o yaml`` List or YAML documents): no cluster. ``-o yaml|json`` prints the whole answer;
``--objects-only`` prints the objects as a ``v1 List`` for ``kubectl apply -f -``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click

from workload_map.cli import exit_codes
from workload_map.cli.common import (
    Session,
    connection_options,
    output_option,
    resolve_output,
    split_type_name,
)
from workload_map.cli.completion_support import complete_type_or_name
from workload_map.cli.errors import CommandError, WorkloadNotFoundError
from workload_map.cli.gangs import policy_options, scheduler_option
from workload_map.cli.main import get_state

FORMATS = ("table", "json", "yaml")


@click.command(
    "gang",
    short_help="Show every gang object of a workload for a scheduler.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("args", nargs=-1, metavar="TYPE[/NAME] [NAME]", shell_complete=complete_type_or_name)
@click.option(
    "-f",
    "--filename",
    "filename",
    metavar="FILE",
    default=None,
    help="Read the workload from FILE (a List or YAML documents; - for stdin); no cluster.",
)
@click.option(
    "--objects-only", is_flag=True, help="Print only the objects, as a v1 List (kubectl apply -f -)."
)
@scheduler_option
@policy_options
@connection_options
@output_option(FORMATS)
def command(
    args: tuple[str, ...],
    filename: str | None,
    objects_only: bool,
    scheduler: str,
    queue: str | None,
    priority_class: str | None,
    schedule_timeout: int | None,
    scheduler_name: str | None,
    disruption_mode: str | None,
) -> None:
    """Show the objects SCHEDULER needs to gang-schedule a workload, computed from its
    definition's gang rules (minimum members per group and subgroup, minimum resources from the
    pods' requests, queue, PriorityClass, topology), and what to set on its pod templates so the
    pods join them.

    \b
    Examples:
      wmap gang pytorchjob/llama -n ml --scheduler volcano
      wmap gang jobset/train --scheduler workload-api -o yaml
      wmap gang raycluster/rc -f objects.yaml --scheduler coscheduling --objects-only | kubectl apply -f -
    """
    from workload_map.cli.gangs import emit, plan_options, render_options
    from workload_map.errors import WorkloadMapError
    from workload_map.live import gang_objects

    token, name, _ = split_type_name(args)
    if name is None:
        raise click.UsageError("a NAME is required: give it as TYPE/NAME or as TYPE NAME")
    state = get_state()
    session = Session(state)
    try:
        fmt = resolve_output(state, FORMATS)
        policy = plan_options(queue, priority_class, schedule_timeout)
        if filename is not None:
            entry, obj, existing, values = _from_file(session, filename, token, name)
        else:
            entry, obj, values = _live(session, token, name)
            existing = None
        try:
            answer = gang_objects(
                entry, obj, scheduler, policy, render_options(scheduler_name, disruption_mode, values)
            )
        except WorkloadMapError as exc:
            raise CommandError(f'gang {obj.get("kind")} "{name}": {exc}') from exc
        if existing is not None:
            from workload_map.resolve.schedulers import conflicts

            for warning in conflicts(answer.plan, answer.rendered, existing):
                state.warn(warning)
        else:
            from workload_map.cli.gangs import live_conflicts

            for warning in live_conflicts(session, answer):
                state.warn(warning)
        emit(answer, fmt, objects_only, state.warn)
    finally:
        session.close()


def _from_file(
    session: Session, path: str, token: str, name: str
) -> tuple[Any, Mapping[str, Any], list[Mapping[str, Any]], Any]:
    """The definition for ``token``, the object of that type named ``name`` in the file (in the
    ``-n`` namespace when given), the file's objects and its PriorityClass values."""
    from workload_map.cli.common import type_word_error
    from workload_map.cli.gangs import priority_values_in
    from workload_map.cli.live import read_objects
    from workload_map.errors import WorkloadMapError
    from workload_map.kube.objects import group_of, name_of, namespace_of
    from workload_map.type_words import resolve_word

    defs = session.definitions(cluster=False)
    try:
        entry = resolve_word(defs, token).entry
    except WorkloadMapError as exc:
        raise type_word_error(exc) from exc
    gvk = entry.gvk
    objects = read_objects(path)
    namespace = str(session.state.conn.get("namespace") or "")
    found = [
        o
        for o in objects
        if gvk is not None
        and o.get("kind") == gvk.kind
        and group_of(o.get("apiVersion")) == gvk.group
        and name_of(o) == name
        and (not namespace or namespace_of(o) in (namespace, ""))
    ]
    kind = gvk.kind if gvk is not None else token
    if not found:
        where = f" in namespace {namespace}" if namespace else ""
        raise WorkloadNotFoundError(f'{kind} "{name}" not found{where} in {path}')
    if len(found) > 1:
        raise CommandError(
            f'{path} holds {len(found)} {kind}s named "{name}"; choose one with -n', exit_codes.AMBIGUOUS
        )
    return entry, found[0], list(objects), priority_values_in(list(objects))


def _live(session: Session, token: str, name: str) -> tuple[Any, Mapping[str, Any], Any]:
    from workload_map.cli.gangs import live_priority_values
    from workload_map.cli.live import read_workload

    rt, obj = read_workload(session, token, name)
    return rt.entry, obj, live_priority_values(session.client())
