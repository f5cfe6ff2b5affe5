"""The exporter as a separate process against the real API server."""

from __future__ import annotations

import gzip
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.exporter.conftest import ExporterProcess
from tests.exporter.promparse import Exposition, parse
from tests.support import crds
from tests.support.cluster import TestCluster
from tests.support.hostile import xgboost_job
from tests.support.kube import KubeTestClient
from tests.support.seed import create_jobset_tree, jobset, running_status
from workload_map.exporter import metrics as m
from workload_map.exporter.exposition import MAX_LABEL_VALUE_LENGTH, cut_label_value

Factory = Callable[..., ExporterProcess]
ROLES = (("leader", 1), ("workers", 2))


def delete_pod(kube: KubeTestClient, namespace: str, name: str) -> None:
    """Delete at once (no kubelet here to confirm a graceful deletion)."""
    kube.request(
        "DELETE",
        f"/api/v1/namespaces/{namespace}/pods/{name}",
        {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0},
    )


def js_labels(ns: str, name: str) -> dict[str, str]:
    return {"namespace": ns, "group": "jobset.x-k8s.io", "kind": "JobSet", "name": name}


def primary(exp: Exposition, ns: str, name: str) -> str | None:
    found = exp.find("wmap_workload_primary_phase", **js_labels(ns, name))
    return found[0].labels["phase"] if len(found) == 1 else None


