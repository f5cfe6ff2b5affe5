"""``wmap describe TYPE[/NAME] [NAME]`` and ``wmap describe -f FILE|-`` (upstream-spec 5.5).

Live mode reads the object, lists the pods of its namespace once, keeps the pods it owns (owner
references, controllers followed through cached lookups, 8 in flight) and builds the view; pods no
component claims are shown under ``Unattributed pods:``. The cluster's Kartas and the pods and
events of the namespace are asked for first, in the background, so the API server lists them while
the definitions load and compile (issue 24: ``describe`` of 1,000 pods within ``kubectl get pods
-o json``'s time).

File mode resolves a manifest without any cluster (definitions from the catalog, ``--definitions``
and, best effort, the cluster).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import click

from workload_map.cli import terminal
from workload_map.cli.collector_pause import collector_paused
from workload_map.cli.common import (
    Session,
    connection_options,
    output_option,
    resolve_output,
    split_type_name,
)
from workload_map.cli.completion_support import complete_type_or_name
from workload_map.cli.cost import prometheus_options
from workload_map.cli.errors import CommandError, NoDefinitionError, WorkloadNotFoundError
from workload_map.cli.live import (
    echo_no_definition,
    manifest_entry,
    read_manifest,
)
from workload_map.cli.main import get_state

if TYPE_CHECKING:
    from workload_map.cli.main import State
    from workload_map.cluster.client import KubeClient

FORMATS = ("table", "json", "yaml")

T = TypeVar("T")


class _Prefetch(Generic[T]):
    """``read()`` started now in a daemon thread; :meth:`result` waits for it and returns its value
    or raises its error, as if called then. Never asked for (the workload is missing, the type is
    unknown), it is left behind: being a daemon, it never delays the exit."""

    def __init__(self, read: Callable[[], T]) -> None:
        self._read = read
        self._value: tuple[T] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="wmap-describe-prefetch")
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = (self._read(),)
        except BaseException as exc:  # handed to the caller of result()
            self._error = exc

    def wait(self) -> None:
        """Until the read is done; its value or error stays for :meth:`result`."""
        self._thread.join()

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None  # the thread either set a value or an error
        return self._value[0]


def _prefetch_namespace(
    session: Session, namespace: str, show_events: bool
) -> tuple[_Prefetch[list[dict[str, Any]]] | None, _Prefetch[list[dict[str, Any]]] | None]:
    """The pods (and, with ``--show-events``, the events) of ``namespace``, asked for before the
    type is resolved; ``(None, None)`` without a usable kubeconfig (the usual path reports that)."""
    from workload_map.errors import ConfigurationError

    try:
        client: KubeClient = session.client()
    except ConfigurationError:
        return None, None
    from workload_map.kube.objects import KARTA_PATH, api_path

    # The cluster's Kartas too: resolving the type lists them first thing after the imports.
    kartas = _Prefetch(lambda: client.list_all(KARTA_PATH))
    session.early_kartas = kartas.result
    pods = _Prefetch(lambda: client.list_all(api_path("v1", "pods", namespace)))
    if not show_events:
        return pods, None
    from workload_map.cluster.events import read_events

    def events() -> list[dict[str, Any]]:
        kartas.wait()  # then on the Kartas' connection: one TLS handshake fewer
        return read_events(client, namespace)

    return pods, _Prefetch(events)


@click.command(
    "describe",
    short_help="Show one workload as a tree of components and pods.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("args", nargs=-1, metavar="TYPE[/NAME] [NAME]", shell_complete=complete_type_or_name)
@click.option(
    "-f", "--file", "file", metavar="FILE", help="Describe a manifest (or - for stdin); no cluster needed."
)
@click.option(
    "--pod-limit", type=int, default=0, help="Max pod rows per component, unhealthy first (0 = all)."
)
@click.option("--component-limit", type=int, default=0, help="Max components under each parent (0 = all).")
@click.option(
    "--show-events",
    type=click.BOOL,
    is_flag=False,
    flag_value=True,
    default=True,
    metavar="[=true|false]",
    help="Show the Events of the workload, its child objects and its pods (as kubectl; default true).",
)
@click.option(
    "--generic",
    is_flag=True,
    help="Read a type no definition covers generically (kstatus phase, pods from the owner chain).",
)
@connection_options
@prometheus_options
@output_option(FORMATS)
def command(
    args: tuple[str, ...],
    file: str | None,
    pod_limit: int,
    component_limit: int,
    show_events: bool,
    generic: bool,
) -> None:
    """Show a workload's components (roles, instances), replicas, pods with phase and node, GPUs,
    its phase and a resources table; with a Prometheus (--prometheus, $WMAP_PROMETHEUS_URL or the
    config file), its GPU-hours, cost, idle GPU cost and the queries that gave them.

    \b
    Examples:
      wmap describe jobset/train -n ml-team
      wmap describe pytorchjob llama --pod-limit 5
      wmap describe -f examples/jobset-leader-workers.yaml
    """
    if pod_limit < 0:
        raise click.UsageError("--pod-limit must not be negative")
    if component_limit < 0:
        raise click.UsageError("--component-limit must not be negative")
    state = get_state()
    session = Session(state)
    with collector_paused():  # see cli/collector_pause.py
        _describe(session, state, args, file, pod_limit, component_limit, show_events, generic)


def _describe(
    session: Session,
    state: State,
    args: tuple[str, ...],
    file: str | None,
    pod_limit: int,
    component_limit: int,
    show_events: bool,
    generic: bool,
) -> None:
    try:
        if file is not None:
            if args:
                raise click.UsageError(
                    "--file reads the kind from the manifest, so it cannot be combined with "
                    f'"{" ".join(args)}"'
                )
            fmt = resolve_output(state, FORMATS)
            _file_mode(session, file, fmt, pod_limit, component_limit)
            return
        if not args:
            raise click.UsageError("a NAME is required: give it as TYPE/NAME or as TYPE NAME")
        token, name, _ = split_type_name(args)
        if name is None:
            raise click.UsageError("a NAME is required: give it as TYPE/NAME or as TYPE NAME")
        fmt = resolve_output(state, FORMATS)
        _live(session, token, name, fmt, pod_limit, component_limit, show_events, generic)
    finally:
        session.close()


def _emit(view: Any, fmt: str, pod_limit: int, component_limit: int) -> None:
    from workload_map.views.machine import dump
    from workload_map.views.tree import render_describe

    if fmt in ("json", "yaml"):
        click.echo(dump(view.to_dict(), fmt), nl=False)
    else:
        terminal.echo(render_describe(view, pod_limit=pod_limit, component_limit=component_limit), nl=False)


def _file_mode(session: Session, path: str, fmt: str, pod_limit: int, component_limit: int) -> None:
    from workload_map.errors import WorkloadMapError
    from workload_map.resolve import compile_definition, resolve
    from workload_map.resolve.dra import objects_lookup
    from workload_map.views.model import build_describe

    companions: list[dict[str, Any]] = []
    obj = read_manifest(path, companions)
    entry = manifest_entry(session, obj, fmt)
    try:
        workload = resolve(compile_definition(entry.karta), obj, claims=objects_lookup(companions))
        view = build_describe(workload, obj, definition=entry.name, origin=entry.origin, file_mode=True)
    except WorkloadMapError as exc:
        name = (obj.get("metadata") or {}).get("name") or ""
        raise CommandError(f'describe {obj["kind"]} "{name}": {exc}') from exc
    _emit(view, fmt, pod_limit, component_limit)


def _live(
    session: Session,
    token: str,
    name: str,
    fmt: str,
    pod_limit: int,
    component_limit: int,
    show_events: bool,
    generic: bool = False,
) -> None:
    namespace = session.namespace()
    # Asked for before the model, resolver and catalog are imported: the API server lists the
    # pods while they import.
    early_pods, early_events = _prefetch_namespace(session, namespace, show_events)
    from workload_map import messages
    from workload_map.cluster.owners import OwnerLookup, make_owner_lookup
    from workload_map.errors import ForbiddenError, NotFoundError, WorkloadMapError
    from workload_map.live import describe_live
    from workload_map.resolve import compile_definition

    try:
        rt = session.resolve_type(token)
    except NoDefinitionError as exc:
        if generic:
            from workload_map.cli.cost import describe_with_cost
            from workload_map.cli.generic import generic_detail

            _emit(
                describe_with_cost(session.state, generic_detail(session, token, name)),
                fmt,
                pod_limit,
                component_limit,
            )
            return
        if fmt in ("json", "yaml"):
            echo_no_definition(fmt, token=token)
        from workload_map.cli.common import with_generic_hint

        raise with_generic_hint(session, exc, f"wmap describe {token}/{name}") from None
    res = rt.resource
    if res is None:
        raise WorkloadNotFoundError(f"{rt.kind} is not installed in this cluster")
    client = session.client()
    try:
        obj = client.get(res.path(namespace, name))
    except NotFoundError as exc:
        where = f" in namespace {namespace}" if res.namespaced else ""
        raise WorkloadNotFoundError(f'{rt.kind} "{name}" not found{where}') from exc
    except ForbiddenError as exc:
        raise CommandError(f"not allowed to read {rt.kind}: {exc}") from exc
    try:  # while the pods are still on their way
        compiled = compile_definition(rt.entry.karta)
    except WorkloadMapError as exc:
        raise CommandError(f'describe {rt.kind} "{name}": {exc}') from exc
    meta = obj.get("metadata") or {}
    obj_ns = meta.get("namespace") or ""
    pods: list[dict[str, Any]] | None = None
    if obj_ns or not res.namespaced:
        try:
            if early_pods is not None and obj_ns == namespace:
                pods = early_pods.result()
            else:
                pod_path = f"/api/v1/namespaces/{obj_ns}/pods" if obj_ns else "/api/v1/pods"
                pods = client.list_all(pod_path)
        except ForbiddenError as exc:
            session.state.warn(f"not allowed to list pods, so the pods are not shown: {exc}")
    events = None
    if show_events and obj_ns:
        from workload_map.cluster.events import read_events

        try:
            if early_events is not None and obj_ns == namespace:
                events = early_events.result()
            else:
                events = read_events(client, obj_ns)
        except ForbiddenError as exc:
            session.state.warn(f"not allowed to list events, so they are not shown: {exc}")
    lookups = []

    def lookup() -> OwnerLookup:
        lookups.append(make_owner_lookup(client, session.discovery()))
        return lookups[-1]

    try:
        view = describe_live(compiled, rt.entry, obj, pods, lookup, events, session.claims())
    except WorkloadMapError as exc:
        raise CommandError(f'describe {rt.kind} "{name}": {exc}') from exc
    denied = sorted({r for lk in lookups for r in lk.denied_resources()})
    if denied:
        session.state.warn(messages.owners_not_readable(denied))
    from workload_map.cli.cost import describe_with_cost

    _emit(describe_with_cost(session.state, view), fmt, pod_limit, component_limit)
