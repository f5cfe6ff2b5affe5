"""The gang controller on the real test API server (the corpus cluster: Volcano, scheduler-plugins
and KAI CRDs from ``$WMAP_SHARED_DIR/crds``, and the frameworks' CRDs).

The workloads are the catalog's lifecycle fixtures (``tests/catalog/lifecycles/*/created.yaml``),
each shaped as its framework's controller or user creates it (framework-shapes.md). The test API
server runs no controller-manager, so garbage collection is played by
:func:`tests.gangs.test_acceptance.collect_garbage` (kube's rule) after the test has checked what
the real collector relies on: the owner reference names the live workload exactly.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.gangs.test_acceptance import collect_garbage
from tests.operator.helpers import OperatorProcess
from tests.support.cluster import TestCluster
from tests.support.kube import KubeApiError, KubeTestClient, owner_reference
from workload_map.cluster import ConnectionOptions, KubeClient
from workload_map.definitions_source import DefinitionEntry, catalog_entries
from workload_map.model.definition import Karta
from workload_map.operator.gangs import MANAGED_BY, MANAGED_BY_LABEL, GangController
from workload_map.operator.gangs_config import GangConfig
from workload_map.operator.handlers import ServedKinds

LIFECYCLES = Path(__file__).parents[1] / "catalog" / "lifecycles"
VOLCANO = "scheduling.volcano.sh/v1beta1"
COSCHEDULING = "scheduling.x-k8s.io/v1alpha1"
WAIT = 180.0  # generous: the machine is shared (load 10-30), conditions are polled


def _fixture(slug: str, namespace: str) -> dict[str, Any]:
    obj: dict[str, Any] = copy.deepcopy(
        yaml.safe_load((LIFECYCLES / slug / "created.yaml").read_text())["object"]
    )
    meta = obj["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"):
        meta.pop(key, None)
    meta["namespace"] = namespace
    obj.pop("status", None)
    return obj


@pytest.fixture
def client(cluster: TestCluster, tmp_path: Path) -> Iterator[KubeClient]:
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    c = KubeClient.from_options(ConnectionOptions(kubeconfig=str(kubeconfig)), connect_tries=1)
    yield c
    c.close()


def _controller(
    client: KubeClient,
    scheduler: str,
    namespace: str,
    *,
    catalog: list[DefinitionEntry] | None = None,
    selector: str = "",
) -> GangController:
    served = ServedKinds(client, list)
    entries = catalog if catalog is not None else catalog_entries()
    return GangController(
        client,
        GangConfig.build(scheduler, [namespace], selector, workers=2),
        served.resource,
        catalog=lambda: list(entries),
    ).start()


@pytest.fixture
def volcano(client: KubeClient, namespace: str) -> Iterator[GangController]:
    ctl = _controller(client, "volcano", namespace)
    yield ctl
    ctl.stop()


def _pod_group(
    kube: KubeTestClient, namespace: str, name: str, api_version: str = VOLCANO
) -> dict[str, Any] | None:
    try:
        return kube.get(api_version, "podgroups", name, namespace)
    except KubeApiError as exc:
        if exc.status_code == 404:
            return None
        raise


def _wait_pod_group(
    kube: KubeTestClient,
    namespace: str,
    name: str,
    check: Callable[[dict[str, Any]], bool] = lambda _p: True,
    api_version: str = VOLCANO,
) -> dict[str, Any]:
    """The PodGroup once it exists and passes ``check``."""

    def found() -> dict[str, Any] | None:
        p = _pod_group(kube, namespace, name, api_version)
        return p if p is not None and check(p) else None

    result = kube.wait_until(found, timeout=WAIT)
    assert result is not None
    return result


def _wait_list(
    check: Callable[[], list[dict[str, Any]] | None], kube: KubeTestClient
) -> list[dict[str, Any]]:
    result = kube.wait_until(check, timeout=WAIT)
    assert result is not None
    return result


def _idle(kube: KubeTestClient, ctl: GangController) -> None:
    """Wait until the controller's queue is empty and stays so for a moment."""

    def quiet() -> bool:
        if len(ctl.queue) or ctl.queue.pending_delayed:
            return False
        seen = ctl.queue.processed
        time.sleep(0.5)
        return ctl.queue.processed == seen and not len(ctl.queue)

    kube.wait_until(quiet, timeout=WAIT)


def _events(kube: KubeTestClient, namespace: str, reason: str) -> list[dict[str, Any]]:
    return [e for e in kube.list("v1", "events", namespace) if e.get("reason") == reason]


