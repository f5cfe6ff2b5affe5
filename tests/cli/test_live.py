"""``wmap get``, ``describe``, ``group``, ``requirements`` and ``completion`` on the REAL API server
(tests/support): formats, exit codes, RBAC, cluster definitions, --all-types, --watch."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from tests.cli.conftest import DATA
from tests.cli.helpers import (
    RUNNING_JOBSET_STATUS,
    jobset,
    lws,
    pytorchjob,
    raycluster,
    wmap,
)
from tests.support import crds
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient, owner_reference, rule
from tests.support.seed import JOBSET_ROLE, PYTORCH_ROLE, jobset_pods, role_pods
from tests.views.schema_check import check
from workload_map.cli import exit_codes

pytestmark = pytest.mark.cluster

ROLE = JOBSET_ROLE


@pytest.fixture
def kc(cluster: TestCluster, karta_crd: str, namespace: str, tmp_path: Path) -> str:
    """Admin kubeconfig for ``namespace``; the cluster has the real Karta CRD (no Kartas)."""
    return str(cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin", namespace=namespace))


def seed(kube: KubeTestClient, namespace: str, name: str = "train", pods: bool = True) -> dict[str, Any]:
    js = kube.create(jobset(name, namespace))
    js = kube.set_status(js, RUNNING_JOBSET_STATUS)
    if pods:
        replicas = (
            (f"{name}-leader-0", "leader", "node-a"),
            (f"{name}-workers-0", "workers", "node-b"),
            (f"{name}-workers-1", "workers", None),  # Pending
        )
        jobset_pods(kube, js, replicas, gpus=4, cpu="4", memory="16Gi")
    return js


# --- get -----------------------------------------------------------------------------------------


def test_get_table_json_yaml_wide(kube: KubeTestClient, namespace: str, kc: str) -> None:
    seed(kube, namespace, "older")
    time.sleep(1.1)
    seed(kube, namespace, "newer", pods=False)
    rc, out, err = wmap("get", "jobsets", "--kubeconfig", kc)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "PHASE", "COMPONENTS", "GPU", "AGE"]  # one namespace: no column
    assert [ln.split()[0] for ln in lines[1:]] == ["newer", "older"]  # newest first
    assert lines[2].split()[:4] == ["older", "Running", "leader:1,workers:2", "12"]

    rc, out, _ = wmap("get", "jobset", "-o", "json", "--kubeconfig", kc)
    data = orjson.loads(out)
    check(data, "view.v1.json")
    assert data["count"] == 2 and data["items"][1]["phases"] == ["Running"]
    assert data["items"][1]["resources"]["gpus"] == 12 and data["items"][1]["origin"] == "catalog"

    rc, out, _ = wmap("get", "jobset/older", "-o", "yaml", "--kubeconfig", kc)
    bare = yaml.safe_load(out)
    assert rc == 0 and bare["name"] == "older" and "items" not in bare
    rc, out, _ = wmap("get", "jobset", "older", "-o", "json", "--kubeconfig", kc)
    assert orjson.loads(out)["count"] == 1

    rc, out, err = wmap("get", "jobsets", "-o", "wide", "--kubeconfig", kc)
    assert rc == 0, err
    row = next(ln for ln in out.splitlines() if ln.startswith("older"))
    assert row.split()[2:5] == ["leader:1/1,workers:1/2", "2/3", "12"]
    assert row.split()[-1] == "catalog"


def test_get_phase_selector_and_empty(kube: KubeTestClient, namespace: str, kc: str) -> None:
    seed(kube, namespace, "a", pods=False)
    kube.create(jobset("b", namespace, labels={"team": "x"}))
    rc, out, _ = wmap("get", "jobsets", "--phase", "Running", "--kubeconfig", kc)
    assert [ln.split()[0] for ln in out.splitlines()[1:]] == ["a"]
    rc, out, _ = wmap("get", "jobsets", "-l", "team=x", "--kubeconfig", kc)
    assert [ln.split()[0] for ln in out.splitlines()[1:]] == ["b"]
    rc, out, err = wmap("get", "jobsets", "--phase", "Failed", "--kubeconfig", kc)
    assert (rc, out) == (0, "") and err.startswith(f"No workloads found in namespace {namespace}.\n")
    rc, out, _ = wmap("get", "jobsets", "--phase", "Failed", "-o", "json", "--kubeconfig", kc)
    assert orjson.loads(out) == {"items": [], "count": 0}


def test_get_all_namespaces(kube: KubeTestClient, namespace: str, kc: str) -> None:
    other = kube.create_namespace()
    seed(kube, namespace, "here", pods=False)
    seed(kube, other, "there", pods=False)
    _, out, _ = wmap("get", "jobsets", "-A", "-o", "json", "--kubeconfig", kc)
    found = {(i["namespace"], i["name"]) for i in orjson.loads(out)["items"]}
    assert {(namespace, "here"), (other, "there")} <= found


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "a TYPE is required, or --all-types"),
        (("jobsets", "--all-types"), "--all-types cannot be combined with a TYPE"),
        (("jobset/",), 'NAME is empty in "jobset/"'),
        (("jobset/a", "b"), 'NAME given twice: as "a" and as "b"'),
        (("jobset", "a/b"), 'NAME must not contain "/": "a/b"'),
        (("/a",), 'TYPE is empty in "/a"'),
        (("jobsets", "--chunk-size", "-1"), "--chunk-size must not be negative"),
        (("jobsets", "-l", "a b c"), "unable to parse requirement"),
        (("jobset", "a", "-l", "x=y"), "--selector cannot be combined with a NAME"),
        (("jobsets", "-o", "xml"), "invalid value: must be one of table, wide, json, yaml"),
        (("jobsets", "--phase", "Bogus"), 'invalid --phase "Bogus"'),
    ],
)
def test_get_usage_errors(args: tuple[str, ...], message: str) -> None:
    rc, out, err = wmap("get", *args)
    assert rc == 2 and out == "" and message in err


def test_not_found_not_installed_no_definition(
    kube: KubeTestClient, namespace: str, kc: str, tmp_path: Path
) -> None:
    rc, _, err = wmap("get", "jobset/ghost", "--kubeconfig", kc)
    assert rc == 3 and f'error: JobSet "ghost" not found in namespace {namespace}' in err
    rc, _, err = wmap("describe", "jobset", "ghost", "--kubeconfig", kc)
    assert rc == 3 and 'JobSet "ghost" not found' in err
    widget = yaml.safe_load((DATA / "catalog" / "batch-job-v1.yaml").read_text())
    widget["metadata"]["name"] = "example-com-widget-v1"
    widget["spec"]["structureDefinition"]["rootComponent"]["kind"] = {
        "group": "example.com",
        "version": "v1",
        "kind": "Widget",
    }
    (tmp_path / "widget.yaml").write_text(yaml.safe_dump(widget))
    defs = ["--definitions", str(tmp_path / "widget.yaml")]
    rc, _, err = wmap("get", "widget/x", *defs, "--kubeconfig", kc)
    assert rc == 3 and "error: Widget is not installed in this cluster" in err
    rc, out, err = wmap("get", "widgets", *defs, "--kubeconfig", kc)
    assert rc == 0 and out == "" and "warning: Widget is not installed in this cluster" in err
    rc, out, err = wmap("get", "deployments", "--kubeconfig", kc)
    assert rc == 4 and 'error: no Karta definition covers "deployments"' in err
    rc, out, err = wmap("describe", "deploy/x", "-o", "json", "--kubeconfig", kc)
    assert rc == 4
    obj = orjson.loads(out)
    check(obj, "error.v1.json")
    assert obj["error"] == "no_definition_for_type" and obj["type"] == "deploy"
    rc, _, err = wmap("describe", "jobset", "--kubeconfig", kc)
    assert rc == 2 and "a NAME is required: give it as TYPE/NAME or as TYPE NAME" in err


# --- describe ------------------------------------------------------------------------------------


def test_describe_seed_jobset_live(kube: KubeTestClient, namespace: str, kc: str) -> None:
    js = seed(kube, namespace)
    # a pod owned through a Job (owner chain) and a stray pod of another owner
    job = kube.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": "train-workers-extra",
                "namespace": namespace,
                "ownerReferences": [owner_reference(js)],
            },
            "spec": {
                "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}
            },
        }
    )
    kube.make_pod("train-workers-via-job", namespace, owner=job, labels={ROLE: "workers"}, node="node-c")
    kube.make_pod("unrelated", namespace, labels={ROLE: "workers"}, node="node-c")
    kube.make_pod("train-nolabel", namespace, owner=js, node="node-c")
    rc, out, err = wmap("describe", "jobset/train", "--kubeconfig", kc)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(
        f"JobSet/train   namespace: {namespace}   "
        "definition: jobset-x-k8s-io-jobset-v1alpha2 (catalog)   age: "
    )
    body = "\n".join(lines[1:])
    expected = """
