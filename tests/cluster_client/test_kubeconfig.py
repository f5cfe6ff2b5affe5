"""Kubeconfig loading rules, merging, overrides and the in-cluster fallback (no cluster needed)."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.cluster.kubeconfig import (
    ConnectionOptions,
    load_cluster_config,
    load_kubeconfig,
    parse_duration,
)
from workload_map.errors import ClusterError, ConfigurationError, NoConfigurationError


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path


def config(
    clusters: dict[str, dict[str, Any]],
    users: dict[str, dict[str, Any]],
    contexts: dict[str, dict[str, Any]],
    current: str | None = None,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": c} for n, c in clusters.items()],
        "users": [{"name": n, "user": u} for n, u in users.items()],
        "contexts": [{"name": n, "context": c} for n, c in contexts.items()],
    }
    if current is not None:
        doc["current-context"] = current
    return doc


@pytest.fixture
def two_files(tmp_path: Path) -> tuple[Path, Path]:
    a = write(
        tmp_path / "a" / "config",
        config(
            {"c1": {"server": "https://a.example:6443", "certificate-authority": "ca.crt"}},
            {"u1": {"token": "token-a"}},
            {"ctx1": {"cluster": "c1", "user": "u1", "namespace": "team-a"}, "shared": {"cluster": "c1"}},
            current="ctx1",
        ),
    )
    (tmp_path / "a" / "ca.crt").write_text("dummy")
    b = write(
        tmp_path / "b" / "config",
        config(
            {"c1": {"server": "https://ignored.example"}, "c2": {"server": "https://b.example"}},
            {"u1": {"token": "ignored"}, "u2": {"token": "token-b"}},
            {"ctx2": {"cluster": "c2", "user": "u2"}, "shared": {"cluster": "c2"}},
            current="ctx2",
        ),
    )
    return a, b


def test_default_path_is_home_kube_config(no_env: Path) -> None:
    write(
        no_env / ".kube" / "config",
        config({"c": {"server": "https://h:1"}}, {}, {"x": {"cluster": "c"}}, "x"),
    )
    cfg = load_cluster_config()
    assert cfg.server == "https://h:1"
    assert cfg.files == (str(no_env / ".kube" / "config"),)
    assert cfg.namespace == "default" and not cfg.namespace_explicit


def test_kubeconfig_env_merges_first_wins(no_env: Path, two_files: tuple[Path, Path]) -> None:
    a, b = two_files
    env = {"KUBECONFIG": os.pathsep.join([str(a), "", str(no_env / "missing"), str(b)])}
    kc = load_kubeconfig(environ=env)
    assert kc.current_context == "ctx1"  # first file that sets it
    assert kc.clusters["c1"]["server"] == "https://a.example:6443"
    assert kc.users["u1"]["token"] == "token-a"
    assert kc.contexts["shared"]["cluster"] == "c1"
    assert set(kc.contexts) == {"ctx1", "ctx2", "shared"}
    assert kc.files == [str(a), str(b)]  # missing files skipped silently
    cfg = load_cluster_config(ConnectionOptions(context="ctx2"), environ=env)
    assert (cfg.server, cfg.token, cfg.namespace) == ("https://b.example", "token-b", "default")


def test_flag_beats_env_beats_home(no_env: Path, two_files: tuple[Path, Path]) -> None:
    a, b = two_files
    write(
        no_env / ".kube" / "config",
        config({"h": {"server": "https://home"}}, {}, {"h": {"cluster": "h"}}, "h"),
    )
    assert load_cluster_config(environ={}).server == "https://home"
    assert load_cluster_config(environ={"KUBECONFIG": str(b)}).server == "https://b.example"
    opts = ConnectionOptions(kubeconfig=str(a))
    assert load_cluster_config(opts, environ={"KUBECONFIG": str(b)}).server == "https://a.example:6443"


def test_relative_paths_resolve_against_the_defining_file(two_files: tuple[Path, Path]) -> None:
    a, _ = two_files
    cfg = load_cluster_config(ConnectionOptions(kubeconfig=str(a)), environ={})
    assert cfg.ca_file == str(a.parent.resolve() / "ca.crt")


def test_namespace_precedence(two_files: tuple[Path, Path]) -> None:
    a, _ = two_files
    base = ConnectionOptions(kubeconfig=str(a))
    assert load_cluster_config(base, environ={}).namespace == "team-a"
    flagged = ConnectionOptions(kubeconfig=str(a), namespace="mine")
    assert load_cluster_config(flagged, environ={}).namespace == "mine"
    other = ConnectionOptions(kubeconfig=str(a), context="shared")
    cfg = load_cluster_config(other, environ={})
    assert cfg.namespace == "default" and not cfg.namespace_explicit


def test_missing_explicit_kubeconfig_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_cluster_config(ConnectionOptions(kubeconfig=str(tmp_path / "nope")), environ={})


def test_unknown_context_cluster_user(two_files: tuple[Path, Path]) -> None:
    a, _ = two_files
    with pytest.raises(ConfigurationError, match='context "zzz" does not exist'):
        load_cluster_config(ConnectionOptions(kubeconfig=str(a), context="zzz"), environ={})
    with pytest.raises(ConfigurationError, match='cluster "zzz" does not exist'):
        load_cluster_config(ConnectionOptions(kubeconfig=str(a), cluster="zzz"), environ={})
    with pytest.raises(ConfigurationError, match='user "zzz" does not exist'):
        load_cluster_config(ConnectionOptions(kubeconfig=str(a), user="zzz"), environ={})


def test_no_configuration_at_all(no_env: Path, tmp_path: Path) -> None:
    with pytest.raises(NoConfigurationError, match="no Kubernetes configuration found"):
        load_cluster_config(environ={}, service_account_dir=tmp_path / "no-sa")


def test_server_flag_without_kubeconfig(no_env: Path, tmp_path: Path) -> None:
    cfg = load_cluster_config(
        ConnectionOptions(server="127.0.0.1:6443", token="t", insecure_skip_tls_verify=True),
        environ={},
        service_account_dir=tmp_path / "no-sa",
    )
    assert (cfg.server, cfg.token, cfg.insecure, cfg.source) == ("https://127.0.0.1:6443", "t", True, "flags")


def test_flag_overrides(two_files: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = two_files
    ca = tmp_path / "other-ca.pem"
    ca.write_text("x")
    opts = ConnectionOptions(
        kubeconfig=str(a),
        server="https://override:443",
        token="flag-token",
        certificate_authority=str(ca),
        tls_server_name="kubernetes",
        as_user="jane",
        as_groups=("g1", "g2"),
        as_uid="42",
        request_timeout="1m30s",
        user="u1",
    )
    cfg = load_cluster_config(opts, environ={})
    assert cfg.server == "https://override:443"
    assert cfg.token == "flag-token"
    assert cfg.ca_file == str(ca)
    assert cfg.tls_server_name == "kubernetes"
    assert (cfg.impersonate_user, cfg.impersonate_groups, cfg.impersonate_uid) == ("jane", ("g1", "g2"), "42")
    assert cfg.timeout == 90.0
    insecure = load_cluster_config(
        ConnectionOptions(kubeconfig=str(a), insecure_skip_tls_verify=True), environ={}
    )
    assert insecure.insecure and insecure.ca_file is None and insecure.ca_data is None


def test_data_fields_are_decoded(tmp_path: Path) -> None:
    pem = b"-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n"
    enc = base64.b64encode(pem).decode()
    path = write(
        tmp_path / "kc",
        config(
            {"c": {"server": "https://x", "certificate-authority-data": enc}},
            {"u": {"client-certificate-data": enc, "client-key-data": enc}},
            {"x": {"cluster": "c", "user": "u"}},
            "x",
        ),
    )
    cfg = load_cluster_config(ConnectionOptions(kubeconfig=str(path)), environ={})
    assert cfg.ca_data == pem and cfg.client_cert_data == pem and cfg.client_key_data == pem
    assert cfg.ca_pem() == pem


def test_missing_referenced_files_are_clear_errors(tmp_path: Path) -> None:
    path = write(
        tmp_path / "kc",
        config(
            {"c": {"server": "https://x", "certificate-authority": "/nonexistent/ca.crt"}},
            {},
            {"x": {"cluster": "c"}},
            "x",
        ),
    )
    with pytest.raises(ConfigurationError, match=r"certificate authority file /nonexistent/ca.crt"):
        load_cluster_config(ConnectionOptions(kubeconfig=str(path)), environ={})


def test_exec_block(tmp_path: Path) -> None:
    path = write(
        tmp_path / "kc",
        config(
            {
                "c": {
                    "server": "https://x",
                    "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": {"a": 1}}],
                }
            },
            {
                "u": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": "bin/plugin",
                        "args": ["--x"],
                        "env": [{"name": "FOO", "value": "bar"}],
                        "interactiveMode": "Never",
                        "provideClusterInfo": True,
                        "installHint": "install it",
                    }
                }
            },
            {"x": {"cluster": "c", "user": "u"}},
            "x",
        ),
    )
    cfg = load_cluster_config(ConnectionOptions(kubeconfig=str(path)), environ={})
    assert cfg.exec is not None
    assert cfg.exec.command == str(tmp_path.resolve() / "bin" / "plugin")
    assert cfg.exec.args == ("--x",) and cfg.exec.env == (("FOO", "bar"),)
    assert cfg.exec.provide_cluster_info and cfg.exec.cluster_config == {"a": 1}
    # v1 requires interactiveMode
    doc = yaml.safe_load(path.read_text())
    del doc["users"][0]["user"]["exec"]["interactiveMode"]
    write(path, doc)
    with pytest.raises(ConfigurationError, match="interactiveMode is required"):
        load_cluster_config(ConnectionOptions(kubeconfig=str(path)), environ={})


def test_token_flag_drops_exec(tmp_path: Path) -> None:
    path = write(
        tmp_path / "kc",
        config(
            {"c": {"server": "https://x"}},
            {"u": {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "p"}}},
            {"x": {"cluster": "c", "user": "u"}},
            "x",
        ),
    )
    cfg = load_cluster_config(ConnectionOptions(kubeconfig=str(path), token="t"), environ={})
    assert cfg.exec is None and cfg.token == "t"


def test_in_cluster(no_env: Path, tmp_path: Path) -> None:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("sa-token\n")
    (sa / "ca.crt").write_text("ca")
    (sa / "namespace").write_text("workloads\n")
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    cfg = load_cluster_config(environ=env, service_account_dir=sa)
    assert cfg.source == "in-cluster"
    assert cfg.server == "https://10.0.0.1:443"
    assert cfg.token_file == str(sa / "token") and cfg.ca_file == str(sa / "ca.crt")
    assert cfg.namespace == "workloads"
    assert (
        load_cluster_config(ConnectionOptions(namespace="n"), environ=env, service_account_dir=sa).namespace
        == "n"
    )
    v6 = load_cluster_config(environ={**env, "KUBERNETES_SERVICE_HOST": "fd00::1"}, service_account_dir=sa)
    assert v6.server == "https://[fd00::1]:443"
    # a kubeconfig, when there is one, wins over the in-cluster account
    write(
        no_env / ".kube" / "config", config({"c": {"server": "https://k"}}, {}, {"x": {"cluster": "c"}}, "x")
    )
    assert load_cluster_config(environ=env, service_account_dir=sa).server == "https://k"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", None), ("5", 5.0), ("1s", 1.0), ("1m30s", 90.0), ("250ms", 0.25), ("2h", 7200.0)],
)
def test_parse_duration(text: str, seconds: float | None) -> None:
    assert parse_duration(text) == seconds


def test_parse_duration_rejects_garbage() -> None:
    with pytest.raises(ClusterError):
        parse_duration("soon")


def test_invalid_yaml(tmp_path: Path) -> None:
    bad = tmp_path / "kc"
    bad.write_text("clusters: [\n")
    with pytest.raises(ConfigurationError, match="not valid YAML"):
        load_cluster_config(ConnectionOptions(kubeconfig=str(bad)), environ={})
