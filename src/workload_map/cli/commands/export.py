"""``wmap export ENGINE``: definitions compiled for another engine.

* ``wmap export karmada TYPE|--all``: Karmada ``ResourceInterpreterCustomization`` objects whose
  Lua gives the answers of ``wmap karmada webhook`` (docs/multicluster.md, "Lua export").
* ``wmap export argocd TYPE|--all``: Argo CD health checks (``health.lua`` per group and kind, the
  argocd-cm keys or the argo-cd chart's values) from the definitions' status rules (docs/gitops.md).

An operation whose expressions the Lua back end cannot translate is left out of the
customization (Karmada then asks its other interpreters) with one ``warning:`` line naming the
operation, the field, the construct and the expression; ``--strict`` makes that an error.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from workload_map.cli.common import Session, connection_options
from workload_map.cli.errors import CommandError
from workload_map.cli.main import get_state

if TYPE_CHECKING:
    from workload_map.interpret import Covered
    from workload_map.model import Karta

CTX = {"help_option_names": ["-h", "--help"]}


@click.group(
    "export", short_help="Compile definitions for another engine (karmada, argocd).", context_settings=CTX
)
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
    from workload_map.interpret.export import OPERATION_OF, customization_yaml, export_customization
    from workload_map.resolve import compile_definition
    from workload_map.views.machine import dump

    kartas = _definitions(type_word, all_types, lambda c: include_native or not c.native)
    state = get_state()
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


@command.command("argocd", context_settings=CTX)
@click.argument("type_word", metavar="TYPE", required=False)
@click.option("--all", "all_types", is_flag=True, help="Every covered group/kind (one script each).")
@click.option(
    "--include-native/--no-include-native",
    default=False,
    show_default=True,
    help="With --all, also the kinds whose health Argo CD computes itself (Deployment, Job, Pod...).",
)
@click.option(
    "--strict", is_flag=True, help="Fail when a definition cannot be translated (default: leave it out)."
)
@click.option(
    "--form",
    type=click.Choice(["configmap", "helm-values"]),
    default="configmap",
    show_default=True,
    help="configmap: the argocd-cm keys as a ConfigMap; helm-values: configs.cm of the argo-cd chart.",
)
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False, path_type=str),
    default=None,
    help="Write <group>/<Kind>/health.lua files (Argo CD's resource_customizations layout) instead.",
)
@click.option("--argocd-namespace", default="argocd", show_default=True, help="The ConfigMap's namespace.")
@click.option("-o", "--output", "output", type=click.Choice(["yaml", "json"]), default=None)
@connection_options
def argocd_command(
    type_word: str | None,
    all_types: bool,
    include_native: bool,
    strict: bool,
    form: str,
    out_dir: str | None,
    argocd_namespace: str,
    output: str | None,
) -> None:
    """Print Argo CD health checks for TYPE (a type word or definition name): a health.lua per
    group and kind compiled from the definitions' status rules, our phases mapped to Healthy,
    Progressing, Suspended or Degraded with describe's message (docs/gitops.md). Merge them into
    argocd-cm server-side (only these keys change):

    \b
      wmap export argocd --all | kubectl apply --server-side --field-manager=wmap -f -
    """
    from workload_map.interpret.argocd import ARGO_NATIVE, config_map, health_checks, helm_values
    from workload_map.resolve import compile_definition
    from workload_map.views.machine import dump

    kartas = _definitions(
        type_word, all_types, lambda c: include_native or (c.group, c.kind) not in ARGO_NATIVE
    )
    state = get_state()
    checks = health_checks(compile_definition(k) for k in kartas)
    problems = [
        f"{c.group or 'core'}/{c.kind}: {name} left out: {why}"
        for c in checks
        for name, whys in c.omitted.items()
        for why in whys
    ]
    if strict and problems:
        raise CommandError(problems)
    for problem in problems:
        state.warn(problem)
    checks = [c for c in checks if c.versions]
    if not checks:
        raise CommandError("nothing could be exported", 1)
    if out_dir is not None:
        for path in _write_scripts(Path(out_dir), {c.path: c.script for c in checks}):
            click.echo(str(path))
        return
    fmt = output or state.output or "yaml"
    if fmt not in ("yaml", "json"):
        raise click.UsageError(f"unsupported output format {fmt!r} for export argocd (yaml or json)")
    body = config_map(checks, namespace=argocd_namespace) if form == "configmap" else helm_values(checks)
    if fmt == "json":
        click.echo(dump(body, "json"), nl=False)
    else:
        from workload_map.interpret.export import customization_yaml

        click.echo(customization_yaml([body]), nl=False)


def _definitions(type_word: str | None, all_types: bool, keep: Callable[[Covered], bool]) -> list[Karta]:
    """The definition TYPE names, or with ``--all`` every one that alone covers its kind and that
    ``keep`` keeps (the export commands' selection)."""
    from workload_map.cli.common import definition_for_word
    from workload_map.interpret import DefinitionIndex

    if (type_word is None) == (not all_types):
        raise CommandError("give a TYPE or --all", 2)
    state = get_state()
    if type_word is not None:
        return [definition_for_word(state, type_word).karta]
    session = Session(state)
    index = DefinitionIndex(session.definitions(cluster=session.has_kubeconfig()))
    entries = [index.definitions.by_name(c.definition) for c in index.covered() if keep(c)]
    return [e.karta for e in entries if e is not None]


def _write_scripts(root: Path, files: dict[str, str]) -> list[Path]:
    """Write each file whole (a temporary file renamed over it): an interrupted run leaves every
    script either old or new, never cut."""
    import os
    import tempfile

    if root.exists() and not root.is_dir():
        raise CommandError(f"--out-dir {root}: not a directory", 2)
    written: list[Path] = []
    for rel, text in files.items():
        target = root / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".health.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise CommandError(f"--out-dir {root}: cannot write {rel}: {exc.strerror or exc}", 1) from exc
        written.append(target)
    return written
