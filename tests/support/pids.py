"""Whether processes are still alive, for tests that check a process (an exec plugin and what it
started) does not outlive its deadline or its parent. Deaths are polled for (SIGKILL is
asynchronous); no time limit is asserted."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

__all__ = ["alive", "gone"]


def alive(pid: int) -> bool:
    """``pid`` runs (a zombie is dead for this purpose: it holds nothing but its exit status)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(") ", 1)[1][0] != "Z"


def gone(pids: Iterable[int], polls: int = 500) -> bool:
    """True once none of ``pids`` is alive, polling ``polls`` times 20 ms apart."""
    wanted = list(pids)
    for _ in range(polls):
        if not any(alive(p) for p in wanted):
            return True
        time.sleep(0.02)
    return False
