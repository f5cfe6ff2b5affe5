"""WorkloadPolicy end to end: ``wmap operator --policies`` as a process, its webhooks registered on
a real kube-apiserver (clientConfig.url, the operator's own CA), the real WorkloadPolicy CRD and
JobSet CRD installed.

* a policy with a bad field is rejected by the validating webhook, the message naming the field;
* a Deployment and a JobSet created in a namespace the policy selects come out with the changes in
  every pod template (the queue label from the namespace's label); in a namespace it does not
  select they are stored unchanged;
* with the operator down, failurePolicy Ignore lets workloads through unchanged (and Fail, to show
  the webhook is really on the path, refuses them).
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.operator.helpers import OperatorProcess, wait_for
from tests.support import crds
from tests.support.cluster import TestCluster
from tests.support.kube import KubeApiError, KubeTestClient
from workload_map.crd.generate import shipped_policy_crd
from workload_map.operator.certs import (
    MUTATING_NAME,
    POLICY_MUTATING_NAME,
    POLICY_MUTATING_WEBHOOK,
    VALIDATING_NAME,
)

pytestmark = pytest.mark.slow

POLICIES = "/apis/workload-map.dev/v1alpha1/workloadpolicies"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"

POLICY: dict[str, Any] = {
    "apiVersion": "workload-map.dev/v1alpha1",
    "kind": "WorkloadPolicy",
    "metadata": {"name": "ml-defaults"},
    "spec": {
        "order": 10,
        "namespaceSelector": {"matchLabels": {"team": "ml"}},
        "set": {
            "schedulerName": "kai-scheduler",
            "podLabels": {"set": {"kai.scheduler/queue": {"fromNamespaceLabel": "queue"}}},
            "tolerations": {"add": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
        },
    },
}


def _installed(kube: KubeTestClient, name: str) -> bool:
    try:
        kube.request("GET", f"{crds.CRD_PATH}/{name}")
    except KubeApiError:
        return False
    return True


@pytest.fixture(scope="module")
def policy_crds(kkube: KubeTestClient) -> bool:
    """The WorkloadPolicy CRD, and JobSet's from the shared corpus when it is there."""
    if not _installed(kkube, "workloadpolicies.workload-map.dev"):
        crds.install_crds(kkube, [shipped_policy_crd()], downlevel=False)
    jobset = crds.crds_dir() / "jobset" / "jobset.x-k8s.io_jobsets.yaml"
    if jobset.is_file() and not _installed(kkube, "jobsets.jobset.x-k8s.io"):
        crds.install_crds(kkube, [jobset])
    return jobset.is_file()


@pytest.fixture(scope="module")
def operator(
    kcluster: TestCluster,
    kkube: KubeTestClient,
    policy_crds: bool,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[OperatorProcess]:
    opns = kkube.create_namespace("wmap-pol")
    proc = OperatorProcess(
        kcluster,
        tmp_path_factory.mktemp("policy-operator"),
        opns,
        identity="pol-a",
        extra=("--policies", "--policy-group", "apps", "--policy-group", "jobset.x-k8s.io", "--no-reconcile"),
    )
    try:
        proc.ready()
        wait_for(
            lambda: kkube.request("GET", f"{ADMISSION}/mutatingwebhookconfigurations/{POLICY_MUTATING_NAME}")
        )
        yield proc
    finally:
        proc.stop()
        for plural, name in (
            ("validatingwebhookconfigurations", VALIDATING_NAME),
            ("mutatingwebhookconfigurations", MUTATING_NAME),
            ("mutatingwebhookconfigurations", POLICY_MUTATING_NAME),
        ):
            with contextlib.suppress(KubeApiError):
                kkube.request("DELETE", f"{ADMISSION}/{plural}/{name}")
        with contextlib.suppress(KubeApiError):
            kkube.request("DELETE", f"{POLICIES}/ml-defaults")


def deployment(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "registry.invalid/app:1"}]},
            },
        },
    }


