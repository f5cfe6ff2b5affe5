"""``wmap suspend`` and (with :func:`make`) ``wmap resume``: the definition's suspend or resume
actions (JobSet ``spec.suspend``, KServe's stop annotation, Kueue-style flags...)."""

from __future__ import annotations

from typing import Any

import click

from workload_map.cli.main import get_state
from workload_map.cli.write import options, run, split_targets, write_options

CTX = {"help_option_names": ["-h", "--help"]}


def make(verb: str) -> click.Command:
    @click.command(
        verb, short_help=f"{verb.capitalize()} workloads through their definition.", context_settings=CTX
    )
    @click.argument("args", nargs=-1, metavar="(-f FILE | TYPE/NAME)")
    @click.option(
        "--component", default=None, help=f"Only this component's {verb} actions (default: every one)."
    )
    @write_options(f"wmap-{verb}")
    def command(args: tuple[str, ...], component: str | None) -> None:
        from workload_map.resolve import writeback

        state = get_state()
        opts = options(state)
        words, specs = split_targets(args, opts.filenames)
        if specs:
            raise click.UsageError(f'unexpected argument "{specs[0]}"')
        fn = writeback.suspend if verb == "suspend" else writeback.resume

        def compute(definition: Any, obj: dict[str, Any]) -> Any:
            return fn(definition, obj, component)

        def kept(definition: Any, answer: dict[str, Any]) -> list[str]:
            return writeback.actions_not_kept(definition, answer, component, verb)

        word = "suspended" if verb == "suspend" else "resumed"
        run(state, opts, words, compute, lambda _change, _before: word, kept)

    command.__doc__ = f"Apply the definition's {verb}Actions to workloads (in order, root first)."
    return command


command = make("suspend")
