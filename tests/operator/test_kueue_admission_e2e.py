"""The Kueue admission controller against the real API server, with Kueue's real CRDs (v0.19.2,
``$WMAP_SHARED_DIR/crds/kueue``) and JobSet's, and a JobSet shaped as users create it (the
catalog's lifecycle fixture ``jobset-x-k8s-io-jobset-v1alpha2/created.yaml``).

Kueue itself cannot run here, so its scheduler is played by status patches shaped as Kueue writes
them; each names the Kueue source it follows. The queue objects (ResourceFlavor, ClusterQueue,
LocalQueue) are created from Kueue's documented single-ClusterQueue setup
(site/static/examples/admin/single-clusterqueue-setup.yaml), so the real CRDs check them too.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.kube import KubeTestClient
from workload_map.catalog import get_definition
from workload_map.cluster import ConnectionOptions, KubeClient
from workload_map.definitions_source import DefinitionEntry
from workload_map.operator.kueue import KueueAdmission

pytestmark = pytest.mark.cluster

LIFECYCLE = Path(__file__).parents[1] / "catalog" / "lifecycles"
KUEUE = "kueue.x-k8s.io/v1beta2"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
T0 = "2026-12-02T07:00:00Z"


def _jobset(namespace: str, name: str) -> dict[str, Any]:
    doc = yaml.safe_load((LIFECYCLE / "jobset-x-k8s-io-jobset-v1alpha2" / "created.yaml").read_text())
    obj: dict[str, Any] = copy.deepcopy(doc["object"])
    meta = obj["metadata"]
    for key in ("uid", "creationTimestamp", "generation"):
        meta.pop(key, None)
    meta.update(namespace=namespace, name=name, labels={QUEUE_LABEL: "team-a"})
    # A user's own placement on the workers, which the admission must keep and eviction restore.
    workers = obj["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
    workers["nodeSelector"] = {"team": "a"}
    workers["tolerations"] = [{"key": "team-a", "operator": "Exists", "effect": "NoSchedule"}]
    return obj


def _entry(api_version: str, kind: str) -> DefinitionEntry:
    karta = get_definition(api_version, kind)
    assert karta is not None
    return DefinitionEntry(karta, "catalog")


def _condition(kind: str, status: str, reason: str, message: str) -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": T0}


def _admit(kube: KubeTestClient, wl: dict[str, Any], flavors: dict[str, dict[str, str]]) -> None:
    """Kueue's scheduler admitting ``wl`` (QuotaReserved, then Admitted once no admission check
    is pending): the status ``workload.SetQuotaReservation`` + ``SyncAdmittedCondition`` write
    (pkg/workload/admission.go), as kueue's job_controller_test.go builds it with
    ``MakeAdmission("cq").PodSets(...)`` and ``Admitted(true)``: one podSetAssignment per podSet
    with its resource -> flavor map and count."""
    assignments = [
        {"name": ps["name"], "flavors": flavors[ps["name"]], "count": ps["count"]}
        for ps in wl["spec"]["podSets"]
    ]
    kube.set_status(
        wl,
        {
            "admission": {"clusterQueue": "cluster-queue", "podSetAssignments": assignments},
            "conditions": [
                _condition(
                    "QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cluster-queue"
                ),
                _condition("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
        },
    )


def _evict(kube: KubeTestClient, wl: dict[str, Any]) -> None:
    """Kueue preempting ``wl``: ``workload.SetEvictedCondition`` (Evicted true, reason Preempted),
    then ``UnsetQuotaReservationWithCondition`` clears ``status.admission`` and sets QuotaReserved
    and Admitted false (pkg/workload/workload.go; job_controller_test.go case "when workload is
    evicted, suspend, reset startTime and restore node affinity")."""
    kube.set_status(
        wl,
        {
            "conditions": [
                _condition(
                    "QuotaReserved", "False", "Pending", "Preempted to accommodate a higher priority Workload"
                ),
                _condition("Admitted", "False", "NoReservation", "The workload has no reservation"),
                _condition(
                    "Evicted", "True", "Preempted", "Preempted to accommodate a higher priority Workload"
                ),
            ]
        },
    )


@pytest.fixture
def client(cluster: Any, tmp_path: Path) -> Iterator[KubeClient]:
    kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    c = KubeClient.from_options(ConnectionOptions(kubeconfig=str(kubeconfig)), connect_tries=1)
    yield c
    c.close()


@pytest.fixture
def queues(kube: KubeTestClient) -> Iterator[tuple[str, str]]:
    """Two ResourceFlavors, a ClusterQueue over them and (per test namespace) a LocalQueue."""
    suffix = kube.create_namespace("wmap-kq")  # a unique name for the cluster-scoped objects
    on_demand, spot = f"on-demand-{suffix}", f"spot-{suffix}"
    created = [
        kube.create(
            {
                "apiVersion": KUEUE,
                "kind": "ResourceFlavor",
                "metadata": {"name": on_demand},
                "spec": {"nodeLabels": {"instance-type": "on-demand"}},
            }
        ),
        kube.create(
            {
                "apiVersion": KUEUE,
                "kind": "ResourceFlavor",
                "metadata": {"name": spot},
                "spec": {
                    "nodeLabels": {"instance-type": "spot", "cloud.example.com/gpu": "h100"},
                    "tolerations": [
                        {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
                    ],
                },
            }
        ),
        kube.create(
            {
                "apiVersion": KUEUE,
                "kind": "ClusterQueue",
                "metadata": {"name": f"cluster-queue-{suffix}"},
                "spec": {
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                            "flavors": [
                                {
                                    "name": name,
                                    "resources": [
                                        {"name": "cpu", "nominalQuota": "200"},
                                        {"name": "memory", "nominalQuota": "2Ti"},
                                        {"name": "nvidia.com/gpu", "nominalQuota": "40"},
                                    ],
                                }
                                for name in (on_demand, spot)
                            ],
                        }
                    ],
                },
            }
        ),
    ]
    yield on_demand, spot
    for obj in created:
        kube.delete_obj(obj)


