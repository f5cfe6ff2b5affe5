"""``wmap serve --local`` as a process: requests without a token act as the kubeconfig's user
(here one that authenticates with a client certificate, which no token-pasting could carry),
checked with SelfSubjectAccessReviews; a token still wins; only loopback peers with a loopback
Host are answered, and cross-site requests may not change anything."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient
from tests.support.processes import WmapProcess, start_wmap
from tests.support.seed import create_deployment_tree, create_jobset_tree
from workload_map.cli import exit_codes

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def local(cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WmapProcess]:
    tmp = tmp_path_factory.mktemp("serve-local")
    cert = cluster.issue_client_cert("local-admin", groups=["system:masters"])
    kc = cluster.write_kubeconfig(tmp / "kubeconfig", user="local-admin", client_cert=cert)
    with start_wmap("serve", ["--local", "--enable-writes"], tmp / "serve.log", kubeconfig=kc) as proc:
        yield proc


def test_no_token_acts_as_the_kubeconfig_user(
    local: WmapProcess, kube: KubeTestClient, namespace: str
) -> None:
    create_deployment_tree(kube, "web", namespace, replicas=1)
    who = httpx.get(f"{local.url}/api/v1/whoami", timeout=30).json()
    assert who["local"] is True and who["username"].startswith("local-admin")
    r = httpx.get(f"{local.url}/api/v1/workloads", params={"namespace": namespace}, timeout=30)
    assert r.status_code == 200, r.text
    assert [i["name"] for i in r.json()["items"]] == ["web"]


def test_a_token_still_wins(
    local: WmapProcess, cluster: TestCluster, kube: KubeTestClient, namespace: str
) -> None:
    create_deployment_tree(kube, "web", namespace, replicas=1)
    nobody = {"Authorization": f"Bearer {cluster.token('nobody')}"}
    who = httpx.get(f"{local.url}/api/v1/whoami", headers=nobody, timeout=30).json()
    assert who["username"] == "nobody" and who["local"] is False
    r = httpx.get(
        f"{local.url}/api/v1/workloads",
        params={"type": "deployments", "namespace": namespace},
        headers=nobody,
        timeout=30,
    )
    assert r.status_code == 403


def test_only_loopback_names_and_same_origin_writes(
    local: WmapProcess, kube: KubeTestClient, namespace: str
) -> None:
    create_jobset_tree(kube, "train", namespace, (("leader", 1),))
    rebound = httpx.get(
        f"{local.url}/api/v1/whoami", headers={"Host": f"evil.example:{local.port}"}, timeout=30
    )
    assert rebound.status_code == 403 and "not a loopback name" in rebound.json()["message"]
    assert (
        httpx.get(
            f"{local.url}/api/v1/whoami", headers={"Host": f"localhost:{local.port}"}, timeout=30
        ).status_code
        == 200
    )
    path = f"{local.url}/api/v1/namespaces/{namespace}/workloads/jobsets/train/suspend"
    cross = httpx.post(
        path, params={"dryRun": "true"}, headers={"Origin": "https://evil.example"}, timeout=30
    )
    assert cross.status_code == 403 and "may not change anything" in cross.json()["message"]
    same = httpx.post(path, params={"dryRun": "true"}, headers={"Origin": local.url}, timeout=30)
    assert same.status_code == 200, same.text


def test_local_refuses_other_addresses_and_users_without_credentials(
    cluster: TestCluster, tmp_path: Path
) -> None:
    kc = cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "workload_map.cli.main",
            "serve",
            "--local",
            "--listen",
            "0.0.0.0:0",
            "--kubeconfig",
            str(kc),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == exit_codes.USAGE and "loopback only" in out.stderr