def jobset(name: str, namespace: str) -> dict[str, Any]:
    def rj(role: str) -> dict[str, Any]:
        return {
            "name": role,
            "replicas": 1,
            "template": {
                "spec": {
                    "parallelism": 1,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": role, "image": "registry.invalid/train:1"}],
                        }
                    },
                }
            },
        }

    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"replicatedJobs": [rj("leader"), rj("workers")]},
    }


def _templates(obj: dict[str, Any]) -> list[dict[str, Any]]:
    if obj["kind"] == "JobSet":
        return [rj["template"]["spec"]["template"] for rj in obj["spec"]["replicatedJobs"]]
    return [obj["spec"]["template"]]


def _touched(tpl: dict[str, Any]) -> bool:
    """Any of the policy's changes (the API server's defaults, e.g. schedulerName
    default-scheduler, are not)."""
    return (
        tpl["spec"].get("schedulerName") == "kai-scheduler"
        or "kai.scheduler/queue" in (tpl.get("metadata") or {}).get("labels", {})
        or bool(tpl["spec"].get("tolerations"))
    )


def _changed(tpl: dict[str, Any]) -> bool:
    return (
        tpl["spec"].get("schedulerName") == "kai-scheduler"
        and tpl["metadata"]["labels"].get("kai.scheduler/queue") == "research"
        and {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        in tpl["spec"].get("tolerations", [])
    )


def _first_changed(kube: KubeTestClient, namespace: str, operator: OperatorProcess) -> dict[str, Any]:
    """Create probe Deployments until one comes out changed: the operator's informers see a new
    policy a moment after it is created."""
    deadline = time.monotonic() + 30
    obj: dict[str, Any] = {}
    for i in range(1000):
        obj = kube.create(deployment(f"probe-{i}", namespace))
        if _changed(_templates(obj)[0]):
            return obj
        kube.delete_obj(obj)
        if time.monotonic() > deadline:
            break
        time.sleep(0.3)
    raise TimeoutError(
        f"the policy was never applied (last template: {_templates(obj)[0] if obj else None}); "
        f"operator log:\n{operator.log()}"
    )


def test_policy_validated_applied_and_ignored_when_down(
    operator: OperatorProcess, kkube: KubeTestClient, policy_crds: bool
) -> None:
    bad = copy.deepcopy(POLICY)
    bad["metadata"]["name"] = "broken"
    bad["spec"]["set"]["tolerations"] = {"add": [{"key": "nvidia.com/gpu", "effect": "Sometimes"}]}
    with pytest.raises(KubeApiError) as info:
        kkube.request("POST", POLICIES, bad)
    assert info.value.status_code == 403
    assert "spec.set.tolerations.add[0].effect: toleration 'nvidia.com/gpu': effect 'Sometimes'" in str(
        info.value
    )
    kkube.request("POST", POLICIES, POLICY)

    ml = kkube.create_namespace("wmap-ml", labels={"team": "ml", "queue": "research"})
    web = kkube.create_namespace("wmap-web", labels={"team": "web"})
    _first_changed(kkube, ml, operator)
    for make in [deployment, *([jobset] if policy_crds else [])]:
        matched = kkube.create(make("matched", ml))
        assert all(_changed(t) for t in _templates(matched)), matched
        unmatched = kkube.create(make("unmatched", web))
        assert not any(_touched(t) for t in _templates(unmatched)), unmatched

    operator.stop()
    down = kkube.create(deployment("while-down", ml))  # failurePolicy Ignore: through, unchanged
    assert not _touched(_templates(down)[0]), down
    path = f"{ADMISSION}/mutatingwebhookconfigurations/{POLICY_MUTATING_NAME}"
    config = kkube.request("GET", path)
    config["webhooks"][0]["failurePolicy"] = "Fail"
    kkube.request("PUT", path, config)
    deadline = time.monotonic() + 20
    refused: KubeApiError | None = None
    for i in range(100):  # the API server picks up the changed configuration within a moment
        try:
            kkube.delete_obj(kkube.create(deployment(f"fail-{i}", ml)))
        except KubeApiError as exc:
            refused = exc
            break
        if time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert refused is not None and "failed calling webhook" in str(refused)
    assert POLICY_MUTATING_WEBHOOK in str(refused)
