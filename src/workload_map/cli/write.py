"""What the write commands share (``set``, ``label``, ``annotate``, ``scale``, ``suspend``,
``resume``): kubectl's flags and grammar, the targets (``TYPE/NAME``, ``TYPE NAME...``, ``-f``),
offline ``--local`` output for GitOps pipelines, the live write with a resourceVersion precondition
(:func:`workload_map.cluster.writes.write_change`), and kubectl's output lines.

Every command gives a function ``(definition, object) -> Change`` (the write-back of
:mod:`workload_map.resolve.writeback`); this module does the rest. Offline, every document of
every file is changed or none is printed (a pipeline never gets half a result); live, each object
is written on its own, as kubectl does, and the first error decides the exit code.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import click

from workload_map.cli import exit_codes
from workload_map.cli.common import connection_options, output_option
from workload_map.cli.errors import CommandError, WorkloadNotFoundError
from workload_map.kube.objects import meta as kube_meta

if TYPE_CHECKING:
    from workload_map.cli.common import Session
    from workload_map.cli.main import State
    from workload_map.definitions_source import DefinitionEntry
    from workload_map.resolve.writeback import Change

F = TypeVar("F", bound=Callable[..., Any])

#: ``(definition, object) -> Change``: the command's write-back.
Compute = Callable[[Any, dict[str, Any]], "Change"]
#: The words after the object's name (``image updated``), from the change and the object before
#: it (``labeled``/``unlabeled``/``not labeled``); lines to print first may come before them, each
#: ending in a newline (kubectl's ``label "x" not found.``).
Past = Callable[["Change", dict[str, Any]], str | None]

#: ``(definition, the API server's answer) -> what it did not keep``: for changes the server may
#: drop silently (a field its schema lacks); anything listed stops the write before it is made.
Kept = Callable[[Any, dict[str, Any]], list[str]]

FORMATS = ("json", "yaml", "name")
DRY_RUN = ("none", "client", "server")
LOCAL_NEEDS_FILE = (
    "you must specify resources by --filename when --local is set.\n"
    "Example resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'"
)


_META = "wmap.write"


def _keep(name: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        ctx.meta.setdefault(_META, {})[name] = value

    return callback


def write_options(manager: str) -> Callable[[F], F]:
    """The flags every write command takes (kubectl's names and meanings); the command reads them
    with :func:`options`."""

    def decorate(f: F) -> F:
        flags: list[Callable[[F], F]] = [
            click.option(
                "-f",
                "--filename",
                "filenames",
                multiple=True,
                metavar="FILE",
                expose_value=False,
                callback=_keep("filenames"),
                help="Manifest(s) to change (- for stdin; a List or many documents per file).",
            ),
            click.option(
                "--local",
                is_flag=True,
                expose_value=False,
                callback=_keep("local"),
                help="Change the manifests given with -f without contacting the API server; print them "
                "(-o yaml|json).",
            ),
            click.option(
                "--dry-run",
                type=click.Choice(DRY_RUN),
                is_flag=False,
                flag_value="client",
                default="none",
                show_default=True,
                expose_value=False,
                callback=_keep("dry_run"),
                help="client: only print what would be sent; server: submit with dryRun=All (admission "
                "and validation run, nothing is stored).",
            ),
            click.option(
                "--diff",
                "show_diff",
                is_flag=True,
                expose_value=False,
                callback=_keep("diff"),
                help="Print a unified diff of the object before and after (like kubectl diff) instead of "
                "the usual line; combine with --dry-run=server to preview with the API server's defaults.",
            ),
            click.option(
                "--field-manager",
                default=manager,
                show_default=True,
                expose_value=False,
                callback=_keep("field_manager"),
                help="Name of the manager used to track field ownership.",
            ),
        ]
        for flag in reversed(flags):
            f = flag(f)
        f = output_option(FORMATS)(f)
        return connection_options(f)

    return decorate


@dataclass
class Options:
    """The parsed write flags."""

    filenames: tuple[str, ...] = ()
    local: bool = False
    dry_run: str = "none"
    diff: bool = False
    field_manager: str = "wmap"
    output: str | None = None


def options(state: State) -> Options:
    """The write flags of the running command, checked together."""
    given = click.get_current_context().meta.get(_META, {})
    opts = Options(
        filenames=tuple(given.get("filenames") or ()),
        local=bool(given.get("local")),
        dry_run=str(given.get("dry_run") or "none"),
        diff=bool(given.get("diff")),
        field_manager=str(given.get("field_manager") or "wmap"),
        output=state.output,
    )
    if opts.local and not opts.filenames:
        raise click.UsageError(LOCAL_NEEDS_FILE)
    if opts.local and opts.dry_run == "server":
        raise click.UsageError("--local and --dry-run=server cannot be used together (nothing is sent)")
    if opts.diff and opts.output is not None:
        raise click.UsageError("--diff and -o/--output cannot be used together")
    return opts


# --- targets -------------------------------------------------------------------------------------


def is_spec(arg: str) -> bool:
    """``k=v`` or ``k-``: a change, not a resource (Kubernetes names never end with ``-``)."""
    return "=" in arg or arg.endswith("-")


def split_targets(
    args: Sequence[str], filenames: Sequence[str], *, values: int = -1
) -> tuple[list[str], list[str]]:
    """kubectl's grammar: ``(-f FILE | TYPE/NAME... | TYPE NAME...) SPEC...``. ``values`` is the
    number of trailing plain arguments that are values, not names (``set scheduler ... NAME``: 1);
    -1: the specs are the ``k=v``/``k-`` arguments. Returns (resource words, specs)."""
    args = list(args)
    if values >= 0:
        if len(args) < values:
            raise click.UsageError(f"expected {values} value argument(s) after the resource")
        head, specs = args[: len(args) - values], args[len(args) - values :]
    else:
        n = 0
        while n < len(args) and not is_spec(args[n]):
            n += 1
        head, specs = args[:n], args[n:]
        stray = [a for a in specs if not is_spec(a)]
        if stray:
            raise click.UsageError(f'unexpected argument "{stray[0]}": changes are KEY=VALUE or KEY-')
    if filenames:
        if head:
            raise click.UsageError("give resources either with -f or as TYPE/NAME, not both")
        return [], specs
    if not head:
        raise click.UsageError(
            "you must specify the type of resource to change: TYPE/NAME, TYPE NAME or -f FILE"
        )
    resource_pairs(head)  # usage errors before anything is read
    return head, specs


def resource_pairs(words: Sequence[str]) -> list[tuple[str, str]]:
    """``TYPE/NAME...`` or ``TYPE NAME...`` -> [(type, name)]."""
    if "/" in words[0]:
        out = []
        for w in words:
            kind, slash, name = w.partition("/")
            if not slash or not kind or not name or "/" in name:
                raise click.UsageError(
                    f'"{w}" is not TYPE/NAME (mix TYPE/NAME and TYPE NAME forms is not allowed)'
                )
            out.append((kind, name))
        return out
    if len(words) < 2:
        raise click.UsageError(f'a NAME is required after "{words[0]}" (or use TYPE/NAME)')
    for w in words[1:]:
        if "/" in w:
            raise click.UsageError(f'"{w}": mix TYPE/NAME and TYPE NAME forms is not allowed')
    return [(words[0], w) for w in words[1:]]


# --- output --------------------------------------------------------------------------------------


def _shown(obj: dict[str, Any], hide: tuple[str, ...] = ("managedFields",)) -> dict[str, Any]:
    """An object as printed: without ``managedFields`` (kubectl hides them too)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and any(k in meta for k in hide):
        return {**obj, "metadata": {k: v for k, v in meta.items() if k not in hide}}
    return obj


#: Metadata a diff leaves out: server bookkeeping that changes with every write.
_DIFF_HIDDEN = ("managedFields", "resourceVersion")


def _diff_name(obj: dict[str, Any]) -> str:
    from workload_map.kube.objects import split_api_version

    group, version = split_api_version(str(obj.get("apiVersion") or ""))
    meta = kube_meta(obj)
    parts = [
        p for p in (group, version, str(obj.get("kind") or ""), meta.get("namespace"), meta.get("name")) if p
    ]
    return ".".join(str(p) for p in parts)


def unified_diff(before: dict[str, Any], after: dict[str, Any]) -> str:
    """kubectl diff's output for one object: ``diff -u -N LIVE/<id> MERGED/<id>`` and the hunks."""
    from workload_map.views.machine import to_yaml

    name = _diff_name(after)
    old = to_yaml(_shown(before, _DIFF_HIDDEN)).splitlines(keepends=True)
    new = to_yaml(_shown(after, _DIFF_HIDDEN)).splitlines(keepends=True)
    lines = list(difflib.unified_diff(old, new, f"LIVE/{name}", f"MERGED/{name}"))
    if not lines:
        return ""
    return f"diff -u -N LIVE/{name} MERGED/{name}\n" + "".join(lines)


def _suffix(dry_run: str) -> str:
    return {"client": " (dry run)", "server": " (server dry run)"}.get(dry_run, "")


def _label(obj: dict[str, Any]) -> str:
    from workload_map.kube.objects import kubectl_name

    meta = kube_meta(obj)
    return kubectl_name(
        str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""), str(meta.get("name") or "")
    )


