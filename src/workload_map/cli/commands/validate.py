"""``wmap validate FILE|-`` (spec 5.7): static, offline checks of Karta definitions.

Output per definition, in file and document order: ``OK: <name> is a valid Karta definition
(GVK: <root GVK>)`` on stdout, or ``INVALID: <name>`` followed by one finding per line (indented
two spaces, ``file:line:column:`` first when known, the finding code last). Warnings go to
stderr after the output. Exit 0 when every definition is valid, 1 when one is invalid, 2 when a
file cannot be read or parsed or holds something that is not a Karta definition.

Unknown fields and repeated keys are errors unless ``--validate=warn`` (warnings) or
``--validate=ignore`` (dropped), as kubectl's ``--validate`` flag.
"""

from __future__ import annotations

import click

from workload_map import messages
from workload_map.cli import exit_codes, terminal
from workload_map.cli.common import validate_option
from workload_map.cli.errors import CommandError
from workload_map.cli.main import PROG, get_state
from workload_map.model.definition import gvk_text
from workload_map.model.findings import ERROR, Finding
from workload_map.model.loader import LoadedDefinition, RejectedDocument, load_definitions


def _gvk(loaded: LoadedDefinition) -> str:
    gvk = loaded.karta.root_gvk
    if gvk is None:
        return gvk_text("", "", "")
    return gvk_text(gvk.group, gvk.version, gvk.kind)


def _warning_text(f: Finding) -> str:
    text = f.format()
    return text if f.location or not f.definition else f"{f.definition}: {text}"


@click.command(
    "validate",
    short_help="Check Karta definition files offline.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("source", metavar="FILE|-")
@click.option("--strict", is_flag=True, help="Treat every warning as an error.")
@validate_option
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print only invalid definitions and errors (no OK lines, no warnings).",
)
@click.option("-o", "--output", "output", hidden=True, help="Not supported by validate.")
def command(source: str, strict: bool, quiet: bool, output: str | None) -> None:
    """Validate the Karta definitions in FILE (YAML or JSON; several documents, a list or a
    kind: List are fine), in every *.yaml, *.yml and *.json file of a directory (not recursive),
    or on stdin (-). No cluster is needed.

    Runs upstream's rules (same messages), static jq checks and extra checks; findings carry
    file:line:column and a code (see docs/validation.md). Unknown fields and repeated keys are
    errors (--validate=strict, the default, as kubectl); --validate=warn makes them warnings,
    --validate=ignore drops them. Exit 0 valid, 1 invalid, 2 unreadable or not a definition."""
    state = get_state()
    # Rejected whether given to validate or to the root (``wmap -o json validate``).
    if output is not None or getattr(state, "output", None) is not None:
        raise click.UsageError(messages.output_not_supported(f"{PROG} validate"))
    mode = state.field_validation
    result = load_definitions(source, field_validation=mode)

    entries: list[tuple[tuple[int, int, int], LoadedDefinition | RejectedDocument]] = []
    order = {origin: i for i, origin in enumerate(result.origins)}
    for d in result.definitions:
        entries.append(((order.get(d.origin, 0), d.document_index, d.item_index or 0), d))
    for r in result.rejected:
        entries.append(((order.get(r.origin, 0), r.document_index, r.item_index or 0), r))
    entries.sort(key=lambda e: e[0])

    if not entries:
        raise CommandError(messages.no_definitions("stdin" if source == "-" else source), exit_codes.USAGE)

    failures: list[str] = []
    unusable: list[str] = []
    for _, entry in entries:
        if isinstance(entry, RejectedDocument):
            findings = list(entry.findings)
            name = entry.name
            if entry.not_a_definition:
                unusable.extend(f.format(location=False) for f in findings if f.severity == ERROR)
                if not quiet:
                    state.warnings.extend(_warning_text(f) for f in findings if f.severity != ERROR)
                continue
        else:
            findings = [*entry.findings, *entry.validate()]
            name = entry.name
        if strict:
            findings = [f.as_error() for f in findings]
        errors = [f for f in findings if f.severity == ERROR]
        if not quiet:
            state.warnings.extend(_warning_text(f) for f in findings if f.severity != ERROR)
        if not errors and isinstance(entry, LoadedDefinition):
            if not quiet:
                terminal.echo(messages.validate_ok(name, _gvk(entry)))
            continue
        terminal.echo(messages.validate_invalid(name))
        for f in errors:
            terminal.echo(f"  {f.format()}")
        failures.append(messages.findings_in(len(errors), name))

    if failures and mode == "strict" and any(f.code in ("KARTA101", "KARTA107") for f in result.findings):
        failures.append(messages.FIELD_VALIDATION_HINT)
    if unusable:
        raise CommandError([*unusable, *failures], exit_codes.USAGE)
    if failures:
        raise CommandError(failures, exit_codes.ERROR)
