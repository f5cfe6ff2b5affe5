"""Exec credential plugins run once per credential need and never outlive their deadline or the
process (issue #23), with real plugin processes (no cluster).

Deaths are polled for (SIGKILL is asynchronous); no wall-clock limit is asserted. The fake clock
only moves the provider's notion of time (expiry and the failure hold).
"""

from __future__ import annotations

import os
import pty
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, BinaryIO

import pytest

from tests.support.pids import gone
from workload_map.cluster.auth import EXEC_FAILURE_HOLD, ExecCredentialProvider, stop_exec_plugins
from workload_map.cluster.kubeconfig import ExecConfig
from workload_map.errors import ExecPluginError

V1 = "client.authentication.k8s.io/v1"
CREDENTIAL = (
    '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tk"}}'
)


def plugin(
    tmp_path: Path,
    body: str,
    *,
    timeout: float = 30.0,
    clock: list[float] | None = None,
    mode: str = "Never",
    stdin: BinaryIO | None = None,
) -> tuple[ExecCredentialProvider, Path]:
    """A provider for an sh plugin running ``body``; every run appends its pid to the returned file."""
    pids = tmp_path / "pids"
    script = tmp_path / "plugin"
    script.write_text(f"#!/bin/sh\necho $$ >> {pids}\n{body}")
    script.chmod(0o755)
    cfg = ExecConfig(command=str(script), api_version=V1, interactive_mode=mode)
    extra: dict[str, Any] = {"clock": (lambda: clock[0])} if clock is not None else {}
    provider = ExecCredentialProvider(
        cfg, None, stdin=stdin, stderr=subprocess.DEVNULL, timeout=timeout, **extra
    )
    return provider, pids


def runs(pids: Path) -> list[int]:
    return [int(p) for p in pids.read_text().split()] if pids.exists() else []


def in_threads(count: int, fn: object) -> list[object]:
    """``fn()`` on ``count`` threads started together; each result or exception."""
    results: list[object] = [None] * count
    start = threading.Barrier(count)

    def one(i: int) -> None:
        start.wait()
        try:
            results[i] = fn()  # type: ignore[operator]
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_threads_needing_a_credential_together_share_one_run(tmp_path: Path) -> None:
    provider, pids = plugin(tmp_path, f"sleep 0.3\necho '{CREDENTIAL}'\n")
    results = in_threads(8, provider.get)
    assert all(getattr(r, "token", None) == "tk" for r in results), results
    assert len(runs(pids)) == 1 and provider.runs == 1


def test_a_plugin_past_its_deadline_runs_once_for_every_waiting_thread(tmp_path: Path) -> None:
    # Before: each waiting thread ran the plugin again after the previous run timed out.
    provider, pids = plugin(tmp_path, "sleep 1000\n", timeout=0.5)
    results = in_threads(4, provider.get)
    assert all(isinstance(r, ExecPluginError) for r in results)
    script = tmp_path / "plugin"
    assert {str(r) for r in results} == {f'exec plugin "{script}" did not finish within 0.5s; it was stopped'}
    assert gone(runs(pids))


def test_a_failure_stands_for_the_hold_then_the_plugin_runs_again(tmp_path: Path) -> None:
    now = [1000.0]
    provider, pids = plugin(tmp_path, "exit 3\n", clock=now)
    for _ in range(3):
        with pytest.raises(ExecPluginError, match="failed with exit code 3"):
            provider.get()
    assert len(runs(pids)) == 1
    now[0] += EXEC_FAILURE_HOLD + 1
    with pytest.raises(ExecPluginError, match="failed with exit code 3"):
        provider.get()
    assert len(runs(pids)) == 2


def test_a_refresh_after_401_also_waits_out_a_failure(tmp_path: Path) -> None:
    provider, pids = plugin(tmp_path, "exit 3\n")
    with pytest.raises(ExecPluginError):
        provider.get()
    with pytest.raises(ExecPluginError, match="failed with exit code 3"):
        provider.refresh_after_unauthorized(None)
    assert len(runs(pids)) == 1


def test_invalidate_forgets_a_failure(tmp_path: Path) -> None:
    provider, pids = plugin(tmp_path, "exit 3\n")
    with pytest.raises(ExecPluginError):
        provider.get()
    provider.invalidate()
    with pytest.raises(ExecPluginError):
        provider.get()
    assert len(runs(pids)) == 2


def test_stop_exec_plugins_kills_a_running_plugin_with_its_children(tmp_path: Path) -> None:
    child_pid = tmp_path / "child"
    provider, pids = plugin(tmp_path, f"sleep 1000 &\necho $! > {child_pid}\nwait\n", timeout=300.0)
    failure: list[BaseException] = []

    def need() -> None:
        try:
            provider.get()
        except ExecPluginError as exc:
            failure.append(exc)

    waiter = threading.Thread(target=need)
    waiter.start()
    for _ in range(2000):
        if child_pid.exists() and child_pid.read_text().strip():
            break
        time.sleep(0.01)
    (pid,) = runs(pids)
    child = int(child_pid.read_text())
    assert stop_exec_plugins() == 1
    waiter.join(60)
    assert not waiter.is_alive() and failure  # the waiting thread got an error, not a hang
    assert gone([pid, child])
    assert stop_exec_plugins() == 0


def test_an_interactive_plugin_past_its_deadline_is_stopped_with_its_process_tree(tmp_path: Path) -> None:
    # An interactive plugin stays in our process group (it may prompt on the terminal), so it is
    # stopped by its tree, not by a group kill.
    child_pid = tmp_path / "child"
    leader, follower = pty.openpty()
    try:
        with open(follower, "rb", buffering=0, closefd=False) as terminal:
            provider, pids = plugin(
                tmp_path,
                f"sleep 1000 &\necho $! > {child_pid}\nwait\n",
                timeout=1.0,
                mode="IfAvailable",
                stdin=terminal,
            )
            with pytest.raises(ExecPluginError, match="did not finish within 1s; it was stopped"):
                provider.get()
    finally:
        os.close(leader)
        os.close(follower)
    assert len(runs(pids)) == 1
    assert gone([*runs(pids), int(child_pid.read_text())])
