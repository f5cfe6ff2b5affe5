"""Issue 23, terminal injection: real ``wmap`` processes on a pseudo-terminal (and on pipes) against
definitions and cluster objects whose names, component names, condition reasons and messages, event
messages and annotations carry terminal control sequences (ESC[2J, OSC 0 window title, OSC 52
clipboard, CR, cursor movement, backspace, a C1 CSI, a bidi override; tests/support/hostile_inputs).

The terminal is put in raw mode (no output processing), so the bytes read from the master side are
exactly what ``wmap`` wrote: none of the raw sequences may be among them, in any human format, on
stdout or stderr. ``-o json`` and ``-o yaml`` stay exact: they decode to the hostile text itself."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import tty
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support import hostile_inputs as h
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient

HOSTILE = h.HOSTILE_TEXT
RAW = [s.encode() for s in h.RAW_SEQUENCES]
SRC = str(Path(__file__).resolve().parents[2] / "src")


def run_on_terminal(args: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    """``wmap ARGS`` with stdin, stdout and stderr on a raw pseudo-terminal: (exit code, bytes)."""
    master, slave = pty.openpty()
    tty.setraw(slave)  # no "\n" -> "\r\n": every byte read is one wmap wrote
    proc = subprocess.Popen(
        [sys.executable, "-m", "workload_map.cli.main", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
        start_new_session=True,
    )
    os.close(slave)
    out = bytearray()
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 1 << 16)
                except OSError:  # EIO: every writer closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        code = proc.wait(timeout=300)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return code, bytes(out)


def run_on_pipes(args: list[str], env: dict[str, str], *, stdout_only: bool = False) -> tuple[int, bytes]:
    done = subprocess.run(
        [sys.executable, "-m", "workload_map.cli.main", *args], env=env, capture_output=True, timeout=300
    )
    return done.returncode, done.stdout if stdout_only else done.stdout + done.stderr


def assert_clean(args: list[str], env: dict[str, str]) -> bytes:
    """Run ``args`` on a terminal and on pipes; neither may carry a raw control sequence. Returns
    the terminal's bytes (for the escaped forms to be checked)."""
    seen = b""
    for runner in (run_on_terminal, run_on_pipes):
        code, data = runner(args, env)
        assert code != 1 or b"Traceback" not in data, data.decode(errors="replace")
        leaked = [r for r in RAW if r in data]
        assert not leaked, f"{runner.__name__} {args}: raw {leaked} in {data!r}"
        seen = seen or data
    return seen


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "WMAP_SHARED_DIR")}
    return {**keep, "HOME": str(home), "PYTHONPATH": SRC, "TERM": "xterm-256color", "COLUMNS": "200"}


@pytest.fixture
def hostile_definition(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(h.hostile_name_definition()))
    return path


# --- offline: definition files, manifests, errors ------------------------------------------------


def test_definition_text_never_reaches_the_terminal_raw(
    env: dict[str, str], hostile_definition: Path
) -> None:
    d = str(hostile_definition)
    name = h.hostile_name_definition()["metadata"]["name"]
    out = assert_clean(["validate", d], env)
    assert b"OK: gizmos" in out and b"\\x1b[2J" in out and b"\\x1b]0;pwned-title\\x07" in out
    out = assert_clean(["--definitions", d, "definitions"], env)
    assert b"\\x1b]52;c;" in out  # the name is shown, escaped
    out = assert_clean(["--definitions", d, "explain", name], env)
    assert b"Karta definition gizmos" in out and b"\\u202etxt.exe" in out
    # A typo'd field named with control characters: the finding (on stdout) and the errors.
    broken = h.hostile_name_definition()
    broken["spec"]["structureDefinition"]["rootComponent"][f"typo{HOSTILE}"] = 1
    bad = hostile_definition.with_name("broken.json")
    bad.write_text(json.dumps(broken))
    out = assert_clean(["validate", str(bad)], env)
    assert b"INVALID: gizmos" in out and b'unknown field "typo' in out and b"\\r" in out
    assert_clean(["--definitions", str(bad), "definitions"], env)  # the error line on stderr
    assert_clean(["validate", str(bad), "--validate=warn"], env)  # the warning line on stderr
    # An unknown type word given on the command line is echoed in the error.
    assert_clean(["--definitions", d, "explain", f"nothing{HOSTILE}"], env)


def test_manifest_text_never_reaches_the_terminal_raw(
    env: dict[str, str], hostile_definition: Path, tmp_path: Path
) -> None:
    """describe -f and requirements -f of a manifest whose name and conditions are hostile."""
    gizmo = {
        "apiVersion": "example.com/v1",
        "kind": "Gizmo",
        "metadata": {"name": f"g{HOSTILE}", "namespace": f"ns{HOSTILE}", "annotations": {"a": HOSTILE}},
        "spec": {"containers": [{"name": f"c{HOSTILE}", "image": "i"}]},
        "status": {"phase": f"Running{HOSTILE}"},
    }
    manifest = tmp_path / "gizmo.json"
    manifest.write_text(json.dumps(gizmo))
    d = str(hostile_definition)
    out = assert_clean(["--definitions", d, "describe", "-f", str(manifest)], env)
    assert b"Gizmo/g" in out and b"\\x1b[1A" in out
    assert_clean(["--definitions", d, "requirements", "-f", str(manifest)], env)
    # Machine formats stay exact: they decode to the hostile text itself.
    code, data = run_on_pipes(
        ["--definitions", d, "describe", "-f", str(manifest), "-o", "json"], env, stdout_only=True
    )
    assert code == 0, data
    assert json.loads(data)["name"] == f"g{HOSTILE}"
    code, data = run_on_pipes(
        ["--definitions", d, "describe", "-f", str(manifest), "-o", "yaml"], env, stdout_only=True
    )
    assert code == 0, data
    assert yaml.safe_load(data)["name"] == f"g{HOSTILE}"


