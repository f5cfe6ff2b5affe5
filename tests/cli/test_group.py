"""``wmap group`` on the test API server: KAI's owner walk on chains the controllers create, the
whole PodGroup accepted by KAI's real PodGroup CRD (server-side dry-run), and the offline ``-f``
mode giving the same answer from a ``kubectl get -o yaml`` List."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from tests.cli.helpers import wmap
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient, owner_reference

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.usefixtures("bundled_catalog"),
]  # its gang rules are under test


@pytest.fixture
def kc(cluster: TestCluster, karta_crd: str, namespace: str, tmp_path: Path) -> str:
    return str(cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin", namespace=namespace))


def _pod_template(labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "main", "image": "vllm:1"}]}}


def _statefulset(
    name: str, namespace: str, owner: dict[str, Any], replicas: int, labels: dict[str, str]
) -> Any:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace, "ownerReferences": [owner_reference(owner)]},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": labels},
            "template": _pod_template(labels),
        },
    }


def _lws_chain(kube: KubeTestClient, namespace: str, size: int = 4) -> tuple[dict[str, Any], ...]:
    """LWS -> leader StatefulSet <lws> -> leader Pod <lws>-0 -> worker StatefulSet <lws>-0 ->
    worker Pod <lws>-0-1, with the labels the LWS pod webhook sets (framework-shapes.md 2)."""
    name = "vllm"
    lws = kube.create(
        {
            "apiVersion": "leaderworkerset.x-k8s.io/v1",
            "kind": "LeaderWorkerSet",
            "metadata": {"name": name, "namespace": namespace, "labels": {"kai.scheduler/queue": "team-a"}},
            "spec": {
                "replicas": 1,
                "leaderWorkerTemplate": {"size": size, "workerTemplate": _pod_template({})},
            },
        }
    )
    base = {"leaderworkerset.sigs.k8s.io/name": name}
    leader_sts = kube.create(_statefulset(name, namespace, lws, 1, base))
    group = {**base, "leaderworkerset.sigs.k8s.io/group-index": "0"}
    leader = kube.make_pod(
        f"{name}-0",
        namespace,
        owner=leader_sts,
        labels={**group, "leaderworkerset.sigs.k8s.io/worker-index": "0"},
    )
    worker_sts = kube.create(_statefulset(f"{name}-0", namespace, leader, size - 1, group))
    worker = kube.make_pod(
        f"{name}-0-1",
        namespace,
        owner=worker_sts,
        labels={**group, "leaderworkerset.sigs.k8s.io/worker-index": "1"},
    )
    return lws, leader_sts, leader, worker_sts, worker


def _dry_run(kube: KubeTestClient, namespace: str, pg: dict[str, Any]) -> None:
    plural, _ = kube.plural_for("scheduling.run.ai/v2alpha2", "PodGroup")
    assert plural == "podgroups"
    r = kube.raw(
        "POST",
        f"/apis/scheduling.run.ai/v2alpha2/namespaces/{namespace}/podgroups",
        pg,
        params={"dryRun": "All"},
    )
    assert r.status_code == 201, r.text


def test_lws_worker_pod_climbs_the_real_chain(kube: KubeTestClient, namespace: str, kc: str) -> None:
    lws, *_, worker = _lws_chain(kube, namespace)
    rc, out, err = wmap("group", worker["metadata"]["name"], "-o", "yaml", "--kubeconfig", kc)
    assert rc == 0, err
    pg = yaml.safe_load(out)
    uid = lws["metadata"]["uid"]
    assert pg["apiVersion"] == "scheduling.run.ai/v2alpha2" and pg["kind"] == "PodGroup"
    assert pg["metadata"]["name"] == f"pg-vllm-{uid}-group-0"
    assert pg["metadata"]["ownerReferences"] == [
        {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "name": "vllm", "uid": uid}
    ]
    assert pg["metadata"]["labels"] == {"kai.scheduler/queue": "team-a"}
    assert "kai.scheduler/top-owner-metadata" in pg["metadata"]["annotations"]
    assert pg["spec"]["queue"] == "team-a" and pg["spec"]["priorityClassName"] == "train"
    assert pg["spec"]["minMember"] == 4
    assert pg["spec"]["subGroups"] == [
        {"name": "leader", "minMember": 1},
        {"name": "workers", "minMember": 3},
    ]
    _dry_run(kube, namespace, pg)  # KAI's own CRD accepts it
    rc, out, _ = wmap("group", worker["metadata"]["name"], "--kubeconfig", kc)
    assert rc == 0 and "LeaderWorkerSet/vllm" in out and "workers" in out and "yes" in out


def test_offline_file_gives_the_live_answer(
    kube: KubeTestClient, namespace: str, kc: str, tmp_path: Path
) -> None:
    objs = _lws_chain(kube, namespace)
    worker = objs[-1]["metadata"]["name"]
    rc, live, err = wmap("group", worker, "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    # What `kubectl get lws,sts,pods -o yaml` prints: a List of the live objects.
    items = [kube.get_obj(o) for o in objs]
    listing = tmp_path / "objects.yaml"
    listing.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    rc, offline, err = wmap("group", worker, "-f", str(listing), "-o", "json")
    assert rc == 0, err
    assert orjson.loads(offline) == orjson.loads(live)
    rc, _, err = wmap("group", "missing", "-f", str(listing))
    assert rc == 3 and "missing" in err


def test_first_owner_reference_is_followed_without_controller(
    kube: KubeTestClient, namespace: str, kc: str
) -> None:
    lws, *_ = _lws_chain(kube, namespace, size=2)
    pod = kube.make_pod("side", namespace, owners=[lws])
    rc, out, err = wmap("group", "side", "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    assert orjson.loads(out)["metadata"]["ownerReferences"][0]["uid"] == lws["metadata"]["uid"]
    assert pod["metadata"]["name"] == "side"


def test_pod_without_owner_is_its_own_top_owner(kube: KubeTestClient, namespace: str, kc: str) -> None:
    pod = kube.make_pod("lonely", namespace, labels={"priorityClassName": "no-such-class"})
    rc, out, err = wmap("group", "lonely", "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    pg = orjson.loads(out)
    assert pg["metadata"]["name"] == f"pg-lonely-{pod['metadata']['uid']}"
    assert pg["spec"]["minMember"] == 1 and pg["spec"]["queue"] == "default-queue"
    # KAI keeps a priority class only if it exists.
    assert pg["spec"]["priorityClassName"] == "train"
    _dry_run(kube, namespace, pg)


def test_an_owner_with_two_owners_is_an_error(kube: KubeTestClient, namespace: str, kc: str) -> None:
    lws, leader_sts, *_ = _lws_chain(kube, namespace, size=2)
    other = kube.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": namespace}}
    )
    cm = kube.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "two-owners",
                "namespace": namespace,
                "ownerReferences": [
                    owner_reference(lws, controller=False),
                    owner_reference(other, controller=False),
                ],
            },
        }
    )
    kube.make_pod("p2", namespace, owners=[cm])
    rc, _, err = wmap("group", "p2", "--kubeconfig", kc)
    assert rc == 1 and "multiple owners" in err and leader_sts
