"""``wmap completion bash|zsh|fish``: print click's completion script for the shell.

Load it with ``eval "$(wmap completion zsh)"`` (bash, zsh) or
``wmap completion fish | source``. Dynamic values (types, names, namespaces, ``-o`` and
``--phase`` values) come from :mod:`workload_map.cli.completion_support`, each TAB bounded by 2 s.
"""

from __future__ import annotations

import click

SHELLS = ("bash", "zsh", "fish")


@click.command(
    "completion",
    short_help="Print a shell completion script.",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument("shell", type=click.Choice(SHELLS), metavar="bash|zsh|fish")
def command(shell: str) -> None:
    """Print the completion script for SHELL.

    \b
    bash:  eval "$(wmap completion bash)"   (or save it under ~/.local/share/bash-completion/completions/wmap)
    zsh:   eval "$(wmap completion zsh)"
    fish:  wmap completion fish | source
    """
    from click.shell_completion import get_completion_class

    from workload_map.cli.main import PROG, cli

    cls = get_completion_class(shell)
    assert cls is not None
    script = cls(cli, {}, PROG, "_WMAP_COMPLETE").source()
    click.echo(script)
