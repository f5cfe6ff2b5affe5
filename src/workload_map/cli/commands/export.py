"""``wmap export ENGINE``: definitions compiled for another engine.

* ``wmap export karmada TYPE|--all``: Karmada ``ResourceInterpreterCustomization`` objects whose
  Lua gives the answers of ``wmap karmada webhook`` (docs/multicluster.md, "Lua export").

An operation whose expressions the Lua back end cannot translate is left out of the
customization (Karmada then asks its other interpreters) with one ``warning:`` line naming the
operation, the field, the construct and the expression; ``--strict`` makes that an error.
"""

from __future__ import annotations

from typing import Any

import click

from workload_map.cli.common import Session, connection_options
from workload_map.cli.errors import CommandError
from workload_map.cli.main import get_state

CTX = {"help_option_names": ["-h", "--help"]}


@click.group("export", short_help="Compile definitions for another engine (karmada).", context_settings=CTX)
def command() -> None:
    """Compile Karta definitions into another engine's format."""


@command.command("karmada", context_settings=CTX)
@click.argument("type_word", metavar="TYPE", required=False)
@click.option("--all", "all_types", is_flag=True, help="Every covered kind (one YAML document each).")
@click.option(
    "--include-native/--no-include-native",
    default=False,
    show_default=True,
    help="With --all, also the kinds Karmada interprets itself (Deployment, Job...).",
)
@click.option(
    "--strict", is_flag=True, help="Fail when an operation cannot be translated (default: leave it out)."
)
@click.option("-o", "--output", "output", type=click.Choice(["yaml", "json"]), default=None)
@connection_options
def karmada_command(
    type_word: str | None, all_types: bool, include_native: bool, strict: bool, output: str | None
) -> None:
    """Print the ResourceInterpreterCustomization for TYPE (a type word or definition name):
    Lua compiled from the definition for every interpreter operation, for clusters that should
    run no extra webhook. Apply it to the Karmada API server:

    \b
      wmap export karmada rayclusters | kubectl --kubeconfig karmada-apiserver.config apply -f -
    """
    from workload_map.cli.common import definition_for_word
    from workload_map.interpret import DefinitionIndex, select
    from workload_map.interpret.export import OPERATION_OF, customization_yaml, export_customization
    from workload_map.resolve import compile_definition
    from workload_map.views.machine import dump

    if (type_word is None) == (not all_types):
        raise CommandError("give a TYPE or --all", 2)
    state = get_state()
    if all_types:
        session = Session(state)
        index = DefinitionIndex(session.definitions(cluster=session.has_kubeconfig()))
        entries = [
            index.definitions.by_name(c.definition) for c in select(index.covered(), (), include_native)
        ]
        kartas = [e.karta for e in entries if e is not None]
    else:
        assert type_word is not None
        kartas = [definition_for_word(state, type_word).karta]
    objects: list[dict[str, Any]] = []
    problems: list[str] = []
    for karta in kartas:
        cd = compile_definition(karta)
        export = export_customization(cd)
        for key, refusals in export.omitted.items():
            for r in refusals:
                problems.append(
                    f'{cd.name}: {OPERATION_OF[key]} left out: component "{r.component}" {r.field}: '
                    f"{r.reason} (in {r.expression!r})"
                )
        if export.customization["spec"]["customizations"]:
            objects.append(export.customization)
    if strict and problems:
        raise CommandError(problems)
    for problem in problems:
        state.warn(problem)
    if not objects:
        raise CommandError("nothing could be exported", 1)
    fmt = output or state.output or "yaml"
    if fmt not in ("yaml", "json"):
        raise click.UsageError(f"unsupported output format {fmt!r} for export karmada (yaml or json)")
    if fmt == "json":
        body: Any = (
            objects[0] if len(objects) == 1 else {"apiVersion": "v1", "kind": "List", "items": objects}
        )
        click.echo(dump(body, "json"), nl=False)
    else:
        click.echo(customization_yaml(objects), nl=False)
