"""Printing the CLI's human formats: tables, trees, findings, explanations, test results.

Everything a command prints for people passes :func:`echo`, which escapes control characters
(:func:`workload_map.logs.escape_controls`: ESC and so CSI/OSC sequences, BEL, CR, backspace, C1
controls, bidi overrides) and keeps only the line breaks the renderer wrote. Names, reasons and
messages come from a cluster or a definition file; a terminal must show them, never obey them, and
a pipe gets the same text. JSON and YAML go out with ``click.echo`` unchanged (byte-for-byte the
data). Single-line fields inside a line are escaped where the line is built (:func:`field`), so a
line break in a name cannot start a line of its own.
"""

from __future__ import annotations

import click

from workload_map.logs import escape_controls

__all__ = ["echo", "field"]


def echo(text: str = "", *, nl: bool = True, err: bool = False) -> None:
    """``click.echo`` of human-readable ``text`` with control characters escaped (line breaks kept)."""
    click.echo(escape_controls(text, keep_newlines=True), nl=nl, err=err)


def field(value: object) -> str:
    """One value from a cluster or a definition, for a place inside a line: every control
    character escaped, line breaks too."""
    return escape_controls(value if isinstance(value, str) else str(value))
