"""``wmap serve`` counts GPUs requested through DRA claims as the CLI does (issue 24): every REST
answer that reports GPUs (the workload list the UI's table and totals read, a workload's detail
the UI's page reads, the placement calculator) equals ``wmap get``/``describe`` on the same
objects, with the claims read live from the server's caches, as far as the caller may get them.
``resource.k8s.io`` is served by CRDs and the objects are NVIDIA's DRA driver's shapes (see
:mod:`tests.support.dra`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from starlette.testclient import TestClient

from tests.cli.helpers import wmap
from tests.server.conftest import AppFactory
from tests.server.sse import sse_events
from tests.support.cluster import TestCluster
from tests.support.dra import dra_jobset, gpu_claim, gpu_template, serving_dra
from tests.support.kube import KubeTestClient, rule
from tests.support.processes import start_wmap

pytestmark = pytest.mark.cluster

Headers = Callable[[str], dict[str, str]]


@pytest.fixture(scope="module")
def api(kube: KubeTestClient, make_app: AppFactory) -> Iterator[TestClient]:
    """A server started while the cluster serves resource.k8s.io (discovery is asked once)."""
    with serving_dra(kube):
        yield make_app()


def _cli(kc: str, *args: str) -> tuple[dict[str, Any], str]:
    rc, out, err = wmap(*args, "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    return orjson.loads(out), err


def _row(api: TestClient, headers: dict[str, str], namespace: str, name: str) -> dict[str, Any] | None:
    """The list's row of ``name`` with the list's warnings (None: not in the cache yet)."""
    r = api.get("/api/v1/workloads", params={"type": "jobsets", "namespace": namespace}, headers=headers)
    assert r.status_code == 200, r.text
    body = r.json()
    rows = [i for i in body["items"] if i["name"] == name]
    return {**rows[0], "warnings": body["warnings"]} if rows else None


def _eventually(fetch: Callable[[], Any], ok: Callable[[Any], bool], what: str) -> Any:
    """``fetch()`` until ``ok`` holds (the caches follow the cluster a moment later)."""
    got = None
    for _ in range(600):
        got = fetch()
        if ok(got):
            return got
        time.sleep(0.1)
    raise AssertionError(f"{what}: last {got!r}")


def test_rest_totals_equal_the_cli_totals(
    api: TestClient, kube: KubeTestClient, namespace: str, admin_kubeconfig: Path, bearer: Headers
) -> None:
    kc, admin = str(admin_kubeconfig), bearer("admin")
    kube.create(gpu_template("two-gpus", namespace, 2))
    kube.create(gpu_claim("shared", namespace, 4))
    kube.create(dra_jobset("train", namespace, "two-gpus", shared_claim="shared"))
    got, err = _cli(kc, "get", "jobsets", "train", "-n", namespace)
    cli_row = got["items"][0]
    # 3 Jobs x 2 pods x 2 GPUs from the template, and the 4 GPUs of the claim they all share
    assert cli_row["resources"]["gpus"] == 16 and err == ""
    row = _eventually(
        lambda: _row(api, admin, namespace, "train"),
        lambda r: r is not None and r["resources"]["gpus"] == 16,
        "the REST row's GPUs",
    )
    assert row["resources"] == cli_row["resources"] and row["warnings"] == []
    assert row["components"] == cli_row["components"]

    described, _ = _cli(kc, "describe", "jobset/train", "-n", namespace)
    r = api.get(f"/api/v1/namespaces/{namespace}/workloads/jobsets/train", headers=admin)
    assert r.status_code == 200, r.text
    detail = r.json()
    assert detail["resources"] == described["resources"] and detail["resources"]["gpus"] == 16
    assert detail["warnings"] == []

    # the placement calculator: the posted manifest's pods name the template in the cluster
    manifest = dra_jobset("train", namespace, "two-gpus")
    r = api.post("/api/v1/placement", json=manifest, headers=admin)
    assert r.status_code == 200, r.text
    placed = r.json()
    assert placed["totals"]["desired"]["gpus"] == 12 and placed["instances"][0]["podRequests"]["gpus"] == 2
    assert placed["totals"]["desired"]["devices"] == {"gpu.nvidia.com": 12}
    assert placed["warnings"] == []


def test_a_template_created_later_counts_once_the_cache_has_it(
    api: TestClient, kube: KubeTestClient, namespace: str, admin_kubeconfig: Path, bearer: Headers
) -> None:
    kc, admin = str(admin_kubeconfig), bearer("admin")
    kube.create(dra_jobset("early", namespace, "late-template"))
    row = _eventually(lambda: _row(api, admin, namespace, "early"), lambda r: r is not None, "the row")
    _, err = _cli(kc, "get", "jobsets", "early", "-n", namespace)
    # not there yet: not counted, and said in the CLI's words
    missing = (
        f"ResourceClaimTemplate {namespace}/late-template not found: the devices it requests are not counted"
    )
    assert row["resources"]["gpus"] == 0 and missing in row["warnings"] and f"warning: {missing}" in err
    kube.create(gpu_template("late-template", namespace, 1))
    row = _eventually(
        lambda: _row(api, admin, namespace, "early"),
        lambda r: r is not None and r["resources"]["gpus"] == 6,
        "the row's GPUs",
    )
    assert row["warnings"] == []


def test_the_event_stream_sends_a_row_again_when_only_a_template_changes(
    api: TestClient,
    kube: KubeTestClient,
    namespace: str,
    admin_kubeconfig: Path,
    cluster: TestCluster,
    tmp_path: Path,
) -> None:
    """Neither the workload nor its pods change: the template its pods name is created, and the
    SSE stream (a ``wmap serve`` process, started while resource.k8s.io is served) sends the row
    again with the template's GPUs, as the REST list counts them."""
    kube.create(dra_jobset("streamed", namespace, "streamed-template"))
    headers = {"Authorization": f"Bearer {cluster.token('admin')}"}
    params = {"type": "jobsets", "namespace": namespace, "timeoutSeconds": "90"}
    with (
        start_wmap("serve", [], tmp_path / "serve.log", kubeconfig=admin_kubeconfig) as proc,
        httpx.stream(
            "GET", proc.url + "/api/v1/watch/workloads", params=params, headers=headers, timeout=100
        ) as r,
    ):
        assert r.status_code == 200, r.read()
        events = sse_events(r.iter_lines())
        added = {}
        for kind, data in events:
            if kind == "added" and data["object"]["name"] == "streamed":
                added = data["object"]
            if kind == "synced":
                break
        assert added["resources"]["gpus"] == 0
        kube.create(gpu_template("streamed-template", namespace, 1))
        for kind, data in events:
            row = data.get("object") or {}
            if kind == "modified" and row.get("name") == "streamed" and row["resources"]["gpus"] == 6:
                break
        else:
            raise AssertionError("no modified row with the template's 6 GPUs")