def _local_queue(kube: KubeTestClient, namespace: str, suffix: str) -> None:
    kube.create(
        {
            "apiVersion": KUEUE,
            "kind": "LocalQueue",
            "metadata": {"name": "team-a", "namespace": namespace},
            "spec": {"clusterQueue": f"cluster-queue-{suffix}"},
        }
    )


def _templates(js: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {rj["name"]: rj["template"]["spec"]["template"]["spec"] for rj in js["spec"]["replicatedJobs"]}


def _wait(kube: KubeTestClient, check: Any, timeout: float = 120.0) -> Any:
    return kube.wait_until(check, timeout=timeout, interval=0.2)


@pytest.fixture
def controller(client: KubeClient) -> Iterator[KueueAdmission]:
    ctl = KueueAdmission(
        client,
        [_entry("jobset.x-k8s.io/v1alpha2", "JobSet"), _entry("apps/v1", "Deployment")],
        workers=2,
        resync=3600,
        crd_check_interval=3600,
    ).start()
    try:
        _wait_running(ctl)
        yield ctl
    finally:
        ctl.stop()


def _wait_running(ctl: KueueAdmission) -> None:
    import time

    deadline = time.monotonic() + 120
    while not (ctl.running and ctl.synced()):
        assert time.monotonic() < deadline, "the Kueue admission controller did not start"
        time.sleep(0.1)


def test_suspend_create_admit_evict(
    kube: KubeTestClient, controller: KueueAdmission, queues: tuple[str, str], namespace: str
) -> None:
    on_demand, spot = queues
    _local_queue(kube, namespace, on_demand.removeprefix("on-demand-"))
    js = kube.create(_jobset(namespace, "train"))
    original = _templates(js)
    assert js["spec"]["suspend"] is False  # as the user created it

    # Held: suspended through the definition, and its Workload created with an owner reference.
    wl = _wait(kube, lambda: _get(kube, namespace, "jobset-train"))
    held = _wait(kube, lambda: (o := kube.get_obj(js))["spec"]["suspend"] is True and o)
    assert _templates(held) == original
    (ref,) = wl["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "JobSet",
        "train",
        js["metadata"]["uid"],
        True,
    )
    assert [(ps["name"], ps["count"]) for ps in wl["spec"]["podSets"]] == [("leader", 1), ("workers", 4)]
    assert wl["spec"]["queueName"] == "team-a"

    # Admitted: the flavors' node labels and tolerations in each podSet's template, then resumed.
    _admit(
        kube,
        wl,
        {"leader": {"cpu": on_demand, "nvidia.com/gpu": on_demand}, "workers": {"cpu": spot, "memory": spot}},
    )
    running = _wait(kube, lambda: (o := kube.get_obj(js))["spec"]["suspend"] is False and o)
    t = _templates(running)
    assert t["leader"]["nodeSelector"] == {"instance-type": "on-demand"}
    assert "tolerations" not in t["leader"]
    assert t["workers"]["nodeSelector"] == {
        "team": "a",
        "instance-type": "spot",
        "cloud.example.com/gpu": "h100",
    }
    assert t["workers"]["tolerations"] == [
        {"key": "team-a", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"},
    ]
    # Nothing else in the templates moved.
    for name in ("leader", "workers"):
        assert {k: v for k, v in t[name].items() if k not in ("nodeSelector", "tolerations")} == {
            k: v for k, v in original[name].items() if k not in ("nodeSelector", "tolerations")
        }

    # As Kueue's job reconciler records them, on the workload.
    reasons = _wait(
        kube, lambda: (r := _reasons(kube, namespace, "train")) >= {"CreatedWorkload", "Started"} and r
    )
    assert "Stopped" in reasons  # suspended at first: not admitted by a cluster queue

    # Evicted: suspended again and the templates restored from the Workload's podSets.
    _evict(kube, kube.get_obj(wl))
    stopped = _wait(kube, lambda: (o := kube.get_obj(js))["spec"]["suspend"] is True and o)
    _wait(kube, lambda: _templates(kube.get_obj(js)) == original)
    assert stopped["metadata"]["uid"] == js["metadata"]["uid"]
    assert controller.problems() == {}

    # Admitted again (Kueue's SetQuotaReservation sets Evicted false): runs again.
    wl = kube.get_obj(wl)
    _admit(kube, wl, {"leader": {"cpu": on_demand}, "workers": {"cpu": on_demand}})
    again = _wait(kube, lambda: (o := kube.get_obj(js))["spec"]["suspend"] is False and o)
    assert _templates(again)["workers"]["nodeSelector"] == {"team": "a", "instance-type": "on-demand"}


def _reasons(kube: KubeTestClient, namespace: str, name: str) -> set[str]:
    events = kube.request("GET", f"/api/v1/namespaces/{namespace}/events")["items"]
    return {e["reason"] for e in events if e["involvedObject"]["name"] == name}


def test_a_queued_workload_keeps_its_workload_in_step(
    kube: KubeTestClient, controller: KueueAdmission, namespace: str
) -> None:
    """Scaled while pending: the Workload no longer stands for it and is created again (Kueue's
    job reconciler deletes a Workload that is not equivalent to its job); a Workload of the same
    name owned by another object is left alone and reported."""
    js = kube.create(_jobset(namespace, "grow"))
    wl = _wait(kube, lambda: _get(kube, namespace, "jobset-grow"))
    _wait(kube, lambda: kube.get_obj(js)["spec"]["suspend"] is True)
    current = kube.get_obj(js)
    current["spec"]["replicatedJobs"][1]["replicas"] = 3
    kube.update(current)
    fresh = _wait(
        kube,
        lambda: (
            (w := _get(kube, namespace, "jobset-grow"))
            and w["metadata"]["uid"] != wl["metadata"]["uid"]
            and [(ps["name"], ps["count"]) for ps in w["spec"]["podSets"]] == [("leader", 1), ("workers", 6)]
            and w
        ),
    )
    assert fresh["metadata"]["ownerReferences"][0]["uid"] == js["metadata"]["uid"]

    # A Workload named as ours would be, controlled by a ConfigMap.
    cm = kube.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": namespace}}
    )
    foreign = copy.deepcopy(fresh)
    foreign["metadata"] = {
        "name": "jobset-taken",
        "namespace": namespace,
        "labels": {"kueue.x-k8s.io/job-uid": "x"},
        "ownerReferences": [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "name": "other",
                "uid": cm["metadata"]["uid"],
                "controller": True,
            }
        ],
    }
    kube.create(foreign)
    taken = kube.create(_jobset(namespace, "taken"))
    text = _wait(kube, lambda: _problem(controller, "taken"))
    assert (
        "Workload " + namespace + "/jobset-taken belongs to ConfigMap other, not to it; nothing written"
        in text
    )
    assert kube.get_obj(taken)["metadata"]["resourceVersion"] == taken["metadata"]["resourceVersion"]
    assert "KueueAdmission" in _wait(kube, lambda: _reasons(kube, namespace, "taken"))


