"""GPUs requested through DRA claims, read live and from ``-f`` (issue 24). ``resource.k8s.io``
is served by CRDs and the objects are NVIDIA's DRA driver's shapes: see :mod:`tests.support.dra`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from tests.cli.helpers import wmap
from tests.support.cluster import TestCluster
from tests.support.dra import dra_jobset, gpu_template, serving_dra
from tests.support.kube import KubeTestClient, rule
from workload_map.cluster.claims import ClaimReader
from workload_map.errors import ForbiddenError, NotFoundError

pytestmark = pytest.mark.usefixtures("bundled_catalog")


@pytest.fixture(scope="module")
def dra_api(kube: KubeTestClient) -> Iterator[None]:
    with serving_dra(kube):
        yield


def _gpus(kc: str, namespace: str, name: str) -> tuple[int, str]:
    rc, out, err = wmap("get", "jobsets", name, "-n", namespace, "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    return int(orjson.loads(out)["items"][0]["resources"]["gpus"]), err


@pytest.mark.cluster
def test_get_and_describe_count_gpus_of_claim_templates(
    dra_api: None, kube: KubeTestClient, namespace: str, kc: str, cluster: TestCluster, tmp_path: Path
) -> None:
    kube.create(gpu_template("two-gpus", namespace, 2))
    kube.create(dra_jobset("train", namespace, "two-gpus"))
    assert _gpus(kc, namespace, "train") == (12, "")  # 3 Jobs x 2 pods x 2 GPUs, nothing to warn
    rc, out, err = wmap("describe", "jobset/train", "-n", namespace, "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    assert orjson.loads(out)["resources"]["gpus"] == 12
    # wmap gang reads the same template live: the gang needs the 12 GPUs, shown as DRA devices
    rc, out, err = wmap("gang", "jobset/train", "-n", namespace, "--scheduler", "volcano", "--kubeconfig", kc)
    assert rc == 0, err
    assert "gpu.nvidia.com=12 (DRA)" in out

    # a template that does not exist: said, not counted
    kube.create(dra_jobset("typo", namespace, "no-such-template"))
    gpus, err = _gpus(kc, namespace, "typo")
    assert gpus == 0 and f"warning: ResourceClaimTemplate {namespace}/no-such-template not found" in err

    # a reader who may list JobSets but not read claim templates: said, not counted
    kube.grant("reader", [rule(["jobset.x-k8s.io"], ["jobsets"], ["get", "list"])], namespace)
    reader = str(cluster.write_kubeconfig(tmp_path / "reader", user="reader"))
    gpus, err = _gpus(reader, namespace, "train")
    assert gpus == 0
    assert "not allowed to get resourceclaimtemplates.resource.k8s.io: devices (GPUs) requested" in err
    kube.grant("reader", [rule(["resource.k8s.io"], ["resourceclaimtemplates"], ["get"])], namespace)
    gpus, err = _gpus(reader, namespace, "train")
    assert gpus == 12 and "resourceclaimtemplates" not in err


def test_describe_and_requirements_read_the_templates_from_the_file(tmp_path: Path) -> None:
    """``kubectl apply -f`` files as NVIDIA's examples are: the template beside the workload."""
    path = tmp_path / "train.yaml"
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}
    path.write_text(
        yaml.safe_dump_all([ns, gpu_template("two-gpus", "ml", 2), dra_jobset("train", "ml", "two-gpus")])
    )
    rc, out, err = wmap("describe", "-f", str(path), "-o", "json")
    assert rc == 0, err
    assert orjson.loads(out)["resources"]["gpus"] == 12
    rc, out, err = wmap("requirements", "-f", str(path), "-o", "json")
    assert rc == 0, err
    doc = orjson.loads(out)
    assert doc["totals"]["desired"]["gpus"] == 12 and doc["instances"][0]["podRequests"]["gpus"] == 2
    assert [g["minResources"]["gpus"] for g in doc["gangs"]] == [12]  # one gang per replicated job
    # two workloads in one file is still one too many
    path.write_text(yaml.safe_dump_all([dra_jobset("a", "ml", "t"), dra_jobset("b", "ml", "t")]))
    rc, _, err = wmap("describe", "-f", str(path))
    assert rc == 2 and "more than one document" in err


class _Discovery:
    def __init__(self, served: list[str], preferred: str | None) -> None:
        self.served, self.preferred = served, preferred

    def served_versions(self, group: str, kind: str) -> list[str]:
        return self.served

    def preferred_version(self, group: str) -> str | None:
        return self.preferred


class _Client:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.paths: list[str] = []

    def get(self, path: str) -> Any:
        self.paths.append(path)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_the_reader_picks_the_preferred_served_version_and_reads_each_claim_once() -> None:
    client = _Client({"kind": "ResourceClaimTemplate"})
    reader = ClaimReader(client, _Discovery(["v1", "v1beta2", "v1beta1"], "v1"))  # type: ignore[arg-type]
    for _ in range(3):
        assert reader("ResourceClaimTemplate", "ml", "t") == {"kind": "ResourceClaimTemplate"}
    assert client.paths == ["/apis/resource.k8s.io/v1/namespaces/ml/resourceclaimtemplates/t"]
    older = ClaimReader(client, _Discovery(["v1beta1"], "v1beta1"))  # type: ignore[arg-type]
    older("ResourceClaim", "ml", "c")
    assert client.paths[-1] == "/apis/resource.k8s.io/v1beta1/namespaces/ml/resourceclaims/c"
    assert reader.warnings() == []


def test_the_reader_says_what_kept_devices_from_being_counted() -> None:
    unserved = ClaimReader(_Client({}), _Discovery([], None))  # type: ignore[arg-type]
    assert unserved("ResourceClaimTemplate", "ml", "t") is None
    assert unserved.warnings() == [
        "the cluster does not serve resourceclaimtemplates.resource.k8s.io: devices requested through DRA "
        "claims are not counted"
    ]
    denied = ClaimReader(_Client(ForbiddenError(403, "Forbidden", "no")), _Discovery(["v1"], "v1"))  # type: ignore[arg-type]
    assert denied("ResourceClaim", "ml", "c") is None
    missing = ClaimReader(_Client(NotFoundError(404, "NotFound", "x")), _Discovery(["v1"], "v1"))  # type: ignore[arg-type]
    assert missing("ResourceClaim", "ml", "c") is None
    assert missing.warnings() == ["ResourceClaim ml/c not found: the devices it requests are not counted"]
    assert "not allowed to get resourceclaims.resource.k8s.io" in denied.warnings()[0]