def test_claims_count_only_as_far_as_the_caller_may_get_them(
    api: TestClient, kube: KubeTestClient, namespace: str, bearer: Headers, admin_kubeconfig: Path
) -> None:
    """The server reads the claims with its own identity; a caller sees their GPUs counted only
    where the CLI, reading as that caller, would count them."""
    kube.create(gpu_template("two-gpus", namespace, 2))
    kube.create(dra_jobset("train", namespace, "two-gpus"))
    kube.grant("reader", [rule(["jobset.x-k8s.io"], ["jobsets"], ["get", "list", "watch"])], namespace)
    reader = bearer("reader")
    row = _eventually(lambda: _row(api, reader, namespace, "train"), lambda r: r is not None, "the row")
    denied = (
        "not allowed to get resourceclaimtemplates.resource.k8s.io: devices (GPUs) requested through DRA "
        'resource claims are not counted. Ask a cluster administrator for "get" permission on '
        "resourceclaimtemplates.resource.k8s.io."
    )
    assert row["resources"]["gpus"] == 0 and denied in row["warnings"]
    r = api.get(f"/api/v1/namespaces/{namespace}/workloads/jobsets/train", headers=reader)
    assert r.status_code == 200, r.text
    assert r.json()["resources"]["gpus"] == 0 and r.json()["warnings"] == [denied]
    kube.grant("reader", [rule(["resource.k8s.io"], ["resourceclaimtemplates"], ["get"])], namespace)
    row = _eventually(
        lambda: _row(api, reader, namespace, "train"),
        lambda r: r is not None and r["resources"]["gpus"] == 12,
        "granted",
    )
    assert denied not in row["warnings"]
    # the admin's view never changed
    assert (_row(api, bearer("admin"), namespace, "train") or {}).get("resources", {}).get("gpus") == 12


def test_the_cache_keeps_only_what_the_resolver_reads(
    api: TestClient, kube: KubeTestClient, namespace: str
) -> None:
    state = api.app.state.api.state  # type: ignore[attr-defined]
    big = gpu_template("big", namespace, 3)
    big["metadata"]["annotations"] = {"note": "x" * 10_000}
    big["metadata"]["labels"] = {"team": "ml"}
    kube.create(big)
    cache = state.claims()
    kept = _eventually(
        lambda: cache.get("ResourceClaimTemplate", namespace, "big"), lambda o: o is not None, "the template"
    )
    assert set(kept["metadata"]) == {"name", "namespace", "uid", "resourceVersion"}
    assert kept["spec"] == big["spec"] and kept["kind"] == "ResourceClaimTemplate"
    assert sorted(inf.resource for inf in cache.informers()) == [
        "resourceclaims.resource.k8s.io",
        "resourceclaimtemplates.resource.k8s.io",
    ]
