"""``wmap get (TYPE[/NAME] [NAME] | --all-types)`` (upstream-spec 5.4, plus GPU/COMPONENTS columns,
``-A``, pod readiness with ``-o wide``, ``-o json`` and ``-o yaml``, kubectl's output and
selection habits, comma-separated types, and ``--watch`` over any number of types).

Objects are read page by page (``--chunk-size``) and resolved as they arrive; only the small row
views are kept (the raw objects too with ``-o wide``, which attributes pods), so memory stays flat
for large listings. ``--all-types`` lists every covered kind the server serves, once, at its
most stable covered version, and keeps a row only if no object in its controller-owner chain is
of a covered kind (depth 6; uncovered owners fetched, cached, 8 in flight). Limitation: operators
that track children by label or across namespaces leave no owner edge, so those children appear
as top-level rows.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import click

from workload_map.cli import exit_codes, terminal
from workload_map.cli.collector_pause import collector_paused
from workload_map.cli.common import (
    ALL_FORMATS,
    ResolvedType,
    Session,
    connection_options,
    output_option,
    resolve_output,
    split_type_name,
    with_generic_hint,
)
from workload_map.cli.completion_support import complete_phase, complete_type_or_name
from workload_map.cli.cost import prometheus_options
from workload_map.cli.errors import CommandError, NoDefinitionError, WorkloadNotFoundError
from workload_map.cli.live import echo_no_definition
from workload_map.cli.main import State, get_state
from workload_map.kube.objects import controller_ref, group_of
from workload_map.kube.owners import index_by_owner, under_covered_kind
from workload_map.views import filters

if TYPE_CHECKING:
    from workload_map.cluster.discovery import APIResource
    from workload_map.definitions_source import DefinitionEntry
    from workload_map.resolve.compiled import CompiledDefinition
    from workload_map.resolve.dra import ClaimLookup
    from workload_map.resolve.pods import PodAttribution
    from workload_map.resolve.types import Workload
    from workload_map.views.jsonpath import Template
    from workload_map.views.model import WorkloadView


def check_selector(selector: str) -> None:
    """kubectl-like label selector syntax check (usage error when malformed)."""
    try:
        filters.check_selector(selector)
    except filters.SelectorError:
        raise click.UsageError(f'unable to parse requirement: invalid label selector "{selector}"') from None


def parse_phases(values: Sequence[str]) -> set[str]:
    try:
        return set(filters.parse_phases(values))
    except filters.UnknownPhaseError as exc:
        raise click.UsageError(
            f'invalid --phase "{exc.phase}": must be one of {", ".join(filters.PHASES)}'
        ) from None


@dataclass
class Row:
    view: WorkloadView
    obj: dict[str, Any] | None
    #: ``None`` for a generic row (no definition covers its type)
    compiled: CompiledDefinition | None
    owner: Mapping[str, Any] | None = None


def _compiled(entry: DefinitionEntry) -> CompiledDefinition:
    from workload_map.errors import WorkloadMapError
    from workload_map.resolve import compile_definition

    try:
        return compile_definition(entry.karta)
    except WorkloadMapError as exc:
        raise CommandError(f'Karta definition "{entry.name}" cannot be used: {exc}') from exc


def _row(
    entry: DefinitionEntry,
    compiled: CompiledDefinition,
    obj: dict[str, Any],
    state: State,
    keep: bool,
    claims: ClaimLookup | None = None,
) -> Row:
    """The row of one workload; one that cannot be resolved is a row marked with its error.
    ``claims`` reads the DRA claims its pods name (their GPUs count)."""
    from workload_map.errors import DefinitionQuarantinedError, WorkloadMapError
    from workload_map.resolve import resolve
    from workload_map.views.model import build_view, error_view

    quarantine = state.quarantine()
    try:
        workload = quarantine.run(entry.name, lambda: resolve(compiled, obj, claims=claims))
    except WorkloadMapError as exc:
        meta = obj.get("metadata") or {}
        refused = isinstance(exc, DefinitionQuarantinedError)
        if not refused or entry.name not in state.refused:
            state.warn(f"could not resolve {obj.get('kind')}/{meta.get('name')}: {exc}")
        if refused:
            state.refused.add(entry.name)
        view = error_view(obj, definition=entry.name, origin=entry.origin, error=str(exc))
        return Row(view, obj if keep else None, compiled, controller_ref(obj))
    view = build_view(workload, obj, definition=entry.name, origin=entry.origin)
    return Row(view, obj if keep else None, compiled, controller_ref(obj))


def _pages(
    session: Session, path: str, selector: str, chunk: int, sink: dict[str, str], fields: str = ""
) -> Iterator[list[dict[str, Any]]]:
    seen: set[str] = set()
    relisted = False

    def note(_msg: str) -> None:
        nonlocal relisted
        relisted = True

    pages = session.client().list(
        path, label_selector=selector or None, field_selector=fields or None, limit=chunk, on_relist=note
    )
    for page in pages:
        sink["resourceVersion"] = str((page.get("metadata") or {}).get("resourceVersion") or "")
        items = page["items"]
        if relisted:
            items = [i for i in items if (i.get("metadata") or {}).get("uid") not in seen]
        for i in items:
            uid = (i.get("metadata") or {}).get("uid")
            if uid:
                seen.add(uid)
        yield items


def _ns_clause(resource: APIResource | None, ns: str) -> str:
    return f" in namespace {ns}" if resource is None or resource.namespaced else ""


def _list_type(
    session: Session,
    rt: ResolvedType,
    *,
    namespace: str | None,
    name: str | None,
    selector: str,
    chunk: int,
    keep: bool,
    phases: set[str],
    sink: dict[str, str],
    forbidden_warning: str | None = None,
    fields: str = "",
) -> list[Row]:
    from workload_map.errors import ForbiddenError, NotFoundError

    state = session.state
    res = rt.resource
    assert res is not None
    compiled = _compiled(rt.entry)
    rows: list[Row] = []
    if name is not None:
        try:
            obj = session.client().get(res.path(namespace, name))
        except NotFoundError as exc:
            ns_text = _ns_clause(res, namespace or "")
            raise WorkloadNotFoundError(f'{rt.kind} "{name}" not found{ns_text}') from exc
        except ForbiddenError as exc:
            raise CommandError(f"not allowed to read {rt.kind}: {exc}") from exc
        sink["resourceVersion"] = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        row = _row(rt.entry, compiled, obj, state, keep, session.claims())
        if not phases or phases & set(row.view.phases):
            rows.append(row)
        return rows
    try:
        for items in _pages(session, res.path(namespace), selector, chunk, sink, fields):
            for obj in items:
                # list items carry no apiVersion/kind
                obj.setdefault("apiVersion", res.group_version)
                obj.setdefault("kind", res.kind)
                row = _row(rt.entry, compiled, obj, state, keep, session.claims())
                if not phases or phases & set(row.view.phases):
                    rows.append(row)
    except ForbiddenError as exc:
        if forbidden_warning is not None:
            state.warn(forbidden_warning)
            sink["forbidden"] = exc.message
            return []
        raise CommandError(f"not allowed to list {rt.kind}: {exc}") from exc
    except NotFoundError:
        if forbidden_warning is not None:
            return []
        raise
    return rows


def _custom_columns(fmt: str) -> list[tuple[str, tuple[str | int, ...]]]:
    """The columns of ``-o custom-columns=SPEC`` or ``-o custom-columns-file=FILE`` (usage
    errors, exit 2, naming the spec or the file)."""
    from workload_map.views.custom_columns import CustomColumnsError, parse_file, parse_spec

    kind, _, arg = fmt.partition("=")
    try:
        if kind == "custom-columns-file":
            if not arg:
                raise CustomColumnsError("custom-columns-file format specified but no file given")
            return parse_file(_format_file(arg), arg)
        return parse_spec(arg)
    except CustomColumnsError as exc:
        raise click.UsageError(str(exc)) from None


#: Largest ``custom-columns-file=`` or ``jsonpath-file=`` read.
MAX_FORMAT_FILE = 64 * 1024


def _format_file(arg: str) -> str:
    """The text of a ``*-file=`` format argument (usage error naming the file); the shared bounded
    reader refuses special files (a FIFO, /dev/zero) and anything over MAX_FORMAT_FILE."""
    from workload_map.errors import DefinitionError
    from workload_map.model.inputs import read_text

    try:
        return read_text(arg, limit=MAX_FORMAT_FILE)
    except DefinitionError as exc:
        raise click.UsageError(str(exc)) from None


def _jsonpath(fmt: str) -> Template:
    """The template of ``-o jsonpath=``, ``jsonpath-file=`` or ``jsonpath-as-json=`` (usage
    errors, exit 2, in kubectl's words)."""
    from workload_map.views.jsonpath import JSONPathParseError, parse

    kind, _, arg = fmt.partition("=")
    text = _format_file(arg) if kind == "jsonpath-file" and arg else arg
    if kind == "jsonpath-file":
        text = text.rstrip("\n")  # kubectl drops the file's trailing newline too
    if not text:
        raise click.UsageError("template format specified but no template given")
    try:
        return parse(text, as_json=kind == "jsonpath-as-json")
    except JSONPathParseError as exc:
        raise click.UsageError(f"error parsing jsonpath {text}, {exc}") from None


def _render_jsonpath(template: Template, data: Any) -> str:
    from workload_map import messages
    from workload_map.logs import escape_controls
    from workload_map.views.jsonpath import JSONPathExecutionError

    try:
        # Values from the cluster have their control characters escaped; the template's own text
        # ({"\n"}, {"\t"}) is printed as written. jsonpath-as-json stays exact JSON.
        return template.render(data, escape=escape_controls)
    except JSONPathExecutionError as exc:
        raise CommandError(messages.jsonpath_failed(template.source, str(exc), data)) from None


def _sort(rows: list[Row], by: Sequence[str | int] = ()) -> list[Row]:
    """Newest first; with ``--sort-by``, by that field of the view model (stable, kubectl's
    order of values)."""
    from workload_map.views.fieldpath import lookup, sort_key

    rows.sort(key=lambda r: (r.view.kind, r.view.name, r.view.namespace or ""))
    rows.sort(key=lambda r: r.view.created_at or "", reverse=True)
    if by:
        rows.sort(key=lambda r: sort_key(lookup(r.view.to_dict(), by)))
    return rows


def _with_pods(
    compiled: CompiledDefinition,
    obj: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    claims: ClaimLookup | None = None,
) -> tuple[Workload, PodAttribution]:
    from workload_map.resolve import resolve
    from workload_map.resolve.pods import attribute_pods

    workload = resolve(compiled, obj, claims=claims)
    return workload, attribute_pods(compiled, obj, pods, check_ownership=False)


def _add_pods(session: Session, rows: list[Row], all_namespaces: bool, namespace: str) -> list[Row]:
    """``-o wide``: list pods once (per namespace, or once across all) and attribute them."""
    from workload_map import messages
    from workload_map.cluster.owners import make_owner_lookup
    from workload_map.errors import ForbiddenError, WorkloadMapError
    from workload_map.views.model import build_view

    if not rows:
        return rows
    namespaces = sorted({r.view.namespace or "" for r in rows})
    pods: list[dict[str, Any]] = []
    client = session.client()
    try:
        if all_namespaces and len(namespaces) > 1:
            pods = client.list_all("/api/v1/pods")
        else:
            for ns in namespaces:
                pods += client.list_all(f"/api/v1/namespaces/{ns or namespace}/pods")
    except ForbiddenError as exc:
        session.state.warn(f"not allowed to list pods, so READY is unknown: {exc}")
        return rows
    uids = {r.view.uid for r in rows if r.view.uid}
    lookup = make_owner_lookup(client, session.discovery())
    by_uid = index_by_owner(pods, {u for u in uids if u}, lookup)
    denied = lookup.denied_resources()
    if denied:
        session.state.warn(messages.owners_not_readable(denied))
    out: list[Row] = []
    for r in rows:
        if r.obj is None or r.compiled is None or r.view.uid is None or r.view.error is not None:
            out.append(r)
            continue
        evaluate = functools.partial(
            _with_pods, r.compiled, r.obj, by_uid.get(r.view.uid, []), session.claims()
        )
        try:
            workload, attribution = session.state.quarantine().run(r.view.definition, evaluate)
        except WorkloadMapError as exc:
            session.state.warn(f"could not attribute pods of {r.view.kind}/{r.view.name}: {exc}")
            out.append(r)
            continue
        view = build_view(
            workload, r.obj, definition=r.view.definition, origin=r.view.origin, attribution=attribution
        )
        out.append(Row(view, r.obj, r.compiled, r.owner))
    return out


#: get's -o values: the shared ones plus kubectl's ``name`` and custom columns.
GET_FORMATS = (
    *ALL_FORMATS,
    "name",
    "custom-columns=",
    "custom-columns-file=",
    "jsonpath=",
    "jsonpath-file=",
    "jsonpath-as-json=",
)


@dataclass(frozen=True)
class ListOptions:
    """kubectl's listing flags beyond -l and -o: ``--no-headers``, ``--show-labels``, ``-L``,
    ``--field-selector`` (sent to the API server, which supports metadata.name and
    metadata.namespace on every resource), ``--sort-by`` and the parsed custom columns."""

    no_headers: bool = False
    show_labels: bool = False
    label_columns: tuple[str, ...] = ()
    field_selector: str = ""
    #: ``--sort-by``: a field path into the view model (views.fieldpath), parsed
    sort_by: tuple[str | int, ...] = ()
    #: ``-o custom-columns=...`` / ``custom-columns-file=...``, parsed
    custom_columns: tuple[tuple[str, tuple[str | int, ...]], ...] = ()
    #: ``-o jsonpath=...`` / ``jsonpath-file=`` / ``jsonpath-as-json=``, parsed
    jsonpath: Template | None = None
    #: ``--output-watch-events``: print each change with its event type (ADDED/MODIFIED/DELETED)
    watch_events: bool = False
    #: ``--generic``: a type no definition covers is read generically (kstatus, owned pods)
    generic: bool = False


def _print(
    rows: Sequence[Row],
    fmt: str,
    *,
    show_type: bool,
    labels: Mapping[tuple[str, str], str],
    bare: bool,
    table: ListOptions | None = None,
    show_namespace: bool = False,
    cost_window: str | None = None,
) -> None:
    from workload_map.kube.objects import kubectl_name
    from workload_map.views.machine import dump, envelope
    from workload_map.views.table import render_table

    views = [r.view for r in rows]
    if fmt in ("json", "yaml") or fmt.startswith("jsonpath"):
        data: Any = views[0].to_dict() if bare and len(views) == 1 else envelope([v.to_dict() for v in views])
        if fmt.startswith("jsonpath"):
            assert table is not None and table.jsonpath is not None
            click.echo(_render_jsonpath(table.jsonpath, data), nl=False)
        else:
            click.echo(dump(data, fmt), nl=False)
        return
    if fmt == "name":
        for v in views:
            terminal.echo(terminal.field(kubectl_name(v.api_version, v.kind, v.name)))
        return
    if fmt.startswith("custom-columns"):
        from workload_map.views.custom_columns import rows as column_rows
        from workload_map.views.format import columns

        opts = table or ListOptions()
        cells = column_rows(opts.custom_columns, [v.to_dict() for v in views], headers=not opts.no_headers)
        if cells:
            terminal.echo("\n".join(columns(cells)))
        return
    if views:
        opts = table or ListOptions()
        text = render_table(
            views,
            wide=fmt == "wide",
            show_type=show_type,
            type_labels=labels,
            no_headers=opts.no_headers,
            show_namespace=show_namespace,
            label_columns=opts.label_columns,
            show_labels=opts.show_labels,
            cost_window=cost_window,
        )
        terminal.echo(text, nl=False)


def _empty_notice(all_namespaces: bool, namespace: str) -> None:
    if all_namespaces:
        click.echo("No workloads found in any namespace.", err=True)
    else:
        click.echo(f"No workloads found in namespace {namespace}.", err=True)


# --- all types --------------------------------------------------------------------------------------


def _all_types(
    session: Session,
    *,
    namespace: str | None,
    selector: str,
    chunk: int,
    keep: bool,
    phases: set[str],
    fields: str = "",
) -> tuple[list[Row], dict[tuple[str, str], str], list[tuple[ResolvedType, str]]]:
    """Rows of every covered type (top-level ones only), the TYPE labels, and the listed types
    with their list's resourceVersion (where a watch starts)."""
    from workload_map.cluster.discovery import version_priority
    from workload_map.cluster.owners import make_owner_lookup
    from workload_map.errors import ClusterError

    defs = session.definitions()
    disc = session.discovery()
    by_gk: dict[tuple[str, str], set[str]] = {}
    for e in defs.resolvable():
        gvk = e.gvk
        assert gvk is not None
        by_gk.setdefault((gvk.group, gvk.kind), set()).add(gvk.version)
    try:
        disc.revalidate(by_gk)  # a type installed since the disk cache was written must show
    except ClusterError as exc:
        raise CommandError(f"cannot read the server's API groups: {exc}") from exc
    kinds_groups: dict[str, set[str]] = {}
    for group, kind in by_gk:
        kinds_groups.setdefault(kind, set()).add(group)
    labels: dict[tuple[str, str], str] = {}
    plan: list[ResolvedType] = []
    for (group, kind), versions in sorted(by_gk.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        served = [v for v in disc.served_versions(group, kind) if v in versions]
        if not served:
            continue
        version = sorted(served, key=version_priority)[0]
        found = defs.for_gvk(group, version, kind)
        if len(found) != 1:
            continue  # a collision: already warned about when loading
        api_version = f"{group}/{version}" if group else version
        res = disc.resource_for_kind(api_version, kind)
        if res is None:
            continue
        for v in versions:
            labels[(f"{group}/{v}" if group else v, kind)] = (
                f"{kind}.{group}" if len(kinds_groups[kind]) > 1 and group else kind
            )
        plan.append(ResolvedType(kind, found[0], res))
    tty = sys.stderr.isatty()
    rows: list[Row] = []
    forbidden: list[str] = []
    listed: list[tuple[ResolvedType, str]] = []
    for i, rt in enumerate(plan, 1):
        type_sink: dict[str, str] = {}
        if tty:
            # Our own CR and erase-line redraw the progress line; the kind (from discovery) is escaped.
            sys.stderr.write(f"\rlisting {terminal.field(rt.kind)} ({i}/{len(plan)})...\x1b[K")
            sys.stderr.flush()
        rows += _list_type(
            session,
            rt,
            namespace=namespace,
            name=None,
            selector=selector,
            chunk=chunk,
            keep=keep,
            phases=phases,
            sink=type_sink,
            forbidden_warning=f"not allowed to list {rt.kind}, so the result leaves it out",
            fields=fields,
        )
        if "forbidden" in type_sink:
            forbidden.append(rt.kind)
        else:
            listed.append((rt, type_sink.get("resourceVersion", "")))
    if tty:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()
    if plan and len(forbidden) == len(plan):
        # kubectl exits 1 when nothing could be listed; a partial result is still a result.
        warnings = session.state.warnings
        warnings[:] = [w for w in warnings if "so the result leaves it out" not in w]
        raise CommandError(
            f"not allowed to list any of the {len(plan)} workload types ({', '.join(forbidden[:5])}"
            + (", ..." if len(forbidden) > 5 else "")
            + ")"
        )
    covered = set(by_gk)
    lookup = make_owner_lookup(session.client(), disc)
    first: list[tuple[str, str, str, str]] = []
    for r in rows:
        ref = r.owner
        if ref is not None and _group_kind(ref) not in covered:
            first.append(
                (
                    r.view.namespace or "",
                    str(ref.get("apiVersion")),
                    str(ref.get("kind")),
                    str(ref.get("name")),
                )
            )
    if first:
        lookup.prefetch(first)
    kept: list[Row] = []
    for r in rows:
        if _top_level(r, covered, lookup, session):
            kept.append(r)
    return kept, labels, listed


def _group_kind(ref: Mapping[str, Any]) -> tuple[str, str]:
    return group_of(ref.get("apiVersion")), str(ref.get("kind") or "")


def _top_level(r: Row, covered: set[tuple[str, str]], lookup: Any, session: Session) -> bool:
    """No covered kind up the row's controller chain (the rows keep only the controller
    reference, which is where the climb starts)."""
    if r.owner is None:
        return True
    start = {"metadata": {"namespace": r.view.namespace or "", "ownerReferences": [r.owner]}}

    def warn(_ref: Mapping[str, Any], exc: Exception) -> None:
        session.state.warn(
            f"listing {r.view.kind}/{r.view.name}, though it may belong to another workload: {exc}"
        )

    def is_covered(ref: Mapping[str, Any]) -> bool:
        return _group_kind(ref) in covered

    return not under_covered_kind(start, is_covered, lookup, on_error=warn)


# --- watch ---------------------------------------------------------------------------------------------

#: Events waiting to be printed; a full queue makes the watching threads wait (backpressure).
WATCH_QUEUE = 10_000


@dataclass(frozen=True)
class WatchTarget:
    """One watched type and the resourceVersion its list returned."""

    rt: ResolvedType
    resource_version: str


@dataclass(frozen=True)
class WatchEnded:
    """A type whose watch failed: said on stderr, the other types go on."""

    message: str


def _watch_type(
    session: Session,
    target: WatchTarget,
    *,
    namespace: str | None,
    name: str | None,
    selector: str,
    fields: str,
    deadline: float | None,
    emit: Callable[[str, dict[str, Any]], None],
) -> None:
    """Watch one type until the deadline (or forever), re-listing after 410 Gone; every
    ADDED/MODIFIED/DELETED object goes to ``emit``."""
    from workload_map.errors import GoneError

    res = target.rt.resource
    assert res is not None
    rv = target.resource_version
    field = ",".join(f for f in (fields, f"metadata.name={name}" if name else "") if f) or None
    while True:
        remaining = None if deadline is None else max(1, int(deadline - time.monotonic()))
        try:
            for ev in session.client().watch(
                res.path(namespace),
                resource_version=rv or None,
                label_selector=selector or None,
                field_selector=field,
                timeout_seconds=remaining,
            ):
                rv = ev.resource_version or rv
                if ev.type in ("ADDED", "MODIFIED", "DELETED"):
                    ev.object.setdefault("apiVersion", res.group_version)
                    ev.object.setdefault("kind", res.kind)
                    emit(ev.type, ev.object)
                if deadline is not None and time.monotonic() >= deadline:
                    return
        except GoneError:
            sink: dict[str, str] = {}
            for _ in _pages(session, res.path(namespace), selector, 500, sink, fields):
                pass
            rv = sink.get("resourceVersion", "")
        if deadline is not None and time.monotonic() >= deadline:
            return


def _watch_line(
    event: str,
    row: Row,
    data: dict[str, Any],
    fmt: str,
    opts: ListOptions,
    *,
    show_type: bool,
    labels: Mapping[tuple[str, str], str],
    show_namespace: bool,
) -> str:
    """One printed change, as ``kubectl get -w`` prints it (with ``--output-watch-events``, the
    event type first, or the ``{"type", "object"}`` wrapper for machine formats)."""
    from workload_map.kube.objects import kubectl_name
    from workload_map.views.format import columns
    from workload_map.views.machine import dump
    from workload_map.views.table import table_rows

    doc: dict[str, Any] = {"type": event, "object": data} if opts.watch_events else data
    if fmt in ("json", "yaml"):
        return dump(doc, fmt)
    if fmt.startswith("jsonpath"):
        assert opts.jsonpath is not None
        return _render_jsonpath(opts.jsonpath, doc)
    if fmt == "name":
        return terminal.field(kubectl_name(row.view.api_version, row.view.kind, row.view.name)) + "\n"
    if fmt.startswith("custom-columns"):
        from workload_map.views.custom_columns import rows as column_rows

        return columns(column_rows(opts.custom_columns, [doc], headers=False))[0] + "\n"
    cells = table_rows(
        [row.view],
        wide=fmt == "wide",
        show_type=show_type,
        type_labels=labels,
        show_namespace=show_namespace,
        label_columns=opts.label_columns,
        show_labels=opts.show_labels,
    )[1]
    if opts.watch_events:
        cells = [event, *cells]
    line = columns([cells])[0]
    return line + ("   (deleted)" if event == "DELETED" and not opts.watch_events else "") + "\n"


def _watch(
    session: Session,
    targets: Sequence[WatchTarget],
    *,
    namespace: str | None,
    name: str | None,
    selector: str,
    phases: set[str],
    fmt: str,
    printed: dict[str, Any],
    timeout: float | None,
    show_type: bool,
    labels: Mapping[tuple[str, str], str],
    table: ListOptions,
    keep: Callable[[Row], bool] | None = None,
) -> None:
    """Watch every target at once (one thread each) and print each change in the main thread,
    in arrival order; an unchanged view (a status write that changes nothing shown) is not
    printed again. Ends at ``timeout`` or on Ctrl-C (exit 1, quietly, as kubectl)."""
    import queue
    import threading

    deadline = None if timeout is None else time.monotonic() + timeout
    from workload_map.errors import WorkloadMapError

    events: queue.Queue[tuple[str, WatchTarget, dict[str, Any]] | WatchEnded | BaseException | None] = (
        queue.Queue(WATCH_QUEUE)
    )

    def run(target: WatchTarget) -> None:
        try:
            _watch_type(
                session,
                target,
                namespace=namespace,
                name=name,
                selector=selector,
                fields=table.field_selector,
                deadline=deadline,
                emit=lambda ev, obj: events.put((ev, target, obj)),
            )
            events.put(None)
        except WorkloadMapError as exc:
            # One type's watch failing (its CRD deleted, access revoked) ends that type only.
            events.put(WatchEnded(f"stopped watching {target.rt.kind}: {exc}"))
        except BaseException as exc:  # shown by the main thread
            events.put(exc)

    threads = [threading.Thread(target=run, args=(t,), daemon=True, name="wmap-watch") for t in targets]
    compiled = {id(t): _compiled(t.rt.entry) for t in targets}
    for t in threads:
        t.start()
    running = len(threads)
    try:
        while running:
            item = events.get()
            if item is None:
                running -= 1
                continue
            if isinstance(item, WatchEnded):
                running -= 1
                terminal.echo(f"warning: {terminal.field(item.message)}", err=True)
                continue
            if isinstance(item, BaseException):
                raise item
            event, target, obj = item
            row = _row(target.rt.entry, compiled[id(target)], obj, session.state, False, session.claims())
            if phases and not phases & set(row.view.phases):
                continue
            if keep is not None and not keep(row):
                continue
            data = row.view.to_dict()
            if event == "DELETED":
                data["deleted"] = True
            uid = row.view.uid or f"{row.view.kind}/{row.view.namespace}/{row.view.name}"
            if printed.get(uid) == data and not table.watch_events:
                continue
            printed[uid] = data
            line = _watch_line(
                event,
                row,
                data,
                fmt,
                table,
                show_type=show_type,
                labels=labels,
                show_namespace=namespace is None,
            )
            click.echo(line, nl=False)
            sys.stdout.flush()
    except KeyboardInterrupt:
        # kubectl ends a watch on Ctrl-C with exit code 1 and no message.
        raise click.exceptions.Exit(exit_codes.ERROR) from None


# --- the command ----------------------------------------------------------------------------------------


@click.command(
    "get",
    short_help="List workloads with phase, components and GPUs.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument(
    "args", nargs=-1, metavar="(TYPE[/NAME] [NAME] | --all-types)", shell_complete=complete_type_or_name
)
@click.option("-A", "--all-namespaces", is_flag=True, help="List across all namespaces.")
@click.option(
    "--phase",
    "phase",
    multiple=True,
    metavar="PHASE",
    shell_complete=complete_phase,
    help="Keep rows in any of these phases (repeatable, comma-separated).",
)
@click.option(
    "-l", "--selector", default="", metavar="SELECTOR", help="Label selector on the workload objects."
)
@click.option("--chunk-size", type=int, default=500, show_default=True, help="List page size; 0 = no paging.")
@click.option("--all-types", is_flag=True, help="List every workload type the definitions cover.")
@click.option(
    "-w", "--watch", is_flag=True, help="After listing, print rows again as they change (any types, -A too)."
)
@click.option("--watch-timeout", type=float, default=None, hidden=True)
@click.option(
    "--generic",
    is_flag=True,
    help="Read a type no definition covers generically: phase by kstatus's rules, pods and requests "
    "from the owner chain (rows say definition generic).",
)
@click.option(
    "--output-watch-events",
    "watch_events",
    is_flag=True,
    help="With --watch, print the event type (ADDED, MODIFIED, DELETED) of each change.",
)
@click.option("--no-headers", is_flag=True, help="Print tables without the header row (as kubectl).")
@click.option("--show-labels", is_flag=True, help="Add a LABELS column with the workload's labels.")
@click.option(
    "--sort-by",
    default="",
    metavar="PATH",
    help="Sort by a field of the view model (JSON Schema view.v1), e.g. .resources.gpus or {.name}.",
)
@click.option(
    "--field-selector",
    default="",
    metavar="SELECTOR",
    help="Field selector sent to the API server (metadata.name=..., metadata.namespace!=...).",
)
@click.option(
    "-L",
    "--label-columns",
    "label_columns",
    multiple=True,
    metavar="KEY[,KEY]",
    help="Add a column per label key (repeatable, comma-separated), named like kubectl's.",
)
@connection_options
@prometheus_options
@output_option(GET_FORMATS)
def command(
    args: tuple[str, ...],
    all_namespaces: bool,
    phase: tuple[str, ...],
    selector: str,
    chunk_size: int,
    all_types: bool,
    watch: bool,
    watch_timeout: float | None,
    watch_events: bool,
    generic: bool,
    no_headers: bool,
    show_labels: bool,
    label_columns: tuple[str, ...],
    field_selector: str,
    sort_by: str,
) -> None:
    """List workloads of TYPE (kind, plural, short name or kind.group), or of every covered type
    with --all-types, with their phase, components, GPUs and age. Newest first. With a Prometheus
    (--prometheus, $WMAP_PROMETHEUS_URL or the config file), GPU-HOURS and COST over
    --cost-window too (-o wide: COST/H; -o json: each item's cost with its queries).

    \b
    Examples:
      wmap get jobsets -n ml-team
      wmap get pytorchjob/llama -o json
      wmap get --all-types -A --phase Running,Degraded
      wmap get jobsets -w
      wmap get jobsets --prometheus http://localhost:9090 --cost-window 7d
    """
    from workload_map.views.fieldpath import FieldPathError, parse

    try:
        sort_steps = parse(sort_by) if sort_by else ()
    except FieldPathError as exc:
        raise click.UsageError(f"--sort-by: {exc}") from None
    state = get_state()
    session = Session(state)
    try:
        with collector_paused(pause=not watch):  # a watch runs for long: it keeps the collector
            _run(
                session,
                args,
                all_namespaces,
                phase,
                selector,
                chunk_size,
                all_types,
                watch,
                watch_timeout,
                ListOptions(
                    no_headers=no_headers,
                    show_labels=show_labels,
                    label_columns=tuple(k for arg in label_columns for k in arg.split(",") if k),
                    field_selector=field_selector,
                    sort_by=sort_steps,
                    watch_events=watch_events,
                    generic=generic,
                ),
            )
    finally:
        session.close()


def _covered(session: Session) -> set[tuple[str, str]]:
    """(group, kind) of every type the definitions cover: ``--all-types`` shows only workloads
    that no covered kind owns."""
    return {(e.gvk.group, e.gvk.kind) for e in session.definitions().resolvable() if e.gvk is not None}


def _types_given(session: Session, token: str) -> list[ResolvedType]:
    """``jobsets`` or kubectl's comma form ``jobsets,pytorchjobs`` (each word as ``get`` reads
    one; a type named twice is listed once)."""
    words = token.split(",")
    if any(not w for w in words):
        raise click.UsageError(f'empty TYPE in "{token}"')
    if len(words) > 64:
        raise click.UsageError("at most 64 comma-separated types")
    out: list[ResolvedType] = []
    seen: set[str] = set()
    for word in words:
        rt = session.resolve_type(word)
        if rt.entry.name not in seen:
            seen.add(rt.entry.name)
            out.append(rt)
    return out


def _print_initial_events(rows: Sequence[Row], fmt: str, table: ListOptions, **table_args: Any) -> None:
    """``--output-watch-events``: the listed rows as ADDED events, kubectl's EVENT column first."""
    from workload_map.views.format import columns
    from workload_map.views.table import table_rows

    if fmt in ("table", "wide"):
        cells = table_rows([r.view for r in rows], wide=fmt == "wide", **table_args)
        lines = [["EVENT", *cells[0]]] + [["ADDED", *c] for c in cells[1:]]
        body = lines if not table.no_headers else lines[1:]
        if body:
            terminal.echo("\n".join(columns(body)))
        return
    for r in rows:
        line = _watch_line(
            "ADDED",
            r,
            r.view.to_dict(),
            fmt,
            table,
            show_type=table_args["show_type"],
            labels=table_args["type_labels"],
            show_namespace=table_args["show_namespace"],
        )
        click.echo(line, nl=False)


def _with_costs(state: State, rows: list[Row], fmt: str, watch: bool) -> tuple[list[Row], str | None]:
    """Rows with GPU-hours and cost when a Prometheus is configured (cli/cost.py), and the window
    the table's cost columns name; none for ``-o name``, nor with ``--watch`` (changes are not
    priced again)."""
    from workload_map.cli.cost import prometheus_settings, with_costs

    if fmt == "name":
        return rows, None
    if watch:
        if state.prometheus or state.cost_window:
            state.warn("GPU-hours and cost are not shown with --watch")
        return rows, None
    settings = prometheus_settings(state)
    if settings is None:
        return rows, None
    views = with_costs(state, settings, [r.view for r in rows])
    return [replace(r, view=v) for r, v in zip(rows, views, strict=True)], settings.window


def _run(
    session: Session,
    args: tuple[str, ...],
    all_namespaces: bool,
    phase: tuple[str, ...],
    selector: str,
    chunk_size: int,
    all_types: bool,
    watch: bool,
    watch_timeout: float | None,
    table: ListOptions | None = None,
) -> None:
    table = table or ListOptions()
    state = session.state
    if all_types and args:
        raise click.UsageError("--all-types cannot be combined with a TYPE")
    if chunk_size < 0:
        raise click.UsageError("--chunk-size must not be negative")
    if table.watch_events and not watch:
        raise click.UsageError("--output-watch-events needs --watch")
    check_selector(selector)
    phases = parse_phases(phase)
    fmt = resolve_output(state, GET_FORMATS)
    if fmt.startswith("custom-columns"):
        table = replace(table, custom_columns=tuple(_custom_columns(fmt)))
    if fmt.startswith("jsonpath"):
        table = replace(table, jsonpath=_jsonpath(fmt))
    name: str | None = None
    slash = False
    token = ""
    if not all_types:
        token, name, slash = split_type_name(args)
        if selector and name is not None:
            raise click.UsageError("--selector cannot be combined with a NAME")
    namespace = session.namespace()
    list_ns = None if all_namespaces else namespace
    # Ready counts need the pods: -o wide shows them, and machine output must carry the same
    # numbers, never "ready": null where the table has a count.
    with_pods = fmt in ("wide", "json", "yaml") or fmt.startswith(("custom-columns", "jsonpath"))
    keep: Callable[[Row], bool] | None = None
    missing: list[str] = []
    if all_types:
        rows, labels, listed = _all_types(
            session,
            namespace=list_ns,
            selector=selector,
            chunk=chunk_size,
            keep=with_pods,
            phases=phases,
            fields=table.field_selector,
        )
        targets = [WatchTarget(rt, rv) for rt, rv in listed]
        show_type = True
        if watch:
            from workload_map.cluster.owners import make_owner_lookup

            covered = _covered(session)
            lookup = make_owner_lookup(session.client(), session.discovery())

            def keep(r: Row) -> bool:
                return _top_level(r, covered, lookup, session)
    else:
        try:
            types = _types_given(session, token)
        except NoDefinitionError as exc:
            if table.generic and "," not in token and name is None and not watch:
                from workload_map.cli.generic import generic_rows

                rows = [
                    Row(v, None, None)
                    for v in generic_rows(
                        session, token, namespace=list_ns, selector=selector, fields=table.field_selector
                    )
                ]
                rows = [r for r in rows if not phases or phases & set(r.view.phases)]
                rows, cost_window = _with_costs(state, rows, fmt, watch)
                _sort(rows, table.sort_by)
                _print(
                    rows,
                    fmt,
                    show_type=False,
                    labels={},
                    bare=False,
                    table=table,
                    show_namespace=all_namespaces,
                    cost_window=cost_window,
                )
                if not rows and fmt in ("table", "wide"):
                    _empty_notice(all_namespaces, namespace)
                return
            if fmt in ("json", "yaml"):
                echo_no_definition(fmt, token=token)
            if name is None and not watch:
                raise with_generic_hint(session, exc, f"wmap get {token}") from None
            raise
        show_type = len(types) > 1
        labels = {}
        rows = []
        targets = []
        for rt in types:
            if rt.resource is None:
                message = f"{rt.kind} is not installed in this cluster"
                if name is not None and len(types) == 1:
                    raise WorkloadNotFoundError(message)
                state.warn(message)
                continue
            sink: dict[str, str] = {}
            try:
                rows += _list_type(
                    session,
                    rt,
                    namespace=list_ns,
                    name=name,
                    selector=selector,
                    chunk=chunk_size,
                    keep=with_pods,
                    phases=phases,
                    sink=sink,
                    fields=table.field_selector,
                )
            except WorkloadNotFoundError as exc:
                if len(types) == 1:
                    raise
                missing.append(str(exc))  # kubectl prints what it found, then the errors
                continue
            targets.append(WatchTarget(rt, sink.get("resourceVersion", "")))
            if show_type:
                labels[(rt.resource.group_version, rt.resource.kind)] = rt.kind
    if with_pods:
        rows = _add_pods(session, rows, all_namespaces, namespace)
    rows, cost_window = _with_costs(state, rows, fmt, watch)
    _sort(rows, table.sort_by)
    table_args = {
        "show_type": show_type,
        "type_labels": labels,
        "show_namespace": all_namespaces,
        "label_columns": table.label_columns,
        "show_labels": table.show_labels,
    }
    if watch and table.watch_events:
        _print_initial_events(rows, fmt, table, **table_args)
    else:
        _print(
            rows,
            fmt,
            show_type=show_type,
            labels=labels,
            bare=slash and not show_type,
            table=table,
            show_namespace=all_namespaces,
            cost_window=cost_window,
        )
    if not rows and fmt in ("table", "wide") and not missing:
        namespaced = all(t.rt.resource is None or t.rt.resource.namespaced for t in targets)
        _empty_notice(all_namespaces or not namespaced, namespace)
    if missing:
        raise WorkloadNotFoundError("; ".join(missing))
    if watch:
        sys.stdout.flush()
        _watch(
            session,
            targets,
            namespace=list_ns,
            name=name,
            selector=selector,
            phases=phases,
            fmt=fmt,
            printed={r.view.uid or r.view.name: r.view.to_dict() for r in rows},
            timeout=watch_timeout,
            show_type=show_type,
            labels=labels,
            table=table,
            keep=keep,
        )
