"""The test cluster itself: a real kube-apiserver with the shared CRDs, users, RBAC and restarts."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.support import crds
from tests.support.cluster import TestCluster
from tests.support.kube import KubeApiError, KubeTestClient, rule

pytestmark = pytest.mark.cluster

JOBSET_API = "jobset.x-k8s.io/v1alpha2"
KARTA_API = "run.ai/v1alpha1"


def make_jobset(name: str, namespace: str) -> dict[str, Any]:
    def job(replica_name: str, replicas: int, gpus: int) -> dict[str, Any]:
        container: dict[str, Any] = {"name": "main", "image": "nvcr.io/nvidia/pytorch:25.01-py3"}
        if gpus:
            container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
        return {
            "name": replica_name,
            "replicas": replicas,
            "template": {
                "spec": {
                    "parallelism": 2,
                    "completions": 2,
                    "completionMode": "Indexed",
                    "template": {"spec": {"restartPolicy": "Never", "containers": [container]}},
                }
            },
        }

    return {
        "apiVersion": JOBSET_API,
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": namespace, "labels": {"team": "wmap"}},
        "spec": {"replicatedJobs": [job("driver", 1, 0), job("workers", 2, 8)]},
    }


def test_server_ready_and_ca_verifies(cluster: TestCluster) -> None:
    ctx = cluster.ssl_context()
    headers = {"Authorization": f"Bearer {cluster.admin_token}"}
    with httpx.Client(base_url=cluster.server, verify=ctx, headers=headers) as http:
        assert http.get("/readyz").text == "ok"
        assert http.get("/version").json()["gitVersion"] == "v1.20.2"
    assert cluster.server.startswith("https://127.0.0.1:")
    assert cluster.ca_file.is_file()


def test_every_corpus_crd_is_established(cluster: TestCluster, kube: KubeTestClient) -> None:
    expected = {doc["metadata"]["name"] for _, doc in crds.corpus_crds()}
    listing = kube.request("GET", crds.CRD_PATH)["items"]
    established = {
        crd["metadata"]["name"]
        for crd in listing
        if any(c["type"] == "Established" and c["status"] == "True" for c in crd["status"]["conditions"])
    }
    missing = expected - established
    assert not missing, f"not installed/Established: {sorted(missing)}"
    assert expected <= set(cluster.installed_crds)
    assert len(expected) >= 30
    # The duplicate names resolved as documented: mpi-operator's v2beta1 MPIJob.
    mpijob = kube.request("GET", f"{crds.CRD_PATH}/mpijobs.kubeflow.org")
    assert [v["name"] for v in mpijob["spec"]["versions"]] == ["v2beta1"]
    # Each CRD's kinds are served (discovery works for one of them).
    assert kube.plural_for(JOBSET_API, "JobSet") == ("jobsets", True)


def test_jobset_with_status_and_owned_ready_pod(kube: KubeTestClient, namespace: str) -> None:
    created = kube.create(make_jobset("train", namespace))
    assert "status" not in created or not created["status"]  # status subresource: dropped on create
    status = {
        "restarts": 0,
        "replicatedJobsStatus": [
            {"name": "driver", "ready": 1, "succeeded": 0, "failed": 0, "active": 1, "suspended": 0},
            {"name": "workers", "ready": 2, "succeeded": 0, "failed": 0, "active": 2, "suspended": 0},
        ],
    }
    updated = kube.set_status(created, status)
    assert updated["status"]["replicatedJobsStatus"][1]["ready"] == 2
    read_back = kube.get(JOBSET_API, "jobsets", "train", namespace)
    assert read_back["status"] == status
    assert read_back["spec"]["replicatedJobs"][1]["replicas"] == 2

    labels = {
        "jobset.sigs.k8s.io/jobset-name": "train",
        "jobset.sigs.k8s.io/replicatedjob-name": "workers",
        "jobset.sigs.k8s.io/job-index": "0",
    }
    pod = kube.make_pod(
        "train-workers-0-0-abcde", namespace, owner=read_back, labels=labels, gpus=8, node="gpu-node-x"
    )
    assert pod["status"]["phase"] == "Running"
    got = kube.get("v1", "pods", "train-workers-0-0-abcde", namespace)
    ref = got["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "JobSet",
        "train",
        read_back["metadata"]["uid"],
        True,
    )
    conditions = {c["type"]: c["status"] for c in got["status"]["conditions"]}
    assert conditions["Ready"] == "True"
    assert got["status"]["containerStatuses"][0]["ready"] is True
    assert got["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "8"
    assert got["spec"]["nodeName"] == "gpu-node-x"
    selected = kube.list("v1", "pods", namespace, label_selector="jobset.sigs.k8s.io/jobset-name=train")
    assert [p["metadata"]["name"] for p in selected] == ["train-workers-0-0-abcde"]


def test_pod_status_variants(kube: KubeTestClient, namespace: str) -> None:
    pending = kube.make_pod("p-pending", namespace, phase="Pending")
    assert pending["status"]["conditions"][0]["reason"] == "Unschedulable"
    crash = kube.make_pod("p-crash", namespace, node="n1", container_reason="CrashLoopBackOff", restarts=4)
    state = crash["status"]["containerStatuses"][0]
    assert state["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert state["restartCount"] == 4 and state["ready"] is False
    evicted = kube.make_pod("p-evicted", namespace, node="n1", phase="Failed", reason="Evicted")
    assert evicted["status"]["reason"] == "Evicted"
    done = kube.make_pod("p-done", namespace, node="n1", phase="Succeeded")
    assert done["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


def test_gpu_node(kube: KubeTestClient) -> None:
    name = f"gpu-node-{kube.create_namespace('n')}"  # unique: nodes are cluster-scoped
    kube.make_node(name, gpus=8, labels={"nvidia.com/gpu.product": "H100"})
    node = kube.get("v1", "nodes", name)
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert node["status"]["capacity"]["nvidia.com/gpu"] == "8"
    assert node["metadata"]["labels"]["nvidia.com/gpu.product"] == "H100"
    assert node["status"]["conditions"][0]["type"] == "Ready"
    # the admission plugin's not-ready taint is gone, as the node lifecycle controller would do
    assert not any(t["key"] == "node.kubernetes.io/not-ready" for t in node["spec"].get("taints") or [])


def test_rbac_reader_sees_only_what_it_was_granted(
    cluster: TestCluster, kube: KubeTestClient, namespace: str
) -> None:
    kube.create(make_jobset("visible", namespace))
    kube.grant("reader", [rule(["jobset.x-k8s.io"], ["jobsets"], ["get", "list"])], namespace)
    with kube.as_user(cluster.token("reader")) as reader:
        names = [j["metadata"]["name"] for j in reader.list(JOBSET_API, "jobsets", namespace)]
        assert names == ["visible"]
        assert reader.get(JOBSET_API, "jobsets", "visible", namespace)["kind"] == "JobSet"
        with pytest.raises(KubeApiError) as denied:
            reader.list("v1", "secrets", namespace)
        assert denied.value.status_code == 403
        assert reader.status_of("GET", f"/apis/{KARTA_API}/kartas") == 403
        assert reader.status_of("GET", f"/apis/{JOBSET_API}/namespaces/default/jobsets") == 403
    with kube.as_user(cluster.token("nobody")) as nobody:
        assert nobody.status_of("GET", f"/apis/{JOBSET_API}/namespaces/{namespace}/jobsets") == 403
    with kube.as_user("not-a-token") as stranger:
        assert stranger.status_of("GET", "/api/v1/namespaces") == 401


def test_client_certificate_auth(cluster: TestCluster, kube: KubeTestClient, namespace: str) -> None:
    cert = cluster.issue_client_cert("cert-user", ["wmap:cert-group"])
    kube.grant("wmap:cert-group", [rule([""], ["pods"], ["list"])], namespace, subject_kind="Group")
    kube.make_pod("p", namespace)
    with KubeTestClient(cluster.server, None, cluster.ca_file, client_cert=cert) as by_cert:
        assert [p["metadata"]["name"] for p in by_cert.list("v1", "pods", namespace)] == ["p"]
        with pytest.raises(KubeApiError) as denied:
            by_cert.list("v1", "secrets", namespace)
    assert denied.value.status_code == 403
    assert 'User "cert-user"' in str(denied.value)


def test_kubeconfig(cluster: TestCluster, tmp_path: Path) -> None:
    path = cluster.write_kubeconfig(tmp_path / "kubeconfig", user="reader", namespace="ns1")
    config = yaml.safe_load(path.read_text())
    assert config["current-context"] == "wmap-test"
    assert config["clusters"][0]["cluster"] == {
        "server": cluster.server,
        "certificate-authority": str(cluster.ca_file),
    }
    assert config["users"][0] == {"name": "reader", "user": {"token": cluster.token("reader")}}
    assert config["contexts"][0]["context"]["namespace"] == "ns1"
    crt, key = cluster.issue_client_cert("someone")
    insecure = cluster.write_kubeconfig(
        tmp_path / "k2", user="someone", client_cert=(crt, key), insecure=True
    )
    config = yaml.safe_load(insecure.read_text())
    assert config["clusters"][0]["cluster"]["insecure-skip-tls-verify"] is True
    assert config["users"][0]["user"] == {"client-certificate": str(crt), "client-key": str(key)}


def test_restart_apiserver_keeps_data(cluster: TestCluster, kube: KubeTestClient, namespace: str) -> None:
    obj = kube.create(copy.deepcopy(make_jobset("survivor", namespace)))
    cluster.restart_apiserver()
    again = kube.get(JOBSET_API, "jobsets", "survivor", namespace)
    assert again["metadata"]["uid"] == obj["metadata"]["uid"]
    with httpx.Client(base_url=cluster.server, verify=cluster.ssl_context()) as http:
        assert http.get("/readyz", headers={"Authorization": f"Bearer {cluster.admin_token}"}).text == "ok"


def test_a_port_taken_before_etcd_binds_it_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    """free_port() releases its port before etcd binds it; CI once lost that race to another test."""
    import socket

    from tests.support import cluster as cluster_module

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = int(taken.getsockname()[1])
        handed_out: list[int] = []
        real_free_port = cluster_module.free_port

        def first_busy() -> int:
            port = busy if not handed_out else real_free_port()
            handed_out.append(port)
            return port

        monkeypatch.setattr(cluster_module, "free_port", first_busy)
        with TestCluster() as second:
            assert second.etcd_port != busy
            assert handed_out[0] == busy
            assert "address already in use" in (second._path("etcd.log")).read_text()
