"""``wmap set image|resources|env|scheduler|node-selector|tolerations|priority-class``: kubectl's
``set`` verbs for every workload type a definition covers, through every pod template and
fragmented pod spec the definition locates (LWS leader and worker, JobSet replicated jobs, KServe
predictor fragments...). Offline with ``--local -f``, live with a resourceVersion precondition.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import click

from workload_map.cli.edit_args import build_edit as _edit
from workload_map.cli.edit_args import component_names as _components
from workload_map.cli.edit_args import parse_pairs, parse_specs, parse_toleration
from workload_map.cli.main import get_state
from workload_map.cli.write import Options, options, run, split_targets, write_options

CTX = {"help_option_names": ["-h", "--help"]}


def _go(
    ctx_opts: Options, words: list[str], edits: list[Any], components: list[str] | None, past: str
) -> None:
    from workload_map.resolve.writeback import apply_edits

    def compute(definition: Any, obj: dict[str, Any]) -> Any:
        return apply_edits(definition, obj, edits, components=components)

    run(get_state(), ctx_opts, words, compute, lambda change, _before: past if change.changed else None)


component_option = click.option(
    "--component",
    "components",
    multiple=True,
    metavar="NAME[,NAME]",
    help="Only the pod templates of these components (wmap explain TYPE lists them).",
)


@click.group(
    "set", short_help="Set image, resources, env, scheduler... in every pod template.", context_settings=CTX
)
def command() -> None:
    """Change pod template fields of any workload through its definition: every pod template and
    fragmented pod spec the definition locates, and nothing else."""


@command.command("image", context_settings=CTX)
@click.argument("args", nargs=-1, metavar="(-f FILE | TYPE/NAME) [COMPONENT/]CONTAINER=IMAGE...")
@component_option
@write_options("wmap-set")
def image(args: tuple[str, ...], components: tuple[str, ...]) -> None:
    """Update the image of containers (and init containers): CONTAINER=IMAGE, * for every one,
    COMPONENT/CONTAINER for one component's. A fragmented spec's unnamed main container (Spark's
    driver image) answers to * and to its component's name."""
    from workload_map.resolve.writeback import SetImage

    opts = options(get_state())
    words, specs = split_targets(args, opts.filenames)
    if not specs:
        raise click.UsageError("at least one image update is required: CONTAINER=IMAGE")
    edits = []
    for spec in specs:
        left, _, img = spec.partition("=")
        component, slash, container = left.rpartition("/")
        if not left or not img or (slash and not component):
            raise click.UsageError(f'invalid image update "{spec}": expected [COMPONENT/]CONTAINER=IMAGE')
        edits.append(_edit(partial(SetImage, container, img, component or None)))
    _go(opts, words, edits, _components(components), "image updated")


@command.command("resources", context_settings=CTX)
@click.argument("args", nargs=-1, metavar="(-f FILE | TYPE/NAME)")
@click.option(
    "-c",
    "--containers",
    "container",
    default="*",
    show_default=True,
    help="Containers to change (a glob, e.g. 'web*').",
)
@click.option(
    "--requests", multiple=True, metavar="NAME=QTY[,...]", help="Requests, e.g. cpu=2,nvidia.com/gpu=1."
)
@click.option(
    "--limits", multiple=True, metavar="NAME=QTY[,...]", help="Limits, e.g. memory=64Gi,nvidia.com/gpu=1."
)
@component_option
@write_options("wmap-set")
def resources(
    args: tuple[str, ...],
    container: str,
    requests: tuple[str, ...],
    limits: tuple[str, ...],
    components: tuple[str, ...],
) -> None:
    """Set resource requests and limits (extended resources such as nvidia.com/gpu included; their
    request must equal the limit, as Kubernetes requires)."""
    from workload_map.resolve.writeback import SetResources

    opts = options(get_state())
    words, specs = split_targets(args, opts.filenames)
    if specs:
        raise click.UsageError(f'unexpected argument "{specs[0]}": use --requests and --limits')
    req, lim = parse_pairs(requests, "request"), parse_pairs(limits, "limit")
    if not req and not lim:
        raise click.UsageError(
            "you must specify an update to requests or limits (in the form of --requests/--limits)"
        )
    edits = [_edit(lambda: SetResources(requests=req, limits=lim, container=container))]
    _go(opts, words, edits, _components(components), "resource requirements updated")


