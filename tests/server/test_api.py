"""wmap serve's REST API, in process (ASGI test client), against the real test API server."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.cli.helpers import RUNNING_JOBSET_STATUS, jobset, pytorchjob
from tests.server.conftest import AppFactory
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient, rule
from tests.support.seed import JOBSET_ROLE, jobset_pods

Headers = Callable[[str], dict[str, str]]
REPO = Path(__file__).resolve().parents[2]
ROLE = JOBSET_ROLE


@pytest.fixture(scope="module")
def ro(make_app: AppFactory) -> TestClient:
    return make_app(enable_writes=False)


@pytest.fixture(scope="module")
def rw(make_app: AppFactory) -> TestClient:
    return make_app(enable_writes=True)


def seed(
    kube: KubeTestClient, ns: str, name: str, *, pods: bool = True, labels: dict[str, str] | None = None
) -> Any:
    js = kube.create(jobset(name, ns, labels=labels))
    js = kube.set_status(js, RUNNING_JOBSET_STATUS)
    if pods:
        replicas = ((f"{name}-leader-0", "leader", "n1"), (f"{name}-workers-0", "workers", "n1"))
        jobset_pods(kube, js, replicas, gpus=4, cpu="4", memory="16Gi")
    return js


def widget_karta(name: str, kind: str = "Widget") -> dict[str, Any]:
    return {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {
            "structureDefinition": {
                "rootComponent": {
                    "name": "widget",
                    "kind": {"group": "example.com", "version": "v1", "kind": kind},
                    "statusDefinition": {
                        "phaseDefinition": {"path": ".status.phase"},
                        "statusMappings": {"running": [{"byPhase": "Running"}]},
                    },
                    "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                    "scaleDefinition": {"replicasPath": ".spec.replicas"},
                }
            }
        },
    }


# --- health, OpenAPI, authentication ------------------------------------------------------------


def test_health_and_openapi_equals_repo_file(ro: TestClient) -> None:
    assert ro.get("/healthz").json() == {"status": "ok"}
    served = ro.get("/openapi.json").json()
    assert served == json.loads((REPO / "openapi" / "openapi.json").read_text())


def test_readyz_once_synced(ro: TestClient, kube: KubeTestClient) -> None:
    kube.wait_until(lambda: ro.get("/readyz").status_code == 200, timeout=60)
    body = ro.get("/readyz").json()
    assert body["status"] == "ready" and body["checks"]["informers"] > 1


def test_missing_and_invalid_token_401(ro: TestClient) -> None:
    r = ro.get("/api/v1/workloads")
    assert r.status_code == 401 and r.json()["error"] == "unauthorized"
    assert r.headers["www-authenticate"] == "Bearer"
    r = ro.get("/api/v1/workloads", headers={"Authorization": "Bearer not-a-real-token"})
    assert r.status_code == 401
    assert set(r.json()) >= {"error", "message", "hint", "status"}


def test_whoami_token_review(ro: TestClient, bearer: Headers) -> None:
    body = ro.get("/api/v1/whoami", headers=bearer("reader")).json()
    assert body["username"] == "reader"
    assert "wmap:readers" in body["groups"] and body["writesEnabled"] is False


def test_unknown_route_json_404(ro: TestClient) -> None:
    r = ro.get("/api/v1/nope")
    assert r.status_code == 404 and r.json()["error"] == "not_found"


# --- workload types -----------------------------------------------------------------------------


def test_types_list_has_catalog_and_served_kinds(ro: TestClient, bearer: Headers) -> None:
    body = ro.get("/api/v1/workload-types", headers=bearer("admin")).json()
    by_kind = {t["kind"]: t for t in body["items"]}
    js = by_kind["JobSet"]
    assert js["origin"] == "catalog" and js["valid"] and js["served"]
    assert js["resource"] == {"name": "jobsets", "namespaced": True}
    assert js["suspendable"] is True
    assert body["count"] == len(body["items"])
    one = ro.get(f"/api/v1/workload-types/{js['name']}", headers=bearer("admin")).json()
    assert one["karta"]["spec"]["structureDefinition"]["rootComponent"]["kind"]["kind"] == "JobSet"


def test_register_type_one_call(
    rw: TestClient, ro: TestClient, bearer: Headers, kube: KubeTestClient
) -> None:
    karta = widget_karta("widgets-example-com")
    r = rw.post("/api/v1/workload-types", json=karta, headers=bearer("admin"))
    assert r.status_code == 201, r.text
    assert r.json()["origin"] == "cluster" and r.json()["gvk"] == "example.com/v1, Kind=Widget"
    stored = kube.get("run.ai/v1alpha1", "kartas", "widgets-example-com")
    assert stored["spec"]["structureDefinition"]["rootComponent"]["kind"]["kind"] == "Widget"
    try:
        # same GVK again, under another name -> 409
        again = rw.post("/api/v1/workload-types", json=widget_karta("other"), headers=bearer("admin"))
        assert again.status_code == 409 and again.json()["error"] == "already_exists"
        # listed (merged) with origin cluster
        kube.wait_until(
            lambda: any(
                t["name"] == "widgets-example-com"
                for t in rw.get("/api/v1/workload-types?origin=cluster", headers=bearer("admin")).json()[
                    "items"
                ]
            ),
            timeout=10,
        )
        # read-only server refuses writes
        ro_r = ro.delete("/api/v1/workload-types/widgets-example-com", headers=bearer("admin"))
        assert ro_r.status_code == 403 and ro_r.json()["error"] == "writes_disabled"
        # nobody may not create kartas
        nob = rw.post("/api/v1/workload-types", json=widget_karta("x", "Gadget"), headers=bearer("nobody"))
        assert nob.status_code == 403 and nob.json()["error"] == "forbidden"
    finally:
        d = rw.delete("/api/v1/workload-types/widgets-example-com", headers=bearer("admin"))
    assert d.status_code == 200, d.text
    assert kube.status_of("GET", "/apis/run.ai/v1alpha1/kartas/widgets-example-com") == 404


def test_register_without_name_and_dry_run(rw: TestClient, bearer: Headers, kube: KubeTestClient) -> None:
    karta = widget_karta("ignored", "Sprocket")
    del karta["metadata"]
    r = rw.post("/api/v1/workload-types?dryRun=true", json=karta, headers=bearer("admin"))
    assert r.status_code == 200, r.text
    assert r.json()["name"] == "example-com-sprocket-v1"
    assert kube.status_of("GET", "/apis/run.ai/v1alpha1/kartas/example-com-sprocket-v1") == 404


def test_register_invalid_karta_422_with_findings(rw: TestClient, bearer: Headers) -> None:
    karta = widget_karta("broken", "Broken")
    del karta["spec"]["structureDefinition"]["rootComponent"]["statusDefinition"]
    r = rw.post("/api/v1/workload-types", json=karta, headers=bearer("admin"))
    assert r.status_code == 422
    body = r.json()
    assert body["error"] == "invalid_definition"
    assert any(f["code"] == "KARTA005" for f in body["findings"])
    wrong = copy.deepcopy(widget_karta("broken2", "Broken"))
    wrong["spec"]["structureDefinition"]["rootComponent"]["name"] = 7
    r = rw.post("/api/v1/workload-types", json=wrong, headers=bearer("admin"))
    assert r.status_code == 422 and r.json()["findings"]


def test_catalog_type_cannot_be_deleted(rw: TestClient, bearer: Headers) -> None:
    r = rw.delete("/api/v1/workload-types/jobset-x-k8s-io-jobset-v1alpha2", headers=bearer("admin"))
    assert r.status_code == 409 and r.json()["error"] == "builtin_type"


def flatten(components: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for c in components:
        out[c["name"]] = c
        out.update(flatten(c.get("children", [])))
    return out


# --- workloads ----------------------------------------------------------------------------------


def _list(client: TestClient, headers: dict[str, str], **params: Any) -> Any:
    r = client.get("/api/v1/workloads", params=params, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()


def test_list_filter_paginate_sort(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    seed(kube, namespace, "alpha", labels={"team": "a"})
    seed(kube, namespace, "bravo", pods=False, labels={"team": "b"})
    seed(kube, namespace, "charlie", pods=False, labels={"team": "a"})
    kube.create(pytorchjob("torch", namespace))
    admin = bearer("admin")
    try:
        kube.wait_until(lambda: _list(ro, admin, namespace=namespace)["total"] == 4, timeout=20)
    except TimeoutError:
        raise AssertionError(_list(ro, admin, namespace=namespace)) from None
    body = _list(ro, admin, namespace=namespace, type="jobsets", sort="name")
    assert [i["name"] for i in body["items"]] == ["alpha", "bravo", "charlie"]
    alpha = body["items"][0]
    assert alpha["kind"] == "JobSet" and alpha["namespace"] == namespace
    assert alpha["resources"]["gpus"] == 12 and alpha["ageSeconds"] is not None
    assert {c["name"]: (c["ready"], c["desired"]) for c in alpha["components"]} == {
        "leader": (1, 1),
        "workers": (1, 2),
    }
    assert alpha["pods"] == {"ready": 2, "total": 2}
    # labels, phase and kinds
    assert [
        i["name"] for i in _list(ro, admin, namespace=namespace, labelSelector="team=a", sort="name")["items"]
    ] == [
        "alpha",
        "charlie",
    ]
    kinds = _list(ro, admin, namespace=namespace, type="PyTorchJob")["items"]
    assert [i["kind"] for i in kinds] == ["PyTorchJob"]
    running = _list(ro, admin, namespace=namespace, type="jobset", phase="Running")
    assert {i["name"] for i in running["items"]} <= {"alpha", "bravo", "charlie"}
    assert all("Running" in i["phases"] for i in running["items"])
    # pages
    first = _list(ro, admin, namespace=namespace, limit=3, sort="-name")
    assert [i["name"] for i in first["items"]] == ["torch", "charlie", "bravo"]
    assert first["total"] == 4 and first["continue"]
    second = _list(ro, admin, namespace=namespace, limit=3, sort="-name", **{"continue": first["continue"]})
    assert [i["name"] for i in second["items"]] == ["alpha"] and second["continue"] is None
    bad = ro.get(
        "/api/v1/workloads",
        params={"namespace": namespace, "limit": 3, "sort": "name", "continue": first["continue"]},
        headers=admin,
    )
    assert bad.status_code == 400
    assert ro.get("/api/v1/workloads?type=nosuchkind", headers=admin).status_code == 404
    assert ro.get("/api/v1/workloads?labelSelector=a%20in%20(", headers=admin).status_code == 400


def test_detail_tree_and_pods(ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str) -> None:
    seed(kube, namespace, "train")
    r = ro.get(f"/api/v1/namespaces/{namespace}/workloads/jobset/train", headers=bearer("admin"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["fileMode"] is False and body["name"] == "train"
    comps = flatten(body["components"])
    assert comps["leader"]["replicas"] == {"desired": 1, "current": 1, "ready": 1}
    assert [p["name"] for p in comps["leader"]["pods"]] == ["train-leader-0"]
    missing = ro.get(f"/api/v1/namespaces/{namespace}/workloads/jobset/nope", headers=bearer("admin"))
    assert missing.status_code == 404


def test_suspend_resume_jobset(
    rw: TestClient, ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    seed(kube, namespace, "pausable", pods=False)
    url = f"/api/v1/namespaces/{namespace}/workloads/jobsets/pausable"
    admin = bearer("admin")
    # read-only server: 403, a dry run too (it obeys --enable-writes like any write)
    denied = ro.post(url + "/suspend", headers=admin)
    assert denied.status_code == 403 and denied.json()["error"] == "writes_disabled"
    denied_dry = ro.post(url + "/suspend?dryRun=true", headers=admin)
    assert denied_dry.status_code == 403 and denied_dry.json()["error"] == "writes_disabled"
    # a server with writes shows the patch of a dry run and changes nothing
    dry = rw.post(url + "/suspend?dryRun=true", headers=admin).json()
    assert dry["dryRun"] is True and dry["changed"] is True
    assert dry["patchType"] == "merge" and dry["patch"] == {"spec": {"suspend": True}}
    assert not kube.get("jobset.x-k8s.io/v1alpha2", "jobsets", "pausable", namespace)["spec"].get("suspend")
    # with writes
    r = rw.post(url + "/suspend", headers=admin)
    assert r.status_code == 200, r.text
    assert kube.get("jobset.x-k8s.io/v1alpha2", "jobsets", "pausable", namespace)["spec"]["suspend"] is True
    assert r.json()["workload"]["name"] == "pausable"
    r = rw.post(url + "/resume", headers=admin)
    assert r.status_code == 200, r.text
    assert kube.get("jobset.x-k8s.io/v1alpha2", "jobsets", "pausable", namespace)["spec"]["suspend"] is False
    # nobody may not patch
    assert rw.post(url + "/suspend", headers=bearer("nobody")).status_code == 403


def test_rbac_nobody_and_namespace_scoped_reader(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, cluster: TestCluster
) -> None:
    ns_a = kube.create_namespace("wmap-srv-a")
    ns_b = kube.create_namespace("wmap-srv-b")
    seed(kube, ns_a, "mine")
    seed(kube, ns_b, "theirs", pods=False)
    kube.grant("reader", [rule(["jobset.x-k8s.io"], ["jobsets"], ["get", "list", "watch"])], ns_a)
    kube.grant("reader", [rule([""], ["pods"], ["get", "list"])], ns_a)
    admin = bearer("admin")
    kube.wait_until(
        lambda: _list(ro, admin, namespace=[ns_a, ns_b], type="jobsets")["total"] == 2, timeout=20
    )
    # nobody: 403 on a type they cannot list, and an empty list otherwise
    r = ro.get("/api/v1/workloads", params={"type": "jobsets", "namespace": ns_a}, headers=bearer("nobody"))
    assert r.status_code == 403 and r.json()["error"] == "forbidden"
    assert _list(ro, bearer("nobody"), namespace=ns_a)["items"] == []
    assert (
        ro.get(f"/api/v1/namespaces/{ns_a}/workloads/jobsets/mine", headers=bearer("nobody")).status_code
        == 403
    )
    # reader sees only namespace A
    body = _list(ro, bearer("reader"), namespace=[ns_a, ns_b])
    assert [(i["namespace"], i["name"]) for i in body["items"]] == [(ns_a, "mine")]
    assert body["items"][0]["pods"] == {"ready": 2, "total": 2}
    assert (
        ro.get(f"/api/v1/namespaces/{ns_a}/workloads/jobsets/mine", headers=bearer("reader")).status_code
        == 200
    )
    assert (
        ro.get(f"/api/v1/namespaces/{ns_b}/workloads/jobsets/theirs", headers=bearer("reader")).status_code
        == 403
    )


def test_placement_and_podgroup(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    manifest = jobset("plan", namespace)
    r = ro.post("/api/v1/placement", json=manifest, headers=bearer("reader"))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["definition"] == "jobset-x-k8s-io-jobset-v1alpha2" and body["origin"] == "catalog"
    assert body["totals"]["desiredPods"] == 3 and body["totals"]["desired"]["gpus"] == 12
    assert body["gangs"]
    unknown = ro.post(
        "/api/v1/placement", json={"apiVersion": "example.com/v1", "kind": "Nope"}, headers=bearer("reader")
    )
    assert unknown.status_code == 404 and unknown.json()["error"] == "no_definition_for_type"
    assert ro.post("/api/v1/placement", content=b"{", headers=bearer("reader")).status_code == 400
    seed(kube, namespace, "gang")
    r = ro.get(f"/api/v1/namespaces/{namespace}/pods/gang-workers-0/podgroup", headers=bearer("admin"))
    assert r.status_code == 200, r.text
    pg = r.json()
    assert pg["topOwner"]["kind"] == "JobSet" and pg["topOwner"]["name"] == "gang"
    assert pg["podGroup"]["name"] and pg["podGroup"]["minAvailable"] >= 1
    assert pg["object"]["kind"] == "PodGroup" and pg["object"]["metadata"]["name"] == pg["podGroup"]["name"]
    nob = ro.get(f"/api/v1/namespaces/{namespace}/pods/gang-workers-0/podgroup", headers=bearer("nobody"))
    assert nob.status_code == 403


def test_podgroup_of_an_mpijob_waiting_for_its_workers(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    """KAI's MPIJob grouper lists the launcher pods (tests/cli/test_group_mpi_launcher.py): the
    REST answer equals ``wmap group``'s, the launcher subtracted until its pod exists."""
    replica = {"template": {"spec": {"containers": [{"name": "mpi", "image": "x"}]}}}
    job = kube.create(
        {
            "apiVersion": "kubeflow.org/v2beta1",
            "kind": "MPIJob",
            "metadata": {"name": "mpi", "namespace": namespace},
            "spec": {
                "launcherCreationPolicy": "WaitForWorkersReady",
                "mpiReplicaSpecs": {
                    "Launcher": {"replicas": 1, **replica},
                    "Worker": {"replicas": 2, **replica},
                },
            },
        }
    )
    labels = {"training.kubeflow.org/job-name": "mpi"}
    worker = {**labels, "training.kubeflow.org/job-role": "worker"}
    kube.make_pod("mpi-worker-0", namespace, owner=job, labels=worker)
    path = f"/api/v1/namespaces/{namespace}/pods/mpi-worker-0/podgroup"
    r = ro.get(path, headers=bearer("admin"))
    assert r.status_code == 200, r.text
    assert r.json()["object"]["spec"]["minMember"] == 2
    kube.make_pod("mpi-launcher-x7k2p", namespace, owner=job,
                  labels={**labels, "training.kubeflow.org/job-role": "launcher"})  # fmt: skip
    assert ro.get(path, headers=bearer("admin")).json()["object"]["spec"]["minMember"] == 3


