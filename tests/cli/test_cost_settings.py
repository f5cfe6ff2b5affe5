"""Where get/describe read costs from (cli/cost.py): --prometheus > $WMAP_PROMETHEUS_URL > the
config file's prometheus.url (--prometheus "" turns it off); --cost-window > $WMAP_COST_WINDOW >
prometheus.window > 24h; prometheus.timeout. Bad values are usage errors naming their source."""

from __future__ import annotations

from pathlib import Path

import pytest

from workload_map.cli import exit_codes
from workload_map.cli.cost import prometheus_settings
from workload_map.cli.errors import CommandError
from workload_map.cli.main import State


def config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return str(path)


def test_nothing_configured_means_no_cost(tmp_path: Path) -> None:
    assert prometheus_settings(State(), environ={}) is None
    assert prometheus_settings(State(config=config(tmp_path, "output: wide\n")), environ={}) is None


def test_precedence(tmp_path: Path) -> None:
    cfg = config(tmp_path, "prometheus:\n  url: http://from-file:9090\n  window: 7d\n  timeout: 500ms\n")
    env = {"WMAP_PROMETHEUS_URL": "http://from-env:9090", "WMAP_COST_WINDOW": "3d"}
    s = prometheus_settings(State(config=cfg), environ={})
    assert s is not None and (s.url, s.window, s.timeout) == ("http://from-file:9090", "7d", 0.5)
    assert s.source == f"config file {cfg}: prometheus.url"
    s = prometheus_settings(State(config=cfg), environ=env)
    assert s is not None and (s.url, s.window, s.source) == (
        "http://from-env:9090",
        "3d",
        "$WMAP_PROMETHEUS_URL",
    )
    s = prometheus_settings(State(config=cfg, prometheus="http://flag:9090", cost_window="90m"), environ=env)
    assert s is not None and (s.url, s.window, s.source) == ("http://flag:9090", "90m", "--prometheus")
    assert s.timeout == 0.5  # the timeout comes from the file whatever gave the URL
    # --prometheus "" turns cost off whatever the environment and the file say
    assert prometheus_settings(State(config=cfg, prometheus=""), environ=env) is None
    s = prometheus_settings(State(), environ={"WMAP_PROMETHEUS_URL": "http://e:1"})
    assert s is not None and (s.window, s.timeout) == ("24h", 5.0)


@pytest.mark.parametrize(
    ("state", "environ", "text", "message"),
    [
        (
            State(prometheus="prometheus:9090"),
            {},
            "",
            '--prometheus: invalid Prometheus URL "prometheus:9090"',
        ),
        (
            State(prometheus="http://p:1", cost_window="yesterday"),
            {},
            "",
            '--cost-window: invalid cost window "yesterday"',
        ),
        (
            State(),
            {"WMAP_PROMETHEUS_URL": "http://p:1", "WMAP_COST_WINDOW": "120d"},
            "",
            "$WMAP_COST_WINDOW: invalid cost window",
        ),
        (
            State(),
            {},
            "prometheus:\n  url: http://p:1\n  window: 30s\n",
            "prometheus.window: invalid cost window",
        ),
        (
            State(),
            {},
            "prometheus:\n  url: http://p:1\n  timeout: 10m\n",
            "prometheus.timeout: invalid Prometheus timeout",
        ),
        (State(), {}, "prometheus:\n  url: http://p:1\n  token: x\n", "unknown prometheus key(s) token"),
        (State(), {}, "prometheus: http://p:1\n", "prometheus must be a mapping with url, window, timeout"),
        (State(), {}, "prometheus:\n  url: 9090\n", "prometheus.url must be a string"),
        (
            State(),
            {},
            "output: table\nprom: {}\n",
            'unknown key(s) prom (the keys are "output" and "prometheus")',
        ),
    ],
)
def test_bad_values_are_usage_errors(
    tmp_path: Path, state: State, environ: dict[str, str], text: str, message: str
) -> None:
    state.config = config(tmp_path, text or "output: table\n")
    with pytest.raises(CommandError) as info:
        prometheus_settings(state, environ=environ)
    assert info.value.exit_code == exit_codes.USAGE
    assert message in str(info.value)
    if text:
        assert str(tmp_path / "config.yaml") in str(info.value)
