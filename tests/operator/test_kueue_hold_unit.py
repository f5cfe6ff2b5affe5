"""The Kueue hold webhook (``/hold-kueue``) without an API server: the AdmissionReview answer, its
JSONPatch applied as the API server would.

The rule is Kueue's job webhooks' ``Default`` on CREATE (``jobframework.ApplyDefaultForSuspend``):
the cases translate ``TestBaseWebhookDefault`` (pkg/controller/jobframework/base_webhook_test.go,
"update the suspend field with 'manageJobsWithoutQueueName=false'": a batch/v1 Job with a queue
label gets ``spec.suspend: true``) and the PyTorchJob webhook's ``TestDefault``
(pkg/controller/jobs/kubeflow/jobs/pytorchjob, same case name: ``runPolicy.suspend`` false becomes
true), plus its owner rule ("Do not default suspend a job whose owner is already managed by
Kueue"). The objects are the catalog's recorded lifecycles as users create them."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import yaml

from workload_map.definitions_source import DefinitionEntry
from workload_map.operator.certs import MUTATE_KUEUE_PATH, kueue_webhook_configuration
from workload_map.operator.kueue import admission_entries
from workload_map.operator.kueue_hold import KueueHold
from workload_map.operator.webhooks import AdmissionHandler
from workload_map.resolve import writeback
from workload_map.resolve.patch import apply_json_patch

LIFECYCLE = Path(__file__).parents[1] / "catalog" / "lifecycles"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def _created(folder: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    doc = yaml.safe_load((LIFECYCLE / folder / "created.yaml").read_text())
    obj: dict[str, Any] = copy.deepcopy(doc["object"])
    for key in ("uid", "creationTimestamp", "generation", "resourceVersion"):
        obj["metadata"].pop(key, None)
    if labels is not None:
        obj["metadata"]["labels"] = labels
    return obj


def _request(obj: dict[str, Any], operation: str = "CREATE") -> dict[str, Any]:
    group, _, version = str(obj["apiVersion"]).rpartition("/")
    return {
        "uid": "u-1",
        "kind": {"group": group, "version": version, "kind": obj["kind"]},
        "namespace": obj["metadata"].get("namespace", "ml"),
        "operation": operation,
        "object": obj,
    }


def _entries() -> list[DefinitionEntry]:
    return admission_entries()


def _apply(response: dict[str, Any], obj: dict[str, Any]) -> Any:
    assert response["patchType"] == "JSONPatch"
    return apply_json_patch(obj, json.loads(base64.b64decode(response["patch"])))


def _entry(entries: list[DefinitionEntry], kind: str) -> DefinitionEntry:
    return next(e for e in entries if e.gvk is not None and e.gvk.kind == kind)


def test_labelled_create_is_suspended_through_the_definition() -> None:
    entries = _entries()
    hold = KueueHold(entries)
    cases = [
        ("batch-job-v1", "Job", ("spec", "suspend")),
        ("kubeflow-org-pytorchjob-v1", "PyTorchJob", ("spec", "runPolicy", "suspend")),
        ("jobset-x-k8s-io-jobset-v1alpha2", "JobSet", ("spec", "suspend")),
    ]
    for folder, kind, path in cases:
        obj = _created(folder, {QUEUE_LABEL: "queue"})
        response = hold.mutate(_request(obj))
        assert response["allowed"] is True and "warnings" not in response, (kind, response)
        held = _apply(response, obj)
        value: Any = held
        for key in path:
            value = value[key]
        assert value is True, kind
        # The controller then finds it suspended (it would otherwise write the same change).
        assert not writeback.actions_not_kept(_entry(entries, kind).karta, held, None, "suspend")
        assert held["metadata"]["labels"] == {QUEUE_LABEL: "queue"}  # nothing else changed
        assert held == writeback.suspend(_entry(entries, kind).karta, obj).new_object


def test_what_passes_unchanged() -> None:
    hold = KueueHold(_entries())
    labelled = _created("batch-job-v1", {QUEUE_LABEL: "queue"})
    unlabelled = _created("batch-job-v1")
    empty_queue = _created("batch-job-v1", {QUEUE_LABEL: ""})  # Kueue: no queue name
    suspended = copy.deepcopy(labelled)
    suspended["spec"]["suspend"] = True
    # A Job a managed JobSet created (its owner is the one queued, as in Kueue's owner rule).
    child = copy.deepcopy(labelled)
    child["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "name": "trainer",
            "uid": "5e7b7ad0-0000-4000-8000-000000000001",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    for request in (
        _request(unlabelled),
        _request(empty_queue),
        _request(suspended),
        _request(child),
        _request(labelled, "UPDATE"),
        _request(labelled, "DELETE"),
    ):
        assert hold.mutate(request) == {"allowed": True}, request
    # A kind the controller does not manage (only JobSet here).
    only_jobsets = KueueHold([_entry(_entries(), "JobSet")])
    assert only_jobsets.mutate(_request(labelled)) == {"allowed": True}


def test_a_type_that_cannot_suspend_passes_with_a_warning() -> None:
    hold = KueueHold(admission_entries(["Deployment.apps"]))
    deployment = _created("apps-deployment-v1", {QUEUE_LABEL: "queue"})
    response = hold.mutate(_request(deployment))
    assert "patch" not in response and response["allowed"] is True
    [warning] = response["warnings"]
    name = deployment["metadata"]["name"]
    namespace = deployment["metadata"]["namespace"]
    assert f"Deployment {namespace}/{name} has the {QUEUE_LABEL} label" in warning
    assert "no suspend actions: Kueue cannot hold it" in warning


def test_an_object_the_definition_cannot_write_passes_with_a_warning() -> None:
    hold = KueueHold(_entries())
    broken = _created("batch-job-v1", {QUEUE_LABEL: "queue"})
    broken["spec"] = "not an object"
    response = hold.mutate(_request(broken))
    assert response["allowed"] is True and "patch" not in response
    assert "not suspended for Kueue at creation" in response["warnings"][0]


def test_review_through_the_admission_handler() -> None:
    obj = _created("batch-job-v1", {QUEUE_LABEL: "queue"})
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": _request(obj)}
    answer = AdmissionHandler(None, kueue=KueueHold(_entries())).review(MUTATE_KUEUE_PATH, review)
    assert answer["response"]["uid"] == "u-1"
    assert _apply(answer["response"], obj)["spec"]["suspend"] is True
    # Without --kueue the path answers "allowed", unchanged.
    off = AdmissionHandler(None).review(MUTATE_KUEUE_PATH, review)
    assert off["response"] == {"allowed": True, "uid": "u-1"}


def test_configuration_only_sends_labelled_creates() -> None:
    config = kueue_webhook_configuration(b"ca", ["jobset.x-k8s.io", "batch", "batch"], url="https://x:9443")
    [webhook] = config["webhooks"]
    assert webhook["clientConfig"]["url"] == "https://x:9443" + MUTATE_KUEUE_PATH
    assert webhook["rules"] == [
        {
            "apiGroups": ["batch", "jobset.x-k8s.io"],
            "apiVersions": ["*"],
            "operations": ["CREATE"],
            "resources": ["*"],
            "scope": "*",
        }
    ]
    assert webhook["objectSelector"] == {"matchExpressions": [{"key": QUEUE_LABEL, "operator": "Exists"}]}
    assert webhook["failurePolicy"] == "Ignore"