def _get(kube: KubeTestClient, namespace: str, name: str) -> dict[str, Any] | None:
    from tests.support.kube import KubeApiError

    try:
        return kube.get(KUEUE, "workloads", name, namespace)
    except KubeApiError as exc:
        if exc.status_code == 404:
            return None
        raise


def _problem(controller: KueueAdmission, name: str) -> str:
    return next((m for k, m in controller.problems().items() if k[3] == name), "")


def test_bad_admissions_write_nothing(
    kube: KubeTestClient, controller: KueueAdmission, queues: tuple[str, str], namespace: str
) -> None:
    on_demand, _ = queues
    # A podSet name the plan does not have (Kueue's BadPodSetsInfoLenError / podSet lookup).
    js = kube.create(_jobset(namespace, "stray"))
    wl = _wait(kube, lambda: _get(kube, namespace, "jobset-stray"))
    held = _wait(kube, lambda: (o := kube.get_obj(js))["spec"]["suspend"] is True and o)
    kube.set_status(
        wl,
        {
            "admission": {
                "clusterQueue": "cluster-queue",
                "podSetAssignments": [
                    {"name": "leader", "flavors": {"cpu": on_demand}, "count": 1},
                    {"name": "launcher", "flavors": {"cpu": on_demand}, "count": 4},
                ],
            },
            "conditions": [
                _condition("QuotaReserved", "True", "QuotaReserved", "Quota reserved"),
                _condition("Admitted", "True", "Admitted", "The workload is admitted"),
            ],
        },
    )
    text = _wait(kube, lambda: _problem(controller, "stray"))
    assert 'assigns podSet "launcher", which JobSet' in text and "nothing written" in text
    assert kube.get_obj(js)["metadata"]["resourceVersion"] == held["metadata"]["resourceVersion"]

    # A flavor that does not exist (kueue podset_test.go TestFromAssignment "flavor not found").
    js2 = kube.create(_jobset(namespace, "noflavor"))
    wl2 = _wait(kube, lambda: _get(kube, namespace, "jobset-noflavor"))
    held2 = _wait(kube, lambda: (o := kube.get_obj(js2))["spec"]["suspend"] is True and o)
    _admit(kube, wl2, {"leader": {"cpu": "no-such-flavor"}, "workers": {"cpu": on_demand}})
    text = _wait(kube, lambda: _problem(controller, "noflavor"))
    assert 'ResourceFlavor "no-such-flavor", which does not exist' in text
    assert kube.get_obj(js2)["metadata"]["resourceVersion"] == held2["metadata"]["resourceVersion"]

    # A type whose definition cannot suspend: reported, nothing written, no Workload.
    deploy = kube.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace, "labels": {QUEUE_LABEL: "team-a"}},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
                },
            },
        }
    )
    text = _wait(kube, lambda: _problem(controller, "web"))
    assert 'definition "' in text and "no suspend actions" in text and "nothing written" in text
    assert kube.get_obj(deploy)["metadata"]["resourceVersion"] == deploy["metadata"]["resourceVersion"]
    assert _get(kube, namespace, "deployment-web") is None


