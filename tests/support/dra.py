"""DRA (``resource.k8s.io``) on the v1.20 test API server, and objects shaped as NVIDIA's DRA
driver documents them, for the live DRA tests of the CLI, ``wmap serve`` and the exporter.

The v1.20 test API server has no ``resource.k8s.io`` of its own, so that group is served by CRDs
(``api-approved.kubernetes.io`` lets a CRD use a ``*.k8s.io`` group) at ``v1beta1`` and ``v1``, as
a 1.34 server serves it; the objects are stored as written and read back at the version discovery
prefers (``v1``). The templates are NVIDIA's DRA driver's shapes (NVIDIA/k8s-dra-driver-gpu,
``demo/specs/quickstart/v1/gpu-test*.yaml``: a ResourceClaimTemplate whose request asks
``exactly`` for ``count`` devices of the class ``gpu.nvidia.com``; ``gpu-test2``'s shared
ResourceClaim named by every pod with ``resourceClaimName``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.support import crds
from tests.support.kube import KubeTestClient

Obj = dict[str, Any]
KINDS = (("ResourceClaimTemplate", "resourceclaimtemplates"), ("ResourceClaim", "resourceclaims"))


def dra_crd(kind: str, plural: str) -> Obj:
    crd = crds.schemaless_crd("resource.k8s.io", kind, plural)
    crd["metadata"]["annotations"] = {
        "api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/0"
    }
    (v1,) = crd["spec"]["versions"]
    crd["spec"]["versions"] = [{**v1, "name": "v1beta1", "storage": False}, v1]
    return crd


@contextmanager
def serving_dra(kube: KubeTestClient) -> Iterator[None]:
    """``resource.k8s.io`` served (by CRDs) while inside; removed afterwards, and waited for until
    the group is gone (a server started next must not discover a group being deleted)."""
    crds.install_crds(kube, [dra_crd(k, p) for k, p in KINDS], downlevel=False)
    try:
        yield
    finally:
        for _, plural in KINDS:
            kube.request("DELETE", f"{crds.CRD_PATH}/{plural}.resource.k8s.io")
        kube.wait_until(lambda: kube.status_of("GET", "/apis/resource.k8s.io") == 404, timeout=120)
        kube.forget_discovery()


def gpu_template(name: str, namespace: str, count: int) -> Obj:
    """A v1 ResourceClaimTemplate: ``count`` whole GPUs (``gpu.nvidia.com``) per pod."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": count}}]}}},
    }  # fmt: skip


def gpu_claim(name: str, namespace: str, count: int) -> Obj:
    """A v1 ResourceClaim every pod naming it shares: ``count`` GPUs in all."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [
            {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": count}}]}},
    }  # fmt: skip


def dra_jobset(name: str, namespace: str, template: str, *, shared_claim: str | None = None) -> Obj:
    """A JobSet of 3 Jobs x 2 pods, each pod asking for a claim from ``template`` (and naming
    ``shared_claim`` too, when given), as the JobSet controller copies the pod template."""
    claims: list[Obj] = [{"name": "g", "resourceClaimTemplateName": template}]
    if shared_claim is not None:
        claims.append({"name": "s", "resourceClaimName": shared_claim})
    spec = {
        "restartPolicy": "Never",
        "containers": [{
            "name": "c", "image": "x",
            "resources": {"requests": {"cpu": "1"}, "claims": [{"name": c["name"]} for c in claims]},
        }],
        "resourceClaims": claims,
    }  # fmt: skip
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicatedJobs": [{"name": "workers", "replicas": 3, "template": {
            "spec": {"parallelism": 2, "completions": 2, "template": {"spec": spec}}}}]},
    }  # fmt: skip
