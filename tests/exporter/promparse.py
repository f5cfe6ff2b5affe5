"""A strict little parser for the Prometheus text format 0.0.4, for tests.

Checks: HELP/TYPE before samples, each family declared once, every sample belongs to the family
declared last (samples of one family are contiguous), label syntax and escapes, no duplicate
series, values parse as floats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


class FormatError(AssertionError):
    pass


@dataclass
class Sample:
    name: str
    labels: dict[str, str]
    value: float


@dataclass
class Exposition:
    types: dict[str, str] = field(default_factory=dict)
    helps: dict[str, str] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)

    def find(self, metric: str, /, **labels: str) -> list[Sample]:
        return [
            s
            for s in self.samples
            if s.name == metric and all(s.labels.get(k) == v for k, v in labels.items())
        ]

    def value(self, metric: str, /, **labels: str) -> float | None:
        found = self.find(metric, **labels)
        if len(found) > 1:
            raise AssertionError(f"{len(found)} series match {metric} {labels}")
        return found[0].value if found else None


def _labels(text: str, i: int, line: str) -> tuple[dict[str, str], int]:
    labels: dict[str, str] = {}
    assert text[i] == "{"
    i += 1
    while True:
        if text[i] == "}":
            return labels, i + 1
        m = LABEL.match(text, i)
        if not m:
            raise FormatError(f"bad label name in {line!r}")
        name = m.group()
        i = m.end()
        if text[i : i + 2] != '="':
            raise FormatError(f'expected =" in {line!r}')
        i += 2
        out = []
        while True:
            c = text[i]
            if c == "\\":
                nxt = text[i + 1]
                if nxt == "n":
                    out.append("\n")
                elif nxt in '\\"':
                    out.append(nxt)
                else:
                    raise FormatError(f"bad escape \\{nxt} in {line!r}")
                i += 2
            elif c == '"':
                i += 1
                break
            elif c == "\n":
                raise FormatError(f"raw newline in label value: {line!r}")
            else:
                out.append(c)
                i += 1
        if name in labels:
            raise FormatError(f"duplicate label {name} in {line!r}")
        labels[name] = "".join(out)
        if text[i] == ",":
            i += 1
        elif text[i] != "}":
            raise FormatError(f"expected , or }} in {line!r}")


def parse(text: str) -> Exposition:
    exp = Exposition()
    current: str | None = None
    seen_series: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    if text and not text.endswith("\n"):
        raise FormatError("the exposition must end with a newline")
    for line in text.split("\n")[:-1]:
        if not line:
            continue
        if line.startswith("# HELP "):
            name, _, help_text = line[7:].partition(" ")
            if name in exp.helps:
                raise FormatError(f"HELP for {name} twice")
            exp.helps[name] = help_text.replace("\\n", "\n").replace("\\\\", "\\")
            continue
        if line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            if name in exp.types:
                raise FormatError(f"family {name} declared twice")
            if kind not in ("counter", "gauge", "histogram", "summary", "untyped"):
                raise FormatError(f"bad type {kind!r}")
            exp.types[name] = kind
            current = name
            continue
        if line.startswith("#"):
            continue
        m = NAME.match(line)
        if not m:
            raise FormatError(f"bad sample line {line!r}")
        name = m.group()
        i = m.end()
        labels: dict[str, str] = {}
        if i < len(line) and line[i] == "{":
            labels, i = _labels(line, i, line)
        if line[i : i + 1] != " ":
            raise FormatError(f"expected a space before the value: {line!r}")
        value_text = line[i + 1 :].split(" ")[0]
        try:
            value = float(value_text)
        except ValueError:
            raise FormatError(f"bad value in {line!r}") from None
        if name != current:
            raise FormatError(f"sample {name} outside its family (current: {current}): {line!r}")
        series = (name, tuple(sorted(labels.items())))
        if series in seen_series:
            raise FormatError(f"duplicate series {line!r}")
        seen_series.add(series)
        exp.samples.append(Sample(name, labels, value))
    return exp
