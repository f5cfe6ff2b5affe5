"""Small formatting helpers shared by the renderers: ages, Kubernetes quantities, tables.

Table cells hold names, reasons and messages from the cluster and from definitions: :func:`columns`
escapes their control characters (line breaks included, :func:`workload_map.logs.escape_controls`)
before measuring them, so no cell can move the cursor or start a line of its own."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

from workload_map.logs import escape_controls
from workload_map.resolve.quantity import cpu_text, memory_text

__all__ = ["age", "columns", "cpu_text", "memory_text", "parse_time"]


def parse_time(value: str | None) -> datetime | None:
    """An RFC 3339 timestamp (``2024-05-01T10:00:00Z``) as an aware datetime, or ``None``."""
    if not value:
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


def age(created: str | None, now: datetime | None = None) -> str:
    """kubectl's short human duration (``45s``, ``30m``, ``2h``, ``3d``, ``2y``); ``<unknown>``
    when the time is missing or unparseable, ``<invalid>`` when it is more than a second ahead."""
    when = parse_time(created)
    if when is None:
        return "<unknown>"
    now = now or datetime.now(timezone.utc)
    delta = (now - when).total_seconds()
    if delta < -1:
        return "<invalid>"  # kubectl's word for a time in the future (a skewed clock)
    seconds = max(0, int(delta))
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    years = days // 365
    if seconds < 120:
        return f"{seconds}s"
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m{s}s" if s else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        m = minutes % 60
        return f"{hours}h{m}m" if m else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 192:
        h = hours % 24
        return f"{days}d{h}h" if h else f"{days}d"
    if years < 2:
        return f"{days}d"
    if years < 8:
        d = days % 365
        return f"{years}y{d}d" if d else f"{years}y"
    return f"{years}y"


def columns(rows: Sequence[Sequence[str]], pads: Sequence[int] | int = 3) -> list[str]:
    """Left-aligned columns: each cell padded to its column's width plus the column's padding
    (``pads`` per column, or one value for all). The last cell is never padded; trailing spaces
    are stripped. Control characters in cells are escaped (see the module doc)."""
    if not rows:
        return []
    rows = [[escape_controls(cell) for cell in r] for r in rows]
    width = max(len(r) for r in rows)
    widths = [0] * width
    for r in rows:
        for i, cell in enumerate(r):
            if len(cell) > widths[i]:
                widths[i] = len(cell)
    pad_list = [pads] * width if isinstance(pads, int) else list(pads) + [3] * width
    out: list[str] = []
    for r in rows:
        parts: list[str] = []
        last = len(r) - 1
        for i, cell in enumerate(r):
            parts.append(cell if i == last else cell.ljust(widths[i] + pad_list[i]))
        out.append("".join(parts).rstrip())
    return out
