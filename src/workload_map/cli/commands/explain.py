"""``wmap explain KIND|NAME``: one definition of the merged set, explained in words.

The argument is any type word :mod:`workload_map.type_words` accepts: a definition name, a kind,
plural, singular or short name (``lws``, ``pytorchjobs``), ``Kind.group``, ``Kind.version.group``.
``-o json|yaml`` gives the structured explanation. Exit 4 when no definition covers the
argument (with "did you mean" for an unknown word), 2 when it matches several kinds.
"""

from __future__ import annotations

import click

from workload_map.cli import terminal
from workload_map.cli.common import (
    connection_options,
    definition_for_word,
    output_option,
    resolve_output,
)
from workload_map.cli.completion_support import complete_definition
from workload_map.cli.main import get_state

FORMATS = ("table", "json", "yaml")


@click.command(
    "explain",
    short_help="Explain one definition in words.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("target", metavar="KIND|NAME", shell_complete=complete_definition)
@connection_options
@output_option(FORMATS)
def command(target: str) -> None:
    """Explain the definition for KIND (or the definition named NAME): its components and roles,
    where each component's pods come from, replica formulas, instance ids, pod selectors, how
    each phase is decided, suspend/resume and gang rules."""
    from workload_map.views.explain import explanation, render_explanation
    from workload_map.views.machine import dump

    state = get_state()
    fmt = resolve_output(state, FORMATS)
    entry = definition_for_word(state, target)
    ex = explanation(entry.karta)
    ex["origin"] = entry.origin
    if fmt in ("json", "yaml"):
        click.echo(dump(ex, fmt), nl=False)
        return
    terminal.echo(render_explanation(ex), nl=False)
