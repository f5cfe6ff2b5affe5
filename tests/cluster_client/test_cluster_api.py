"""workload_map.cluster against the real kube-apiserver v1.20 of tests.support (etcd + apiserver)."""

from __future__ import annotations

import base64
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml

from tests.cluster_client.plugins import runs, write_plugin
from tests.support.crds import schemaless_crd
from workload_map.cluster import (
    ConnectionOptions,
    Discovery,
    KubeClient,
    load_cluster_config,
    make_owner_lookup,
)
from workload_map.cluster.auth import ExecCredentialProvider
from workload_map.errors import (
    ConflictError,
    ConnectionFailedError,
    ForbiddenError,
    GoneError,
    NotFoundError,
    UnauthorizedError,
    UnknownResourceTypeError,
)

pytestmark = pytest.mark.cluster

JOBSET_API = "jobset.x-k8s.io/v1alpha2"


def client_for(kubeconfig: Path, **opts: Any) -> KubeClient:
    return KubeClient(load_cluster_config(ConnectionOptions(kubeconfig=str(kubeconfig), **opts), environ={}))


def cm(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def grant(admin: KubeClient, ns: str, user: str, resources: list[str], verbs: list[str]) -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": f"g-{user}"},
        "rules": [{"apiGroups": [""], "resources": resources, "verbs": verbs}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": f"g-{user}"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"g-{user}"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }
    admin.create(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", role)
    admin.create(f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", binding)


# ---------------------------------------------------------------------------------- authentication


def test_token_auth_and_context_namespace(cluster: Any, tmp_path: Path) -> None:
    path = cluster.write_kubeconfig(tmp_path / "kc", user="admin", namespace="kube-system")
    with client_for(path) as client:
        assert client.namespace == "kube-system"
        assert client.server_version()["gitVersion"] == "v1.20.2"
        names = {n["metadata"]["name"] for n in client.list_all("/api/v1/namespaces")}
        assert {"default", "kube-system"} <= names


def test_bad_token_is_unauthorized(cluster: Any, tmp_path: Path) -> None:
    path = cluster.write_kubeconfig(tmp_path / "kc", token="not-a-token")
    with client_for(path) as client, pytest.raises(UnauthorizedError) as info:
        client.get("/api/v1/namespaces")
    assert info.value.status == 401 and info.value.message == "Unauthorized"


def test_client_certificate_files_and_data(cluster: Any, tmp_path: Path) -> None:
    crt, key = cluster.issue_client_cert("cert-admin", groups=["system:masters"])
    path = cluster.write_kubeconfig(tmp_path / "kc", user="cert-admin", client_cert=(crt, key))
    with client_for(path) as client:
        assert client.get("/api/v1/namespaces/default")["metadata"]["name"] == "default"
    # the same identity inline as *-data, CA inline too
    doc = yaml.safe_load(path.read_text())
    user = doc["users"][0]["user"]
    user["client-certificate-data"] = base64.b64encode(
        Path(user.pop("client-certificate")).read_bytes()
    ).decode()
    user["client-key-data"] = base64.b64encode(Path(user.pop("client-key")).read_bytes()).decode()
    c = doc["clusters"][0]["cluster"]
    c["certificate-authority-data"] = base64.b64encode(
        Path(c.pop("certificate-authority")).read_bytes()
    ).decode()
    inline = tmp_path / "inline"
    inline.write_text(yaml.safe_dump(doc))
    before = set(Path("/tmp").glob("wmap-tls-*"))
    with client_for(inline) as client:
        assert client.get("/api/v1/namespaces/default")["metadata"]["name"] == "default"
    assert set(Path("/tmp").glob("wmap-tls-*")) == before  # private key files are gone again


def test_client_certificate_without_rights_is_forbidden(cluster: Any, tmp_path: Path) -> None:
    crt, key = cluster.issue_client_cert("cert-nobody")
    path = cluster.write_kubeconfig(tmp_path / "kc", user="cert-nobody", client_cert=(crt, key))
    with client_for(path) as client, pytest.raises(ForbiddenError) as info:
        client.get("/api/v1/namespaces")
    assert 'User "cert-nobody" cannot list resource "namespaces"' in info.value.message


def exec_kubeconfig(cluster: Any, tmp_path: Path, script: Path, api_version: str) -> Path:
    path: Path = cluster.write_kubeconfig(tmp_path / "kc", user="execuser", token="replaced")
    doc = yaml.safe_load(path.read_text())
    doc["users"][0]["user"] = {
        "exec": {
            "apiVersion": api_version,
            "command": str(script),
            "args": ["token"],
            "provideClusterInfo": True,
            "interactiveMode": "Never",
        }
    }
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_exec_plugin_token(cluster: Any, tmp_path: Path, version: str) -> None:
    api_version = f"client.authentication.k8s.io/{version}"
    script, state = write_plugin(tmp_path)
    (state / "tokens").write_text(cluster.token("admin"))
    with client_for(exec_kubeconfig(cluster, tmp_path, script, api_version)) as client:
        client.get("/api/v1/namespaces/default")
        client.get("/api/v1/namespaces/kube-system")
    (run,) = runs(state)  # cached across requests
    info = orjson.loads(str(run["info"]))
    assert info["apiVersion"] == api_version and info["kind"] == "ExecCredential"
    assert info["spec"]["interactive"] is False
    assert info["spec"]["cluster"]["server"] == cluster.server
    ca = base64.b64decode(info["spec"]["cluster"]["certificate-authority-data"])
    assert ca == Path(cluster.ca_file).read_bytes()


def test_exec_plugin_reruns_on_401(cluster: Any, tmp_path: Path) -> None:
    script, state = write_plugin(tmp_path)
    (state / "tokens").write_text(f"stale-token {cluster.token('admin')}")
    with client_for(exec_kubeconfig(cluster, tmp_path, script, "client.authentication.k8s.io/v1")) as client:
        assert client.get("/api/v1/namespaces/default")["metadata"]["name"] == "default"
        client.get("/api/v1/namespaces/default")
    assert len(runs(state)) == 2


def test_exec_plugin_reruns_after_expiry(cluster: Any, tmp_path: Path) -> None:
    script, state = write_plugin(tmp_path)
    (state / "tokens").write_text(f"{cluster.token('admin')} {cluster.token('admin')}")
    (state / "expires").write_text("2030-01-01T00:00:00Z")
    path = exec_kubeconfig(cluster, tmp_path, script, "client.authentication.k8s.io/v1")
    config = load_cluster_config(ConnectionOptions(kubeconfig=str(path)), environ={})
    assert config.exec is not None
    now = [1893455000.0]
    provider = ExecCredentialProvider(config.exec, config, stderr=subprocess.DEVNULL, clock=lambda: now[0])
    with KubeClient(config, exec_provider=provider) as client:
        client.get("/api/v1/namespaces/default")
        now[0] += 3600  # past the expiry: the next request runs the plugin again
        (state / "expires").write_text("2031-01-01T00:00:00Z")
        client.get("/api/v1/namespaces/default")
        client.get("/api/v1/namespaces/default")
    assert provider.runs == 2 and len(runs(state)) == 2


def test_exec_plugin_client_certificate(cluster: Any, tmp_path: Path) -> None:
    crt, key = cluster.issue_client_cert("exec-cert-admin", groups=["system:masters"])
    script, state = write_plugin(tmp_path)
    (state / "cert").write_text(Path(crt).read_text())
    (state / "key").write_text(Path(key).read_text())
    with client_for(exec_kubeconfig(cluster, tmp_path, script, "client.authentication.k8s.io/v1beta1")) as c:
        assert c.get("/api/v1/namespaces/default")["metadata"]["name"] == "default"


def test_in_cluster_service_account(cluster: Any, tmp_path: Path, no_env: Path) -> None:
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "token").write_text(cluster.token("admin") + "\n")
    (sa / "ca.crt").write_bytes(Path(cluster.ca_file).read_bytes())
    (sa / "namespace").write_text("kube-system")
    env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(cluster.apiserver_port)}
    config = load_cluster_config(environ=env, service_account_dir=sa)
    assert config.source == "in-cluster" and config.namespace == "kube-system"
    with KubeClient(config) as client:
        assert client.get(f"/api/v1/namespaces/{client.namespace}")["metadata"]["name"] == "kube-system"


def test_tls_server_name(cluster: Any, tmp_path: Path) -> None:
    path = cluster.write_kubeconfig(tmp_path / "kc")
    with client_for(path, tls_server_name="kubernetes.default.svc") as client:
        assert client.server_version()["major"] == "1"
    with (
        client_for(path, tls_server_name="wrong.example") as client,
        pytest.raises(ConnectionFailedError) as info,
    ):
        client.server_version()
    assert "TLS certificate verification failed" in str(info.value)


def test_impersonation(admin: KubeClient, ns: str, cluster: Any, tmp_path: Path) -> None:
    path = cluster.write_kubeconfig(tmp_path / "kc")
    client = client_for(path, as_user="nobody", as_groups=("some-group",))
    with client, pytest.raises(ForbiddenError) as info:
        client.get(f"/api/v1/namespaces/{ns}/configmaps")
    assert 'User "nobody" cannot list resource "configmaps"' in info.value.message


# ------------------------------------------------------------------------------------------ errors


def test_forbidden_then_granted(admin: KubeClient, ns: str, cluster: Any, tmp_path: Path) -> None:
    path = cluster.write_kubeconfig(tmp_path / "kc", user="reader", namespace=ns)
    with client_for(path) as reader:
        with pytest.raises(ForbiddenError) as info:
            reader.list_all(f"/api/v1/namespaces/{ns}/configmaps")
        assert info.value.status == 403 and info.value.reason == "Forbidden"
        assert info.value.message == (
            f'configmaps is forbidden: User "reader" cannot list resource "configmaps" in API group "" '
            f'in the namespace "{ns}"'
        )
        grant(admin, ns, "reader", ["configmaps"], ["list"])
        deadline = time.monotonic() + 10
        while True:
            try:
                assert reader.list_all(f"/api/v1/namespaces/{ns}/configmaps") == []
                break
            except ForbiddenError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


def test_not_found_and_conflict(admin: KubeClient, ns: str) -> None:
    with pytest.raises(NotFoundError) as info:
        admin.get(f"/api/v1/namespaces/{ns}/configmaps/missing")
    assert info.value.message == 'configmaps "missing" not found'
    admin.create(f"/api/v1/namespaces/{ns}/configmaps", cm("one"))
    with pytest.raises(ConflictError) as exists:
        admin.create(f"/api/v1/namespaces/{ns}/configmaps", cm("one"))
    assert exists.value.reason == "AlreadyExists"


# ------------------------------------------------------------------------------------------- writes


def test_writes(admin: KubeClient, ns: str) -> None:
    base = f"/api/v1/namespaces/{ns}/configmaps"
    created = admin.create(base, cm("w", a="1"))
    assert created["metadata"]["uid"]
    got = admin.get(f"{base}/w")
    got["data"]["a"] = "2"
    assert admin.replace(f"{base}/w", got)["data"]["a"] == "2"
    with pytest.raises(ConflictError):
        admin.replace(f"{base}/w", got)  # stale resourceVersion
    assert admin.patch(f"{base}/w", {"data": {"b": "3"}})["data"] == {"a": "2", "b": "3"}
    assert admin.patch(f"{base}/w", [{"op": "remove", "path": "/data/b"}], patch_type="json")["data"] == {
        "a": "2"
    }
    assert admin.patch(f"{base}/w", {"data": {"c": "4"}}, patch_type="strategic")["data"]["c"] == "4"
    applied = admin.patch(
        f"{base}/w", cm("w", a="9"), patch_type="apply", field_manager="wmap-test", force=True
    )
    assert applied["data"]["a"] == "9"
    assert any(m["manager"] == "wmap-test" for m in applied["metadata"]["managedFields"])
    admin.delete(f"{base}/w")
    with pytest.raises(NotFoundError):
        admin.get(f"{base}/w")


def test_status_subresource_on_jobset(admin: KubeClient, ns: str, jobset_crd: str) -> None:
    path = f"/apis/{JOBSET_API}/namespaces/{ns}/jobsets"
    js = admin.create(path, jobset("js1"))
    assert "status" not in js or not js["status"].get("restarts")
    updated = admin.patch_status(f"{path}/js1", {"status": {"restarts": 2}})
    assert updated["status"]["restarts"] == 2
    assert admin.get_status(f"{path}/js1")["status"]["restarts"] == 2
    # a status write through the main resource is ignored
    admin.patch(f"{path}/js1", {"status": {"restarts": 5}})
    assert admin.get(f"{path}/js1")["status"]["restarts"] == 2


def jobset(name: str) -> dict[str, Any]:
    pod = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    return {
        "apiVersion": JOBSET_API,
        "kind": "JobSet",
        "metadata": {"name": name},
        "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": {"template": pod}}}]},
    }


