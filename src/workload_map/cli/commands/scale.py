"""``wmap scale TYPE/NAME [--component C] [--instance ID] --replicas N``: a component's count
through its definition (the count expression inverted: a JobSet's workers by replicated-job
replicas, an LWS's workers by group size...). ``--replicas`` is in the definition's units, the
pods ``wmap get`` shows for the component."""

from __future__ import annotations

from typing import Any

import click

from workload_map.cli.main import get_state
from workload_map.cli.write import options, run, split_targets, write_options

CTX = {"help_option_names": ["-h", "--help"]}


def _component(definition: Any, wanted: str | None) -> str:
    """The component to scale: the one named, or the only one with a count."""
    from workload_map.cli.errors import CommandError
    from workload_map.resolve.compiled import as_compiled

    if wanted is not None:
        return wanted
    cd = as_compiled(definition)
    scalable = [
        c.name for c in cd.components.values() if c.replicas is not None or c.min_replicas is not None
    ]
    if len(scalable) == 1:
        return scalable[0]
    if not scalable:
        raise CommandError(f"definition '{cd.name}' has no component with a count to scale")
    raise CommandError(
        f"definition '{cd.name}' has several components with a count ({', '.join(scalable)}): "
        "name one with --component"
    )


def _targets(
    definition: Any, obj: dict[str, Any], name: str, replicas: int, instances: tuple[str, ...]
) -> Any:
    """``replicas`` for the component, or per instance with ``--instance`` (the other instances
    keep the count they read); a component with several instances needs ``--instance``."""
    from workload_map.errors import WriteBackError
    from workload_map.resolve import resolve

    comp = resolve(definition, obj).components.get(name)
    if comp is None:
        return replicas  # scale() names the unknown component
    ids = comp.instance_ids
    if not instances:
        if len(ids) > 1:
            raise WriteBackError(
                f"component '{name}' has {len(ids)} instances ({', '.join(ids)}): "
                "name the ones to scale with --instance"
            )
        return replicas
    unknown = [i for i in instances if i not in ids]
    if unknown:
        raise WriteBackError(
            f"component '{name}' has no instance {unknown[0]!r} (instances: {', '.join(ids)})"
        )
    return {i.id: replicas if i.id in instances else i.desired_replicas for i in comp.instances}


@click.command(
    "scale", short_help="Set a component's replica count through its definition.", context_settings=CTX
)
@click.argument("args", nargs=-1, metavar="(-f FILE | TYPE/NAME)")
@click.option(
    "--replicas", type=int, required=True, help="The new count, in the units wmap get shows (pods)."
)
@click.option("--component", default=None, help="The component (default: the only one with a count).")
@click.option(
    "--instance",
    "instances",
    multiple=True,
    metavar="ID",
    help="Only these instances (e.g. a JobSet's replicated job); the others keep their count.",
)
@write_options("wmap-scale")
def command(args: tuple[str, ...], replicas: int, component: str | None, instances: tuple[str, ...]) -> None:
    """Scale a component: the field its count is read from is written so the count reads
    --replicas (a computed count such as replicas x (size - 1) writes the one factor that makes
    it; a count that is a constant, or a role the object does not declare, cannot be scaled).
    A component with several instances needs --instance."""
    if replicas < 0:
        raise click.UsageError(
            "The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0"
        )
    state = get_state()
    opts = options(state)
    words, specs = split_targets(args, opts.filenames)
    if specs:
        raise click.UsageError(f'unexpected argument "{specs[0]}"')

    def compute(definition: Any, obj: dict[str, Any]) -> Any:
        from workload_map.resolve.writeback import scale

        name = _component(definition, component)
        return scale(definition, obj, name, _targets(definition, obj, name, replicas, instances))

    run(state, opts, words, compute, lambda _change, _before: "scaled")