def test_a_case_file_with_hostile_names_in_wmap_test(
    env: dict[str, str], hostile_definition: Path, tmp_path: Path
) -> None:
    case = {
        "name": f"case{HOSTILE}",
        "object": {
            "apiVersion": "example.com/v1",
            "kind": "Gizmo",
            "metadata": {"name": f"g{HOSTILE}"},
            "status": {"phase": "Running"},
        },
        "expect": {"phases": [f"Running{HOSTILE}"]},
    }
    path = tmp_path / "case.yaml"
    path.write_text(json.dumps(case))
    out = assert_clean(["test", str(hostile_definition), str(path)], env)
    assert b"FAIL" in out


# --- live: get, describe against the test API server -------------------------------------------


def _hostile_jobset_definition(path: Path) -> Path:
    root = {
        "name": f"js{HOSTILE}",
        "kind": {"group": "jobset.x-k8s.io", "version": "v1alpha2", "kind": "JobSet"},
        "statusDefinition": {
            "conditionsDefinition": {"path": ".status.conditions"},
            "statusMappings": {"running": [{"byConditions": [{"type": "Evil", "status": "True"}]}]},
        },
    }
    worker = {
        "name": f"workers{HOSTILE}",
        "ownerRef": root["name"],
        "specDefinition": {"podTemplateSpecPath": ".spec.replicatedJobs[0].template.spec.template"},
        "scaleDefinition": {"replicasPath": ".spec.replicatedJobs[0].replicas"},
    }
    karta = h.karta(
        f"hostile-jobsets{HOSTILE}",
        {"structureDefinition": {"rootComponent": root, "childComponents": [worker]}},
    )
    path.write_text(json.dumps(karta))
    return path


@pytest.mark.cluster
def test_cluster_text_never_reaches_the_terminal_raw(
    cluster: TestCluster, kube: KubeTestClient, namespace: str, env: dict[str, str], tmp_path: Path
) -> None:
    from tests.cli.helpers import jobset

    kc = str(cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin", namespace=namespace))
    definition = str(_hostile_jobset_definition(tmp_path / "jobsets.json"))
    obj = jobset("train", namespace)
    obj["metadata"]["annotations"] = {"note": HOSTILE}
    created = kube.create(obj)
    # What a hostile controller (or anyone allowed to write status) can put in conditions: the
    # CRD's schema holds the reason to a pattern, the message to a length only.
    status: dict[str, Any] = {
        "conditions": [
            {
                "type": "Evil",
                "status": "True",
                "reason": "Evil",
                "message": f"message{HOSTILE}",
                "lastTransitionTime": "2024-01-01T00:00:00Z",
            }
        ]
    }
    kube.set_status(created, status)
    kube.create(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "train.evil", "namespace": namespace},
            "involvedObject": {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "name": "train",
                "namespace": namespace,
                "uid": created["metadata"]["uid"],
            },
            "reason": f"Evil{HOSTILE}",
            "message": f"event{HOSTILE}",
            "type": "Warning",
            "firstTimestamp": "2024-01-01T00:00:00Z",
            "lastTimestamp": "2024-01-01T00:00:00Z",
            "count": 1,
            "source": {"component": f"ctl{HOSTILE}"},
        }
    )
    base = ["--kubeconfig", kc, "--definitions", definition]
    out = assert_clean([*base, "get", "jobsets"], env)
    assert b"train" in out and b"workersevil\\x1b[2J" in out
    assert_clean([*base, "get", "jobsets", "-o", "wide"], env)
    assert_clean([*base, "get", "jobsets", "-o", "custom-columns=NAME:.name,COMPONENTS:.components"], env)
    out = assert_clean([*base, "get", "jobsets", "-o", "jsonpath={.items[*].components[*].name}{'\\n'}"], env)
    assert b"workersevil\\x1b[2J" in out
    out = assert_clean([*base, "describe", "jobset/train"], env)
    assert b"messageevil\\x1b[2J" in out and b"eventevil\\x1b" in out and b"ctlevil\\x1b" in out
    assert_clean([*base, "get", f"jobset/missing{HOSTILE}"], env)  # the not-found error on stderr
    code, data = run_on_pipes([*base, "get", "jobsets", "-o", "json"], env, stdout_only=True)
    assert code == 0, data
    [item] = json.loads(data)["items"]  # exact: the hostile text itself
    assert item["definition"] == f"hostile-jobsets{HOSTILE}"
    assert f"workers{HOSTILE}" in [c["name"] for c in item["components"]]
