"""The same type words in every consumer: ``explain`` and ``definitions`` (offline), ``get`` (live,
through discovery) and the REST API name the same definition, or all refuse the word."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
import yaml
from starlette.testclient import TestClient

from tests.cli.helpers import wmap
from tests.server.conftest import AppFactory

pytestmark = pytest.mark.cluster

#: word -> the definition it names (None: a real type no definition covers, as kubectl reads it).
WORDS: dict[str, str | None] = {
    "lws": "leaderworkerset-x-k8s-io-leaderworkerset-v1",
    "leaderworkersets": "leaderworkerset-x-k8s-io-leaderworkerset-v1",
    "LeaderWorkerSet.leaderworkerset.x-k8s.io": "leaderworkerset-x-k8s-io-leaderworkerset-v1",
    "isvc": "serving-kserve-io-inferenceservice-v1beta1",
    "pytorchjobs": "kubeflow-org-pytorchjob-v1",
    "PyTorchJob.v1.kubeflow.org": "kubeflow-org-pytorchjob-v1",
    "jobset-x-k8s-io-jobset-v1alpha2": "jobset-x-k8s-io-jobset-v1alpha2",
    "jobs": "batch-job-v1",  # kubectl: batch Jobs, not Volcano's
    "vcjob": "batch-volcano-sh-job-v1alpha1",
    "ksvc": "serving-knative-dev-service-v1",
    "deploy": "apps-deployment-v1",
    "sts": "apps-statefulset-v1",
    "pcs": "grove-io-podcliqueset-v1alpha1",
    # Definitions whose models are not hashable (dict-valued fields) once crashed the resolver.
    "milvuses": "milvus-io-milvus-v1beta1",
    "milvus": "milvus-io-milvus-v1beta1",
    "sparkapplications": "sparkoperator-k8s-io-sparkapplication-v1beta2",
    "services": None,  # kubectl: the core Service, which no definition covers
    "svc": None,
}


@pytest.fixture(scope="module")
def api(make_app: AppFactory) -> TestClient:
    return make_app()


@pytest.fixture
def kc(admin_kubeconfig: Path) -> str:
    return str(admin_kubeconfig)


@pytest.mark.parametrize("word", list(WORDS))
def test_every_consumer_reads_the_word_alike(
    word: str, api: TestClient, bearer: Callable[[str], dict[str, str]], kc: str
) -> None:
    expected = WORDS[word]
    rc, out, err = wmap("explain", word, "-o", "json")
    assert (rc, orjson.loads(out)["name"] if rc == 0 else None) == (
        (0, expected) if expected else (4, None)
    ), err
    rc, out, err = wmap("definitions", word)
    # definitions keeps upstream's "no Karta definition named" with exit 1 (upstream-spec 5.6)
    assert (rc, yaml.safe_load(out)["metadata"]["name"] if rc == 0 else None) == (
        (0, expected) if expected else (1, None)
    ), err
    rc, out, err = wmap("get", word, "-A", "-o", "json", "--kubeconfig", kc)
    assert rc == (0 if expected else 4), err
    r = api.get("/api/v1/workloads", params={"type": word}, headers=bearer("admin"))
    assert r.status_code == (200 if expected else 404), r.text
    if expected:
        body = r.json()
        assert all(item["definition"] == expected for item in body["items"])


def test_unknown_word_suggests() -> None:
    rc, _, err = wmap("explain", "lwss")
    assert rc == 4 and "did you mean 'lws'" in err
    rc, _, err = wmap("describe", "pytorchjob/x", "-n", "default", "--kubeconfig", "/nonexistent")
    assert rc != 0
