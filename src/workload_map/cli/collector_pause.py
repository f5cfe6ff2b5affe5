"""The cyclic garbage collector paused while a one-shot command reads and prints (issue 24).

``describe`` of 1,000 pods and ``get`` of a few thousand workloads allocate hundreds of thousands
of JSON values; the collector's passes over them (and over everything imported) were about a fifth
of ``describe``'s CPU. What it would reclaim is cyclic garbage, and a one-shot command makes little
and a bounded amount of it (lists bounded by the client's ceilings); the JSON values are acyclic and
freed by reference counting as before. Long-running loops (``get --watch``) keep the collector.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused(pause: bool = True) -> Iterator[None]:
    """Pause the cyclic collector for the block (when ``pause``), restored afterwards, also on
    failure: the commands also run inside other processes (tests, ``wmap`` called as a library),
    and a caller that had it off keeps it off."""
    was_enabled = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
