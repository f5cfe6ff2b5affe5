"""glibc ``malloc`` settings for the long-running processes that cache a cluster (the exporter).

Two glibc defaults cost such a process about a fifth of its memory (issue 24, measured with the
exporter at 2,000 workloads / 20,000 pods: peak RSS 176 MB by default, 158 MB with the first
setting, see bench/bench_exporter.py):

- **mmap threshold**: blocks above 128 KiB are mmapped and given back on free, but glibc raises
  the threshold to the size of every mmapped block freed (up to 32 MiB). After the first list
  page (a 1-2 MB body, decoded and dropped) later pages come from the heap and leave holes that
  the small long-lived objects allocated meanwhile keep from being returned. Setting the
  threshold fixes it at 128 KiB.
- **arenas**: every thread that allocates gets an arena of its own (up to 8 per core), each
  keeping its own free memory; the informer and worker threads need no more than two.

An operator's own ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_ARENA_MAX`` win: what they set is left
alone. Elsewhere than glibc (musl, macOS) nothing is done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Mapping

__all__ = ["ARENA_MAX", "MMAP_THRESHOLD", "tune_allocator"]

#: ``M_MMAP_THRESHOLD`` and ``M_ARENA_MAX`` of glibc's <malloc.h>.
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
MMAP_THRESHOLD = 128 * 1024
ARENA_MAX = 2
_SETTINGS = (
    ("MALLOC_MMAP_THRESHOLD_", _M_MMAP_THRESHOLD, MMAP_THRESHOLD),
    ("MALLOC_ARENA_MAX", _M_ARENA_MAX, ARENA_MAX),
)


def _glibc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return None
    return libc


def tune_allocator(environ: Mapping[str, str] | None = None) -> dict[str, int]:
    """Apply the settings above that the environment does not set; call it before starting
    threads. Returns what was applied (environment variable name -> value), ``{}`` when not on
    glibc."""
    env = os.environ if environ is None else environ
    libc = _glibc()
    if libc is None:
        return {}
    applied: dict[str, int] = {}
    for variable, option, value in _SETTINGS:
        if env.get(variable):
            continue
        if libc.mallopt(ctypes.c_int(option), ctypes.c_int(value)) == 1:
            applied[variable] = value
    return applied