def test_missing_kueue_crds_warn_once(
    kkube: KubeTestClient, kcluster: Any, tmp_path: Path, caplog: Any
) -> None:
    """The Karta cluster serves no Kueue: one warning, one look per interval, nothing watched."""
    kubeconfig = kcluster.write_kubeconfig(tmp_path / "kubeconfig")
    with KubeClient.from_options(ConnectionOptions(kubeconfig=str(kubeconfig)), connect_tries=1) as client:
        ctl = KueueAdmission(client, [_entry("jobset.x-k8s.io/v1alpha2", "JobSet")], crd_check_interval=3600)
        caplog.set_level(logging.WARNING, logger="workload_map.operator.kueue")
        ctl.start()
        try:
            import time

            deadline = time.monotonic() + 120
            while ctl.crd_checks < 1:
                assert time.monotonic() < deadline
                time.sleep(0.1)
            assert not ctl.check_kueue()  # the next interval's look: no second warning
        finally:
            ctl.stop()
    assert ctl.crd_checks == 2
    assert not ctl.running and ctl.kinds == {}
    (text,) = ctl.crd_warnings
    assert "serves no kueue.x-k8s.io/v1beta2 workloads or resourceflavors" in text
    assert [r.getMessage() for r in caplog.records if r.name == "workload_map.operator.kueue"] == [text]


