"""Fixtures for the web UI tests: ``wmap serve`` as a subprocess against the test cluster and a real
headless Chromium driven by selenium (Debian's ``chromium`` + ``chromium-driver``; no browser
download).

Set ``WMAP_UI_SHOTS=DIR`` to keep the screenshots (otherwise they go to pytest's tmp dir).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cluster import TestCluster
from tests.support.processes import WmapProcess, start_wmap

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


#: ``wmap serve`` as a process (tests/support/processes.py).
ServeProcess = WmapProcess


@pytest.fixture(scope="session")
def serve(cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    d = tmp_path_factory.mktemp("serve")
    kc = cluster.write_kubeconfig(d / "kubeconfig")
    with start_wmap("serve", ["--enable-writes"], d / "serve.log", kubeconfig=kc) as proc:
        yield proc


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
