"""``wmap`` server commands (``serve``, ``exporter``) as separate processes on a free loopback port.

:class:`WmapProcess` starts ``python -m workload_map.cli.main COMMAND --listen 127.0.0.1:PORT ...``
with HOME set to the log's folder and no ``WMAP_CATALOG_DIR``/``KUBECONFIG`` from the environment,
output to a log file; :meth:`WmapProcess.wait_ready` polls a readiness path. :func:`start_wmap` does
both and always stops the process, printing its log tail when the body fails (pytest shows it with
the failure).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.cluster import free_port

__all__ = ["WmapProcess", "free_port", "start_wmap", "terminate"]


class WmapProcess:
    """``wmap COMMAND --listen 127.0.0.1:PORT [--kubeconfig K] ARGS`` writing to ``log_path``."""

    def __init__(
        self,
        command: str,
        args: Sequence[str],
        log_path: Path,
        *,
        kubeconfig: Path | None = None,
        ready_path: str = "/readyz",
    ) -> None:
        self.command = command
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path
        self.ready_path = ready_path
        env = dict(os.environ)
        for name in ("WMAP_CATALOG_DIR", "KUBECONFIG"):
            env.pop(name, None)
        env["HOME"] = str(log_path.parent)
        connection = ["--kubeconfig", str(kubeconfig)] if kubeconfig is not None else []
        self.log = log_path.open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "workload_map.cli.main",
                command,
                "--listen",
                f"127.0.0.1:{self.port}",
                *connection,
                *args,
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
        )

    def tail(self, chars: int = 4000) -> str:
        """The end of the process's log."""
        return self.log_path.read_text(errors="replace")[-chars:]

    def wait_ready(self, timeout: float = 90.0) -> None:
        """Poll ``ready_path`` until it answers 200; fail (with the log tail) if the process exits
        first or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=5) as http:
            while True:
                if self.proc.poll() is not None:
                    raise AssertionError(
                        f"wmap {self.command} exited ({self.proc.returncode}):\n{self.tail()}"
                    )
                try:
                    if http.get(self.url + self.ready_path).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    what = f"wmap {self.command} not ready after {timeout:.0f}s"
                    raise AssertionError(f"{what}:\n{self.tail()}")
                time.sleep(0.2)

    def stop(self) -> None:
        """Terminate (kill after 10 s) and close the log."""
        terminate(self.proc)
        self.log.close()


def terminate(proc: subprocess.Popen[Any], grace: float = 10.0) -> None:
    """Stop ``proc``: SIGTERM, then SIGKILL when it has not exited after ``grace`` seconds."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def start_wmap(
    command: str,
    args: Sequence[str],
    log_path: Path,
    *,
    kubeconfig: Path | None = None,
    ready_path: str = "/readyz",
    timeout: float = 90.0,
) -> Iterator[WmapProcess]:
    """A started and ready :class:`WmapProcess`; stopped on exit. When readiness or the body fails,
    the log tail is printed (captured output of the failing test)."""
    proc = WmapProcess(command, args, log_path, kubeconfig=kubeconfig, ready_path=ready_path)
    try:
        proc.wait_ready(timeout)
        yield proc
    except BaseException:
        proc.stop()
        print(f"--- wmap {command} log tail ({log_path}) ---\n{proc.tail()}", file=sys.stderr)
        raise
    else:
        proc.stop()
