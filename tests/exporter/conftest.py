"""Run ``wmap exporter`` as a separate process against the test cluster."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.exporter.promparse import Exposition, parse
from tests.support.cluster import TestCluster, free_port


class ExporterProcess:
    def __init__(self, args: list[str], log_path: Path) -> None:
        self.port = free_port()
        self.log_path = log_path
        env = dict(os.environ)
        for name in ("WMAP_CATALOG_DIR", "KUBECONFIG"):
            env.pop(name, None)
        env["HOME"] = str(log_path.parent)
        self.log = log_path.open("wb")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "workload_map.cli.main",
                "exporter",
                "--listen",
                f"127.0.0.1:{self.port}",
                *args,
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        self.http = httpx.Client(timeout=10)

    def get(self, path: str, **kwargs: object) -> httpx.Response:
        return self.http.get(self.url + path, **kwargs)  # type: ignore[arg-type]

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"exporter exited: {self.log_path.read_text()[-3000:]}")
            try:
                if self.get("/readyz").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"exporter not ready: {self.log_path.read_text()[-3000:]}")
            time.sleep(0.2)

    def scrape(self) -> Exposition:
        r = self.get("/metrics")
        assert r.status_code == 200, r.text
        assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
        return parse(r.text)

    def wait_for(self, check: object, timeout: float = 30.0, what: str = "metrics") -> Exposition:
        deadline = time.monotonic() + timeout
        while True:
            exp = self.scrape()
            if check(exp):  # type: ignore[operator]
                return exp
            if time.monotonic() > deadline:
                tail = self.log_path.read_text()[-3000:]
                raise AssertionError(f"timed out waiting for {what}\nexporter log tail:\n{tail}")
            time.sleep(0.2)

    def stop(self) -> None:
        self.http.close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def start_exporter(cluster: TestCluster, tmp: Path, *extra: str) -> ExporterProcess:
    kc = cluster.write_kubeconfig(tmp / "kubeconfig")
    return ExporterProcess(
        ["--kubeconfig", str(kc), "--rediscover-interval", "1", *extra], tmp / "exporter.log"
    )


@pytest.fixture
def exporter_factory(cluster: TestCluster, tmp_path: Path) -> Iterator[object]:
    started: list[ExporterProcess] = []

    def make(*extra: str) -> ExporterProcess:
        d = tmp_path / f"exp{len(started)}"
        d.mkdir()
        e = start_exporter(cluster, d, *extra)
        started.append(e)
        return e

    yield make
    for e in started:
        e.stop()