@dataclass
class Printed:
    """Output collected while the objects are processed (printed at the end, in order)."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def _record(
    out: Printed, opts: Options, before: dict[str, Any], after: dict[str, Any], change: Change, past: Past
) -> None:
    if opts.diff:
        text = unified_diff(before, after)
        if text:
            out.lines.append(text.rstrip("\n"))
        return
    if opts.output in ("json", "yaml"):
        out.objects.append(_shown(after))
        return
    if opts.output == "name":
        out.lines.append(_label(after))
        return
    said = past(change, before)
    if said:
        notes, _, word = said.rpartition("\n")
        out.lines.append(f"{notes}\n" * bool(notes) + f"{_label(after)} {word}{_suffix(opts.dry_run)}")


def _emit(out: Printed, fmt: str | None, documents: list[Any] | None = None) -> None:
    from workload_map.views.machine import dump

    if fmt in ("json", "yaml") and (out.objects or documents):
        docs = documents if documents is not None else out.objects
        if fmt == "json":
            data: Any = docs[0] if len(docs) == 1 else {"apiVersion": "v1", "kind": "List", "items": docs}
            click.echo(dump(data, "json"), nl=False)
        else:
            click.echo("---\n".join(dump(d, "yaml") for d in docs), nl=False)
    for line in out.lines:
        click.echo(line)


# --- running --------------------------------------------------------------------------------------


def _describe(exc: Exception) -> str:
    return str(exc)


def run(
    state: State,
    opts: Options,
    words: Sequence[str],
    compute: Compute,
    past: Past,
    kept: Kept | None = None,
) -> None:
    """Apply ``compute`` to the targets and print the result (see the module notes). With
    ``kept``, a live write is first sent as a server dry run and made only when the answer keeps
    the change (so nothing is half-written when the API server would drop a field)."""
    from workload_map.cli.common import Session

    session = Session(state)
    try:
        if opts.local:
            _local(session, opts, compute, past)
        else:
            _live(session, opts, words, compute, past, kept)
    finally:
        session.close()


def _local(session: Session, opts: Options, compute: Compute, past: Past) -> None:
    """``--local -f``: every document changed in memory and printed; one failure, no output."""
    from workload_map.cli.live import entry_for_manifest, read_documents
    from workload_map.errors import WorkloadMapError

    defs = session.definitions(cluster=False)
    out = Printed()
    documents: list[Any] = []
    for filename in opts.filenames:
        label, docs = read_documents(filename)
        if not docs:
            raise CommandError(f"{label} holds no object", exit_codes.USAGE)
        for index, doc in enumerate(docs):
            items = (
                doc.get("items")
                if isinstance(doc, dict) and str(doc.get("kind", "")).endswith("List")
                else None
            )
            objs = items if isinstance(items, list) else [doc]
            changed: list[Any] = []
            for obj in objs:
                where = f"{label}" + (f" (document {index + 1})" if len(docs) > 1 else "")
                if not isinstance(obj, dict) or not obj.get("apiVersion") or not obj.get("kind"):
                    raise CommandError(f"{where}: an object without apiVersion and kind", exit_codes.USAGE)
                entry = entry_for_manifest(defs, obj)
                try:
                    change = compute(entry.karta, obj)
                except WorkloadMapError as exc:
                    raise CommandError(f"{_label(obj)} in {where}: {_describe(exc)}") from exc
                for w in change.warnings:
                    session.state.warn(f"{_label(obj)}: {w}")
                _record(out, opts, obj, change.new_object, change, past)
                changed.append(change.new_object)
            documents.append({**doc, "items": changed} if items is not None else changed[0])
    _emit(out, opts.output, documents if opts.output in ("json", "yaml") else None)


def _live_targets(
    session: Session, opts: Options, words: Sequence[str]
) -> list[tuple[DefinitionEntry, Any, str, str]]:
    """(definition, API resource, namespace, name) per target; -f objects are found live."""
    from workload_map.cli.live import entry_for_manifest, read_objects

    targets = []
    if opts.filenames:
        defs = session.definitions()
        for filename in opts.filenames:
            for obj in read_objects(filename):
                entry = entry_for_manifest(defs, obj)
                gvk = entry.gvk
                assert gvk is not None
                res = session.discovery().resource_for_kind(gvk.api_version, gvk.kind)
                if res is None:
                    raise WorkloadNotFoundError(f"{gvk.kind} is not installed in this cluster")
                meta = kube_meta(obj)
                name = str(meta.get("name") or "")
                if not name:
                    raise CommandError(f"{filename}: a {gvk.kind} without metadata.name", exit_codes.USAGE)
                targets.append((entry, res, str(meta.get("namespace") or session.namespace()), name))
        return targets
    for type_word, name in resource_pairs(words):
        rt = session.resolve_type(type_word)
        if rt.resource is None:
            raise WorkloadNotFoundError(f"{rt.kind} is not installed in this cluster")
        targets.append((rt.entry, rt.resource, session.namespace(), name))
    return targets


def _live(
    session: Session, opts: Options, words: Sequence[str], compute: Compute, past: Past, kept: Kept | None
) -> None:
    from workload_map.cluster.writes import write_change
    from workload_map.errors import NotFoundError, WorkloadMapError

    client = session.client()
    out = Printed()
    errors: list[CommandError] = []
    for entry, res, namespace, name in _live_targets(session, opts, words):
        where = f" in namespace {namespace}" if res.namespaced else ""
        try:
            karta = entry.karta

            def change_of(obj: dict[str, Any], karta: Any = karta) -> Change:
                return compute(karta, obj)

            path = res.path(namespace, name)
            current = None
            if kept is not None and opts.dry_run != "client":
                trial = write_change(
                    client, path, change_of, dry_run="server", field_manager=opts.field_manager
                )
                dropped = kept(karta, trial.result) if trial.after is not None else []
                if dropped:
                    errors.append(
                        CommandError(
                            f'{res.kind} "{name}"{where}: the API server does not keep '
                            f"{'; '.join(dropped)} (its schema for {res.kind} lacks the field): "
                            "nothing was written"
                        )
                    )
                    continue
                current = trial.before
            result = (
                trial
                if current is not None and opts.dry_run == "server"
                else write_change(
                    client,
                    path,
                    change_of,
                    dry_run=opts.dry_run,  # type: ignore[arg-type]
                    field_manager=opts.field_manager,
                    current=current,
                )
            )
        except NotFoundError as exc:
            errors.append(WorkloadNotFoundError(f'{res.kind} "{name}" not found{where}'))
            del exc
            continue
        except WorkloadMapError as exc:
            errors.append(CommandError(f'{res.kind} "{name}"{where}: {_describe(exc)}'))
            continue
        for w in result.change.warnings:
            session.state.warn(f"{res.kind} {name}: {w}")
        _record(out, opts, result.before, result.result, result.change, past)
    _emit(out, opts.output)
    if errors:
        raise CommandError([m for e in errors for m in e.messages], errors[0].exit_code)


__all__ = [
    "Compute",
    "Kept",
    "Options",
    "Past",
    "is_spec",
    "options",
    "resource_pairs",
    "run",
    "split_targets",
    "unified_diff",
    "write_options",
]
