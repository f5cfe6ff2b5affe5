"""Where the cost numbers come from: the Prometheus URL, the window GPU-hours and cost cover, and
the time one query may take; durations in Prometheus's own notation (``90m``, ``24h``, ``7d``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from workload_map.cost._client import DEFAULT_TIMEOUT, PrometheusClient, display_url
from workload_map.errors import PrometheusError

__all__ = [
    "DEFAULT_WINDOW",
    "MAX_TIMEOUT",
    "MAX_WINDOW",
    "PrometheusSettings",
    "parse_duration",
    "parse_timeout",
    "parse_window",
]

DEFAULT_WINDOW = "24h"
#: Longest window: subqueries over it stay at most 1440 steps (the step grows past one day).
MAX_WINDOW = 90 * 86400.0
MAX_TIMEOUT = 300.0

_PART = re.compile(r"(\d+)(ms|y|w|d|h|m|s)")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0, "y": 31536000.0}


def parse_duration(text: str, what: str) -> float:
    """Seconds of a Prometheus duration (``1h30m``, ``7d``); a PrometheusError naming ``what``
    otherwise."""
    value = text.strip()
    pos, seconds = 0, 0.0
    for m in _PART.finditer(value):
        if m.start() != pos:
            break
        seconds += int(m.group(1)) * _SECONDS[m.group(2)]
        pos = m.end()
    if not value or pos != len(value) or len(value) > 32:
        raise PrometheusError(f'invalid {what} "{text[:40]}": use a duration such as 30m, 24h or 7d')
    return seconds


def parse_window(text: str) -> str:
    """The window as PromQL writes it, checked: at least one minute, at most 90 days."""
    seconds = parse_duration(text, "cost window")
    if not 60 <= seconds <= MAX_WINDOW:
        raise PrometheusError(f'invalid cost window "{text}": between 1m and 90d')
    return text.strip()


def parse_timeout(text: str) -> float:
    """Seconds one Prometheus query may take (a duration such as ``5s``)."""
    seconds = parse_duration(text, "Prometheus timeout")
    if not 0 < seconds <= MAX_TIMEOUT:
        raise PrometheusError(f'invalid Prometheus timeout "{text}": more than 0s, at most 5m')
    return seconds


@dataclass(frozen=True)
class PrometheusSettings:
    """A configured Prometheus: ``url``, ``window`` (checked by :func:`parse_window`) and
    ``timeout`` seconds per query; ``source`` says where the URL came from (for messages)."""

    url: str
    window: str = DEFAULT_WINDOW
    timeout: float = DEFAULT_TIMEOUT
    source: str = ""

    @property
    def shown(self) -> str:
        return display_url(self.url)

    def client(self) -> PrometheusClient:
        return PrometheusClient(self.url, timeout=self.timeout)
