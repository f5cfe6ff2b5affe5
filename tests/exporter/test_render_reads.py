"""What the exporter's render reads of the pods (issue 24: at 100,000 pods kubectl's status text,
the containers' states and the requests of every pod cost a third of the rendering, and no series
shows them): attributed without detail, its lines are those of the full attribution."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from workload_map.cluster.kubeconfig import ClusterConfig
from workload_map.exporter import Exporter
from workload_map.exporter.collector import WatchedKind
from workload_map.resolve import pods as resolve_pods

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "jobset-leader-workers.yaml"
RJ = "jobset.sigs.k8s.io/replicatedjob-name"
#: What only `describe`, `get` and the server show of a pod (resolve.pods.pod_info with detail).
DETAIL_READERS = (
    "status_and_restarts",
    "not_ready_message",
    "containers",
    "readiness_gates",
    "pod_resources",
)


def jobset() -> dict[str, Any]:
    obj = next(d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d and d.get("kind") == "JobSet")
    obj["metadata"]["resourceVersion"] = "7"
    return dict(obj)


def pod(name: str, role: str | None, status: dict[str, Any], node: str | None = "node-1") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "trainer", "resources": {"requests": {"cpu": "2", "nvidia.com/gpu": "4"}}}],
        "readinessGates": [{"conditionType": "example.com/ready"}],
    }
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ml",
            "uid": f"uid-{name}",
            "resourceVersion": "1",
            "labels": {RJ: role} if role else {},
        },
        "spec": spec,
        "status": status,
    }


READY = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
CRASHING = {
    "phase": "Running",
    "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}],
    "containerStatuses": [
        {"name": "trainer", "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    ],
}
UNSCHEDULED = {
    "phase": "Pending",
    "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes"}
    ],
}
PODS = {
    "lw-leader-0-0": pod("lw-leader-0-0", "leader", READY),
    "lw-workers-0-0": pod("lw-workers-0-0", "workers", CRASHING, node="node-2"),
    "lw-workers-1-0": pod("lw-workers-1-0", "workers", UNSCHEDULED, node=None),
    "lw-stray": pod("lw-stray", None, READY),  # no replicated-job label: unattributed
}


def exporter_and_kind(generic: bool = False) -> tuple[Exporter, WatchedKind]:
    exporter = Exporter(ClusterConfig(server="https://127.0.0.1:9"))  # never started: no connection
    entry = (
        None if generic else next(e for e in exporter._catalog if e.name == "jobset-x-k8s-io-jobset-v1alpha2")
    )
    return exporter, WatchedKind(
        "jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets", True, entry, generic=generic
    )


def render(generic: bool = False) -> bytes:
    exporter, wk = exporter_and_kind(generic)
    lines, settled = exporter._render(
        (wk.id, "ml", "leader-workers"), wk, jobset(), "7/0", copy.deepcopy(PODS)
    )
    assert settled
    return b"".join(lines.values())


def refuse_details(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    def refused(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the exporter computed a pod field it never shows")

    for name in names:
        monkeypatch.setattr(resolve_pods, name, refused)


def test_the_exporter_renders_without_the_pods_display_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    full_attribution = resolve_pods.attribute_pods

    def with_detail(*args: Any, **kwargs: Any) -> resolve_pods.PodAttribution:
        kwargs.pop("detail", None)  # the default: every field of every pod
        return full_attribution(*args, **kwargs)

    with monkeypatch.context() as m:  # the same render with the full attribution
        m.setattr(resolve_pods, "attribute_pods", with_detail)
        full = render()
    refuse_details(monkeypatch, *DETAIL_READERS)
    lean = render()
    assert lean == full
    text = lean.decode()
    base = 'namespace="ml",group="jobset.x-k8s.io",kind="JobSet",name="leader-workers"'
    for state, value in (("desired", 3), ("current", 3), ("ready", 1)):
        assert (
            f'wmap_workload_component_pods{{{base},component="replicatedjob",state="{state}"}} {value}\n'
            in text
        )
    assert f"wmap_workload_unattributed_pods{{{base}}} 1\n" in text
    workload = 'workload_group="jobset.x-k8s.io",workload_kind="JobSet",workload_name="leader-workers"'
    assert (
        f'wmap_pod_workload_info{{namespace="ml",pod="lw-workers-0-0",uid="uid-lw-workers-0-0",{workload},'
        'component="replicatedjob",instance="workers",node="node-2"} 1\n'
    ) in text


def test_the_generic_reading_sums_requests_without_the_display_fields(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    refuse_details(monkeypatch, *(n for n in DETAIL_READERS if n != "pod_resources"))
    text = render(generic=True).decode()
    base = 'namespace="ml",group="jobset.x-k8s.io",kind="JobSet",name="leader-workers"'
    assert f'wmap_workload_component_pods{{{base},component="pods",state="ready"}} 2\n' in text
    assert f'wmap_workload_resource_requests{{{base},resource="cpu",unit="core"}} 8\n' in text
    assert f'wmap_workload_resource_requests{{{base},resource="nvidia.com/gpu",unit="integer"}} 16\n' in text


def test_labels_shared_by_a_workloads_lines_are_escaped_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The workload's own labels (namespace, group, kind, name) are on ~40 lines of each workload
    and its workload labels on each pod's line: written once per workload, not once per line."""
    from workload_map.exporter import exposition

    escaped: list[str] = []
    escape = exposition.escape_label_value

    def counting(value: str) -> str:
        escaped.append(value)
        return escape(value)

    monkeypatch.setattr(exposition, "escape_label_value", counting)
    body = render().decode()
    assert body.count('kind="JobSet"') > 10 and body.count('workload_kind="JobSet"') == len(PODS)
    assert escaped.count("JobSet") == 2  # the workload's labels, the pods' workload labels
    assert escaped.count("replicatedjob") == 4  # its pod counts, requests and two instances' pods


