"""``wmap`` against a malicious API server and a hostile exec plugin (issue #23), with the real
ceilings: one ``error:`` line naming the server and the ceiling, exit code 1, never ``internal
error``; an exec plugin runs once per credential need and never outlives ``wmap``.

The API server is the loopback fake of ``tests/support/fake_apiserver.py``. Process checks poll
for the processes to be gone; no wall-clock limit is asserted.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import wmap
from tests.support.fake_apiserver import FakeApiServer, Reply, Seen
from tests.support.hostile_inputs import fifo_unblocked_after
from tests.support.pids import alive, gone
from workload_map.cluster import auth
from workload_map.cluster.client import MAX_LIST_PAGES
from workload_map.cluster.decode import MAX_DECODED_VALUES
from workload_map.cluster.discovery import MAX_DISCOVERY_GROUPS

PODS = "/api/v1/namespaces/ml/pods"
GET_PODS = ("get", "pods", "--generic", "-n", "ml")


@pytest.fixture
def fake() -> Iterator[FakeApiServer]:
    with FakeApiServer() as server:
        yield server


def one_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, err
    assert "internal error" not in err and "Traceback" not in err, err
    return lines[0]


def test_a_redirect_is_a_clear_error(fake: FakeApiServer, tmp_path: Path) -> None:
    fake.on("GET", re.compile(r"/.*"), Reply(302, b"", {"Location": "https://login.example/"}))
    rc, _, err = wmap(*GET_PODS, "--kubeconfig", str(fake.kubeconfig(tmp_path / "kc")))
    line = one_error(err)
    assert rc == 1
    assert (
        f"GET /api on {fake.url}: the API server answered HTTP 302 (a redirect to https://login.example/)"
        in line
    )


def test_an_empty_list_body_is_a_clear_error(fake: FakeApiServer, tmp_path: Path) -> None:
    fake.on("GET", PODS, Reply(200, b"", {"Content-Type": "application/json"}))
    rc, _, err = wmap(*GET_PODS, "--kubeconfig", str(fake.kubeconfig(tmp_path / "kc")))
    assert rc == 1
    assert one_error(err) == (
        f"error: GET {PODS}?limit=500 on {fake.url}: the API server sent an empty body where a JSON "
        "object was expected"
    )


def test_millions_of_tiny_objects_in_a_small_gzip_body_are_refused(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    body = b"".join(
        [
            packer.compress(b'{"kind":"PodList","apiVersion":"v1","metadata":{},"items":['),
            *(packer.compress(b"{}," * 1_000_000) for _ in range(MAX_DECODED_VALUES // 1_000_000 + 1)),
            packer.compress(b"{}]}"),
            packer.flush(),
        ]
    )
    assert len(body) < 64 * 1024  # a few KB on the wire
    fake.on("GET", PODS, Reply(200, body, {"Content-Type": "application/json", "Content-Encoding": "gzip"}))
    rc, _, err = wmap(*GET_PODS, "--kubeconfig", str(fake.kubeconfig(tmp_path / "kc")))
    assert rc == 1
    assert f"holds more than {MAX_DECODED_VALUES} JSON values (MAX_DECODED_VALUES)" in one_error(err)


def test_a_discovery_of_100000_groups_is_refused(fake: FakeApiServer, tmp_path: Path) -> None:
    groups = [
        {"name": f"g{i}.example.com", "versions": [{"groupVersion": f"g{i}.example.com/v1", "version": "v1"}]}
        for i in range(100_000)
    ]
    fake.on("GET", "/apis", Reply.json({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
    rc, _, err = wmap("get", "widgets", "-n", "ml", "--kubeconfig", str(fake.kubeconfig(tmp_path / "kc")))
    assert rc == 1
    assert one_error(err) == (
        f'error: discover "widgets": discovery on {fake.url}: the API server lists more than '
        f"{MAX_DISCOVERY_GROUPS} API groups (MAX_DISCOVERY_GROUPS)"
    )


def test_a_continue_token_on_every_page_ends_at_the_page_ceiling(fake: FakeApiServer, tmp_path: Path) -> None:
    def endless(seen: Seen) -> Reply:
        n = int(seen.param("continue") or 0) + 1
        meta = {"resourceVersion": "7", "continue": str(n)}
        return Reply.json({"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": []})

    fake.on("GET", PODS, endless)
    rc, _, err = wmap(*GET_PODS, "--kubeconfig", str(fake.kubeconfig(tmp_path / "kc")))
    assert rc == 1
    assert one_error(err) == (
        f"error: GET {PODS} on {fake.url}: the list did not end after {MAX_LIST_PAGES} pages "
        "(MAX_LIST_PAGES): the API server keeps sending continue tokens"
    )
    assert len(fake.seen(PODS)) == MAX_LIST_PAGES


# -------------------------------------------------------------------------------------- exec plugins


def plugin_kubeconfig(fake: FakeApiServer, tmp_path: Path, body: str) -> tuple[Path, Path]:
    """A kubeconfig whose user is an exec plugin running ``body`` (sh); every run appends its pid
    to the returned file, and a child it starts appends its own."""
    pids = tmp_path / "plugin-pids"
    script = tmp_path / "plugin"
    script.write_text(f"#!/bin/sh\necho $$ >> {pids}\n{body}")
    script.chmod(0o755)
    exec_block = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(script),
            "interactiveMode": "Never",
        }
    }
    return fake.kubeconfig(tmp_path / "kc", user=exec_block), pids


def test_a_failing_plugin_runs_once_for_the_whole_command(fake: FakeApiServer, tmp_path: Path) -> None:
    # Before: the Karta list ran it, failed (a warning), then discovery ran it again.
    kc, pids = plugin_kubeconfig(fake, tmp_path, "echo 'no credentials here' >&2\nexit 3\n")
    rc, _, err = wmap(*GET_PODS, "--kubeconfig", str(kc))
    assert rc == 1 and "failed with exit code 3" in one_error(err)
    assert len(pids.read_text().split()) == 1
    assert not fake.requests  # nothing was sent without credentials


def test_a_plugin_past_its_deadline_runs_once_and_is_gone_when_wmap_returns(
    fake: FakeApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: the Karta list and discovery each waited out the deadline and ran it again, and the
    # plugin's child outlived wmap. EXEC_TIMEOUT (60 s) is shortened here, the rest is real.
    monkeypatch.setattr(auth, "EXEC_TIMEOUT", 1.0)
    kc, pids = plugin_kubeconfig(
        fake, tmp_path, f"sleep 1000 &\necho $! >> {tmp_path / 'plugin-pids'}\nwait\n"
    )
    rc, _, err = wmap(*GET_PODS, "--kubeconfig", str(kc))
    assert rc == 1
    assert one_error(err).endswith("did not finish within 1s; it was stopped"), err
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2  # one run: the plugin and its child
    assert gone(started), f"plugin processes left running: {[p for p in started if alive(p)]}"
    assert not fake.requests


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_sleeping_plugin_dies_with_wmap(fake: FakeApiServer, tmp_path: Path, sig: signal.Signals) -> None:
    kc, pids = plugin_kubeconfig(
        fake, tmp_path, f"sleep 1000 &\necho $! >> {tmp_path / 'plugin-pids'}\nwait\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "WMAP_CATALOG_DIR")}
    env["HOME"] = str(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "workload_map.cli.main", *GET_PODS, "--kubeconfig", str(kc)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # A shell's background job inherits SIGINT ignored; wmap must see it as a terminal sends it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        for _ in range(3000):  # until the plugin and its child have started
            if pids.exists() and len(pids.read_text().split()) == 2:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        started = [int(p) for p in pids.read_text().split()]
        assert all(alive(p) for p in started)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == (143 if sig == signal.SIGTERM else 1), err
    assert gone(started), f"plugin processes left running: {[p for p in started if alive(p)]}"


# ------------------------------------------------------------------ files the kubeconfig is or names


def test_a_fifo_as_the_kubeconfig_is_one_error_not_a_hang(tmp_path: Path) -> None:
    with fifo_unblocked_after(tmp_path / "kc") as kc:
        rc, _, err = wmap(*GET_PODS, "--kubeconfig", str(kc))
    assert rc == 1
    assert one_error(err) == (
        f'error: discover "pods": cannot read kubeconfig file {kc}: it is a FIFO (named pipe), not a '
        "regular file"
    )


def test_a_fifo_as_the_certificate_authority_is_one_error_not_a_hang(
    fake: FakeApiServer, tmp_path: Path
) -> None:
    kc = fake.kubeconfig(tmp_path / "kc")
    doc = yaml.safe_load(kc.read_text())
    with fifo_unblocked_after(tmp_path / "ca.crt") as ca:
        doc["clusters"][0]["cluster"] = {
            "server": fake.url.replace("http:", "https:"),
            "certificate-authority": "ca.crt",
        }
        kc.write_text(yaml.safe_dump(doc))
        rc, _, err = wmap(*GET_PODS, "--kubeconfig", str(kc))
    assert rc == 1
    assert one_error(err) == (
        f'error: discover "pods": cannot read certificate authority file {ca} (cluster "fake"): it is a '
        "FIFO (named pipe), not a regular file"
    )
    assert not fake.requests
