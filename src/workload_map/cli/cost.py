"""GPU-hours and cost in ``get``, ``describe`` and ``serve``: the ``--prometheus`` and
``--cost-window`` flags, where the Prometheus comes from, and the cost attached to the views.

Precedence, as kubectl users know it for flags, environment and files:

- URL: ``--prometheus URL`` > ``$WMAP_PROMETHEUS_URL`` > the config file's ``prometheus.url``;
  ``--prometheus ""`` turns cost off whatever the others say. Without any, no cost is read.
- window: ``--cost-window`` > ``$WMAP_COST_WINDOW`` > ``prometheus.window`` > ``24h``.
- timeout per query: ``prometheus.timeout`` > ``5s``.

The config file (``--config``, ``$WMAP_CONFIG``, ``~/.config/wmap/config.yaml``)::

    prometheus:
      url: http://prometheus.monitoring:9090
      window: 7d
      timeout: 10s

A bad value is a usage error naming where it came from; a Prometheus that is down or slow is a
warning (the numbers show ``<unknown>``), never a failed command.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

import click

from workload_map.cli import exit_codes
from workload_map.cli.errors import CommandError

if TYPE_CHECKING:
    from workload_map.cli.main import State
    from workload_map.cost import PrometheusSettings
    from workload_map.views.model import DescribeView, WorkloadView

F = TypeVar("F", bound=Callable[..., Any])

URL_ENV = "WMAP_PROMETHEUS_URL"
WINDOW_ENV = "WMAP_COST_WINDOW"
CONFIG_KEYS = ("url", "window", "timeout")


def _state(ctx: click.Context) -> State:
    from workload_map.cli.common import _state as state_of

    return state_of(ctx)


def prometheus_options(f: F) -> F:
    """``--prometheus URL`` and ``--cost-window DURATION``."""

    def store_url(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value is not None:
            _state(ctx).prometheus = value

    def store_window(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value is not None:
            _state(ctx).cost_window = value

    f = click.option(
        "--cost-window",
        "cost_window_",
        metavar="DURATION",
        expose_value=False,
        callback=store_window,
        help=f"What GPU-hours and cost cover, ending now (default ${WINDOW_ENV}, the config file's "
        "prometheus.window, or 24h).",
    )(f)
    f = click.option(
        "--prometheus",
        "prometheus_",
        metavar="URL",
        expose_value=False,
        callback=store_url,
        help=f"Prometheus holding the cost recording rules: adds GPU-hours and cost (default "
        f'${URL_ENV} or the config file\'s prometheus.url; "" turns it off). docs/metrics.md.',
    )(f)
    return f


def _config_section(state: State) -> tuple[dict[str, Any], str]:
    from workload_map.cli.common import config_path, read_config

    data = read_config(state).get("prometheus")
    path, _ = config_path(state)
    where = f"config file {path}"
    if data is None:
        return {}, where
    if not isinstance(data, dict):
        raise CommandError(
            f"{where}: prometheus must be a mapping with url, window, timeout", exit_codes.USAGE
        )
    unknown = sorted(str(k) for k in data if k not in CONFIG_KEYS)
    if unknown:
        raise CommandError(
            f"{where}: unknown prometheus key(s) {', '.join(unknown)} (the keys are url, window, timeout)",
            exit_codes.USAGE,
        )
    for key, value in data.items():
        if value is not None and not isinstance(value, str):
            raise CommandError(f"{where}: prometheus.{key} must be a string", exit_codes.USAGE)
    return data, where


def prometheus_settings(state: State, environ: dict[str, str] | None = None) -> PrometheusSettings | None:
    """The Prometheus to read costs from, by the precedence of the module doc; ``None``: none."""
    env = os.environ if environ is None else environ
    if state.prometheus is not None and not state.prometheus.strip():
        return None  # --prometheus "": off
    config, where = _config_section(state)
    if state.prometheus is not None:
        url, url_from = state.prometheus.strip(), "--prometheus"
    elif env.get(URL_ENV, "").strip():
        url, url_from = env[URL_ENV].strip(), f"${URL_ENV}"
    elif (config.get("url") or "").strip():
        url, url_from = str(config["url"]).strip(), f"{where}: prometheus.url"
    else:
        return None
    # Imported once a Prometheus is set: without one, describe and get never need the cost client.
    from workload_map.cost import (
        DEFAULT_TIMEOUT,
        DEFAULT_WINDOW,
        PrometheusClient,
        PrometheusSettings,
        parse_timeout,
        parse_window,
    )
    from workload_map.errors import PrometheusError

    if state.cost_window is not None:
        window, window_from = state.cost_window, "--cost-window"
    elif env.get(WINDOW_ENV, "").strip():
        window, window_from = env[WINDOW_ENV], f"${WINDOW_ENV}"
    else:
        window, window_from = str(config.get("window") or DEFAULT_WINDOW), f"{where}: prometheus.window"
    try:
        PrometheusClient(url)  # the URL's form, checked before anything runs
    except PrometheusError as exc:
        raise CommandError(f"{url_from}: {exc}", exit_codes.USAGE) from None
    try:
        window = parse_window(window)
    except PrometheusError as exc:
        raise CommandError(f"{window_from}: {exc}", exit_codes.USAGE) from None
    timeout = DEFAULT_TIMEOUT
    if config.get("timeout"):
        try:
            timeout = parse_timeout(str(config["timeout"]))
        except PrometheusError as exc:
            raise CommandError(f"{where}: prometheus.timeout: {exc}", exit_codes.USAGE) from None
    return PrometheusSettings(url=url, window=window, timeout=timeout, source=url_from)


def with_costs(
    state: State, settings: PrometheusSettings, views: Sequence[WorkloadView], *, detail: bool = False
) -> list[WorkloadView]:
    """``views`` with their ``cost`` (one query per measure for all of them); Prometheus' failures
    and hints are queued as warnings."""
    from workload_map.cost import WorkloadRef, fetch_costs
    from workload_map.kube.objects import group_of

    def ref(v: WorkloadView) -> WorkloadRef:
        return WorkloadRef(v.namespace or "", group_of(v.api_version), v.kind, v.name)

    refs = [ref(v) for v in views]
    report = fetch_costs(settings, sorted(set(refs)), detail=detail)
    for w in dict.fromkeys(report.warnings):
        state.warn(w)
    return [replace(v, cost=report.costs.get(r)) for v, r in zip(views, refs, strict=True)]


def describe_with_cost(state: State, view: DescribeView) -> DescribeView:
    """``describe``'s view with every cost measure of its workload, when a Prometheus is set."""
    settings = prometheus_settings(state)
    if settings is None:
        return view
    (row,) = with_costs(state, settings, [view.view], detail=True)
    return replace(view, view=row)