def test_jobset_lifecycle(exporter_factory: Factory, kube: KubeTestClient, namespace: str) -> None:
    exporter = exporter_factory()
    exporter.wait_ready()
    assert exporter.get("/healthz").status_code == 200
    js, pods = create_jobset_tree(kube, "train", namespace, ROLES, gpus=2)
    lb = js_labels(namespace, "train")
    exp = exporter.wait_for(
        lambda e: (
            len(e.find("wmap_pod_workload_info", namespace=namespace)) == 3
            and e.value("wmap_workload_component_pods", **lb, component="replicatedjob", state="ready") == 3
        ),
        what="pod info rows and ready pods",
    )
    # not started yet: Initializing
    assert primary(exp, namespace, "train") == "Initializing"
    phases = {s.labels["phase"]: s.value for s in exp.find("wmap_workload_phase", **lb)}
    assert phases["Initializing"] == 1 and phases["Running"] == 0 and len(phases) == 9
    pods_metric = {
        (s.labels["component"], s.labels["state"]): s.value
        for s in exp.find("wmap_workload_component_pods", **lb)
    }
    assert pods_metric[("replicatedjob", "desired")] == 3
    assert pods_metric[("replicatedjob", "current")] == 3
    assert pods_metric[("replicatedjob", "ready")] == 3
    assert pods_metric[("jobset", "desired")] == 3  # the root rolls its children up
    assert exp.value("wmap_workload_resource_requests", **lb, resource="nvidia.com/gpu") == 6
    assert exp.value("wmap_workload_resource_requests", **lb, resource="cpu", unit="core") == 1.5
    assert exp.value("wmap_workload_resource_requests", **lb, resource="memory", unit="byte") == 3 * 2**30
    assert (
        exp.value(
            "wmap_workload_component_resource_requests",
            **lb,
            component="replicatedjob",
            resource="nvidia.com/gpu",
        )
        == 6
    )
    info = {s.labels["pod"]: s.labels for s in exp.find("wmap_pod_workload_info", namespace=namespace)}
    leader_pod = info["train-leader-0-pod"]
    assert leader_pod["workload_kind"] == "JobSet" and leader_pod["workload_name"] == "train"
    assert leader_pod["component"] == "replicatedjob" and leader_pod["instance"] == "leader"
    assert leader_pod["node"] == "node-a" and leader_pod["uid"] == pods[0]["metadata"]["uid"]
    assert info["train-workers-1-pod"]["instance"] == "workers"
    # the Jobs are owned by the JobSet: not exported as workloads of their own
    assert exp.find("wmap_workload_info", namespace=namespace, kind="Job") == []
    assert exp.value("wmap_workload_info", **lb) == 1

    # status change -> phase changes
    kube.set_status(js, running_status(ROLES))
    exporter.wait_for(lambda e: primary(e, namespace, "train") == "Running", what="Running")
    kube.set_status(
        js,
        {
            **running_status(ROLES),
            "conditions": [
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "X",
                    "message": "m",
                    "lastTransitionTime": "2024-01-01T00:00:00Z",
                }
            ],
        },
    )
    exporter.wait_for(lambda e: primary(e, namespace, "train") == "Failed", what="Failed")

    # a pod becomes unready -> ready count drops; a pod deleted -> current drops
    delete_pod(kube, namespace, "train-workers-1-pod")
    exp = exporter.wait_for(
        lambda e: (
            e.value("wmap_workload_component_pods", **lb, component="replicatedjob", state="current") == 2
        ),
        what="pod deletion",
    )
    assert "train-workers-1-pod" not in {
        s.labels["pod"] for s in exp.find("wmap_pod_workload_info", namespace=namespace)
    }

    # delete -> series gone
    kube.delete_obj(js)
    exporter.wait_for(lambda e: not e.find("wmap_workload_info", **lb), what="series gone")

    # gzip
    r = exporter.get("/metrics", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200
    parse(r.text)  # httpx decodes gzip transparently
    raw = httpx.get(exporter.url + "/metrics", headers={"Accept-Encoding": "gzip"})
    assert raw.headers.get("content-encoding") == "gzip"
    body = httpx.Client().send(
        httpx.Request("GET", exporter.url + "/metrics", headers={"Accept-Encoding": "gzip"}), stream=True
    )
    data = b"".join(body.iter_raw())
    parse(gzip.decompress(data).decode())
    # freshness metrics
    exp = exporter.scrape()
    assert exp.value("wmap_informer_synced", resource="pods", path="/api/v1/pods") == 1
    last = exp.value("wmap_informer_last_event_timestamp_seconds", resource="pods", path="/api/v1/pods")
    assert last is not None and abs(last - time.time()) < 600
    assert exp.value("wmap_exporter_ready") == 1
    assert exp.find("wmap_build_info")


HOSTILE = """apiVersion: run.ai/v1alpha1
kind: Karta
metadata:
  name: hostile-xgboost
spec:
  structureDefinition:
    rootComponent:
      name: xgb
      kind: {group: kubeflow.org, version: v1, kind: XGBoostJob}
      statusDefinition:
        statusMappings:
          running:
          - byExpression:
              expression: '0 | until(. > 1e12; . + 1) | . > 0'
              expectedResult: "true"
      specDefinition:
        podTemplateSpecPath: .spec.xgbReplicaSpecs.Master.template
"""


def test_hostile_definition_does_not_stall_others(
    exporter_factory: Factory, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    defs = tmp_path / "hostile.yaml"
    defs.write_text(HOSTILE)
    exporter = exporter_factory("--definitions", str(defs))
    exporter.wait_ready()
    for i in range(12):
        kube.create(xgboost_job(f"x{i}", namespace))
    create_jobset_tree(kube, "ok", namespace, (("leader", 1),))
    exp = exporter.wait_for(
        lambda e: (
            primary(e, namespace, "ok") is not None
            and len(e.find("wmap_workload_resolve_failed", namespace=namespace, kind="XGBoostJob")) == 12
        ),
        timeout=60,
        what="JobSet resolved despite hostile definition",
    )
    for s in exp.find("wmap_workload_resolve_failed", namespace=namespace, kind="XGBoostJob"):
        assert s.value == 1
    assert (exp.value("wmap_exporter_resolve_errors_total", kind="XGBoostJob") or 0) >= 12
    assert exp.value("wmap_exporter_definition_info", definition="hostile-xgboost", origin="local") == 1
    # Three limit failures in a row quarantine the definition; the exporter's 4 workers may have
    # three more evaluations in flight by then. The other workloads are not evaluated.
    assert exp.value("wmap_definition_quarantined", definition="hostile-xgboost") == 1
    assert 3 <= (exp.value("wmap_definition_limit_failures_total", definition="hostile-xgboost") or 0) <= 6


def test_namespace_scoped_and_crd_installed_later(
    exporter_factory: Factory, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    group = f"t{secrets.token_hex(4)}.wmap.test"
    crd = crds.schemaless_crd(group, "Widget", "widgets")
    definition = f"""apiVersion: run.ai/v1alpha1
kind: Karta
metadata:
  name: widget
spec:
  structureDefinition:
    rootComponent:
      name: widget
      kind: {{group: {group}, version: v1, kind: Widget}}
      specDefinition:
        podTemplateSpecPath: .spec.template
      scaleDefinition:
        replicasPath: .spec.replicas
      statusDefinition:
        statusMappings:
          running:
          - byExpression:
              expression: '.status.ok == true'
              expectedResult: "true"
"""
    path = tmp_path / "widget.yaml"
    path.write_text(definition)
    other = kube.create_namespace()
    exporter = exporter_factory("--definitions", str(path), "-n", namespace, "--namespace", other)
    exporter.wait_ready()
    exp = exporter.scrape()
    assert exp.value("wmap_exporter_definition_info", definition="widget") == 0  # not served yet
    crds.install_crds(kube, [crd])
    widget = {
        "apiVersion": f"{group}/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "namespace": namespace},
        "spec": {
            "replicas": 2,
            "template": {
                "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "2"}}}]}
            },
        },
        "status": {"ok": True},
    }
    kube.create(widget)
    kube.create({**widget, "metadata": {"name": "elsewhere", "namespace": kube.create_namespace()}})
    exp = exporter.wait_for(
        lambda e: e.value("wmap_workload_primary_phase", namespace=namespace, kind="Widget", name="w1") == 1,
        timeout=60,
        what="Widget exported after its CRD appeared",
    )
    assert (
        exp.value("wmap_workload_resource_requests", namespace=namespace, kind="Widget", resource="cpu") == 4
    )
    assert exp.find("wmap_workload_info", name="elsewhere") == []  # not a watched namespace
    assert exp.value("wmap_exporter_definition_info", definition="widget") == 1


def test_recovers_from_apiserver_restart_and_cut_watches(
    cluster: TestCluster, exporter_factory: Factory, kube: KubeTestClient, namespace: str
) -> None:
    exporter = exporter_factory("-n", namespace, "--watch-timeout", "2")
    exporter.wait_ready()
    js, _ = create_jobset_tree(kube, "a", namespace, ROLES)
    exporter.wait_for(lambda e: primary(e, namespace, "a") == "Initializing", what="a")
    time.sleep(3)  # watches end (timeoutSeconds=2..3) and are re-established
    kube.set_status(js, running_status(ROLES))
    exporter.wait_for(lambda e: primary(e, namespace, "a") == "Running", what="a Running after cut watches")
    cluster.restart_apiserver()
    create_jobset_tree(kube, "b", namespace, (("leader", 1),))
    delete_pod(kube, namespace, "a-workers-0-pod")
    exp = exporter.wait_for(
        lambda e: (
            primary(e, namespace, "b") == "Initializing"
            and e.value(
                "wmap_workload_component_pods",
                **js_labels(namespace, "a"),
                component="replicatedjob",
                state="current",
            )
            == 2
        ),
        timeout=90,
        what="recovery after the apiserver restart",
    )
    exporter.wait_ready(30)
    assert exp.find("wmap_workload_info", **js_labels(namespace, "a"))


def test_lws_worker_pods_through_the_leader_pod(
    exporter_factory: Factory, kube: KubeTestClient, namespace: str
) -> None:
    """The LWS controller's chain runs through the leader *Pod* (framework-shapes.md 2): every
    worker pod must be counted and attributed, or worker GPUs drop out of every DCGM join."""
    from tests.support.seed import create_lws_tree

    exporter = exporter_factory()
    exporter.wait_ready()
    _, pods = create_lws_tree(kube, "vllm", namespace, replicas=2, size=4, gpus=1)
    lb = {
        "namespace": namespace,
        "group": "leaderworkerset.x-k8s.io",
        "kind": "LeaderWorkerSet",
        "name": "vllm",
    }
    exp = exporter.wait_for(
        lambda e: e.value("wmap_workload_component_pods", **lb, component="worker", state="current") == 6,
        what="6 current worker pods",
    )
    assert exp.value("wmap_workload_component_pods", **lb, component="leader", state="current") == 2
    info = {s.labels["pod"]: s.labels for s in exp.find("wmap_pod_workload_info", namespace=namespace)}
    assert set(info) == {p["metadata"]["name"] for p in pods}
    assert {i["workload_kind"] for i in info.values()} == {"LeaderWorkerSet"}
    assert {i["component"] for i in info.values()} == {"leader", "worker"}
    assert exp.value("wmap_workload_resource_requests", **lb, resource="nvidia.com/gpu") == 8


def test_shards_split_workloads_and_pods_follow(
    exporter_factory: Factory, kube: KubeTestClient, namespace: str
) -> None:
    """Two shards together render every workload exactly once, each with all its pods and the
    same numbers as one unsharded exporter; the pods' shard is their workload's, down chains
    through Jobs and through an LWS leader Pod."""
    from tests.support.seed import create_jobset_tree, create_lws_tree
    from workload_map.exporter.sharding import Shard

    whole = exporter_factory("-n", namespace)
    shards = [exporter_factory("-n", namespace, "--shard", str(i), "--total-shards", "2") for i in range(2)]
    for e in (whole, *shards):
        e.wait_ready()
    made: dict[str, tuple[dict, list[dict]]] = {}
    for i in range(6):
        made[f"js-{i}"] = create_jobset_tree(kube, f"js-{i}", namespace, (("leader", 1), ("workers", 2)))
    for i in range(3):
        made[f"lws-{i}"] = create_lws_tree(kube, f"lws-{i}", namespace, replicas=1, size=3)
    pods = {p["metadata"]["name"] for _, ps in made.values() for p in ps}

    def rendered(e: Any) -> tuple[dict[str, str], dict[str, str]]:
        workloads = {
            s.labels["name"]: s.labels.get("uid", "")
            for s in e.find("wmap_workload_info", namespace=namespace)
        }
        pod_owner = {
            s.labels["pod"]: s.labels["workload_name"]
            for s in e.find("wmap_pod_workload_info", namespace=namespace)
        }
        return workloads, pod_owner

    def all_ready(e: Any) -> bool:
        # Pods are created, then marked ready: seeing every pod is not yet seeing it ready.
        rows = e.find("wmap_workload_component_pods", namespace=namespace)
        by_state = {(s.labels["name"], s.labels["component"], s.labels["state"]): s.value for s in rows}
        return all(
            v == by_state.get((n, c, "desired")) for (n, c, st), v in by_state.items() if st == "ready"
        )

    full = whole.wait_for(
        lambda e: set(rendered(e)[1]) == pods and all_ready(e), what="all pods ready, unsharded"
    )
    parts = []
    for i, e in enumerate(shards):
        owned = {n for n, (obj, _) in made.items() if Shard(i, 2).owns(obj["metadata"]["uid"])}
        want = {p["metadata"]["name"] for n in owned for p in made[n][1]}
        exp = e.wait_for(
            lambda x, owned=owned, want=want: (
                set(rendered(x)[0]) == owned and set(rendered(x)[1]) == want and all_ready(x)
            ),
            what=f"shard {i}: its workloads and their pods",
        )
        assert exp.find("wmap_exporter_shard_info", shard=str(i), total_shards="2")
        parts.append(exp)
    assert set(rendered(parts[0])[0]).isdisjoint(rendered(parts[1])[0])
    assert rendered(parts[0])[1] | rendered(parts[1])[1] == rendered(full)[1]
    assert 0 < len(rendered(parts[0])[0]) < len(made)  # both shards hold some (fixed UIDs would be luckier)
    for name in made:
        exp = next(p for p in parts if name in rendered(p)[0])
        lb = {"namespace": namespace, "name": name}
        for state in ("desired", "ready"):
            assert sorted(
                s.value for s in exp.find("wmap_workload_component_pods", **lb, state=state)
            ) == sorted(s.value for s in full.find("wmap_workload_component_pods", **lb, state=state))
        assert exp.value("wmap_workload_resource_requests", **lb, resource="nvidia.com/gpu") == full.value(
            "wmap_workload_resource_requests", **lb, resource="nvidia.com/gpu"
        )


def test_generic_types_are_exported_with_their_pods(
    exporter_factory: Factory, kube: KubeTestClient, namespace: str
) -> None:
    """``--generic-types``: a type no definition covers is exported as workloads marked
    definition="generic", phase by kstatus, with the pods its owner chain reaches (here through
    a Deployment, which is then part of the Gizmo, not a workload of its own)."""
    from tests.support.seed import seed_gizmos

    group = seed_gizmos(kube, namespace)
    plain = exporter_factory("-n", namespace)
    generic = exporter_factory("-n", namespace, "--generic-types", f"gizmos.{group}")
    for e in (plain, generic):
        e.wait_ready()
    exp = generic.wait_for(
        lambda e: (
            len(e.find("wmap_workload_info", namespace=namespace, kind="Gizmo")) == 7
            and len(e.find("wmap_pod_workload_info", namespace=namespace, workload_kind="Gizmo")) == 2
        ),
        what="the gizmos and the ready one's pods",
    )
    infos = exp.find("wmap_workload_info", namespace=namespace, kind="Gizmo")
    assert {(s.labels["definition"], s.labels["origin"]) for s in infos} == {("generic", "generic")}
    phase = {
        s.labels["name"]: s.labels["phase"]
        for s in exp.find("wmap_workload_primary_phase", namespace=namespace, kind="Gizmo")
        if s.value == 1
    }
    assert phase == {
        "ready": "Running",
        "starting": "Initializing",
        "reconciling": "Initializing",
        "stalled": "Failed",
        "behind": "Initializing",
        "plain": "Running",
        "leaving": "Undefined",
    }
    assert (
        exp.value(
            "wmap_workload_resource_requests", namespace=namespace, name="ready", resource="nvidia.com/gpu"
        )
        == 4
    )
    assert (
        exp.value(
            "wmap_workload_component_pods", namespace=namespace, name="ready", component="pods", state="ready"
        )
        == 2
    )
    assert not exp.find("wmap_workload_info", namespace=namespace, kind="Deployment")  # part of the Gizmo now
    before = plain.wait_for(
        lambda e: bool(e.find("wmap_workload_info", namespace=namespace, kind="Deployment")),
        what="the Deployment",
    )
    assert not before.find("wmap_workload_info", namespace=namespace, kind="Gizmo")


def _series_per_workload(exp: Exposition, namespace: str) -> dict[str, int]:
    """Workload name -> its series: the workload families and its pods' info rows."""
    out: dict[str, int] = {}
    for fam in m.WORKLOAD_FAMILIES:
        for s in exp.find(fam.name, namespace=namespace):
            name = s.labels["workload_name"] if fam is m.POD_INFO else s.labels["name"]
            out[name] = out.get(name, 0) + 1
    return out


def test_series_ceiling_and_hostile_long_names(
    exporter_factory: Factory, kube: KubeTestClient, namespace: str
) -> None:
    """A hostile tenant's JobSet with 80 replicated jobs named by 3,000 characters (the JobSet CRD
    sets no maxLength; framework-shapes.md 1) and a 253-character name (the longest a custom
    resource may have): label values are cut to 256 characters and stay distinct, the long name
    passes whole. With --max-series, whole workloads are left out in namespace/kind/name order (the
    hostile one, larger than the ceiling, costs only itself) and the drop is counted."""
    hostile_roles = tuple(("r" * 3000 + f"{i:02d}", 1) for i in range(80))
    kube.create(jobset("a-hostile", namespace, hostile_roles))
    longest = "w" * 253  # no Jobs: their names and labels would pass Kubernetes' limits
    kube.create(jobset(longest, namespace, ROLES))
    for name in ("c-0", "c-1", "c-2", "c-3"):
        create_jobset_tree(kube, name, namespace, ROLES)
    names = ["a-hostile", "c-0", "c-1", "c-2", "c-3", longest]

    # Only this namespace: the session's cluster holds other tests' workloads, which the ceiling
    # would count too.
    every = exporter_factory("--max-series", "0", "-n", namespace)
    every.wait_ready(180)
    exp = every.wait_for(
        lambda e: (
            len(e.find("wmap_workload_info", namespace=namespace)) == 6
            and len(e.find("wmap_pod_workload_info", namespace=namespace)) == 12
        ),
        what="six workloads and their pods",
    )
    assert exp.value("wmap_exporter_series_limit") == 0 and exp.value("wmap_exporter_dropped_series") == 0
    instances = {
        s.labels["instance"]
        for s in exp.find("wmap_workload_instance_pods", namespace=namespace, name="a-hostile")
    }
    assert instances == {cut_label_value(role) for role, _ in hostile_roles} and len(instances) == 80
    assert all(len(v) == MAX_LABEL_VALUE_LENGTH for v in instances)
    assert exp.value("wmap_workload_info", namespace=namespace, name=longest, kind="JobSet") == 1
    every.stop()

    series = _series_per_workload(exp, namespace)
    assert set(series) == set(names)
    small = sum(series[n] for n in names[1:])
    ceiling = small - 1  # every small one but the last fits; the hostile one never does
    assert series["a-hostile"] > ceiling
    expected, used = [], 0
    for name in sorted(names):  # one namespace, one kind: name order
        if used + series[name] <= ceiling:
            expected.append(name)
            used += series[name]
    assert expected == ["c-0", "c-1", "c-2", "c-3"]

    capped = exporter_factory("--max-series", str(ceiling), "-n", namespace)
    capped.wait_ready(180)
    exp = capped.wait_for(
        lambda e: (
            e.value("wmap_exporter_dropped_workloads") == 2 and e.value("wmap_exporter_queue_depth") == 0
        ),
        what="the ceiling applied",
    )
    assert sorted(s.labels["name"] for s in exp.find("wmap_workload_info", namespace=namespace)) == expected
    assert _series_per_workload(exp, namespace) == {n: series[n] for n in expected}
    assert exp.value("wmap_exporter_series_limit") == ceiling
    assert exp.value("wmap_exporter_workload_series") == used <= ceiling
    assert exp.value("wmap_exporter_dropped_series") == series["a-hostile"] + series[longest]
    # the same through gzip, cached per generation
    r = capped.get("/metrics", headers={"Accept-Encoding": "gzip"})
    assert r.headers["content-encoding"] == "gzip" and r.headers["vary"] == "Accept-Encoding"
    again = parse(r.text)
    assert _series_per_workload(again, namespace) == {n: series[n] for n in expected}
    plain = capped.get("/metrics", headers={"Accept-Encoding": "gzip;q=0, identity"})
    assert "content-encoding" not in plain.headers


def test_metric_denylist_leaves_families_out_and_the_ceiling_counts_what_is_exported(
    exporter_factory: Factory, kube: KubeTestClient, namespace: str
) -> None:
    """--metric-denylist as kube-state-metrics reads it: the denied workload families are not in
    the scrape (nor their HELP), the others are, and the series the ceiling counts are the exported
    ones (plain and gzip alike)."""
    for name in ("d-0", "d-1"):
        create_jobset_tree(kube, name, namespace, ROLES)
    denied = ("wmap_workload_phase", "wmap_workload_component_resource_requests")
    every = exporter_factory("-n", namespace)
    lean = exporter_factory(
        "-n",
        namespace,
        "--metric-denylist",
        "wmap_workload_phase,^wmap_workload_component_resource_requests$",
    )

    def settled(e: Exposition) -> bool:
        return (
            len(e.find("wmap_pod_workload_info", namespace=namespace)) == 6
            and len(e.find("wmap_workload_primary_phase", namespace=namespace)) == 2
            and e.value("wmap_exporter_queue_depth") == 0
        )

    every.wait_ready(180)
    lean.wait_ready(180)
    full = every.wait_for(settled, what="both JobSets with their pods")
    exp = lean.wait_for(settled, what="both JobSets with their pods")
    for fam in denied:
        assert full.find(fam, namespace=namespace)
        assert not exp.find(fam) and fam not in exp.helps
    kept = [f.name for f in m.WORKLOAD_FAMILIES if f.name not in denied]
    for fam in kept:
        assert len(exp.find(fam, namespace=namespace)) == len(full.find(fam, namespace=namespace)), fam
    full_series = _series_per_workload(full, namespace)
    lean_series = _series_per_workload(exp, namespace)
    assert lean_series == {
        n: full_series[n] - sum(len(full.find(f, namespace=namespace, name=n)) for f in denied)
        for n in ("d-0", "d-1")
    }
    assert exp.value("wmap_exporter_workload_series") == sum(lean_series.values())
    zipped = parse(lean.get("/metrics", headers={"Accept-Encoding": "gzip"}).text)
    assert _series_per_workload(zipped, namespace) == lean_series
