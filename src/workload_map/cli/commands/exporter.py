"""``wmap exporter``: serve Prometheus metrics about workloads (see docs/metrics.md)."""

from __future__ import annotations

import click

from workload_map.cli.common import Session, connection_options
from workload_map.cli.errors import CommandError
from workload_map.cli.main import get_state

_NS_META = "wmap.exporter.namespaces"
#: --max-series default: workload_map.exporter.collector.DEFAULT_MAX_SERIES (not imported here, so
#: that ``wmap exporter --help`` stays light; tests/exporter/test_scrape.py checks they agree).
MAX_SERIES = 1_000_000


def _store_namespaces(ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> None:
    if value:
        ctx.meta[_NS_META] = list(value)


@click.command(
    "exporter",
    short_help="Serve Prometheus metrics about workloads (phases, pods, requests, pod attribution).",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--listen", default=":9090", show_default=True, metavar="[HOST]:PORT", help="Address to serve on."
)
@click.option(
    "--watch-namespace",
    "watch_namespaces",
    multiple=True,
    metavar="NS",
    help="Same as -n/--namespace.",
    hidden=True,
)
@click.option("--no-catalog", is_flag=True, help="Do not use the built-in catalog definitions.")
@click.option(
    "--rediscover-interval",
    type=float,
    default=30.0,
    show_default=True,
    help="Seconds between checks for newly served kinds and changed definitions.",
)
@click.option("--workers", type=int, default=4, show_default=True, help="Worker threads.")
@click.option(
    "--shard",
    type=int,
    default=0,
    show_default=True,
    help="This exporter's shard: it renders the workloads whose UID hashes here, with their pods.",
)
@click.option(
    "--total-shards",
    type=int,
    default=1,
    show_default=True,
    help="Number of exporter shards (workloads split by UID as kube-state-metrics does).",
)
@click.option("--watch-timeout", type=int, default=300, show_default=True, hidden=True)
@click.option(
    "--generic-types",
    "generic_types",
    multiple=True,
    metavar="PLURAL.GROUP[,...]",
    help="Also export these types no definition covers, read generically (kstatus phase, owned "
    'pods; definition="generic"). Repeatable, comma-separated.',
)
@click.option(
    "--max-series",
    type=click.IntRange(min=0),
    default=MAX_SERIES,
    show_default=True,
    help="Ceiling on workload series per scrape: past it whole workloads are left out, in order of "
    "namespace, kind and name, and counted by wmap_exporter_dropped_series (0: no ceiling).",
)
@click.option(
    "--metric-allowlist",
    "metric_allowlist",
    multiple=True,
    metavar="NAME|REGEX[,...]",
    help="Export only these workload families (exact names or regular expressions searched in the "
    "name, as kube-state-metrics reads them). Repeatable, comma-separated. The exporter's own "
    "families are always exported.",
)
@click.option(
    "--metric-denylist",
    "metric_denylist",
    multiple=True,
    metavar="NAME|REGEX[,...]",
    help="Export every workload family but these (as --metric-allowlist; the two are exclusive).",
)
@click.option("--log-level", default="info", show_default=True, help="debug, info, warning or error.")
@connection_options
def command(
    listen: str,
    watch_namespaces: tuple[str, ...],
    no_catalog: bool,
    rediscover_interval: float,
    workers: int,
    shard: int,
    total_shards: int,
    watch_timeout: int,
    generic_types: tuple[str, ...],
    max_series: int,
    metric_allowlist: tuple[str, ...],
    metric_denylist: tuple[str, ...],
    log_level: str,
) -> None:
    """Serve /metrics, /healthz and /readyz. Watches every workload kind the merged definitions
    (catalog, cluster Kartas, --definitions) cover and the cluster serves, plus pods, and keeps
    per-workload metrics up to date from the watch events."""
    import logging
    import signal
    import threading

    from workload_map.exporter import Exporter, MetricsServer
    from workload_map.exporter.metrics import select_families
    from workload_map.exporter.sharding import Shard
    from workload_map.logs import configure_logging
    from workload_map.runtime.allocator import tune_allocator
    from workload_map.runtime.gcthresholds import tune_gc
    from workload_map.runtime.http import parse_listen

    configure_logging(getattr(logging, log_level.upper(), logging.INFO))
    # Before any thread starts: the informer caches keep ~1 KB per pod less (issue 24).
    tuned = tune_allocator()
    if tuned:
        logging.getLogger("workload_map.exporter").debug("malloc settings: %s", tuned)
    tune_gc()  # full collections walked the filling stores again and again (runtime/gcthresholds.py)
    state = get_state()
    try:
        host, port = parse_listen(listen)
        sharding = Shard(shard, total_shards)
        families = select_families(
            [e for arg in metric_allowlist for e in arg.split(",") if e],
            [e for arg in metric_denylist for e in arg.split(",") if e],
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    namespaces = list(watch_namespaces)
    ctx = click.get_current_context()
    for ns in ctx.meta.get(_NS_META, ()):
        if ns not in namespaces:
            namespaces.append(ns)
    given_ns = state.conn.get("namespace")  # -n given before the command name
    if given_ns and given_ns not in namespaces and not ctx.meta.get(_NS_META):
        namespaces.append(str(given_ns))
    words = [w for arg in generic_types for w in arg.split(",") if w]
    bad = [w for w in words if "." not in w or w.startswith(".")]
    if bad:
        raise click.UsageError(
            f"--generic-types: {', '.join(bad)}: give PLURAL.GROUP (e.g. gizmos.example.com)"
        )
    session = Session(state)
    exporter = Exporter(
        session.cluster_config(),
        namespaces=namespaces,
        local_paths=list(state.definitions),
        include_catalog=not no_catalog,
        rediscover_interval=rediscover_interval,
        workers=workers,
        watch_timeout=watch_timeout,
        shard=sharding,
        generic_types=words,
        max_series=max_series,
        field_validation=state.field_validation,
        families=families,
    )
    try:
        server = MetricsServer(exporter, host, port)
    except OSError as exc:  # nothing started yet: the exporter's informers start below
        raise CommandError(f"wmap exporter: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    done = threading.Event()

    def on_signal(_sig: int, _frame: object) -> None:
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    exporter.start()
    server.start()
    logging.getLogger("workload_map.exporter").info("serving on %s:%d", host, server.port)
    click.echo(f"wmap exporter: serving http://{host}:{server.port}/metrics", err=True)
    done.wait()
    server.stop()
    exporter.stop()


# Unlike other commands, -n/--namespace is repeatable here: the namespaces to watch.
command.params = [
    click.Option(
        ["-n", "--namespace", "namespace_"],
        multiple=True,
        metavar="NS",
        expose_value=False,
        callback=_store_namespaces,
        help="Watch only this namespace (repeatable). Default: all namespaces.",
    )
    if p.name == "namespace_"
    else p
    for p in command.params
]
