"""``wmap test DEFINITION CASE...``: run a definition against objects with expected results.

DEFINITION is a Karta file, or any type word or definition name ``wmap explain`` accepts. Each
CASE is a file (or a directory of ``*.yaml`` files) in the case format or the upstream recording
format (:mod:`workload_map.cases`). Prints PASS/FAIL per case and the differences; exit 0 when
every case passes, 1 when one fails, 2 for an unreadable file or one in neither format, 4 when
no definition covers DEFINITION.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from workload_map.cli import exit_codes, terminal
from workload_map.cli.common import (
    connection_options,
    definition_for_word,
    output_option,
    resolve_output,
)
from workload_map.cli.completion_support import complete_definition
from workload_map.cli.errors import CommandError
from workload_map.cli.live import read_documents
from workload_map.cli.main import get_state
from workload_map.errors import WorkloadMapError

if TYPE_CHECKING:
    from workload_map.cli.main import State
    from workload_map.model.definition import Karta

FORMATS = ("table", "json", "yaml")
#: Case files read at most (a directory argument is expanded, recursively); each is read by
#: cli.live.read_documents (bounded in size and in YAML alias expansion).
MAX_FILES = 10_000
CASE_SUFFIXES = (".yaml", ".yml")


def _case_files(args: tuple[str, ...]) -> list[Path]:
    from workload_map.errors import DefinitionError
    from workload_map.model.inputs import is_directory, list_files

    out: list[Path] = []
    for arg in args:
        path = Path(arg)
        if is_directory(path):
            try:
                out += list_files(
                    path, CASE_SUFFIXES, limit=MAX_FILES - len(out), recursive=True, what="case files"
                )
            except DefinitionError as exc:
                raise click.UsageError(str(exc)) from None
        elif path.exists():
            out.append(path)  # a special file is refused when it is read, before it is opened
        else:
            raise click.UsageError(f"{arg}: no such file or directory")
        if len(out) > MAX_FILES:
            raise click.UsageError(f"more than {MAX_FILES} case files")
    if not out:
        raise click.UsageError("no case files (give files or directories holding *.yaml)")
    return out


@click.command(
    "test",
    short_help="Run a definition against cases with expected results.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("definition", metavar="DEFINITION", shell_complete=complete_definition)
@click.argument("cases", nargs=-1, required=True, metavar="CASE...", type=click.Path())
@click.option(
    "--match",
    "rule",
    type=click.Choice(["agree", "exact", "contains"]),
    default="agree",
    show_default=True,
    help="Recordings: agree = the phases are the recorded state or an accepted stand-in for it "
    "(docs/catalog.md); exact = only the recorded state; contains = upstream's rule, the state among them.",
)
@connection_options
@output_option(FORMATS)
def command(definition: str, cases: tuple[str, ...], rule: str) -> None:
    """Resolve each case's object with DEFINITION (a Karta file, a definition name or a type
    word) and compare with its expectations: phases, primary phase, replicas per component and
    instance, pods claimed, GPUs, PodGroups. Upstream recordings (events of STATE) are replayed:
    the phases matched must agree with each recorded state (--match).

    \b
    Examples:
      wmap test my-widget.yaml cases/
      wmap test pytorchjob recorded/running.yaml --match exact
    """
    from workload_map.cases import CaseError, check_file
    from workload_map.views.machine import dump

    state = get_state()
    fmt = resolve_output(state, FORMATS)
    karta, label = _definition(state, definition)
    results = []
    for path in _case_files(cases):
        try:
            results += check_file(karta, str(path), read_documents(str(path))[1], rule=rule)
        except CaseError as exc:
            raise CommandError(str(exc), exit_codes.USAGE) from None
    failed = [r for r in results if not r.passed]
    if fmt in ("json", "yaml"):
        doc = {
            "definition": label,
            "passed": len(results) - len(failed),
            "failed": len(failed),
            "results": [r.to_dict() for r in results],
        }
        click.echo(dump(doc, fmt), nl=False)
    else:
        for r in results:
            terminal.echo(f"{'PASS' if r.passed else 'FAIL'}  {r.name}")
            for d in r.differences:
                terminal.echo(f"      {d.text()}")
        checks = sum(r.checks for r in results)
        terminal.echo(f"{label}: {len(results)} cases, {len(failed)} failed ({checks} checks)")
    if failed:
        raise click.exceptions.Exit(exit_codes.ERROR)


def _definition(state: State, word: str) -> tuple[Karta, str]:
    """The Karta to test: a file when ``word`` names one, else the merged set's definition."""
    from workload_map.definitions_source import local_entries
    from workload_map.model.inputs import is_directory

    # A file (a FIFO or a device is refused by the reader, never opened), else a word.
    if Path(word).exists() and not is_directory(word):
        try:
            entry = local_entries([word], field_validation=state.field_validation)[0]
        except WorkloadMapError as exc:
            raise CommandError(str(exc), exit_codes.USAGE) from exc
        return entry.karta, f"{entry.name} ({word})"
    entry = definition_for_word(state, word)
    return entry.karta, entry.name
