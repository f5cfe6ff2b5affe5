"""The REST API's writes beyond suspend/resume: ``/edits`` and ``/scale``, through the same
write-back as ``wmap set``/``scale``, behind ``--enable-writes`` with the user's own RBAC (SAR
patch), a resourceVersion precondition, and errors that name the field."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from tests.cli.helpers import jobset
from tests.server.conftest import AppFactory
from tests.support.kube import KubeTestClient
from tests.support.seed_catalog import seed_from_fixture

Headers = Callable[[str], dict[str, str]]


@pytest.fixture(scope="module")
def ro(make_app: AppFactory) -> TestClient:
    return make_app(enable_writes=False)


@pytest.fixture(scope="module")
def rw(make_app: AppFactory) -> TestClient:
    return make_app(enable_writes=True)


def _templates(js: dict[str, Any]) -> list[dict[str, Any]]:
    return [rj["template"]["spec"]["template"] for rj in js["spec"]["replicatedJobs"]]


EDITS = {
    "edits": {
        "image": [{"container": "*", "image": "img:2"}],
        "schedulerName": "kai-scheduler",
        "tolerations": {"add": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
        "podLabels": {"set": {"kai.scheduler/queue": "team-a"}},
        "labels": {"set": {"owner": "ml"}},
    }
}


def test_edits_need_writes_and_patch_permission(
    rw: TestClient, ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    created = kube.create(jobset("edited", namespace))
    url = f"/api/v1/namespaces/{namespace}/workloads/jobsets/edited/edits"
    admin = bearer("admin")
    denied = ro.post(url, json=EDITS, headers=admin)
    assert denied.status_code == 403 and denied.json()["error"] == "writes_disabled"
    # A dry run is a write too while writes are disabled (issue 23: it cost server CPU unasked).
    dry_ro = ro.post(url + "?dryRun=true", json=EDITS, headers=admin)
    assert dry_ro.status_code == 403 and dry_ro.json()["error"] == "writes_disabled"
    dry = rw.post(url + "?dryRun=true", json=EDITS, headers=admin)
    assert dry.status_code == 200, dry.text
    body = dry.json()
    assert body["action"] == "edit" and body["dryRun"] is True and body["changed"] is True
    assert body["patchType"] == "merge" and body["patch"]["metadata"]["labels"] == {"owner": "ml"}
    assert kube.get_obj(created)["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert rw.post(url, json=EDITS, headers=bearer("nobody")).status_code == 403
    done = rw.post(url, json=EDITS, headers=admin)
    assert done.status_code == 200, done.text
    assert done.json()["attempts"] == 1
    stored = kube.get_obj(created)
    assert stored["metadata"]["labels"]["owner"] == "ml"
    for tpl in _templates(stored):
        assert tpl["spec"]["schedulerName"] == "kai-scheduler"
        assert {c["image"] for c in tpl["spec"]["containers"]} == {"img:2"}
        assert tpl["spec"]["tolerations"] == [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        ]
        assert tpl["metadata"]["labels"]["kai.scheduler/queue"] == "team-a"
    again = rw.post(url, json=EDITS, headers=admin).json()
    assert again["changed"] is False


@pytest.mark.parametrize(
    ("body", "status", "text"),
    [
        ({"edits": {"schedulerName": "Bad_Name"}}, 422, "edits.schedulerName: invalid scheduler name"),
        (
            {"edits": {"tolerations": {"add": [{"key": "g", "effect": "Often"}]}}},
            422,
            "edits.tolerations.add[0].effect",
        ),
        (
            {"edits": {"image": [{"container": "nope", "image": "x"}]}},
            422,
            'unable to find container named "nope"',
        ),
        ({"edits": {"gpus": 1}}, 422, "edits.gpus: unknown field"),
        ({"edits": {"schedulerName": "kai"}, "components": ["nope"]}, 422, "component 'nope' not found"),
        (
            {"edits": {"podLabels": {"set": {"x": "1"}}}, "overwrite": "no"},
            400,
            "overwrite must be true or false",
        ),
        ({"edit": {}}, 400, "unknown field 'edit'"),
        ([], 400, "the body must be an object"),
    ],
)
def test_bad_edits_name_the_field(
    rw: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str, body: Any, status: int, text: str
) -> None:
    created = kube.create(jobset("bad", namespace))
    r = rw.post(
        f"/api/v1/namespaces/{namespace}/workloads/jobsets/bad/edits", json=body, headers=bearer("admin")
    )
    assert r.status_code == status, r.text
    assert text in r.json()["message"]
    assert kube.get_obj(created)["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_overwrite_false_refuses_an_existing_label(
    rw: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    kube.create(jobset("labelled", namespace, labels={"team": "a"}))
    url = f"/api/v1/namespaces/{namespace}/workloads/jobsets/labelled/edits"
    body = {"edits": {"labels": {"set": {"team": "b"}}}, "overwrite": False}
    r = rw.post(url, json=body, headers=bearer("admin"))
    assert (
        r.status_code == 422
        and "'team' already has a value (a), and --overwrite is false" in r.json()["message"]
    )


def test_scale_through_the_definition(
    rw: TestClient, ro: TestClient, bearer: Headers, kube: KubeTestClient, namespace: str
) -> None:
    lws = seed_from_fixture(kube, "leaderworkerset-x-k8s-io-leaderworkerset-v1", namespace)
    name = lws["metadata"]["name"]
    url = f"/api/v1/namespaces/{namespace}/workloads/leaderworkersets/{name}/scale"
    admin = bearer("admin")
    dry = rw.post(url + "?dryRun=true", json={"component": "worker", "replicas": 12}, headers=admin).json()
    assert dry["jsonPatch"] == [{"op": "replace", "path": "/spec/leaderWorkerTemplate/size", "value": 7}]
    done = rw.post(url, json={"component": "worker", "replicas": 12}, headers=admin)
    assert done.status_code == 200, done.text
    assert kube.get_obj(lws)["spec"]["leaderWorkerTemplate"]["size"] == 7
    bad = rw.post(url, json={"component": "worker", "replicas": 13}, headers=admin)
    assert bad.status_code == 422 and "13 is not a multiple of 2" in bad.json()["message"]
    assert rw.post(url, json={"component": "worker", "replicas": "3"}, headers=admin).status_code == 400
    assert rw.post(url, json={"component": "group"}, headers=admin).status_code == 400
    none = rw.post(url, json={"component": "nope", "replicas": 1}, headers=admin)
    assert none.status_code == 422 and 'has no component "nope"' in none.json()["message"]


def test_openapi_lists_the_writes(ro: TestClient) -> None:
    doc = ro.get("/openapi.json").json()
    for suffix in ("edits", "scale"):
        op = doc["paths"][f"/api/v1/namespaces/{{namespace}}/workloads/{{type}}/{{name}}/{suffix}"]["post"]
        assert "--enable-writes" in op["description"] and "requestBody" in op
    assert set(doc["components"]["schemas"]["EditRequest"]["properties"]["edits"]["properties"]) >= {
        "image",
        "resources",
        "env",
        "schedulerName",
        "tolerations",
        "nodeSelector",
        "podLabels",
        "podFields",
    }
