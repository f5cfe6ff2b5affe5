"""``wmap label`` and (with :func:`make`) ``wmap annotate``: kubectl's verbs on the workload
object's own metadata by default, or with ``--pod-templates`` on every pod template the definition
locates (``metadata`` of templates, ``metadataPath``, ``labelsPath``/``annotationsPath``)."""

from __future__ import annotations

from typing import Any

import click

from workload_map.cli.main import get_state
from workload_map.cli.write import options, run, split_targets, write_options

CTX = {"help_option_names": ["-h", "--help"]}


def make(verb: str) -> click.Command:
    """The ``label`` or ``annotate`` command."""
    noun = "label" if verb == "label" else "annotation"

    @click.command(
        verb, short_help=f"Update the {noun}s of a workload or of its pod templates.", context_settings=CTX
    )
    @click.argument("args", nargs=-1, metavar="(-f FILE | TYPE/NAME) KEY=VALUE... KEY-...")
    @click.option("--overwrite", is_flag=True, help=f"Replace a {noun} that already has another value.")
    @click.option(
        "--pod-templates", is_flag=True, help=f"Change the pod templates' {noun}s instead of the object's."
    )
    @click.option(
        "--component",
        "components",
        multiple=True,
        metavar="NAME[,NAME]",
        help="With --pod-templates: only these components' templates.",
    )
    @write_options(f"wmap-{verb}")
    def command(
        args: tuple[str, ...], overwrite: bool, pod_templates: bool, components: tuple[str, ...]
    ) -> None:
        from workload_map.cli.edit_args import build_edit, component_names, parse_specs
        from workload_map.kube.objects import labels_of
        from workload_map.resolve import writeback as wb

        state = get_state()
        opts = options(state)
        words, specs = split_targets(args, opts.filenames)
        values, unset = parse_specs(specs, noun)
        if not values and not unset:
            raise click.UsageError(f"at least one {noun} update is required")
        if components and not pod_templates:
            raise click.UsageError("--component needs --pod-templates (the object has one metadata)")
        existing = "overwrite" if overwrite else "error"
        kinds: dict[tuple[bool, str], Any] = {
            (False, "label"): wb.SetLabels,
            (False, "annotate"): wb.SetAnnotations,
            (True, "label"): wb.SetPodLabels,
            (True, "annotate"): wb.SetPodAnnotations,
        }
        cls = kinds[(pod_templates, verb)]
        edits = [build_edit(lambda: cls(values, tuple(unset), existing))]
        scope = component_names(components)

        def compute(definition: Any, obj: dict[str, Any]) -> Any:
            return wb.apply_edits(definition, obj, edits, components=scope)

        def past(change: Any, before: dict[str, Any]) -> str:
            if verb == "annotate":
                return "annotated"
            notes = ""
            if not pod_templates:  # kubectl names labels it was asked to remove but did not find
                current = labels_of(before)
                notes = "".join(f'label "{k}" not found.\n' for k in unset if k not in current)
            if not change.changed:
                return notes + "not labeled"
            return notes + ("labeled" if values else "unlabeled")

        run(state, opts, words, compute, past)

    command.__doc__ = (
        f"Update the {noun}s of workloads (KEY=VALUE, KEY- to remove), as kubectl {verb} does; "
        f"--pod-templates puts them on every pod template the definition locates instead. A {noun} "
        "that already has another value is kept unless --overwrite."
    )
    return command


command = make("label")
