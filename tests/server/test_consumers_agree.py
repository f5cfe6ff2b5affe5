"""One live workload, every consumer: ``wmap get -o json``, ``wmap describe -o json``, the REST
API and the exporter report the same pods desired/ready per component and the same GPU total,
for workloads seeded with the objects and owner chains their controllers create
(tests/support/seed.py: JobSet -> Job -> Pod; LWS -> StatefulSet -> leader Pod -> StatefulSet ->
Pods; PyTorchJob -> Pod; RayCluster -> Pod; Deployment -> ReplicaSet -> Pod; MPIJob workers -> Pod
and launcher -> Job -> Pod; RayJob -> RayCluster -> Pods and submitter Job -> Pod; StatefulSet ->
Pod; Job -> Pod; InferenceService (Standard) -> Deployment -> ReplicaSet -> Pod)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from starlette.testclient import TestClient

from tests.cli.helpers import wmap
from tests.exporter.conftest import ExporterProcess, start_exporter
from tests.server.conftest import AppFactory
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient
from tests.support.seed import (
    PYTORCH_ROLE,
    create_deployment_tree,
    create_isvc_tree,
    create_job_tree,
    create_jobset_tree,
    create_lws_tree,
    create_mpijob_tree,
    create_raycluster_tree,
    create_rayjob_tree,
    create_statefulset_tree,
    role_pods,
)

pytestmark = pytest.mark.cluster

Counts = dict[str, tuple[int, int]]  # component -> (desired, ready)


def _seed_pytorch(kube: KubeTestClient, name: str, ns: str) -> None:
    """PyTorchJob -> Pods: the training operator owns the pods by the job directly."""
    from tests.cli.helpers import pytorchjob

    pt = kube.create(pytorchjob(name, ns))
    roles = (("master", 0), ("worker", 0), ("worker", 1))
    pods = [(f"{name}-{role}-{i}", role, "n1") for role, i in roles]
    role_pods(kube, pt, PYTORCH_ROLE, pods, labels={"training.kubeflow.org/job-name": name}, gpus=1)


Seed = Callable[[KubeTestClient, str, str], object]

#: kind -> (type word, workload name, seed(kube, name, namespace))
SEEDS: dict[str, tuple[str, str, Seed]] = {
    "JobSet": (
        "jobsets",
        "train",
        lambda k, n, ns: create_jobset_tree(k, n, ns, (("leader", 1), ("workers", 3))),
    ),
    "LeaderWorkerSet": ("lws", "vllm", lambda k, n, ns: create_lws_tree(k, n, ns, replicas=2, size=3)),
    "PyTorchJob": ("pytorchjobs", "pt", _seed_pytorch),
    "RayCluster": ("rayclusters", "rc", lambda k, n, ns: create_raycluster_tree(k, n, ns, workers=2)),
    "Deployment": ("deploy", "web", lambda k, n, ns: create_deployment_tree(k, n, ns, replicas=2)),
    "MPIJob": ("mpijobs", "mpi", lambda k, n, ns: create_mpijob_tree(k, n, ns, workers=2)),
    "RayJob": ("rayjobs", "rj", lambda k, n, ns: create_rayjob_tree(k, n, ns, workers=2)),
    "StatefulSet": ("sts", "db", lambda k, n, ns: create_statefulset_tree(k, n, ns, replicas=2)),
    "Job": ("jobs", "batchy", lambda k, n, ns: create_job_tree(k, n, ns, parallelism=2)),
    "InferenceService": ("isvc", "iris", lambda k, n, ns: create_isvc_tree(k, n, ns, replicas=2)),
}

#: Kinds whose get/describe rows are instances (a JobSet's replicated jobs, a RayCluster's worker
#: groups) while the exporter's component label is the role: telling roles apart is issue 15.
INSTANCE_ROWS = {"JobSet", "RayCluster", "RayJob"}


@pytest.fixture(scope="module")
def api(make_app: AppFactory) -> TestClient:
    return make_app()


@pytest.fixture(scope="module")
def exporter(cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExporterProcess]:
    proc = start_exporter(cluster, tmp_path_factory.mktemp("agree"))
    try:
        proc.wait_ready()
        yield proc
    finally:
        proc.stop()


def _leaves(components: list[dict[str, Any]]) -> Counts:
    out: dict[str, list[int]] = {}

    def walk(c: dict[str, Any]) -> None:
        if "pods" in c:
            d, r = out.setdefault(c["name"], [0, 0])
            out[c["name"]] = [d + c["replicas"]["desired"], r + c["replicas"]["ready"]]
        for child in c.get("children") or ():
            walk(child)

    for c in components:
        walk(c)
    return {k: (v[0], v[1]) for k, v in out.items()}


@pytest.mark.parametrize("kind", list(SEEDS))
def test_get_describe_rest_and_exporter_agree(
    kind: str,
    kube: KubeTestClient,
    namespace: str,
    admin_kubeconfig: Path,
    api: TestClient,
    bearer: Callable[[str], dict[str, str]],
    exporter: ExporterProcess,
) -> None:
    word, name, seed = SEEDS[kind]
    seed(kube, name, namespace)
    kc = str(admin_kubeconfig)
    rc, out, err = wmap("get", word, name, "-n", namespace, "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    row = orjson.loads(out)["items"][0]
    # A component the workload does not use (an ISVC without transformer) is a 0/0 row in get
    # and absent from describe's pod-bearing leaves: the same fact, compared without it.
    from_get = {
        c["name"]: (c["desired"], c["ready"])
        for c in row["components"]
        if (c["desired"], c["ready"]) != (0, 0)
    }
    rc, out, err = wmap("describe", f"{word}/{name}", "-n", namespace, "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    described = orjson.loads(out)
    r = api.get(f"/api/v1/namespaces/{namespace}/workloads/{word}/{name}", headers=bearer("admin"))
    assert r.status_code == 200, r.text
    rest = r.json()
    assert _leaves(described["components"]) == from_get == _leaves(rest["components"])
    assert row["resources"]["gpus"] == described["resources"]["gpus"] == rest["resources"]["gpus"]
    group = row["apiVersion"].rpartition("/")[0]
    lb = {"namespace": namespace, "group": group, "kind": kind, "name": name}

    described_pods = _pod_names(described["components"])

    def exported(e: Any) -> tuple[Counts, set[str]]:
        # Components the exporter labels the same way (a JobSet's roles are instances of its
        # one "replicatedjob" component there: issue 15), and the pods it attributes.
        counts = {
            comp: (
                int(e.value("wmap_workload_component_pods", **lb, component=comp, state="desired") or 0),
                int(e.value("wmap_workload_component_pods", **lb, component=comp, state="ready") or 0),
            )
            for comp in from_get
            if e.find("wmap_workload_component_pods", **lb, component=comp)
        }
        pods = {
            s.labels["pod"] for s in e.find("wmap_pod_workload_info", namespace=namespace, workload_kind=kind)
        }
        return counts, pods

    def agrees(e: Any) -> bool:
        counts, pods = exported(e)
        return pods == described_pods and all(from_get[c] == v for c, v in counts.items())

    exp = exporter.wait_for(agrees, what=f"{kind}: the exporter's pods and component counts")
    assert (
        exp.value("wmap_workload_resource_requests", **lb, resource="nvidia.com/gpu")
        == row["resources"]["gpus"]
    )
    assert len(described_pods) == sum(ready for _, ready in from_get.values())
    if kind not in INSTANCE_ROWS:
        assert set(exported(exp)[0]) == set(from_get)  # every component named alike


def _pod_names(components: list[dict[str, Any]]) -> set[str]:
    out: set[str] = set()
    for c in components:
        out.update(p["name"] for p in c.get("pods") or ())
        out |= _pod_names(c.get("children") or [])
    return out