# --------------------------------------------------------------------------------- lists and watch


def test_paging_over_50_objects(admin: KubeClient, ns: str) -> None:
    base = f"/api/v1/namespaces/{ns}/configmaps"
    for i in range(50):
        admin.create(base, cm(f"cm-{i:02d}", i=str(i)))
    pages = list(admin.list(base, limit=7))
    assert [len(p["items"]) for p in pages] == [7] * 7 + [1]
    assert pages[0]["metadata"]["remainingItemCount"] == 43
    names = [i["metadata"]["name"] for i in admin.list_items(base, limit=7)]
    assert names == [f"cm-{i:02d}" for i in range(50)]
    assert len(admin.list_all(base, limit=0)) == 50
    assert [i["metadata"]["name"] for i in admin.list_all(base, field_selector="metadata.name=cm-07")] == [
        "cm-07"
    ]


def test_expired_continue_token_relists(admin: KubeClient, ns: str, cluster: Any) -> None:
    """A real 410: compact etcd past the continue token's revision (etcd's JSON gateway), then page on.
    One page at a time (``list_ahead=False``): a client that asks one page ahead has the second page
    in before the compaction; the unit tests play the 410 of a page asked for ahead."""
    base = f"/api/v1/namespaces/{ns}/configmaps"
    for i in range(6):
        admin.create(base, cm(f"c{i}"))
    notes: list[str] = []
    one_at_a_time = KubeClient(admin.config, list_ahead=False)
    pages = one_at_a_time.list(base, limit=4, on_relist=notes.append)
    first = next(pages)
    assert len(first["items"]) == 4 and first["metadata"]["continue"]
    admin.create(base, cm("later"))  # move etcd's revision past the token's
    with httpx.Client(base_url=cluster.etcd_url, timeout=10) as etcd:
        rev = int(
            etcd.post("/v3/kv/range", json={"key": base64.b64encode(b"/").decode()}).json()["header"][
                "revision"
            ]
        )
        etcd.post("/v3/kv/compaction", json={"revision": str(rev), "physical": True}).raise_for_status()
    with pytest.raises(GoneError):
        admin.get(base, {"limit": 4, "continue": first["metadata"]["continue"]})
    with one_at_a_time:
        rest = list(pages)
    assert len(notes) == 1 and "expired while paging" in notes[0]
    names = [i["metadata"]["name"] for p in rest for i in p["items"]]
    assert sorted(names) == sorted([*(f"c{i}" for i in range(6)), "later"])  # the relist starts over
    assert len(admin.list_all(base, limit=4)) == 7


