"""A real Prometheus server for tests (Debian's ``prometheus`` package, beside ``promtool``):
started on a free loopback port with a given configuration and TSDB directory, waited for until a
query answers with data, stopped afterwards."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")


def free_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


def query(url: str, expr: str) -> list[dict[str, Any]]:
    """The instant vector ``expr`` gives now: ``[{"metric": {...}, "value": [t, "v"]}, ...]``."""
    r = httpx.get(url + "/api/v1/query", params={"query": expr}, timeout=10)
    assert r.status_code == 200, r.text
    result: list[dict[str, Any]] = r.json()["data"]["result"]
    return result


@contextmanager
def running_prometheus(
    workdir: Path, config: dict[str, Any], ready_query: str, tsdb: Path | None = None, timeout: float = 90
) -> Iterator[str]:
    """Prometheus with ``config`` (as prometheus.yml) on ``tsdb`` (default: a new directory),
    yielded by its URL once ``ready_query`` returns data."""
    assert PROMETHEUS is not None
    config_path = workdir / "prometheus.yml"
    config_path.write_text(yaml.safe_dump(config))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = workdir / "prometheus.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={config_path}",
            f"--storage.tsdb.path={tsdb or workdir / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if query(url, ready_query):
                    break
            except (httpx.HTTPError, AssertionError):
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise AssertionError(f"prometheus did not come up:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