def test_owner_events_of_the_first_lists_enqueue_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Until the pods' first list is in, nothing renders and every workload is enqueued once
    after it (Exporter._await_pods): the JobSets' and Jobs' own list events then neither climb
    their owner chains nor queue keys a worker would only drop (12,000 climbs at 10,000 JobSets)."""
    exporter, wk = exporter_and_kind()

    def climbing(_obj: Any) -> set[Any]:
        raise AssertionError("climbed an owner chain during the first lists")

    handler = exporter._kind_handler(wk)
    with monkeypatch.context() as m:
        m.setattr(exporter, "_ancestors", climbing)
        handler.on_add(jobset())
    assert len(exporter.queue) == 0
    exporter._pods_synced.set()  # later events are handled one by one
    handler.on_add(jobset())
    assert len(exporter.queue) == 1


class Store:
    """What _enqueue_all and the owner walk read of an informer's store."""

    def __init__(self, objs: list[dict[str, Any]]) -> None:
        self.objs = objs

    def list(self) -> list[dict[str, Any]]:
        return self.objs

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        return next((o for o in self.objs if o["metadata"]["name"] == name), None)


def test_the_start_climbs_each_controllers_chain_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the start every stored object of a rendering kind is checked for being top-level, the
    100,000 pods too (a definition covers pods): the pods of one Job share its chain."""
    from types import SimpleNamespace

    from tests.support.kube import owner_reference

    exporter, jobsets = exporter_and_kind()
    js = jobset()
    jobs = [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {**meta, "ownerReferences": [owner_reference(js)]},
        }
        for meta in ({"name": "lw-leader-0", "uid": "job-1"}, {"name": "lw-workers-0", "uid": "job-2"})
    ]
    pods = [
        {"metadata": {"name": f"{job['metadata']['name']}-{i}", "ownerReferences": [owner_reference(job)]}}
        for job in jobs
        for i in range(10)
    ]
    pods.append({"metadata": {"name": "bare"}})
    for kind in (
        jobsets,
        *(
            WatchedKind(g, "v1", k, p, True, jobsets.entry)
            for g, k, p in (("batch", "Job", "jobs"), ("", "Pod", "pods"))
        ),
    ):
        exporter.kinds[kind.id] = kind
    for kind, objs in zip(exporter.kinds.values(), ([js], jobs, pods), strict=True):
        kind.informers = [
            SimpleNamespace(
                store=Store([{"apiVersion": kind.api_version, "kind": kind.kind, **o} for o in objs])
            )
        ]
    climbs: list[str] = []
    top_level = exporter._top_level

    def counting(obj: Any) -> bool:
        climbs.append(obj["metadata"]["name"])
        return top_level(obj)

    monkeypatch.setattr(exporter, "_top_level", counting)
    exporter._enqueue_all()
    queued = []
    while (key := exporter.queue.get(timeout=0)) is not None:
        queued.append(key)
    assert sorted(queued) == [("/Pod", "", "bare"), (jobsets.id, "ml", "leader-workers")]
    # the JobSet, the two Jobs (one controller), each Job's pods once, the bare pod
    assert sorted(climbs) == ["bare", "leader-workers", "lw-leader-0", "lw-leader-0-0", "lw-workers-0-0"]
