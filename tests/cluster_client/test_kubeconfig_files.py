"""Local files a kubeconfig is, or names (issue #23): a FIFO, a device or a socket given as the
kubeconfig, its certificate authority, client certificate or key, token file, or the in-cluster
namespace file is refused by type before it is opened (a named pipe without a writer would block
``wmap`` forever, ``/dev/zero`` would fill memory), with a ConfigurationError naming the file and
what it is for; an oversized regular file stops at the byte ceiling.

A FIFO here has no writer; should a read block on it anyway, ``fifo_unblocked_after`` ends the
read after a minute so that the test fails instead of hanging.
"""

from __future__ import annotations

import os
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.hostile_inputs import fifo_unblocked_after
from workload_map.cluster.kubeconfig import (
    MAX_LOCAL_FILE,
    ClusterConfig,
    ConnectionOptions,
    load_cluster_config,
    read_local_file,
)
from workload_map.cluster.tls import build_ssl_context
from workload_map.errors import ConfigurationError

FIFO = "it is a FIFO (named pipe), not a regular file"
DEVICE = "it is a character device, not a regular file"


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    with fifo_unblocked_after(tmp_path / "pipe") as path:
        yield path


def kubeconfig(path: Path, cluster: dict[str, Any], user: dict[str, Any]) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9", **cluster}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def load(path: Path) -> ClusterConfig:
    return load_cluster_config(ConnectionOptions(kubeconfig=str(path)), environ={})


@pytest.mark.parametrize("via", ["flag", "env"])
def test_a_fifo_as_the_kubeconfig_is_refused(fifo: Path, via: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        if via == "flag":
            load(fifo)
        else:
            load_cluster_config(environ={"KUBECONFIG": str(fifo)})
    assert str(info.value) == f"cannot read kubeconfig file {fifo}: {FIFO}"


def test_a_device_as_the_kubeconfig_is_refused() -> None:
    with pytest.raises(ConfigurationError) as info:
        load(Path("/dev/zero"))
    assert str(info.value) == f"cannot read kubeconfig file /dev/zero: {DEVICE}"


def test_a_socket_as_the_kubeconfig_is_refused(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        with pytest.raises(ConfigurationError, match="it is a socket, not a regular file"):
            load(tmp_path / "sock")


def test_an_oversized_kubeconfig_stops_at_the_byte_ceiling(tmp_path: Path) -> None:
    big = tmp_path / "big"
    with open(big, "wb") as fh:
        fh.truncate(MAX_LOCAL_FILE + 1)  # sparse: no disk used
    with pytest.raises(ConfigurationError) as info:
        load(big)
    assert str(info.value) == f"kubeconfig file {big} is larger than 16 MiB"


@pytest.mark.parametrize(
    ("cluster_key", "user_key", "what", "where"),
    [
        ("certificate-authority", None, "certificate authority", 'cluster "c"'),
        (None, "client-certificate", "client certificate", 'user "u"'),
        (None, "client-key", "client key", 'user "u"'),
        (None, "tokenFile", "token", 'user "u"'),
    ],
)
@pytest.mark.parametrize("special", ["fifo", "device"])
def test_a_special_file_named_by_the_kubeconfig_is_refused_when_it_is_loaded(
    tmp_path: Path,
    fifo: Path,
    cluster_key: str | None,
    user_key: str | None,
    what: str,
    where: str,
    special: str,
) -> None:
    target = str(fifo) if special == "fifo" else "/dev/zero"
    regular = tmp_path / "regular.pem"
    regular.write_text("not used")
    cluster = {cluster_key: target} if cluster_key else {}
    user: dict[str, Any] = {"token": "t"}
    if user_key == "tokenFile":
        user = {"tokenFile": target}
    elif user_key == "client-certificate":
        user = {"client-certificate": target, "client-key": str(regular)}
    elif user_key == "client-key":
        user = {"client-certificate": str(regular), "client-key": target}
    path = kubeconfig(tmp_path / "kc", cluster, user)
    with pytest.raises(ConfigurationError) as info:
        load(path)
    kind = FIFO if special == "fifo" else DEVICE
    assert str(info.value) == f"cannot read {what} file {target} ({where}): {kind}"


def test_files_swapped_for_a_fifo_after_loading_are_refused_when_read(tmp_path: Path, fifo: Path) -> None:
    # The configuration was checked, then the paths were replaced: the bounded reader refuses them too.
    with pytest.raises(ConfigurationError) as info:
        ClusterConfig(server="https://127.0.0.1:9", ca_file=str(fifo)).ca_pem()
    assert str(info.value) == f"cannot read certificate authority file {fifo}: {FIFO}"
    key = tmp_path / "key.pem"
    key.write_text("not used")
    config = ClusterConfig(
        server="https://127.0.0.1:9", insecure=True, client_cert_file=str(fifo), client_key_file=str(key)
    )
    with pytest.raises(ConfigurationError) as info:
        build_ssl_context(config)  # never handed to OpenSSL by path
    assert str(info.value) == f"cannot read client certificate file {fifo}: {FIFO}"


def test_client_certificate_files_that_are_not_pem_name_both_files(tmp_path: Path) -> None:
    crt, key = tmp_path / "c.crt", tmp_path / "c.key"
    crt.write_text("not a certificate")
    key.write_text("not a key")
    config = ClusterConfig(
        server="https://127.0.0.1:9", insecure=True, client_cert_file=str(crt), client_key_file=str(key)
    )
    with pytest.raises(ConfigurationError, match=f"the client certificate and key \\({crt} and {key}\\)"):
        build_ssl_context(config)
    assert isinstance(build_ssl_context(ClusterConfig(server="https://x", insecure=True)), ssl.SSLContext)


def test_the_in_cluster_namespace_file_is_read_bounded(tmp_path: Path, fifo: Path) -> None:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("sa-token\n")
    os.symlink(fifo, sa / "namespace")
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(ConfigurationError) as info:
        load_cluster_config(environ=env, service_account_dir=sa, home=tmp_path)
    assert str(info.value) == f"cannot read service account namespace file {sa / 'namespace'}: {FIFO}"
    (sa / "namespace").unlink()
    (sa / "namespace").write_text("workloads\n")
    assert load_cluster_config(environ=env, service_account_dir=sa, home=tmp_path).namespace == "workloads"


def test_regular_files_read_as_before(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\n")
    path = kubeconfig(tmp_path / "kc", {"certificate-authority": str(ca)}, {"token": "t"})
    assert load(path).ca_pem() == b"-----BEGIN CERTIFICATE-----\n"
    assert read_local_file(ca, "certificate authority") == ca.read_bytes()
    with pytest.raises(
        ConfigurationError, match=f"certificate authority file {tmp_path}/none does not exist"
    ):
        read_local_file(tmp_path / "none", "certificate authority")
