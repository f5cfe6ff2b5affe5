"""One exit-code table for every command (README "Exit codes", issue #13), checked against a real API
server: an unreachable server, a forbidden list, every type forbidden with --all-types (kubectl
exits 1 then too), a bad flag; each with a one-line message on stderr."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.cli.helpers import wmap
from tests.support.cluster import TestCluster
from workload_map.cli import exit_codes

pytestmark = pytest.mark.cluster


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_unreachable_api_server(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    rc, _out, err = wmap("get", "jobsets", "--server", f"https://127.0.0.1:{port}", "--token", "t",
                         "--insecure-skip-tls-verify")  # fmt: skip
    assert rc == exit_codes.ERROR
    assert "cannot reach the Kubernetes API server" in _one_line(err)


def test_forbidden_list_and_all_types_forbidden(cluster: TestCluster, karta_crd: str, tmp_path: Path) -> None:
    kc = str(cluster.write_kubeconfig(tmp_path / "kubeconfig", user="nobody", namespace="default"))
    rc, _out, err = wmap("get", "jobsets", "--kubeconfig", kc)
    assert rc == exit_codes.ERROR and "forbidden" in err.lower(), err
    rc, _out, err = wmap("get", "-A", "--all-types", "--kubeconfig", kc)
    assert rc == exit_codes.ERROR, err
    assert "forbidden" in err.lower() or "not allowed" in err.lower(), err


def test_bad_flag() -> None:
    rc, _out, err = wmap("get", "jobsets", "--no-such-flag")
    assert rc == exit_codes.USAGE and "--no-such-flag" in err


def test_exporter_cannot_listen(cluster: TestCluster, tmp_path: Path) -> None:
    kc = str(cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        rc, _out, err = wmap("exporter", "--listen", f"127.0.0.1:{port}", "--kubeconfig", kc)
    assert rc == exit_codes.ERROR
    assert f"cannot listen on 127.0.0.1:{port}" in _one_line(err)
