"""``wmap definitions [NAME]`` (upstream-spec 5.6): the merged definition set (catalog, cluster
Kartas best effort, ``--definitions`` files), no cluster needed.

Without NAME: a table ``NAME  KIND  ORIGIN  COMPONENTS`` (``-o json|yaml``: ``{items, count}`` of
full Karta objects), filtered by ``--group``/``--kind``/``--version``. With NAME: that one Karta,
bare (YAML unless ``-o json``), ready for ``kubectl apply`` or ``wmap validate -``.
"""

from __future__ import annotations

import click

from workload_map.cli import exit_codes, terminal
from workload_map.cli.common import (
    Session,
    connection_options,
    output_option,
    resolve_output,
    type_word_error,
)
from workload_map.cli.completion_support import complete_definition
from workload_map.cli.errors import CommandError
from workload_map.cli.main import PROG, get_state
from workload_map.errors import WorkloadMapError

FORMATS = ("table", "json", "yaml")


def _filter_text(group: str | None, kind: str | None, version: str | None) -> str:
    if kind is None:
        return group or ""
    if version is None:
        return f"{kind}.{group}"
    return f"{kind}.{version}.{group}"


@click.command(
    "definitions",
    short_help="List the Karta definitions in use, or print one.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("name", required=False, metavar="[NAME]", shell_complete=complete_definition)
@click.option("--group", "group", default=None, help="Only definitions whose root kind is in this API group.")
@click.option("--kind", "kind", default=None, help="Only this root kind (case-insensitive; needs --group).")
@click.option("--version", "version", default=None, help="Only this version (needs --kind).")
@click.option(
    "--component-limit",
    type=int,
    default=3,
    show_default=True,
    help="Child components listed per row (0 = all; table only).",
)
@connection_options
@output_option(FORMATS)
def command(
    name: str | None, group: str | None, kind: str | None, version: str | None, component_limit: int
) -> None:
    """List the Karta definitions the other commands use: the built-in catalog, Karta objects in
    the cluster (when reachable; a cluster definition replaces the catalog's for its kind) and
    --definitions files. NAME prints that definition itself."""
    from workload_map.model.loader import dump_definition
    from workload_map.views.definitions import definitions_envelope, definitions_table, filter_entries
    from workload_map.views.machine import dump

    if name is not None and group is not None:
        raise click.UsageError("NAME cannot be combined with --group/--kind/--version")
    if kind is not None and group is None:
        raise click.UsageError("--kind needs --group, for example --group kubeflow.org --kind PyTorchJob")
    if version is not None and kind is None:
        raise click.UsageError(
            "--version needs --kind, for example --group kubeflow.org --kind PyTorchJob --version v1"
        )
    if kind is not None and not kind.strip():
        raise click.UsageError("--kind must not be empty")
    if version is not None and not version.strip():
        raise click.UsageError("--version must not be empty")
    if group is not None and not group.strip() and kind is None:
        group = ""  # the core group
    if component_limit < 0:
        raise click.UsageError(f"--component-limit must be 0 or more, got {component_limit}")

    state = get_state()
    fmt = resolve_output(state, FORMATS)
    session = Session(state)
    try:
        defs = session.definitions()
        entries = list(defs.entries)
    finally:
        session.close()

    if name is not None:
        found = [e for e in entries if e.name == name]
        if not found:
            # Any type word names its definition, as in get, describe and explain.
            from workload_map.type_words import NoDefinitionForTypeError, UnknownTypeWordError, resolve_word

            try:
                found = [resolve_word(defs, name).entry]
            except (UnknownTypeWordError, NoDefinitionForTypeError) as exc:
                raise CommandError(  # upstream-spec 5.6: this text, exit 1
                    f'no Karta definition named "{name}". Run "{PROG} definitions" to see what is available',
                    exit_codes.ERROR,
                ) from exc
            except WorkloadMapError as exc:
                raise type_word_error(exc) from exc
        # The cluster's wins over the catalog's (the merge keeps one per GVK; prefer cluster).
        chosen = sorted(found, key=lambda e: {"local": 0, "cluster": 1, "catalog": 2}[e.origin])[0]
        click.echo(dump_definition(chosen.karta, "json" if fmt == "json" else "yaml"), nl=False)
        return

    if group is not None:
        entries = filter_entries(entries, group, kind, version)
        if not entries:
            raise CommandError(
                f'no Karta definition covers "{_filter_text(group, kind, version)}". '
                f'Run "{PROG} definitions" to see what is available',
                exit_codes.ERROR,
            )
    if fmt in ("json", "yaml"):
        click.echo(dump(definitions_envelope(entries), fmt), nl=False)
        return
    if not entries:
        click.echo("No Karta definitions found.", err=True)
        return
    terminal.echo(definitions_table(entries, component_limit), nl=False)
