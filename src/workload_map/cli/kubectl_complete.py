"""``kubectl_complete-wmap``: shell completion for ``kubectl wmap ...`` (kubectl 1.26+ runs this
executable, found on PATH next to the ``kubectl-wmap`` plugin, with the words after ``wmap``, the
last being the one to complete) in Cobra's format: one candidate per line (``value\\thelp``), then
``:<directive>``. Candidates come from the same click completion ``wmap completion`` serves."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["completions", "main"]

#: Cobra's ShellCompDirective values.
DEFAULT = 0
NO_FILE_COMP = 4


def completions(words: Sequence[str]) -> tuple[list[str], int]:
    """(lines, directive) for completing ``words[-1]`` after ``words[:-1]``."""
    from click.shell_completion import ShellComplete

    from workload_map.cli.main import PROG, cli

    args = list(words) or [""]
    items = ShellComplete(cli, {}, PROG, "_WMAP_COMPLETE").get_completions(args[:-1], args[-1])
    lines = []
    files = False
    for item in items:
        if item.type in ("file", "dir"):
            files = True
            continue
        help_text = " ".join(str(item.help or "").split())
        lines.append(f"{item.value}\t{help_text}" if help_text else str(item.value))
    return lines, DEFAULT if files else NO_FILE_COMP


def main(argv: Sequence[str] | None = None) -> int:
    try:
        lines, directive = completions(sys.argv[1:] if argv is None else argv)
    except Exception:  # completion never prints a traceback at the user's prompt
        lines, directive = [], NO_FILE_COMP
    out = "".join(line + "\n" for line in lines) + f":{directive}\n"
    sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