# --- cluster-scoped kinds -------------------------------------------------------------------------

#: A test-only cluster-scoped workload kind (no cluster-scoped workload CRD in the shared corpus).
CLUSTER_GADGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "clustergadgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Cluster",
        "names": {
            "plural": "clustergadgets",
            "singular": "clustergadget",
            "kind": "ClusterGadget",
            "listKind": "ClusterGadgetList",
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
}


def test_cluster_scoped_workload_detail_and_suspend(
    rw: TestClient, bearer: Headers, kube: KubeTestClient
) -> None:
    from tests.support import crds

    if kube.status_of("GET", f"{crds.CRD_PATH}/clustergadgets.example.com") == 404:
        crds.install_crds(kube, [CLUSTER_GADGET_CRD])
    kube.plural_for("example.com/v1", "ClusterGadget")
    admin = bearer("admin")
    karta = widget_karta("clustergadgets-example-com", "ClusterGadget")
    karta["spec"]["structureDefinition"]["rootComponent"]["suspendDefinition"] = {
        "suspendActions": [{"path": ".spec.suspend", "value": "true"}],
        "resumeActions": [{"path": ".spec.suspend", "value": "false"}],
    }
    r = rw.post("/api/v1/workload-types", json=karta, headers=admin)
    assert r.status_code == 201, r.text
    gadget = kube.create(
        {
            "apiVersion": "example.com/v1",
            "kind": "ClusterGadget",
            "metadata": {"name": "gadget-one"},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}},
        }
    )
    try:
        kube.set_status(gadget, {"phase": "Running"})
        url = "/api/v1/workloads/clustergadgets/gadget-one"

        def served() -> Any:
            resp = rw.get(url, headers=admin)
            return resp if resp.status_code == 200 else None

        detail = kube.wait_until(served, timeout=30)  # the server's discovery learns the new kind
        body = detail.json()
        assert body["name"] == "gadget-one" and body["kind"] == "ClusterGadget"
        assert not body.get("namespace")
        # a namespaced type on the cluster-scoped route: 404 naming the namespaced route
        wrong = rw.get("/api/v1/workloads/jobsets/gadget-one", headers=admin)
        assert wrong.status_code == 404 and "namespaced" in wrong.json()["message"]
        dry = rw.post(url + "/suspend?dryRun=true", headers=admin).json()
        assert dry["changed"] is True and dry["patch"] == {"spec": {"suspend": True}}
        s = rw.post(url + "/suspend", headers=admin)
        assert s.status_code == 200, s.text
        assert kube.get_obj(gadget)["spec"]["suspend"] is True
        s = rw.post(url + "/resume", headers=admin)
        assert s.status_code == 200, s.text
        assert kube.get_obj(gadget)["spec"]["suspend"] is False
        assert rw.post(url + "/suspend", headers=bearer("nobody")).status_code == 403
    finally:
        kube.delete_obj(gadget)
        rw.delete("/api/v1/workload-types/clustergadgets-example-com", headers=admin)


