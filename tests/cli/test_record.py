"""``wmap record`` on the test API server: a JobSet going from created to Running is written as
an upstream-format recording, one STATE per distinct state, and replays clean with ``wmap test``;
Ctrl-C leaves a complete file; bad input gets its exit code."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.cli.helpers import RUNNING_JOBSET_STATUS, jobset, wmap
from tests.support.kube import KubeTestClient
from workload_map.cli import exit_codes

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("bundled_catalog")]


def _record(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "workload_map.cli.main", "record", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )


def _wait_for_file(path: Path, events: int, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            doc = yaml.safe_load(path.read_text())
            if len(doc["events"]) >= events:
                return doc
        time.sleep(0.1)
    raise AssertionError(f"{path}: fewer than {events} events")


def test_a_lifecycle_recorded_and_replayed(
    kube: KubeTestClient, namespace: str, kc: str, tmp_path: Path
) -> None:
    js = kube.create(jobset("rec", namespace))
    out = tmp_path / "rec.yaml"
    proc = _record(
        "jobset/rec",
        "-n",
        namespace,
        "--out",
        str(out),
        "--until",
        "Running",
        "--timeout",
        "60",
        "--kubeconfig",
        kc,
    )
    try:
        _wait_for_file(out, 1)
        kube.patch(js, {"metadata": {"annotations": {"note": "a real change"}}})
        _wait_for_file(out, 2)
        kube.set_status(js, RUNNING_JOBSET_STATUS)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    doc = yaml.safe_load(out.read_text())
    states = [e for e in doc["events"] if e["kind"] == "STATE"]
    assert len(states) == 3 and states[-1]["state"] == "Running" and "Running" in states[-1]["phases"]
    assert states[0]["state"] != "Running"
    assert doc["kartaName"] == "jobset-x-k8s-io-jobset-v1alpha2" and doc["result"] == {
        "succeeded": True,
        "ended": "until",
    }
    assert all(
        "managedFields" not in e["object"]["metadata"] and "resourceVersion" not in e["object"]["metadata"]
        for e in states
    )
    assert [e["resourceVersion"] for e in states] == sorted({e["resourceVersion"] for e in states}, key=int)
    assert sum(s["amount"] for s in doc["summary"]) == 3
    rc, text, err = wmap("test", "jobset", str(out), "--match", "exact")
    assert rc == 0, text + err
    assert text.splitlines()[-1].startswith("jobset-x-k8s-io-jobset-v1alpha2: 3 cases, 0 failed")


def test_ctrl_c_leaves_a_complete_recording(
    kube: KubeTestClient, namespace: str, kc: str, tmp_path: Path
) -> None:
    kube.create(jobset("stop", namespace))
    out = tmp_path / "stop.yaml"
    proc = _record("jobset", "stop", "-n", namespace, "--out", str(out), "--kubeconfig", kc)
    try:
        _wait_for_file(out, 1)
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    doc = yaml.safe_load(out.read_text())
    assert doc["result"]["ended"] == "interrupted" and len(doc["events"]) == 1
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".stop.yaml.")]  # no temporary left


def test_record_bad_input(namespace: str, kc: str, tmp_path: Path) -> None:
    out = tmp_path / "x.yaml"
    rc, _, err = wmap("record", "jobset/none", "-n", namespace, "--out", str(out), "--kubeconfig", kc)
    assert rc == exit_codes.NOT_FOUND and 'JobSet "none" not found' in err and not out.exists()
    rc, _, err = wmap("record", "jobset", "--out", str(out), "--kubeconfig", kc)
    assert rc == exit_codes.USAGE and "NAME is required" in err
    rc, _, err = wmap("record", "jobset/x", "--out", str(out), "--until", "Nope", "--kubeconfig", kc)
    assert rc == exit_codes.USAGE and "--until" in err
