"""Fixtures for the web UI tests: ``wmap serve`` as a subprocess against the test cluster and a real
headless Chromium driven by selenium (Debian's ``chromium`` + ``chromium-driver``; no browser
download).

Set ``WMAP_UI_SHOTS=DIR`` to keep the screenshots (otherwise they go to pytest's tmp dir).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.cluster import TestCluster, free_port

CHROMIUM = os.environ.get("WMAP_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("WMAP_CHROMEDRIVER", "/usr/bin/chromedriver")
CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,900",
)


class ServeProcess:
    """``wmap serve`` on a free loopback port."""

    def __init__(self, kubeconfig: Path, log_path: Path, *extra: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
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
                "serve",
                "--listen",
                f"127.0.0.1:{self.port}",
                "--kubeconfig",
                str(kubeconfig),
                *extra,
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=env,
        )

    def tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]

    def wait_ready(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=5) as http:
            while True:
                if self.proc.poll() is not None:
                    raise AssertionError(f"wmap serve exited ({self.proc.returncode}):\n{self.tail()}")
                try:
                    if http.get(self.url + "/readyz").status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    raise AssertionError(f"wmap serve not ready after {timeout:.0f}s:\n{self.tail()}")
                time.sleep(0.2)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture(scope="session")
def serve(cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    d = tmp_path_factory.mktemp("serve")
    kc = cluster.write_kubeconfig(d / "kubeconfig")
    proc = ServeProcess(kc, d / "serve.log", "--enable-writes")
    try:
        proc.wait_ready()
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wanted = os.environ.get("WMAP_UI_SHOTS")
    if wanted:
        p = Path(wanted)
        p.mkdir(parents=True, exist_ok=True)
        return p
    return tmp_path_factory.mktemp("ui-shots")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists()]
    if missing:
        pytest.fail(
            f"headless browser missing: {', '.join(missing)}; install Debian's chromium and "
            "chromium-driver (scripts/bootstrap.sh ensure_system_tools does)",
            pytrace=False,
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="wmap-ui-chrome-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in CHROME_FLAGS:
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile}")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def admin_token(cluster: TestCluster) -> str:
    return cluster.admin_token