def test_operator_flag_runs_it(kcluster: Any, kkube: KubeTestClient, tmp_path: Path) -> None:
    """``wmap operator --kueue`` as users run it: on a cluster without Kueue it says so once in
    its log and stays ready (the reconciler and health endpoints are unaffected)."""
    from tests.operator.helpers import OperatorProcess, wait_for

    opns = kkube.create_namespace("wmap-kueue-op")
    proc = OperatorProcess(
        kcluster,
        tmp_path,
        opns,
        identity="kueue-a",
        register=False,
        extra=("--webhook-listen", "", "--kueue", "--kueue-type", "JobSet.jobset.x-k8s.io"),
    )
    try:
        proc.ready(timeout=120)
        wait_for(lambda: "Kueue admission is off" in _whole_log(proc), timeout=120, what="the Kueue warning")
    finally:
        proc.stop()
    assert _whole_log(proc).count("Kueue admission is off") == 1


def _whole_log(proc: Any) -> str:
    text: str = proc.log_path.read_text(errors="replace")
    return text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--kueue", "--kueue-type", "Gizmo"), "--kueue-type Gizmo: no catalog definition has that kind"),
        (("--kueue", "--no-reconcile"), "--kueue needs --reconcile"),
    ],
)
def test_operator_flag_misuse(kcluster: Any, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    import subprocess
    import sys

    kubeconfig = kcluster.write_kubeconfig(tmp_path / "kubeconfig")
    done = subprocess.run(
        [
            *(sys.executable, "-m", "workload_map.cli.main", "operator", "--kubeconfig", str(kubeconfig)),
            *("--webhook-listen", "", "--health-listen", "", "--no-leader-elect", *args),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr


def test_default_types(client: KubeClient) -> None:
    """By default: every served catalog type whose definition can suspend it, nothing else."""
    from workload_map.operator.kueue import admission_entries

    entries = admission_entries()
    kinds = {(e.gvk.group, e.gvk.kind) for e in entries if e.gvk}
    assert kinds >= {("jobset.x-k8s.io", "JobSet"), ("ray.io", "RayJob"), ("kubeflow.org", "PyTorchJob")}
    assert not any(kind in ("Deployment", "Pod", "LeaderWorkerSet") for _, kind in kinds)
    ctl = KueueAdmission(client, entries, resync=3600, crd_check_interval=3600).start()
    try:
        _wait_running(ctl)
        assert ("jobset.x-k8s.io/v1alpha2", "JobSet") in ctl.kinds
        assert ("apps/v1", "Deployment") not in ctl.kinds
    finally:
        ctl.stop()


def test_one_version_per_kind(kube: KubeTestClient, client: KubeClient, namespace: str) -> None:
    """Two definitions of one kind at two versions one CRD serves: one informer (two would see
    every object twice and act on it through two definitions); the first in order is used."""
    from tests.support import crds
    from workload_map.model.definition import Karta

    group = f"{namespace}.example.com"
    doc = crds.schemaless_crd(group, "Gizmo", "gizmos")
    v1 = doc["spec"]["versions"][0]
    doc["spec"]["versions"] = [v1, {**v1, "name": "v2", "storage": False}]
    crds.install_crds(kube, [doc], downlevel=False)
    base = _entry("jobset.x-k8s.io/v1alpha2", "JobSet").karta.model_dump(
        by_alias=True, exclude_none=True, mode="json"
    )
    entries = []
    for version in ("v2", "v1"):
        d = copy.deepcopy(base)
        d["metadata"]["name"] = f"gizmo-{version}"
        d["spec"]["structureDefinition"]["rootComponent"]["kind"] = {
            "group": group,
            "version": version,
            "kind": "Gizmo",
        }
        entries.append(DefinitionEntry(Karta.model_validate(d), "catalog"))
    ctl = KueueAdmission(client, entries, resync=3600, crd_check_interval=3600).start()
    try:
        _wait_running(ctl)
        assert [k for k in ctl.kinds if k[1] == "Gizmo"] == [(f"{group}/v2", "Gizmo")]
        gizmo = _jobset(namespace, "g")
        gizmo["apiVersion"], gizmo["kind"] = f"{group}/v1", "Gizmo"
        made = kube.create(gizmo)
        _wait(kube, lambda: _get(kube, namespace, "gizmo-g"))
        held = _wait(kube, lambda: (o := kube.get_obj(made))["spec"]["suspend"] is True and o)
        assert held["metadata"]["uid"] == made["metadata"]["uid"]
    finally:
        ctl.stop()


def test_partial_admission_scales_and_eviction_restores(
    kube: KubeTestClient, client: KubeClient, queues: tuple[str, str], namespace: str
) -> None:
    """Partial admission (kueue keps/420-partial-admission): a PyTorchJob (catalog lifecycle
    fixture, with an elasticPolicy, so its workers podSet has minCount) admitted with fewer workers
    runs with that many (written through the definition's replicasPath), and gets its own count
    back when evicted. The admission is Kueue's status write with podSetAssignments[].count below
    the podSet's count, as the flavorassigner leaves it after shrinking (KEP-420 Scenario A)."""
    on_demand, _ = queues
    _local_queue(kube, namespace, on_demand.removeprefix("on-demand-"))
    doc = yaml.safe_load((LIFECYCLE / "kubeflow-org-pytorchjob-v1" / "created.yaml").read_text())
    obj: dict[str, Any] = copy.deepcopy(doc["object"])
    for key in ("uid", "creationTimestamp", "generation"):
        obj["metadata"].pop(key, None)
    obj.pop("status", None)
    obj["metadata"].update(namespace=namespace, name="elastic", labels={QUEUE_LABEL: "team-a"})
    obj["spec"]["elasticPolicy"] = {"minReplicas": 1, "maxReplicas": 3}
    ctl = KueueAdmission(
        client, [_entry("kubeflow.org/v1", "PyTorchJob")], workers=1, resync=3600, crd_check_interval=3600
    ).start()
    try:
        _wait_running(ctl)
        job = kube.create(obj)

        def replicas(o: dict[str, Any]) -> tuple[int, bool]:
            return o["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"], o["spec"]["runPolicy"]["suspend"]

        wl = _wait(kube, lambda: _get(kube, namespace, "pytorchjob-elastic"))
        assert [(p["name"], p["count"], p.get("minCount")) for p in wl["spec"]["podSets"]] == [
            ("master", 1, None),
            ("worker", 3, 1),
        ]
        _wait(kube, lambda: replicas(kube.get_obj(job)) == (3, True))

        flavors = {"cpu": on_demand, "nvidia.com/gpu": on_demand}
        kube.set_status(
            wl,
            {
                "admission": {
                    "clusterQueue": "cluster-queue",
                    "podSetAssignments": [
                        {"name": "master", "flavors": flavors, "count": 1},
                        {"name": "worker", "flavors": flavors, "count": 2},
                    ],
                },
                "conditions": [
                    _condition("QuotaReserved", "True", "QuotaReserved", "Quota reserved"),
                    _condition("Admitted", "True", "Admitted", "The workload is admitted"),
                ],
            },
        )
        running = _wait(kube, lambda: replicas(o := kube.get_obj(job)) == (2, False) and o)
        worker = running["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
        assert worker["nodeSelector"] == {"instance-type": "on-demand"}
        assert ctl.problems() == {}

        _evict(kube, kube.get_obj(wl))
        _wait(kube, lambda: replicas(kube.get_obj(job)) == (3, True))
        assert ctl.problems() == {}
    finally:
        ctl.stop()
