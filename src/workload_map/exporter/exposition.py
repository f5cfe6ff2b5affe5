"""A small writer for the Prometheus text exposition format 0.0.4.

Each metric family is written once: ``# HELP``, ``# TYPE``, then all of its samples. Label values
are escaped (backslash, double quote, line feed), HELP text too (backslash, line feed). Values
are written as integers when they are integral, ``NaN``/``+Inf``/``-Inf`` otherwise as Go does.

Label values come from the cluster and from definitions, so they are bounded: a value longer than
:data:`MAX_LABEL_VALUE_LENGTH` characters is cut to that length, its last characters replaced by
``~`` and a hash of the whole value (two long values stay two series). Every Kubernetes name (at
most 253 characters) passes whole. Text that is not valid UTF-8 (lone surrogates from a JSON
escape) is written with ``?`` in their place (:func:`encode`), never as an error.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CONTENT_TYPE",
    "MAX_LABEL_VALUE_LENGTH",
    "Family",
    "cut_label_value",
    "encode",
    "escape_help",
    "escape_label_value",
    "format_value",
    "join_labels",
    "label_text",
    "sample",
    "sample_line",
]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MetricType = Literal["counter", "gauge", "info", "untyped"]

#: Characters a label value keeps at most (docs/metrics.md "Ceilings"): every Kubernetes name
#: fits, and at 4 bytes a character it stays within the 2 KB label value limit of Mimir/Cortex.
MAX_LABEL_VALUE_LENGTH = 256
#: Hex digits of the hash that ends a cut value.
_CUT_HASH = 12


def cut_label_value(value: str) -> str:
    """``value``, or when longer than :data:`MAX_LABEL_VALUE_LENGTH`, its first characters, ``~``
    and 12 hex digits of the SHA-256 of the whole value (:data:`MAX_LABEL_VALUE_LENGTH` in all)."""
    if len(value) <= MAX_LABEL_VALUE_LENGTH:
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:_CUT_HASH]
    return f"{value[: MAX_LABEL_VALUE_LENGTH - _CUT_HASH - 1]}~{digest}"


def encode(text: str) -> bytes:
    """UTF-8 bytes of exposition text; what cannot be encoded (lone surrogates) becomes ``?``."""
    return text.encode("utf-8", "replace")


#: Escaped label values remembered by :func:`escape_label_value` (namespaces, kinds, phases,
#: resources and units repeat on every line of every workload); when full it starts over. Values
#: longer than a label value keeps are not remembered (they would keep a long text alive).
ESCAPED_MAX = 4096
_ESCAPED: dict[str, str] = {}


def escape_label_value(value: str) -> str:
    """``value`` cut (:func:`cut_label_value`) and escaped for a label."""
    found = _ESCAPED.get(value)
    if found is not None:
        return found
    out = cut_label_value(value)
    if "\\" in out or '"' in out or "\n" in out:
        out = out.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    if len(value) <= MAX_LABEL_VALUE_LENGTH:
        if len(_ESCAPED) >= ESCAPED_MAX:
            _ESCAPED.clear()
        _ESCAPED[value] = out
    return out


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


def label_text(labels: Sequence[tuple[str, str]]) -> str:
    """``labels`` as written between a sample's braces (``k="v",...``, values cut and escaped)."""
    return ",".join(f'{k}="{escape_label_value(v)}"' for k, v in labels)


def join_labels(*texts: str) -> str:
    """Label texts (:func:`label_text`) written one after the other, the empty ones left out."""
    return ",".join(t for t in texts if t)


def sample(name: str, labels: Sequence[tuple[str, str]], value: float) -> str:
    """One sample line (with the trailing newline)."""
    return sample_line(name, label_text(labels), value)


def sample_line(name: str, labels: str, value: float) -> str:
    """One sample line of labels already written (:func:`label_text`): a caller writing many lines
    with the same labels (a workload's namespace, kind and name) escapes them once."""
    if not labels:
        return f"{name} {format_value(value)}\n"
    return f"{name}{{{labels}}} {format_value(value)}\n"


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
        return encode(f"# HELP {self.name} {escape_help(self.help)}\n# TYPE {self.name} {wire_type}\n")

    def line(self, labels: Sequence[tuple[str, str]], value: float) -> str:
        return sample(self.name, labels, value)

    def render(self, samples: Iterable[tuple[Sequence[tuple[str, str]], float]]) -> bytes:
        return self.header + encode("".join(self.line(lb, v) for lb, v in samples))