def test_watch_sees_added_and_modified(admin: KubeClient, ns: str) -> None:
    base = f"/api/v1/namespaces/{ns}/configmaps"
    rv = admin.get(base)["metadata"]["resourceVersion"]

    def later() -> None:
        time.sleep(0.3)
        admin.create(base, cm("watched", v="1"))
        admin.patch(f"{base}/watched", {"data": {"v": "2"}})
        admin.delete(f"{base}/watched")

    thread = threading.Thread(target=later)
    thread.start()
    events = []
    for event in admin.watch(base, resource_version=rv, timeout_seconds=10):
        events.append(
            (event.type, event.object["metadata"]["name"], (event.object.get("data") or {}).get("v"))
        )
        if event.type == "DELETED":
            break
    thread.join()
    assert events == [("ADDED", "watched", "1"), ("MODIFIED", "watched", "2"), ("DELETED", "watched", "2")]


# A watch 410 cannot be provoked on v1.20 in a test's time: the watch cache sizes itself dynamically
# and keeps every event younger than 75 s, and an old resourceVersion on a fresh cache is accepted
# (no events, no error). The ERROR/410 decoding is covered by test_client_unit.py.


# ---------------------------------------------------------------------------------------- discovery


def test_discovery_resolves_kubectl_forms(admin: KubeClient, jobset_crd: str, tmp_path: Path) -> None:
    disc = Discovery(admin, cache_dir=tmp_path)
    for token in [
        "jobsets",
        "jobset",
        "JobSet",
        "JOBSETS",
        "jobsets.jobset.x-k8s.io",
        "jobset.v1alpha2.jobset.x-k8s.io",
    ]:
        (hit,) = disc.resolve_type(token)
        assert (hit.group, hit.version, hit.kind, hit.name, hit.namespaced) == (
            "jobset.x-k8s.io",
            "v1alpha2",
            "JobSet",
            "jobsets",
            True,
        ), token
        assert hit.short_names == () and "status" in hit.subresources
    for token in [
        "deploy",
        "deployments",
        "deployment",
        "Deployment",
        "deployments.apps",
        "deploy.apps",
        "deployments.v1.apps",
    ]:
        (hit,) = disc.resolve_type(token)
        assert (hit.group, hit.version, hit.name) == ("apps", "v1", "deployments"), token
    assert disc.resolve_type("js") == []  # JobSet's CRD declares no short name
    assert disc.resolve_type("jobsets.v9.jobset.x-k8s.io") == []
    assert disc.resolve_type("nothing-like-this") == []
    with pytest.raises(UnknownResourceTypeError, match='the server doesn\'t have a resource type "nope"'):
        disc.resolve_one("nope")
    events = disc.resolve_type("events")
    assert [e.group for e in events] == ["", "events.k8s.io"]
    assert disc.resolve_one("ev").group == ""
    assert disc.served_versions("autoscaling", "HorizontalPodAutoscaler") == ["v1", "v2beta1", "v2beta2"]
    assert disc.preferred_version("jobset.x-k8s.io") == "v1alpha2"
    assert disc.resolve_one("po").path("x", "p") == "/api/v1/namespaces/x/pods/p"
    assert disc.resolve_one("ns").path("ignored", "default") == "/api/v1/namespaces/default"