`-- replicatedjob              3/3 ready                 gpu: 12   node-a,node-b,node-c
    |-- leader                 1/1 ready                 gpu: 4    node-a
    |   `-- train-leader-0     Running                   gpu: 4    node-a
    `-- workers                2/2 ready                 gpu: 8    node-b,node-c
        |-- train-workers-0    Running                   gpu: 4    node-b
        |-- train-workers-1    Pending (Unschedulable)   gpu: 4    <none>
        `-- train-workers-via-job  Running                             node-c
"""
    assert "-- leader" in body and "train-workers-via-job" in body and "unrelated" not in body
    assert "Pending (Unschedulable)" in body and "TOTAL       3          12    12    48Gi" in body
    assert "Phase: Running" in body
    assert "Unattributed pods:" in body and "train-nolabel" in body
    del expected
    rc, out, _ = wmap("describe", "jobset", "train", "-o", "json", "--kubeconfig", kc)
    data = orjson.loads(out)
    check(data, "describe-view.v1.json")
    workers = data["components"][0]["children"][1]
    assert workers["replicas"] == {"desired": 2, "current": 3, "ready": 2}
    assert [u["name"] for u in data["unattributed"]] == ["train-nolabel"]
    rc, out, _ = wmap("describe", "jobset/train", "--pod-limit", "1", "--kubeconfig", kc)
    assert "train-workers-1" in out and "and 2 more (1 unhealthy shown)" in out
    rc, _, err = wmap("describe", "jobset/train", "-o", "wide", "--kubeconfig", kc)
    assert rc == 2 and "must be one of table, json, yaml" in err
    rc, _, err = wmap("describe", "jobset/train", "--pod-limit", "-1", "--kubeconfig", kc)
    assert rc == 2 and "--pod-limit must not be negative" in err


def test_describe_pytorchjob_lws_raycluster(kube: KubeTestClient, namespace: str, kc: str) -> None:
    pt = kube.create(pytorchjob("llama", namespace))
    kube.set_status(pt, {"conditions": [{"type": "Running", "status": "True"}]})
    replicas = (("llama-master-0", "master", "n1"), ("llama-worker-0", "worker", "n2"))
    role_pods(kube, pt, PYTORCH_ROLE, replicas, gpus=8)
    rc, out, err = wmap("describe", "pytorchjob/llama", "--kubeconfig", kc)
    assert rc == 0, err
    assert (
        "|-- master" in out
        and "`-- worker" in out
        and "1/2 ready" in out
        and "TOTAL       3          24" in out
    )
    kube.create(lws("vllm", namespace))
    rc, out, err = wmap("describe", "lws", "vllm", "--kubeconfig", kc)
    assert rc == 0, err
    assert "`-- group" in out and "TOTAL       4          32" in out
    kube.create(raycluster("rc", namespace))
    rc, out, err = wmap("describe", "raycluster/rc", "-o", "yaml", "--kubeconfig", kc)
    assert rc == 0, err
    data = yaml.safe_load(out)
    assert [c["name"] for c in data["components"]] == ["head", "worker"]
    assert data["resources"]["gpus"] == 2


def test_describe_file_mode_without_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    rc, out, err = wmap("describe", "-f", str(DATA / "jobset-leader-workers.yaml"))
    assert rc == 0 and err == ""
    assert "(the manifest has no status; file mode: no pods)" in out and "TOTAL       3          12" in out
    rc, out, _ = wmap(
        "describe", "-f", "-", "-o", "json", input=(DATA / "jobset-leader-workers.yaml").read_text()
    )
    data = orjson.loads(out)
    check(data, "describe-view.v1.json")
    assert data["fileMode"] is True
    two = tmp_path / "two.yaml"
    two.write_text("a: 1\n---\nb: 2\n")
    rc, _, err = wmap("describe", "-f", str(two))
    assert rc == 2 and "holds more than one document; describe reads one workload" in err
    none = tmp_path / "none.yaml"
    none.write_text("a: 1\n")
    rc, _, err = wmap("describe", "-f", str(none))
    assert rc == 2 and "declares no apiVersion and kind, so there is nothing to resolve it by" in err
    dep = tmp_path / "dep.yaml"
    dep.write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n")
    rc, out, err = wmap("describe", "-f", str(dep), "-o", "json")
    assert rc == 4 and orjson.loads(out)["gvk"] == "apps/v1, Kind=Deployment"
    assert "no Karta definition covers this workload type: apps/v1, Kind=Deployment" in err
    rc, _, err = wmap("describe", "jobset/x", "-f", str(dep))
    assert (
        rc == 2 and '--file reads the kind from the manifest, so it cannot be combined with "jobset/x"' in err
    )


# --- RBAC and cluster definitions ----------------------------------------------------------------


def test_least_privilege_reader(
    cluster: TestCluster, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    seed(kube, namespace)
    kube.grant(
        "reader",
        [rule(["jobset.x-k8s.io"], ["jobsets"], ["get", "list"]), rule([""], ["pods"], ["get", "list"])],
        namespace,
    )
    kc = str(cluster.write_kubeconfig(tmp_path / "kc", user="reader", namespace=namespace))
    rc, out, err = wmap("get", "jobsets", "--kubeconfig", kc)
    assert rc == 0 and "train" in out
    assert (
        "warning: not allowed to list kartas.run.ai; showing built-in definitions only. Ask a cluster "
        'administrator for "list" permission on kartas.run.ai to include cluster definitions.' in err
    )
    # The pods hang off Jobs (Pod -> Job -> JobSet) the reader may not get: said, not hidden.
    rc, out, err = wmap("describe", "jobset/train", "--kubeconfig", kc)
    assert rc == 0, err
    assert "train-workers-1" not in out and "TOTAL       3          12" in out
    assert "warning: not allowed to get jobs.batch: pods owned through them are not shown" in err
    rc, out, err = wmap("get", "jobsets", "-o", "wide", "--kubeconfig", kc)
    assert rc == 0 and "not allowed to get jobs.batch" in err
    kube.grant("reader", [rule(["batch"], ["jobs"], ["get"])], namespace)
    rc, out, err = wmap("describe", "jobset/train", "--kubeconfig", kc)
    assert rc == 0, err
    assert "train-workers-1" in out and "TOTAL       3          12" in out and "jobs.batch" not in err
    nobody = str(cluster.write_kubeconfig(tmp_path / "kc2", user="nobody", namespace=namespace))
    rc, _, err = wmap("get", "jobsets", "--kubeconfig", nobody)
    assert rc == 1 and "error: not allowed to list JobSet:" in err
    rc, _, err = wmap("describe", "jobset/train", "--kubeconfig", nobody)
    assert rc == 1 and "error: not allowed to read JobSet:" in err


def test_cluster_definitions_and_no_crd(
    kube: KubeTestClient, namespace: str, kc: str, no_karta_crd: None
) -> None:
    seed(kube, namespace, pods=False)
    # The missing CRD is said where it matters, not on every command (issue 24).
    rc, _, err = wmap("get", "jobsets", "--kubeconfig", kc)
    assert rc == 0 and "kartas.run.ai" not in err, err
    rc, _, err = wmap("definitions", "--kubeconfig", kc)
    assert rc == 0
    assert "warning: the kartas.run.ai CRD is not installed, so no cluster definition was read" in err
    rc, _, err = wmap("get", "gizmos", "--kubeconfig", kc)
    assert rc == exit_codes.NO_DEFINITION
    assert "(the kartas.run.ai CRD is not installed, so no cluster definition was read)" in err
    crds.ensure_karta_crd(kube)
    karta = yaml.safe_load((DATA / "catalog" / "jobset-x-k8s-io-jobset-v1alpha2.yaml").read_text())
    karta["metadata"] = {"name": "my-jobset"}
    kube.create(karta)
    broken = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": "broken"},
        "spec": {"structureDefinition": {"rootComponent": {"name": "r"}}},
    }
    kube.create(broken)
    try:
        rc, out, err = wmap("get", "jobsets", "-o", "wide", "--kubeconfig", kc)
        assert rc == 0, err
        assert out.splitlines()[1].split()[-1] == "cluster"
        assert 'warning: skipping Karta definition "broken": invalid: ' in err
        rc, out, _ = wmap("get", "jobsets", "-o", "json", "--kubeconfig", kc)
        assert orjson.loads(out)["items"][0]["definition"] == "my-jobset"
    finally:
        kube.request("DELETE", "/apis/run.ai/v1alpha1/kartas/my-jobset")
        kube.request("DELETE", "/apis/run.ai/v1alpha1/kartas/broken")


# --- all types and watch -------------------------------------------------------------------------


def test_all_types_top_level_rule(kube: KubeTestClient, namespace: str, kc: str) -> None:
    js = seed(kube, namespace, pods=False)
    tpl = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}
    kube.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": "train-leader-0",
                "namespace": namespace,
                "ownerReferences": [owner_reference(js)],
            },
            "spec": {"template": tpl},
        }
    )
    kube.create(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "solo", "namespace": namespace},
            "spec": {"template": tpl},
        }
    )
    kube.create(pytorchjob("pt", namespace))
    rc, out, err = wmap("get", "--all-types", "--kubeconfig", kc)
    assert rc == 0, err
    rows = {(ln.split()[0], ln.split()[1]) for ln in out.splitlines()[1:]}
    assert rows == {("train", "JobSet"), ("solo", "Job"), ("pt", "PyTorchJob")}
    assert out.splitlines()[0].split()[:2] == ["NAME", "TYPE"]
    rc, out, _ = wmap("get", "--all-types", "--phase", "Running", "-o", "json", "--kubeconfig", kc)
    assert [i["name"] for i in orjson.loads(out)["items"]] == ["train"]


def test_watch_sees_status_change(
    cluster: TestCluster, kube: KubeTestClient, namespace: str, kc: str
) -> None:
    js = kube.create(jobset("w", namespace))
    env = {**os.environ, "WMAP_CATALOG_DIR": str(DATA / "catalog")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workload_map.cli.main",
            "get",
            "jobsets",
            "-w",
            "--watch-timeout",
            "90",
            "--kubeconfig",
            kc,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    # Read line by line: change the status once the watch printed the first row (a loaded machine
    # may take seconds to start the process), then stop at the first row showing it. The watch
    # timeout only bounds a watch that never shows it (a 15 s timeout counted from the start
    # could end before a loaded machine delivered the change).
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if not line.startswith("w "):
                continue
            if len([ln for ln in lines if ln.startswith("w ")]) == 1:
                kube.set_status(js, RUNNING_JOBSET_STATUS)
            elif "Running" in line:
                break
    finally:
        proc.kill()
        _, err = proc.communicate(timeout=60)
    rows = [ln for ln in lines if ln.startswith("w ")]
    assert rows and "Undefined" in rows[0] and any("Running" in ln for ln in rows[1:]), (lines, err)


# --- group, requirements, completion ---------------------------------------------------------------


def test_group_pod(kube: KubeTestClient, namespace: str, kc: str) -> None:
    pt = kube.create(pytorchjob("g", namespace))
    kube.make_pod("g-worker-0", namespace, owner=pt, labels={"training.kubeflow.org/replica-type": "worker"})
    rc, out, err = wmap("group", "g-worker-0", "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    data = orjson.loads(out)  # the PodGroup object KAI creates
    assert data["kind"] == "PodGroup" and data["metadata"]["name"] == f"pg-{pt['metadata']['uid']}-job"
    assert data["spec"]["minMember"] == 3 and data["metadata"]["ownerReferences"][0]["kind"] == "PyTorchJob"
    rc, out, _ = wmap("group", "g-worker-0", "--kubeconfig", kc)
    assert f"pg-{pt['metadata']['uid']}-job" in out and "MinMember:" in out
    rc, _, err = wmap("group", "nope", "--kubeconfig", kc)
    assert rc == 3


def test_requirements_and_fit(kube: KubeTestClient, namespace: str, kc: str) -> None:
    node = f"fit-{namespace}"[:60]
    kube.make_node(node, gpus=8, cpu="96", memory="1024Gi")
    kube.make_node(node + "-2", gpus=8, cpu="96", memory="1024Gi")
    manifest = str(DATA / "jobset-leader-workers.yaml")
    rc, out, err = wmap("requirements", "-f", manifest)
    assert rc == 0, err
    assert "job/replicatedjob/workers   2          8" in out
    rc, out, err = wmap(
        "requirements", "-f", manifest, "--fit", "wmap-test", "--kubeconfig", kc, "-o", "json"
    )
    assert rc == 0, err
    fit = orjson.loads(out)["fit"][0]
    assert fit["context"] == "wmap-test" and fit["fits"] is True and fit["nodes"] >= 1
    big = yaml.safe_load(Path(manifest).read_text())
    big["spec"]["replicatedJobs"][1]["replicas"] = 5000
    path = kube_tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"big-{namespace}.yaml"
    kube_tmp.write_text(yaml.safe_dump(big))
    rc, out, err = wmap("requirements", "-f", str(path), "--fit", "wmap-test", "--kubeconfig", kc)
    assert rc == 1 and "no" in out and "error: the workload fits none of the contexts: wmap-test" in err


def test_fit_scheduling_constraints_two_contexts(
    cluster: TestCluster, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    """--fit over two contexts (same test cluster, different namespaces) with the scheduler's node
    filters: taints, a cordon, nodeSelector, required node affinity, GPUs used by running pods."""
    path = cluster.write_kubeconfig(tmp_path / "kubeconfig", user="admin", namespace=namespace)
    config = yaml.safe_load(path.read_text())
    config["contexts"].append({"name": "wmap-other", "context": {"cluster": "wmap-test", "user": "admin"}})
    config["contexts"][-1]["context"]["namespace"] = kube.create_namespace()
    path.write_text(yaml.safe_dump(config))
    kc2 = str(path)
    base = f"fit2-{namespace}"[:55]
    pool = {"wmap-fit": namespace}
    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    kube.make_node(f"{base}-c", gpus=8, labels=pool, unschedulable=True)  # cordoned
    kube.make_node(f"{base}-s", gpus=4, labels=pool)  # room for one 4-GPU pod
    kube.make_node(f"{base}-t1", gpus=8, labels=pool, taints=[taint])
    kube.make_node(f"{base}-t2", gpus=8, labels=pool, taints=[taint])
    kube.make_node(f"{base}-x", gpus=8, taints=[taint])  # outside the pool: nodeSelector excludes it

    manifest = yaml.safe_load((DATA / "jobset-leader-workers.yaml").read_text())
    pods = [rj["template"]["spec"]["template"]["spec"] for rj in manifest["spec"]["replicatedJobs"]]

    def check(name: str) -> tuple[int, list[dict[str, Any]], str]:
        target = tmp_path / f"{name}.yaml"
        target.write_text(yaml.safe_dump(manifest))
        args = ("requirements", "-f", str(target), "--fit", "wmap-test,wmap-other", "--kubeconfig", kc2)
        rc, out, err = wmap(*args, "-o", "json")
        _, table, _ = wmap(*args)
        fits = orjson.loads(out)["fit"]
        assert [f["context"] for f in fits] == ["wmap-test", "wmap-other"], (out, err)
        assert fits[0]["gangs"] == fits[1]["gangs"]  # same cluster
        return rc, fits[0]["gangs"], table

    # nodeSelector only: s holds the leader; the taints, the cordon and the pool keep the workers out
    for spec in pods:
        spec["nodeSelector"] = dict(pool)
    rc, gangs, table = check("selector")
    assert rc == 1
    leader, workers = gangs  # the test catalog's JobSet: one gang per replicated job
    assert leader["name"].endswith("/leader") and leader["fits"] is True
    assert workers["placed"] == 0 and workers["minPods"] == 2 and not workers["fits"]
    (unplaced,) = workers["unplaced"]
    reasons = unplaced["reasons"]
    assert unplaced["pods"] == 2 and unplaced["owner"] == "replicatedjob/workers"
    assert reasons["taint nvidia.com/gpu=present:NoSchedule"] >= 2
    assert reasons["cordoned"] >= 1 and reasons["insufficient nvidia.com/gpu"] == 1
    assert reasons["nodeSelector"] >= 1  # x and every other test's node
    assert workers["reason"].startswith("0 of 2 pods placed; 2 of replicatedjob/workers: ")
    assert "by cordoned" in workers["reason"] and "by insufficient nvidia.com/gpu" in workers["reason"]
    assert "wmap-test" in table and "wmap-other" in table and "0 of 2 pods placed" in table

    # tolerating the GPU taint: s and t1 hold them
    for spec in pods:
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    rc, gangs, _ = check("tolerated")
    assert rc == 0 and all(g["fits"] for g in gangs) and sum(g["placed"] for g in gangs) == 3

    # t1's GPUs taken by a running pod, and required affinity keeping the pods off t2
    kube.make_pod("gpu-hog", namespace, gpus=8, node=f"{base}-t1")
    not_t2 = {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": [f"{base}-t2"]}]}
    for spec in pods:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [not_t2]}
            }
        }
    rc, gangs, _ = check("affinity")
    assert rc == 1 and [g["placed"] for g in gangs] == [1, 0]
    reasons = gangs[1]["unplaced"][0]["reasons"]
    assert reasons["node affinity"] == 1 and reasons["insufficient nvidia.com/gpu"] == 2  # s and t1


def test_completion(kc: str, kube: KubeTestClient, namespace: str) -> None:
    for shell in ("bash", "zsh", "fish"):
        rc, out, _ = wmap("completion", shell)
        assert rc == 0 and "_WMAP_COMPLETE" in out
    seed(kube, namespace, "compl", pods=False)
    env = {
        **os.environ,
        "WMAP_CATALOG_DIR": str(DATA / "catalog"),
        # The 2 s default bounds a user's TAB; a loaded CI machine needs longer for discovery + list.
        "WMAP_COMPLETION_TIMEOUT": "25",
        "_WMAP_COMPLETE": "bash_complete",
        "COMP_WORDS": f"wmap get --kubeconfig {kc} job",
        "COMP_CWORD": "4",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "workload_map.cli.main"], env=env, capture_output=True, text=True, timeout=30
    )
    values = [ln.split(",", 1)[1] for ln in proc.stdout.splitlines() if "," in ln]
    assert {"job", "jobset"} <= set(values)
    env["COMP_WORDS"] = f"wmap get --kubeconfig {kc} jobset com"
    env["COMP_CWORD"] = "5"
    proc = subprocess.run(
        [sys.executable, "-m", "workload_map.cli.main"], env=env, capture_output=True, text=True, timeout=30
    )
    assert "plain,compl" in proc.stdout.splitlines()
    env["COMP_WORDS"] = "wmap get --phase Run"
    env["COMP_CWORD"] = "3"
    proc = subprocess.run(
        [sys.executable, "-m", "workload_map.cli.main"], env=env, capture_output=True, text=True, timeout=30
    )
    assert "plain,Running" in proc.stdout.splitlines()


def test_describe_lws_splits_pods_per_group(kube: KubeTestClient, namespace: str, kc: str) -> None:
    obj = kube.create(lws("vllm", namespace))
    for group in (0, 1):
        for worker in (0, 1):
            name = f"vllm-{group}" + (f"-{worker}" if worker else "")
            kube.make_pod(
                name,
                namespace,
                owner=obj,
                labels={
                    "leaderworkerset.sigs.k8s.io/name": "vllm",
                    "leaderworkerset.sigs.k8s.io/group-index": str(group),
                    "leaderworkerset.sigs.k8s.io/worker-index": str(worker),
                },
                annotations={"leaderworkerset.sigs.k8s.io/leader-name": f"vllm-{group}"} if worker else None,
                gpus=8,
                node=f"n{group}",
            )
    rc, out, err = wmap("describe", "lws", "vllm", "-o", "json", "--kubeconfig", kc)
    assert rc == 0, err
    data = orjson.loads(out)
    check(data, "describe-view.v1.json")
    group = data["components"][0]
    assert group["name"] == "group"
    replicas = group["children"]
    assert [(r["name"], r["replicaKey"]) for r in replicas] == [("group[0]", "0"), ("group[1]", "1")]
    for key, row in zip("01", replicas, strict=True):
        leader = next(c for c in row["children"] if c["name"] == "leader")
        assert [p["name"] for p in leader["pods"]] == [f"vllm-{key}"]
        assert leader["replicas"]["desired"] == 1 and row["nodes"] == [f"n{key}"]
        worker = next(c for c in row["children"] if c["name"] == "worker")
        assert [p["name"] for p in worker["pods"]] == [f"vllm-{key}-1"]
    rc, out, err = wmap("describe", "lws", "vllm", "--kubeconfig", kc)
    assert rc == 0, err
    assert "|-- group[0]" in out and "`-- group[1]" in out


def test_all_types_sees_a_crd_installed_after_the_disk_cache(
    kube: KubeTestClient, namespace: str, kc: str, tmp_path: Path
) -> None:
    """The discovery disk cache (6 hours) must not hide a type installed since it was written."""
    import json
    import uuid

    from tests.operator.helpers import karta, widget_crd

    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    defs = tmp_path / "gizmo.yaml"
    defs.write_text(json.dumps(karta("gizmo", group, "v1", "Gizmo")))
    rc, out, err = wmap("get", "--all-types", "--definitions", str(defs), "--kubeconfig", kc)
    assert rc == 0 and "Gizmo" not in out, err  # not installed yet; the cache is written now
    crds.install_crds(kube, [widget_crd(group, kind="Gizmo")], downlevel=False)
    kube.create(
        {"apiVersion": f"{group}/v1", "kind": "Gizmo", "metadata": {"name": "g1", "namespace": namespace}}
    )
    rc, out, err = wmap("get", "--all-types", "--definitions", str(defs), "--kubeconfig", kc)
    assert rc == 0, err
    assert any(ln.split()[:1] == ["g1"] and "Gizmo" in ln for ln in out.splitlines()), out
