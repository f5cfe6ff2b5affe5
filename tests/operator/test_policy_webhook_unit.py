"""The WorkloadPolicy webhooks without an API server: validation messages naming the field, and
the mutation's JSONPatch (applied here as the API server would) for covered top-level workloads
only; anything else, and any failure, passes unchanged."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import yaml

from workload_map.definitions_source import DefinitionSet, catalog_entries
from workload_map.operator.certs import (
    MUTATE_WORKLOAD_PATH,
    VALIDATE_POLICY_PATH,
    policy_webhook_configuration,
)
from workload_map.operator.policies import PolicyAdmission
from workload_map.operator.webhooks import AdmissionHandler
from workload_map.resolve.patch import apply_json_patch
from workload_map.resolve.policy import WorkloadPolicy, parse_policy

ROOT = Path(__file__).resolve().parents[2]
JOBSET = yaml.safe_load(
    (ROOT / "tests/catalog/lifecycles/jobset-x-k8s-io-jobset-v1alpha2/running.yaml").read_text()
)["object"]
POLICY = {
    "apiVersion": "workload-map.dev/v1alpha1",
    "kind": "WorkloadPolicy",
    "metadata": {"name": "ml"},
    "spec": {
        "namespaceSelector": {"matchLabels": {"team": "ml"}},
        "set": {
            "schedulerName": "kai-scheduler",
            "podLabels": {"set": {"kai.scheduler/queue": {"fromNamespaceLabel": "queue"}}},
        },
    },
}


class FakeSource:
    def __init__(
        self, policies: list[WorkloadPolicy], labels: dict[str, dict[str, str]], fail: bool = False
    ) -> None:
        self.policies = policies
        self.labels = labels
        self.fail = fail
        self.defs = DefinitionSet(catalog_entries())

    def current(self) -> tuple[list[WorkloadPolicy], DefinitionSet]:
        if self.fail:
            raise RuntimeError("informer cache broken")
        return self.policies, self.defs

    def namespace_labels(self, name: str) -> dict[str, str]:
        return self.labels.get(name, {})


def handler(source: FakeSource) -> AdmissionHandler:
    return AdmissionHandler(None, PolicyAdmission(source))  # type: ignore[arg-type]


def mutate(h: AdmissionHandler, obj: dict[str, Any], namespace: str, kind: tuple[str, str, str]) -> Any:
    group, version, kind_name = kind
    request = {
        "uid": "u1",
        "operation": "CREATE",
        "namespace": namespace,
        "kind": {"group": group, "version": version, "kind": kind_name},
        "object": obj,
    }
    return h.review(MUTATE_WORKLOAD_PATH, {"request": request})["response"]


JOBSET_KIND = ("jobset.x-k8s.io", "v1alpha2", "JobSet")


def test_matched_namespace_gets_the_patch() -> None:
    h = handler(FakeSource([parse_policy(POLICY)], {"ml": {"team": "ml", "queue": "research"}}))
    response = mutate(h, JOBSET, "ml", JOBSET_KIND)
    assert response["allowed"] is True and response["patchType"] == "JSONPatch"
    patched = apply_json_patch(JOBSET, json.loads(base64.b64decode(response["patch"])))
    for rj in patched["spec"]["replicatedJobs"]:
        tpl = rj["template"]["spec"]["template"]
        assert tpl["spec"]["schedulerName"] == "kai-scheduler"
        assert tpl["metadata"]["labels"]["kai.scheduler/queue"] == "research"


def test_what_passes_unchanged() -> None:
    h = handler(FakeSource([parse_policy(POLICY)], {"ml": {"team": "ml"}, "web": {"team": "web"}}))
    assert mutate(h, JOBSET, "web", JOBSET_KIND) == {"allowed": True, "uid": "u1"}  # not selected
    gizmo = {"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}}
    assert mutate(h, gizmo, "ml", ("example.com", "v1", "Gizmo")) == {
        "allowed": True,
        "uid": "u1",
    }  # no definition
    owned = json.loads(json.dumps(JOBSET))
    owned["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainJob",
            "name": "t",
            "uid": "1",
            "controller": True,
        }
    ]
    assert mutate(h, owned, "ml", JOBSET_KIND) == {"allowed": True, "uid": "u1"}  # a controller's child
    assert mutate(handler(FakeSource([], {})), JOBSET, "ml", JOBSET_KIND) == {"allowed": True, "uid": "u1"}


def test_a_failure_never_blocks() -> None:
    response = mutate(handler(FakeSource([], {}, fail=True)), JOBSET, "ml", JOBSET_KIND)
    assert response["allowed"] is True
    assert "workload-map policies were not applied: informer cache broken" in response["warnings"][0]


def test_missing_label_is_a_warning_on_the_admission() -> None:
    h = handler(FakeSource([parse_policy(POLICY)], {"ml": {"team": "ml"}}))
    response = mutate(h, JOBSET, "ml", JOBSET_KIND)
    assert response["allowed"] is True and "patch" in response
    assert "the namespace has no label 'queue'" in response["warnings"][0]


def test_policy_validation_names_the_field() -> None:
    h = handler(FakeSource([], {}))
    bad = json.loads(json.dumps(POLICY))
    bad["spec"]["set"]["tolerations"] = {"add": [{"key": "nvidia.com/gpu", "effect": "Sometimes"}]}
    request = {"uid": "u2", "operation": "CREATE", "object": bad}
    response = h.review(VALIDATE_POLICY_PATH, {"request": request})["response"]
    assert response["allowed"] is False
    assert response["status"]["message"].startswith("spec.set.tolerations.add[0].effect: ")
    request["object"] = POLICY
    assert h.review(VALIDATE_POLICY_PATH, {"request": request})["response"] == {"allowed": True, "uid": "u2"}
    # validation needs no policy source: the operator validates policies even without --policies
    plain = AdmissionHandler(None)
    assert plain.review(VALIDATE_POLICY_PATH, {"request": request})["response"]["allowed"] is True
    assert plain.review(MUTATE_WORKLOAD_PATH, {"request": request})["response"] == {
        "allowed": True,
        "uid": "u2",
    }


def test_configuration_never_fails_closed_by_default() -> None:
    config = policy_webhook_configuration(b"CA", ["jobset.x-k8s.io", "apps"], url="https://127.0.0.1:9443")
    (webhook,) = config["webhooks"]
    assert webhook["failurePolicy"] == "Ignore" and webhook["timeoutSeconds"] == 5
    assert webhook["clientConfig"]["url"] == "https://127.0.0.1:9443/mutate-workload"
    assert webhook["rules"][0]["apiGroups"] == ["apps", "jobset.x-k8s.io"]
    assert webhook["rules"][0]["operations"] == ["CREATE"]
