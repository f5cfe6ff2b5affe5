"""Exec credential plugin protocol, with a real plugin process (no cluster)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cluster_client.plugins import runs, write_plugin
from workload_map.cluster.auth import ExecCredentialProvider
from workload_map.cluster.kubeconfig import ClusterConfig, ExecConfig
from workload_map.errors import ConfigurationError, ExecPluginError

V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"


def provider(script: Path, api_version: str = V1, **kw: object) -> ExecCredentialProvider:
    clock = kw.pop("clock", None)
    cfg = ExecConfig(command=str(script), api_version=api_version, interactive_mode="Never", **kw)  # type: ignore[arg-type]
    cluster = ClusterConfig(server="https://k.test:6443", ca_data=b"PEM", tls_server_name="kubernetes")
    extra = {"clock": clock} if clock is not None else {}
    return ExecCredentialProvider(cfg, cluster, stderr=subprocess.DEVNULL, **extra)  # type: ignore[arg-type]


@pytest.mark.parametrize("api_version", [V1, V1BETA1, "client.authentication.k8s.io/v1alpha1"])
def test_token_and_exec_info(tmp_path: Path, api_version: str) -> None:
    script, state = write_plugin(tmp_path)
    (state / "tokens").write_text("t1")
    p = provider(
        script,
        api_version,
        args=("get-token", "--x"),
        env=(("PLUGIN_EXTRA", "yes"),),
        provide_cluster_info=True,
        cluster_config={"region": "eu"},
    )
    cred = p.get()
    assert cred.token == "t1" and cred.expires_at is None
    (run,) = runs(state)
    assert run["args"] == ["get-token", "--x"] and run["extra"] == "yes"
    info = json.loads(str(run["info"]))
    assert info == {
        "apiVersion": api_version,
        "kind": "ExecCredential",
        "spec": {
            "interactive": False,
            "cluster": {
                "server": "https://k.test:6443",
                "tls-server-name": "kubernetes",
                "certificate-authority-data": "UEVN",
                "config": {"region": "eu"},
            },
        },
    }
    assert p.get() is cred and p.runs == 1  # cached: no expiry


def test_no_cluster_info_unless_asked(tmp_path: Path) -> None:
    script, state = write_plugin(tmp_path)
    (state / "tokens").write_text("t1")
    provider(script).get()
    assert json.loads(str(runs(state)[0]["info"]))["spec"] == {"interactive": False}


def test_expiry_reruns(tmp_path: Path) -> None:
    script, state = write_plugin(tmp_path)
    (state / "tokens").write_text("t1 t2")
    (state / "expires").write_text("2030-01-01T00:00:00Z")
    now = [1893455000.0]  # 2029-12-31T23:43:20Z
    p = provider(script, clock=lambda: now[0])
    assert p.get().token == "t1"
    now[0] += 900  # 10 s before expiry: within the skew
    assert p.get().token == "t1"
    now[0] += 95
    assert p.get().token == "t2" and p.runs == 2


def test_client_certificate(tmp_path: Path) -> None:
    script, state = write_plugin(tmp_path)
    (state / "cert").write_text("CERT")
    (state / "key").write_text("KEY")
    cred = provider(script).get()
    assert (cred.token, cred.cert_pem, cred.key_pem) == (None, b"CERT", b"KEY")


def test_missing_command_shows_install_hint(tmp_path: Path) -> None:
    p = provider(tmp_path / "nope", install_hint="Install it with: brew install nope")
    with pytest.raises(ExecPluginError, match=r"was not found\n\nInstall it with: brew install nope"):
        p.get()
    bare = ExecCredentialProvider(ExecConfig(command="wmap-no-such-plugin-xyz", api_version=V1))
    with pytest.raises(ExecPluginError, match='"wmap-no-such-plugin-xyz" was not found'):
        bare.get()


def test_failures(tmp_path: Path) -> None:
    script, state = write_plugin(tmp_path)
    (state / "fail").write_text("")
    with pytest.raises(ExecPluginError, match="failed with exit code 3"):
        provider(script).get()
    (state / "fail").unlink()
    with pytest.raises(ExecPluginError, match="neither a token nor a client certificate"):
        provider(script).get()
    (state / "tokens").write_text("t")
    (state / "expires").write_text("tomorrow")
    with pytest.raises(ExecPluginError, match="invalid expirationTimestamp"):
        provider(script).get()


def test_interactive_always_without_tty(tmp_path: Path) -> None:
    script, _ = write_plugin(tmp_path)
    cfg = ExecConfig(command=str(script), api_version=V1, interactive_mode="Always")
    with pytest.raises(ExecPluginError, match="standard input is not a terminal"):
        ExecCredentialProvider(cfg, stdin=None).get()


def test_unsupported_api_version(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="not supported"):
        ExecCredentialProvider(ExecConfig(command="x", api_version="client.authentication.k8s.io/v2"))
