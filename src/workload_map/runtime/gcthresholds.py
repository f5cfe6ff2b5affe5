"""The cyclic garbage collector's thresholds for the processes that cache a cluster (the exporter).

CPython collects its oldest generation whenever the objects promoted into it since the last full
collection exceed a quarter of those it held then (and ``threshold2`` middle collections passed,
10 by default). While the informer stores fill, that is a full collection for every quarter of
growth, each walking every object alive: the exporter spent 3.2 s of its 7.8 s of CPU until it
converged at 2,000 workloads / 20,000 pods in full collections (issue 24; bench-shaped cluster,
measured in-process with ``gc.callbacks``). The stores' objects are acyclic (freed by reference
counting), so :data:`THRESHOLDS` collects the young generation every 5,000 net allocations of
container objects instead of 700 and the oldest after 100 middle
collections instead of 10 (and middle ones after 20 young ones): at the same size about 1 s of
collections in all, none of the oldest, and the exporter's CPU 5.7 s instead of 8.9 s.
Cyclic garbage now waits longer in the older generations, so a large object must not hang on a
cycle: the API client breaks the one an httpx response makes with its stream once the body is read
(``cluster/client.py``), so a list page's body goes with the last reference to it.
"""

from __future__ import annotations

import gc

__all__ = ["THRESHOLDS", "tune_gc"]

THRESHOLDS = (5_000, 20, 100)


def tune_gc() -> tuple[int, int, int]:
    """Apply :data:`THRESHOLDS`; returns the thresholds that were in effect before."""
    before = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    return before
