"""The Kueue hold end to end: ``wmap operator --kueue`` as a process, its webhooks registered on a
real kube-apiserver (clientConfig.url, the operator's own CA), JobSet's real CRD installed. A
JobSet shaped as users create it (the catalog's lifecycle fixture) with Kueue's queue-name label
is stored suspended: the API server applied the hold's patch before anything could see the
object unsuspended. One without the label is stored as sent. Kueue's CRDs are not needed for the
hold (the controller only warns that they are missing)."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.operator.helpers import OperatorProcess, wait_for
from tests.support import crds
from tests.support.cluster import TestCluster
from tests.support.kube import KubeApiError, KubeTestClient
from workload_map.operator.certs import KUEUE_MUTATING_NAME, MUTATING_NAME, VALIDATING_NAME

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

ADMISSION = "/apis/admissionregistration.k8s.io/v1"
LIFECYCLE = Path(__file__).parents[1] / "catalog" / "lifecycles"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def _jobset(namespace: str, name: str, labels: dict[str, str]) -> dict[str, Any]:
    doc = yaml.safe_load((LIFECYCLE / "jobset-x-k8s-io-jobset-v1alpha2" / "created.yaml").read_text())
    obj: dict[str, Any] = copy.deepcopy(doc["object"])
    for key in ("uid", "creationTimestamp", "generation", "resourceVersion"):
        obj["metadata"].pop(key, None)
    obj["metadata"].update(namespace=namespace, name=name, labels=labels)
    obj.pop("status", None)
    return obj


@pytest.fixture(scope="module")
def operator(
    kcluster: TestCluster, kkube: KubeTestClient, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OperatorProcess]:
    jobset = crds.crds_dir() / "jobset" / "jobset.x-k8s.io_jobsets.yaml"
    if not jobset.is_file():
        pytest.skip(f"JobSet's CRD is not in the shared corpus ({jobset})")
    with contextlib.suppress(KubeApiError):  # installed already by another module
        crds.install_crds(kkube, [jobset])
    opns = kkube.create_namespace("wmap-kq-hold")
    proc = OperatorProcess(
        kcluster,
        tmp_path_factory.mktemp("kueue-hold"),
        opns,
        identity="kueue-hold",
        extra=("--kueue", "--kueue-type", "JobSet.jobset.x-k8s.io"),
    )
    try:
        proc.ready(timeout=120)
        wait_for(
            lambda: kkube.request("GET", f"{ADMISSION}/mutatingwebhookconfigurations/{KUEUE_MUTATING_NAME}"),
            timeout=120,
            what="the Kueue hold webhook configuration",
        )
        yield proc
    finally:
        proc.stop()
        for plural, name in (
            ("validatingwebhookconfigurations", VALIDATING_NAME),
            ("mutatingwebhookconfigurations", MUTATING_NAME),
            ("mutatingwebhookconfigurations", KUEUE_MUTATING_NAME),
        ):
            with contextlib.suppress(KubeApiError):
                kkube.request("DELETE", f"{ADMISSION}/{plural}/{name}")


def test_labelled_jobset_is_stored_suspended(operator: OperatorProcess, kkube: KubeTestClient) -> None:
    ns = kkube.create_namespace("wmap-kq-hold-ws")
    held = kkube.create(_jobset(ns, "queued", {QUEUE_LABEL: "team-a"}))
    assert held["spec"].get("suspend") is True, operator.log()
    assert held["metadata"]["labels"] == {QUEUE_LABEL: "team-a"}
    free = kkube.create(_jobset(ns, "free", {"team": "a"}))
    assert free["spec"].get("suspend") in (None, False)