def test_creates_updates_on_scale_links_pods_and_is_collected_with_the_workload(
    kube: KubeTestClient, namespace: str, volcano: GangController
) -> None:
    job = kube.create(_fixture("kubeflow-org-pytorchjob-v1", namespace))  # Master 1 + Worker 3
    name = job["metadata"]["name"]
    pg = _wait_pod_group(kube, namespace, name)
    assert pg["spec"]["minMember"] == 4
    assert pg["spec"]["minResources"]["nvidia.com/gpu"] == "32"
    assert pg["spec"]["queue"] == "default"
    assert pg["metadata"]["labels"][MANAGED_BY_LABEL] == MANAGED_BY
    # What the garbage collector follows: one controller reference naming the live workload.
    assert pg["metadata"]["ownerReferences"] == [owner_reference(job)]

    # Pods are linked through the templates (the write-back), only where the template lacks it.
    def linked() -> dict[str, Any] | None:
        live = kube.get_obj(job)
        tpl = live["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
        return live if tpl["spec"].get("schedulerName") == "volcano" else None

    live = kube.wait_until(linked, timeout=WAIT)
    assert live is not None
    for role in ("Master", "Worker"):
        tpl = live["spec"]["pytorchReplicaSpecs"][role]["template"]
        assert tpl["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == name
        assert tpl["metadata"]["annotations"]["volcano.sh/task-spec"] == role.lower()

    # Scale: Worker 3 -> 5; the PodGroup follows (one update, same object).
    kube.patch(job, {"spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 5}}}})
    scaled = _wait_pod_group(kube, namespace, name, lambda p: bool(p["spec"]["minMember"] == 6))
    assert scaled["metadata"]["uid"] == pg["metadata"]["uid"]
    assert scaled["spec"]["minResources"]["nvidia.com/gpu"] == "48"
    kube.wait_until(lambda: volcano.stats.updated >= 1, timeout=WAIT)  # counted after the write returns

    # Steady state: reconciling again changes nothing (no write, same resourceVersion).
    _idle(kube, volcano)
    kube.wait_until(
        lambda: not volcano.queue.is_processing(("kubeflow.org/v1", "PyTorchJob", namespace, name)),
        timeout=WAIT,
    )
    before, planned = volcano.stats.api_calls, volcano.stats.reconciled
    volcano.reconcile(("kubeflow.org/v1", "PyTorchJob", namespace, name))
    assert volcano.stats.reconciled == planned  # seen converged at this version: not even planned
    volcano.reconcile(("kubeflow.org/v1", "PyTorchJob", namespace, name), force=True)
    assert volcano.stats.reconciled == planned + 1
    assert volcano.stats.api_calls == before
    assert (
        _wait_pod_group(kube, namespace, name)["metadata"]["resourceVersion"]
        == (scaled["metadata"]["resourceVersion"])
    )

    # Deleted by hand: made again.
    kube.delete(VOLCANO, "podgroups", name, namespace)
    again = _wait_pod_group(
        kube, namespace, name, lambda p: bool(p["metadata"]["uid"] != pg["metadata"]["uid"])
    )
    assert again["spec"]["minMember"] == 6

    # The workload goes: its PodGroup goes with it (kube's garbage-collector rule).
    kube.delete_obj(job)
    assert collect_garbage(kube, [again]) == [name]
    assert _pod_group(kube, namespace, name) is None


def test_a_template_that_already_names_a_scheduler_keeps_it(
    kube: KubeTestClient, namespace: str, volcano: GangController
) -> None:
    obj = _fixture("kubeflow-org-pytorchjob-v1", namespace)
    obj["metadata"]["name"] = "own-scheduler"
    obj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["schedulerName"] = "my-scheduler"
    job = kube.create(obj)
    _wait_pod_group(kube, namespace, "own-scheduler")

    def master_linked() -> dict[str, Any] | None:
        live = kube.get_obj(job)
        return (
            live
            if live["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"].get("schedulerName")
            else None
        )

    live = kube.wait_until(master_linked, timeout=WAIT)
    assert live is not None
    assert live["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["schedulerName"] == "volcano"
    assert (
        live["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["schedulerName"] == "my-scheduler"
    )
    kept = kube.wait_until(lambda: _events(kube, namespace, "GangLinkKept"), timeout=WAIT)
    assert "my-scheduler" in kept[0]["message"]


def test_stands_aside_where_the_training_operator_integrates(
    kube: KubeTestClient, namespace: str, volcano: GangController
) -> None:
    # The training operator makes the PodGroup itself when runPolicy.schedulingPolicy is set
    # (framework-shapes-extra.md, Kubeflow training operator).
    obj = _fixture("kubeflow-org-pytorchjob-v1", namespace)
    obj["metadata"]["name"] = "own-gang"
    obj["spec"]["runPolicy"]["schedulingPolicy"] = {"minAvailable": 4}
    job = kube.create(obj)
    events = kube.wait_until(lambda: _events(kube, namespace, "GangStandAside"), timeout=WAIT)
    assert events[0]["involvedObject"]["uid"] == job["metadata"]["uid"]
    assert "training" in events[0]["message"] and "schedulingPolicy" in events[0]["message"]
    assert _pod_group(kube, namespace, "own-gang") is None
    live = kube.get_obj(job)
    assert "schedulerName" not in live["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert volcano.stats.stood_aside >= 1


def test_an_object_another_owner_holds_is_never_overwritten(
    kube: KubeTestClient, namespace: str, volcano: GangController
) -> None:
    holder = kube.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "holder", "namespace": namespace}}
    )
    theirs = kube.create(
        {
            "apiVersion": VOLCANO,
            "kind": "PodGroup",
            "metadata": {
                "name": "taken",
                "namespace": namespace,
                "ownerReferences": [owner_reference(holder)],
            },
            "spec": {"minMember": 1, "queue": "other"},
        }
    )
    obj = _fixture("kubeflow-org-pytorchjob-v1", namespace)
    obj["metadata"]["name"] = "taken"
    job = kube.create(obj)
    events = kube.wait_until(lambda: _events(kube, namespace, "GangObjectConflict"), timeout=WAIT)
    assert "ConfigMap/holder" in events[0]["message"]
    assert events[0]["involvedObject"]["uid"] == job["metadata"]["uid"]
    now = _pod_group(kube, namespace, "taken")
    assert now is not None and now["spec"] == theirs["spec"]
    assert now["metadata"]["resourceVersion"] == theirs["metadata"]["resourceVersion"]
    # Pods are not linked to a gang that is not theirs.
    live = kube.get_obj(job)
    assert "schedulerName" not in live["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    # Reconciling again reports nothing new (once per workload and message).
    count = len(events)
    volcano.reconcile(("kubeflow.org/v1", "PyTorchJob", namespace, "taken"), force=True)
    assert len(_events(kube, namespace, "GangObjectConflict")) == count


def test_a_missing_scheduler_crd_is_one_warning_and_no_retry(
    kube: KubeTestClient, client: KubeClient, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    # The Workload API (scheduling.k8s.io/v1beta1 Workload, PodGroup) is not served by v1.20.
    caplog.set_level(logging.WARNING, logger="workload_map.operator.gangs")
    ctl = _controller(client, "workload-api", namespace)
    try:
        obj = _fixture("kubeflow-org-pytorchjob-v1", namespace)
        kube.create(obj)
        name = obj["metadata"]["name"]
        key = ("kubeflow.org/v1", "PyTorchJob", namespace, name)
        kube.wait_until(lambda: ctl.stats.missing_crd >= 1 and ctl.queue.processed > 1, timeout=WAIT)
        kube.wait_until(lambda: len(ctl.queue) == 0 and not ctl.queue.is_processing(key), timeout=WAIT)
        first = ctl.stats.missing_crd
        for _ in range(3):
            ctl.reconcile(key, force=True)
        warnings = [r for r in caplog.records if "is not served by this cluster" in r.getMessage()]
        assert ctl.stats.missing_crd == first == len(warnings)
        assert 1 <= len(warnings) <= 2  # one per kind (Workload, PodGroup), never repeated
        assert "Workload" in warnings[0].getMessage()
        assert ctl.queue.pending_delayed == 0  # nothing scheduled for a retry
        assert ctl.stats.created == 0
        live = kube.get_obj(obj)
        assert "schedulerName" not in live["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    finally:
        ctl.stop()


def _per_replicated_job(entry: DefinitionEntry) -> DefinitionEntry:
    """The catalog JobSet definition with one gang per replicatedJob (podGroups format, member
    ``replicatedjob``): the plan's object count follows the JobSet's replicatedJobs."""
    doc = entry.karta.model_dump(by_alias=True, exclude_none=True)
    doc["spec"]["optimizationInstructions"]["gangScheduling"] = {
        "podGroups": [{"name": "rj", "members": [{"componentName": "replicatedjob"}]}]
    }
    return DefinitionEntry(Karta.model_validate(doc), "catalog", entry.source)


def test_objects_the_plan_no_longer_produces_are_deleted(
    kube: KubeTestClient, client: KubeClient, namespace: str
) -> None:
    entries = catalog_entries()
    jobset = next(e for e in entries if e.gvk is not None and e.gvk.kind == "JobSet")
    custom = [_per_replicated_job(jobset) if e is jobset else e for e in entries]
    ctl = _controller(client, "coscheduling", namespace, catalog=custom)
    try:
        js = kube.create(_fixture("jobset-x-k8s-io-jobset-v1alpha2", namespace))  # leader + workers
        name = js["metadata"]["name"]

        def ours() -> list[dict[str, Any]]:
            return kube.list(
                COSCHEDULING, "podgroups", namespace, label_selector=f"{MANAGED_BY_LABEL}={MANAGED_BY}"
            )

        both = _wait_list(lambda: ours() if len(ours()) == 2 else None, kube)
        names = sorted(p["metadata"]["name"] for p in both)
        assert all(n.startswith(f"{name}-rj-replicatedjob-") for n in names), names
        live = kube.get_obj(js)
        live["spec"]["replicatedJobs"] = [
            rj for rj in live["spec"]["replicatedJobs"] if rj["name"] == "leader"
        ]
        try:
            kube.update(live)
        except KubeApiError as exc:  # JobSet's CRD may make replicatedJobs immutable; then recreate
            pytest.skip(f"replicatedJobs cannot change on this CRD: {exc}")

        # One gang left: it takes the workload's own name, so both old objects go.
        def only_new() -> list[dict[str, Any]] | None:
            current = ours()
            return current if current and all(p["metadata"]["name"] not in names for p in current) else None

        left = _wait_list(only_new, kube)
        assert [p["metadata"]["name"] for p in left] == [name]
        assert left[0]["spec"]["minMember"] == 1
        assert ctl.stats.deleted == 2
    finally:
        ctl.stop()


def test_only_opted_in_workloads_get_objects(
    kube: KubeTestClient, client: KubeClient, namespace: str
) -> None:
    other = kube.create_namespace()
    ctl = _controller(client, "volcano", namespace, selector="gangs=on")
    try:
        plain = kube.create(_fixture("kubeflow-org-pytorchjob-v1", namespace))
        labelled = _fixture("kubeflow-org-pytorchjob-v1", namespace)
        labelled["metadata"]["name"] = "opted-in"
        labelled["metadata"]["labels"] = {"gangs": "on"}
        kube.create(labelled)
        elsewhere = _fixture("kubeflow-org-pytorchjob-v1", other)
        elsewhere["metadata"]["labels"] = {"gangs": "on"}
        kube.create(elsewhere)
        _wait_pod_group(kube, namespace, "opted-in")
        kube.wait_until(lambda: len(ctl.queue) == 0, timeout=WAIT)
        assert _pod_group(kube, namespace, plain["metadata"]["name"]) is None
        assert _pod_group(kube, other, elsewhere["metadata"]["name"]) is None
    finally:
        ctl.stop()


def test_wmap_operator_gangs_runs_the_controller(
    cluster: TestCluster, kube: KubeTestClient, karta_crd: str, namespace: str, tmp_path: Path
) -> None:
    """``wmap operator --gangs`` as users run it: the engine starts the controller, which acts
    only while its replica leads."""
    proc = OperatorProcess(
        cluster,
        tmp_path,
        namespace,
        identity="gangs-a",
        register=False,
        extra=("--gangs", "--gang-scheduler", "coscheduling", "--gang-namespace", namespace),
    )
    try:
        proc.ready(timeout=WAIT)
        job = kube.create(_fixture("kubeflow-org-pytorchjob-v1", namespace))
        pg = _wait_pod_group(kube, namespace, job["metadata"]["name"], api_version=COSCHEDULING)
        assert pg["spec"]["minMember"] == 4
        assert pg["metadata"]["ownerReferences"] == [owner_reference(job)]

        def labelled() -> dict[str, Any] | None:
            live = kube.get_obj(job)
            tpl = live["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]
            labels = (tpl.get("metadata") or {}).get("labels") or {}
            return live if labels.get("scheduling.x-k8s.io/pod-group") == job["metadata"]["name"] else None

        kube.wait_until(labelled, timeout=WAIT)
    finally:
        proc.stop()
    assert "Traceback" not in proc.log(), proc.log()
