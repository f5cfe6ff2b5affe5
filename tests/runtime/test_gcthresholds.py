"""The exporter's collector thresholds (workload_map.runtime.gcthresholds); the CPU they save is
measured by bench/bench_exporter.py (convergence and the exporter's CPU, side by side)."""

from __future__ import annotations

import gc

from workload_map.runtime.gcthresholds import THRESHOLDS, tune_gc


def test_the_thresholds_are_set_and_the_previous_ones_returned() -> None:
    before = gc.get_threshold()
    try:
        assert tune_gc() == before
        assert gc.get_threshold() == THRESHOLDS
        young, _middle, old = THRESHOLDS
        assert young > 700 and old > 10  # rarer than CPython's defaults (700, 10, 10)
    finally:
        gc.set_threshold(*before)
