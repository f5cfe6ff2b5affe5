"""``wmap explain KIND|NAME``: one definition of the merged set, explained in words.

The argument is a definition name (exact) or a kind (``pytorchjob``, ``PyTorchJob.kubeflow.org``,
``MPIJob.v2beta1.kubeflow.org``, plurals too). ``-o json|yaml`` gives the structured explanation.
Exit 4 when no definition covers the argument, 2 when it matches several kinds.
"""

from __future__ import annotations

import click

from workload_map.cli import exit_codes
from workload_map.cli.common import Session, connection_options, output_option, resolve_output
from workload_map.cli.errors import CommandError, NoDefinitionError
from workload_map.cli.main import PROG, get_state

FORMATS = ("table", "json", "yaml")


@click.command(
    "explain",
    short_help="Explain one definition in words.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("target", metavar="KIND|NAME")
@connection_options
@output_option(FORMATS)
def command(target: str) -> None:
    """Explain the definition for KIND (or the definition named NAME): its components and roles,
    where each component's pods come from, replica formulas, instance ids, pod selectors, how
    each phase is decided, suspend/resume and gang rules."""
    from workload_map.definitions_source import kind_version_group
    from workload_map.views.explain import explanation, render_explanation
    from workload_map.views.machine import dump

    state = get_state()
    fmt = resolve_output(state, FORMATS)
    session = Session(state)
    try:
        defs = session.definitions()
    finally:
        session.close()
    entry = defs.by_name(target)
    if entry is None:
        found = defs.match_token(target)
        if not found:
            raise NoDefinitionError(
                f'no Karta definition covers "{target}". Run "{PROG} definitions" to see what is available'
            )
        if len(found) > 1:
            forms = ", ".join(kind_version_group(e.gvk) for e in found if e.gvk is not None)
            raise CommandError(
                f'"{target}" matches more than one Karta definition, retry with one of: {forms}',
                exit_codes.USAGE,
            )
        entry = found[0]
    ex = explanation(entry.karta)
    ex["origin"] = entry.origin
    if fmt in ("json", "yaml"):
        click.echo(dump(ex, fmt), nl=False)
        return
    click.echo(render_explanation(ex), nl=False)
