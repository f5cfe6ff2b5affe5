"""A small writer for the Prometheus text exposition format 0.0.4.

Each metric family is written once: ``# HELP``, ``# TYPE``, then all of its samples. Label values
are escaped (backslash, double quote, line feed), HELP text too (backslash, line feed). Values
are written as integers when they are integral, ``NaN``/``+Inf``/``-Inf`` otherwise as Go does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["CONTENT_TYPE", "Family", "escape_help", "escape_label_value", "format_value", "sample"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MetricType = Literal["counter", "gauge", "info", "untyped"]


def escape_label_value(value: str) -> str:
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return value


def escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def format_value(value: float) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def sample(name: str, labels: Sequence[tuple[str, str]], value: float) -> str:
    """One sample line (with the trailing newline)."""
    if not labels:
        return f"{name} {format_value(value)}\n"
    inner = ",".join(f'{k}="{escape_label_value(v)}"' for k, v in labels)
    return f"{name}{{{inner}}} {format_value(value)}\n"


@dataclass(frozen=True)
class Family:
    """A metric family: its name, type and help text. ``info`` families are written as gauges
    (0.0.4 has no info type) whose name ends in ``_info``."""

    name: str
    type: MetricType
    help: str

    @property
    def header(self) -> bytes:
        wire_type = "gauge" if self.type == "info" else self.type
        return f"# HELP {self.name} {escape_help(self.help)}\n# TYPE {self.name} {wire_type}\n".encode()

    def line(self, labels: Sequence[tuple[str, str]], value: float) -> str:
        return sample(self.name, labels, value)

    def render(self, samples: Iterable[tuple[Sequence[tuple[str, str]], float]]) -> bytes:
        return self.header + "".join(self.line(lb, v) for lb, v in samples).encode()