@command.command("env", context_settings=CTX)
@click.argument("args", nargs=-1, metavar="(-f FILE | TYPE/NAME) KEY=VALUE... KEY-...")
@click.option(
    "-e", "--env", "env_flags", multiple=True, metavar="KEY=VALUE", help="A variable to set (repeatable)."
)
@click.option(
    "-c", "--containers", "container", default="*", show_default=True, help="Containers to change (glob)."
)
@click.option(
    "--from",
    "from_",
    multiple=True,
    metavar="secret/NAME|configmap/NAME",
    help="Add every key of a Secret or ConfigMap (as an envFrom reference).",
)
@click.option("--prefix", default="", help="Prefix for the --from variables.")
@component_option
@write_options("wmap-set")
def env(
    args: tuple[str, ...],
    env_flags: tuple[str, ...],
    container: str,
    from_: tuple[str, ...],
    prefix: str,
    components: tuple[str, ...],
) -> None:
    """Set (KEY=VALUE), remove (KEY-) environment variables, or add --from sources. Unlike kubectl,
    --from adds an envFrom reference instead of copying the keys: nothing secret passes through
    this client, and pods follow later changes of the Secret or ConfigMap."""
    from workload_map.resolve.writeback import EnvFrom, SetEnv

    opts = options(get_state())
    words, specs = split_targets(args, opts.filenames)
    values, unset = parse_specs([*specs, *env_flags], "environment variable")
    sources = []
    for src in from_:
        kind, slash, name = src.partition("/")
        kinds = {"secret": "secret", "configmap": "configMap", "cm": "configMap"}
        if not slash or kind.lower() not in kinds:
            raise click.UsageError(f'invalid --from "{src}": expected secret/NAME or configmap/NAME')
        if kinds[kind.lower()] == "secret":
            sources.append(_edit(partial(EnvFrom, "secret", name, prefix)))
        else:
            sources.append(_edit(partial(EnvFrom, "configMap", name, prefix)))
    if not values and not unset and not sources:
        raise click.UsageError(
            "at least one environment variable change is required (KEY=VALUE, KEY- or --from)"
        )
    edits = [
        _edit(lambda: SetEnv(values=values, unset=tuple(unset), env_from=tuple(sources), container=container))
    ]
    _go(opts, words, edits, _components(components), "env updated")


@command.command("scheduler", context_settings=CTX)
@click.argument("args", nargs=-1, metavar="(-f FILE | TYPE/NAME) SCHEDULER")
@component_option
@write_options("wmap-set")
def scheduler(args: tuple[str, ...], components: tuple[str, ...]) -> None:
    """Set spec.schedulerName of every pod template (schedulerNamePath on fragmented specs)."""
    from workload_map.resolve.writeback import SetSchedulerName

    opts = options(get_state())
    words, (name,) = split_targets(args, opts.filenames, values=1)
    _go(opts, words, [_edit(lambda: SetSchedulerName(name))], _components(components), "scheduler updated")


@command.command("priority-class", context_settings=CTX)
@click.argument("args", nargs=-1, metavar="(-f FILE | TYPE/NAME) PRIORITY_CLASS")
@component_option
@write_options("wmap-set")
def priority_class(args: tuple[str, ...], components: tuple[str, ...]) -> None:
    """Set spec.priorityClassName of every pod template."""
    from workload_map.resolve.writeback import SetPriorityClassName

    opts = options(get_state())
    words, (name,) = split_targets(args, opts.filenames, values=1)
    _go(
        opts,
        words,
        [_edit(lambda: SetPriorityClassName(name))],
        _components(components),
        "priority class updated",
    )


@command.command("node-selector", context_settings=CTX)
@click.argument("args", nargs=-1, metavar="(-f FILE | TYPE/NAME) KEY=VALUE... KEY-...")
@component_option
@write_options("wmap-set")
def node_selector(args: tuple[str, ...], components: tuple[str, ...]) -> None:
    """Set or remove spec.nodeSelector keys (on a fragmented spec: a required node affinity term
    through nodeAffinityPath, which Kubernetes reads the same way)."""
    from workload_map.resolve.writeback import SetNodeSelector

    opts = options(get_state())
    words, specs = split_targets(args, opts.filenames)
    values, unset = parse_specs(specs, "node selector")
    if not values and not unset:
        raise click.UsageError("at least one node selector change is required: KEY=VALUE or KEY-")
    edits = [_edit(lambda: SetNodeSelector(values, tuple(unset)))]
    _go(opts, words, edits, _components(components), "node selector updated")


@command.command("tolerations", context_settings=CTX)
@click.argument("args", nargs=-1, metavar="(-f FILE | TYPE/NAME)")
@click.option(
    "--add", "add", multiple=True, metavar="KEY[=VALUE][:EFFECT]", help="A toleration to add (repeatable)."
)
@click.option(
    "--remove", "remove", multiple=True, metavar="KEY[:EFFECT]", help="Tolerations to remove (repeatable)."
)
@component_option
@write_options("wmap-set")
def tolerations(
    args: tuple[str, ...], add: tuple[str, ...], remove: tuple[str, ...], components: tuple[str, ...]
) -> None:
    """Add tolerations (one for the same key and effect is replaced) or remove them."""
    from workload_map.resolve.writeback import SetTolerations

    opts = options(get_state())
    words, specs = split_targets(args, opts.filenames)
    if specs:
        raise click.UsageError(f'unexpected argument "{specs[0]}": use --add and --remove')
    if not add and not remove:
        raise click.UsageError("give --add KEY[=VALUE][:EFFECT] or --remove KEY[:EFFECT]")
    edits = [_edit(lambda: SetTolerations(add=tuple(parse_toleration(a) for a in add), remove=tuple(remove)))]
    _go(opts, words, edits, _components(components), "tolerations updated")


__all__ = ["command"]
