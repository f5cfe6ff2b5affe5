"""Run ``wmap exporter`` as a separate process against the test cluster."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.exporter.promparse import Exposition, parse
from tests.support.cluster import TestCluster
from tests.support.processes import WmapProcess


class ExporterProcess(WmapProcess):
    """``wmap exporter`` (see :class:`WmapProcess`) with an HTTP client for its endpoints."""

    def __init__(self, args: list[str], log_path: Path) -> None:
        super().__init__("exporter", args, log_path)
        self.http = httpx.Client(timeout=10)

    def get(self, path: str, **kwargs: object) -> httpx.Response:
        return self.http.get(self.url + path, **kwargs)  # type: ignore[arg-type]

    def wait_ready(self, timeout: float = 60.0) -> None:
        super().wait_ready(timeout)

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
                raise AssertionError(f"timed out waiting for {what}\nexporter log tail:\n{self.tail(3000)}")
            time.sleep(0.2)

    def stop(self) -> None:
        self.http.close()
        super().stop()


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