def test_discovery_disk_cache_and_miss(admin: KubeClient, tmp_path: Path) -> None:
    first = Discovery(admin, cache_dir=tmp_path)
    assert first.resolve_type("pods")
    assert first.fetches > 10
    files = list(tmp_path.glob("discovery/*/discovery.json"))
    assert len(files) == 1
    second = Discovery(admin, cache_dir=tmp_path)
    assert second.resolve_type("deploy") and second.fetches == 0
    # a CRD installed after the cache was written is found: the miss refreshes once
    crd = schemaless_crd("cache.wmap.test", "Widget", "widgets", short_names=["wdg"], scope="Cluster")
    admin.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    deadline = time.monotonic() + 20
    while True:  # each new Discovery starts from the disk copy, misses, and asks the server once
        third = Discovery(admin, cache_dir=tmp_path)
        if third.resolve_type("wdg"):
            break
        assert time.monotonic() < deadline, "CRD never showed up in discovery"
        time.sleep(0.2)
    (hit,) = third.resolve_type("wdg")
    assert (hit.kind, hit.namespaced) == ("Widget", False)
    assert hit.path("ns", "w1") == "/apis/cache.wmap.test/v1/widgets/w1"
    assert Discovery(admin, cache_dir=tmp_path).resolve_type("widgets") and third.fetches > 0


def test_owner_lookup(admin: KubeClient, ns: str, jobset_crd: str) -> None:
    admin.create(f"/apis/{JOBSET_API}/namespaces/{ns}/jobsets", jobset("owner"))
    lookup = make_owner_lookup(admin, Discovery(admin, cache_dir=False))
    hit = lookup(ns, JOBSET_API, "JobSet", "owner")
    assert hit is not None and hit["metadata"]["name"] == "owner"
    assert lookup(ns, JOBSET_API, "JobSet", "missing") is None
    assert lookup(ns, "nothing.example/v1", "Thing", "x") is None
    assert lookup(ns, "v1", "NoSuchKind", "x") is None
    requests = lookup.requests
    assert lookup(ns, JOBSET_API, "JobSet", "owner") is hit
    assert lookup(ns, JOBSET_API, "JobSet", "missing") is None
    assert lookup.requests == requests  # hits and misses cached
    lookup.prefetch([(ns, "v1", "Namespace", ns), ("", "v1", "Namespace", "default")])
    assert lookup.requests == requests + 2
    assert lookup("", "v1", "Namespace", "default") is not None
