"""glibc malloc settings of the exporter (workload_map.runtime.allocator): applied unless the
environment sets them, nothing elsewhere than glibc. The memory they save is measured by
bench/bench_exporter.py (peak RSS per pod, side by side with the previous tree)."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from workload_map.runtime import allocator
from workload_map.runtime.allocator import ARENA_MAX, MMAP_THRESHOLD, tune_allocator

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")


@glibc
def test_both_settings_are_applied_when_the_environment_sets_neither() -> None:
    assert tune_allocator({}) == {"MALLOC_MMAP_THRESHOLD_": MMAP_THRESHOLD, "MALLOC_ARENA_MAX": ARENA_MAX}


@glibc
@pytest.mark.parametrize(
    ("env", "applied"),
    [
        ({"MALLOC_ARENA_MAX": "4"}, {"MALLOC_MMAP_THRESHOLD_": MMAP_THRESHOLD}),
        ({"MALLOC_MMAP_THRESHOLD_": "65536"}, {"MALLOC_ARENA_MAX": ARENA_MAX}),
        ({"MALLOC_ARENA_MAX": "1", "MALLOC_MMAP_THRESHOLD_": "1"}, {}),
        ({"MALLOC_ARENA_MAX": ""}, {"MALLOC_MMAP_THRESHOLD_": MMAP_THRESHOLD, "MALLOC_ARENA_MAX": ARENA_MAX}),
    ],
)
def test_what_the_operator_set_is_left_alone(env: dict[str, str], applied: dict[str, int]) -> None:
    assert tune_allocator(env) == applied


def test_nothing_is_done_without_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allocator, "_glibc", lambda: None)
    assert tune_allocator({}) == {}


@glibc
def test_the_exporter_command_tunes_before_it_starts() -> None:
    """``wmap exporter`` applies them (seen in its debug log) even when it then fails to
    connect: nothing is started before."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "workload_map.cli.main",
            "exporter",
            "--server",
            "https://127.0.0.1:1",
            "--listen",
            "127.0.0.1:notaport",
            "--log-level",
            "debug",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )
    assert done.returncode == 2, done.stderr  # the usage error comes after the tuning
    assert "malloc settings" in done.stderr and "MALLOC_ARENA_MAX" in done.stderr
