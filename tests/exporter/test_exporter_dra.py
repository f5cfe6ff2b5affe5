"""The exporter counts GPUs requested through DRA claims in its resource series as the CLI counts
them (issue 24): ``wmap_workload_resource_requests`` and ``..._component_resource_requests`` with
``resource="nvidia.com/gpu"`` (what the cost rules' requested-GPU series read) equal ``wmap get``'s
GPUs on the same objects, follow a template created or changed later, and hold the other device
classes under their class name. ``resource.k8s.io`` is served by CRDs and the objects are NVIDIA's
DRA driver's shapes (see :mod:`tests.support.dra`; ``mig.nvidia.com``:
``demo/specs/quickstart/v1/gpu-test4.yaml``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from tests.cli.helpers import wmap
from tests.exporter.conftest import ExporterProcess
from tests.support.cluster import TestCluster
from tests.support.dra import dra_jobset, gpu_claim, gpu_template, serving_dra
from tests.support.kube import KubeTestClient

pytestmark = [pytest.mark.cluster, pytest.mark.usefixtures("dra_api")]

Factory = Callable[..., ExporterProcess]
GPU = "nvidia.com/gpu"


@pytest.fixture(scope="module")
def dra_api(kube: KubeTestClient) -> Iterator[None]:
    with serving_dra(kube):
        yield


def _labels(namespace: str, name: str) -> dict[str, str]:
    return {"namespace": namespace, "group": "jobset.x-k8s.io", "kind": "JobSet", "name": name}


def _cli_gpus(cluster: TestCluster, tmp_path: Path, namespace: str, name: str) -> int:
    kc = str(cluster.write_kubeconfig(tmp_path / "kc", user="admin"))
    rc, out, err = wmap("get", "jobsets", name, "-n", namespace, "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    return int(orjson.loads(out)["items"][0]["resources"]["gpus"])


def test_gpu_series_count_dra_gpus_as_the_cli_does(
    exporter_factory: Factory, kube: KubeTestClient, namespace: str, cluster: TestCluster, tmp_path: Path
) -> None:
    kube.create(gpu_template("two-gpus", namespace, 2))
    kube.create(gpu_claim("shared", namespace, 4))
    # the claim the resourceclaim controller makes for one pod from the template: its controller
    # is the pod; no template names it, so the exporter never keeps it
    per_pod = gpu_claim("train-workers-0-0-gpu-x7k2p", namespace, 2)
    per_pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "Pod", "name": "train-workers-0-0", "uid": "7f0c", "controller": True}
    ]
    kube.create(per_pod)
    kube.create(dra_jobset("train", namespace, "two-gpus", shared_claim="shared"))
    kube.create(dra_jobset("early", namespace, "later"))
    exporter = exporter_factory("--namespace", namespace)
    exporter.wait_ready()
    lb = _labels(namespace, "train")
    want = _cli_gpus(cluster, tmp_path, namespace, "train")
    assert want == 16  # 3 Jobs x 2 pods x 2 GPUs, and the 4 GPUs of the claim they share
    exp = exporter.wait_for(
        lambda e: e.value("wmap_workload_resource_requests", **lb, resource=GPU) == want,
        what="the workload's GPUs",
    )
    assert exp.value("wmap_workload_resource_requests", **lb, resource=GPU, unit="integer") == 16
    assert (
        exp.value("wmap_workload_component_resource_requests", **lb, component="replicatedjob", resource=GPU)
        == 16
    )
    assert exp.value("wmap_informer_objects", resource="resourceclaims.resource.k8s.io") == 1  # not the pod's
    assert exp.value("wmap_informer_synced", resource="resourceclaimtemplates.resource.k8s.io") == 1

    # a template created after its workload: the series follow it, and a change of its count too
    early = _labels(namespace, "early")
    assert exp.value("wmap_workload_resource_requests", **early, resource=GPU) == 0
    later = kube.create(gpu_template("later", namespace, 1))
    exporter.wait_for(
        lambda e: e.value("wmap_workload_resource_requests", **early, resource=GPU) == 6,
        what="a later template",
    )
    later["spec"]["spec"]["devices"]["requests"] = [
        {"name": "mig", "exactly": {"deviceClassName": "mig.nvidia.com", "count": 4}}
    ]
    kube.update(later)
    exp = exporter.wait_for(
        lambda e: e.value("wmap_workload_resource_requests", **early, resource=GPU) == 0,
        what="a template's devices changed to MIG slices",
    )
    # MIG slices are devices, not GPUs: a count under their class, as nvidia.com/mig-* is
    assert (
        exp.value("wmap_workload_resource_requests", **early, resource="mig.nvidia.com", unit="integer") == 24
    )
    assert _cli_gpus(cluster, tmp_path, namespace, "early") == 0