# --- the UI's extra reads: manifest, namespaces, nodes ------------------------------------------


def test_manifest_is_the_stored_object_without_managed_fields(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    seed(kube, namespace, "yamlview", pods=False)
    path = f"/api/v1/namespaces/{namespace}/workloads/jobsets/yamlview/manifest"
    r = ro.get(path, headers=bearer("admin"))
    assert r.status_code == 200, r.text
    body = r.json()
    stored = kube.get("jobset.x-k8s.io/v1alpha2", "jobsets", "yamlview", namespace)
    assert "managedFields" in stored["metadata"] and "managedFields" not in body["metadata"]
    stored["metadata"].pop("managedFields")
    assert body == stored
    assert ro.get(path, headers=bearer("nobody")).status_code == 403
    assert ro.get(path.replace("yamlview", "nope"), headers=bearer("admin")).status_code == 404


def test_namespaces_for_the_picker(ro: TestClient, bearer: Headers, namespace: str) -> None:
    body = ro.get("/api/v1/namespaces", headers=bearer("admin")).json()
    assert (
        body["source"] == "cluster" and namespace in body["items"] and body["items"] == sorted(body["items"])
    )
    assert ro.get("/api/v1/namespaces", headers=bearer("nobody")).json() == {"items": [], "source": "none"}
    assert ro.get("/api/v1/namespaces").status_code == 401


def test_node_page_shows_capacity_and_only_the_pods_the_user_may_list(
    ro: TestClient, bearer: Headers, kube: KubeTestClient
) -> None:
    import secrets

    node = f"gpu-{secrets.token_hex(3)}"
    kube.make_node(node, gpus=8, taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])
    mine = kube.create_namespace("wmap-node-a")
    theirs = kube.create_namespace("wmap-node-b")
    kube.make_pod("crash", mine, node=node, container_reason="CrashLoopBackOff", restarts=3)
    kube.make_pod("other", theirs, node=node)
    kube.make_pod("elsewhere", mine, node="not-this-one")
    kube.grant("reader", [rule([""], ["nodes"], ["get"])])
    kube.grant("reader", [rule([""], ["pods"], ["get", "list"])], mine)
    admin = kube.wait_until(
        lambda: (
            (b := ro.get(f"/api/v1/nodes/{node}", headers=bearer("admin")).json())
            and len(b.get("pods", [])) == 2
            and b
        ),
        timeout=20,
    )
    assert admin["allocatable"]["nvidia.com/gpu"] == "8" and admin["taints"][0]["key"] == "nvidia.com/gpu"
    assert {(p["namespace"], p["name"]) for p in admin["pods"]} == {(mine, "crash"), (theirs, "other")}
    reader = ro.get(f"/api/v1/nodes/{node}", headers=bearer("reader")).json()
    assert [(p["name"], p["status"], p["restarts"]) for p in reader["pods"]] == [
        ("crash", "CrashLoopBackOff", 3)
    ]
    assert reader["podsHidden"] >= 1
    assert ro.get(f"/api/v1/nodes/{node}", headers=bearer("nobody")).status_code == 403
    assert ro.get("/api/v1/nodes/no-such-node", headers=bearer("admin")).status_code == 404


