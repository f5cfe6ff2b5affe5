"""Reading ``wmap serve``'s server-sent events in tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson


def sse_events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(event name, decoded data)`` of each event in a stream's lines (comments skipped)."""
    kind = ""
    for line in lines:
        if line.startswith("event: "):
            kind = line[len("event: ") :]
        elif line.startswith("data: ") and kind:
            yield kind, orjson.loads(line[len("data: ") :])
            kind = ""