def test_other_types_read_generically(
    ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    from tests.support.seed import seed_gizmos

    group = seed_gizmos(kube, namespace)
    admin = bearer("admin")
    types = kube.wait_until(
        lambda: [
            t for t in ro.get("/api/v1/other-types", headers=admin).json()["items"] if t["group"] == group
        ],
        timeout=30,
    )
    assert types == [
        {"kind": "Gizmo", "group": group, "version": "v1", "resource": "gizmos", "namespaced": True}
    ]
    kinds = {t["kind"] for t in ro.get("/api/v1/other-types", headers=admin).json()["items"]}
    assert "JobSet" not in kinds and "LeaderWorkerSet" not in kinds  # covered by definitions
    path = f"/api/v1/generic/gizmos.{group}"
    body = kube.wait_until(
        lambda: (
            (b := ro.get(path, params={"namespace": namespace}, headers=admin).json())
            and (b["items"] and next(i for i in b["items"] if i["name"] == "ready")["pods"]["total"] == 2)
            and b
        ),
        timeout=30,
    )
    by_name = {i["name"]: i for i in body["items"]}
    assert by_name["ready"]["phases"] == ["Running"] and by_name["ready"]["resources"]["gpus"] == 4
    assert by_name["stalled"]["kstatus"] == {"status": "Failed", "message": "quota exceeded"}
    assert by_name["behind"]["phases"] == ["Initializing"] and by_name["leaving"]["phases"] == ["Undefined"]
    assert all(i["origin"] == "generic" for i in body["items"]) and body["generic"] is True
    assert ro.get(path, params={"namespace": namespace}, headers=bearer("nobody")).status_code == 403
    assert ro.get("/api/v1/generic/nosuchthings", headers=admin).status_code == 404
