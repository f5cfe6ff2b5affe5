"""``wmap describe`` reads and builds only what its output needs (issue 24: ``describe`` of 1,000
pods within ``kubectl get pods -o json``'s time). On the REAL API server (tests/support), with the
JobSet controller's ownership chain (Pod -> Job -> JobSet, tests/support/seed.py) and, as
bench/bench_cli.py creates them, pods the JobSet owns directly."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import RUNNING_JOBSET_STATUS, jobset, wmap
from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient, rule
from tests.support.seed import jobset_pods, seed_event
from workload_map.cluster.client import KubeClient
from workload_map.kube.objects import KARTA_PATH

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "jobset-leader-workers.yaml"


def seed(kube: KubeTestClient, namespace: str) -> dict[str, Any]:
    js = kube.set_status(kube.create(jobset("train", namespace)), RUNNING_JOBSET_STATUS)
    pods = jobset_pods(
        kube, js, (("train-leader-0", "leader", "node-a"), ("train-workers-0", "workers", "node-b"))
    )
    # Labelled with its replicated job, as bench/bench_cli.py creates them.
    labels = {"jobset.sigs.k8s.io/replicatedjob-name": "workers"}
    direct = kube.make_pod("train-direct-0", namespace, owner=js, labels=labels, node="node-c")
    seed_event(kube, js, "ev-js", "Started", "jobset started", kind="JobSet", first=60, last=60)
    seed_event(kube, pods[0], "ev-leader", "Pulled", "leader pulled", kind="Pod", first=30, last=30)
    seed_event(kube, direct, "ev-direct", "Pulled", "direct pulled", kind="Pod", first=20, last=20)
    return js


@pytest.mark.cluster
def test_describe_reads_the_workload_once(
    kube: KubeTestClient, namespace: str, kc: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Collecting the events' owners climbs from each pod to the workload: the workload is at hand,
    so the climb ends there unread (it used to be fetched again); the events of the workload, the
    pods under its Jobs and the pod it owns directly are all shown."""
    seed(kube, namespace)
    paths: list[str] = []
    real = KubeClient.get

    def spy(self: KubeClient, path: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
        paths.append(path)
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(KubeClient, "get", spy)
    rc, out, err = wmap("describe", "jobset/train", "-n", namespace, "--kubeconfig", kc)
    assert rc == 0, err
    for message in ("jobset started", "leader pulled", "direct pulled"):
        assert message in out
    assert "train-direct-0" in out
    workload = [p for p in paths if p.endswith("/jobsets/train")]
    assert len(workload) == 1, paths
    jobs = [p for p in paths if "/jobs/" in p]
    assert len(jobs) == len(set(jobs)) == 2  # each Job between a pod and the workload, once


_MODULES = """
import atexit, sys
def report():
    from workload_map.model import definition
    built = sorted(n for n, c in vars(definition).items()
                   if isinstance(c, type) and issubclass(c, definition._Model) and c.__pydantic_complete__)
    print("MODULES", sorted(m for m in sys.modules if m.startswith("workload_map.")), file=sys.stderr)
    print("VALIDATORS", built, file=sys.stderr)
atexit.register(report)
sys.argv = ["wmap", *sys.argv[1:]]
from workload_map.cli.entry import main
main()
"""


@pytest.mark.cluster
def test_describe_from_the_catalog_cache_imports_no_loader_no_cost_client_and_builds_no_validator(
    cluster: TestCluster, kube: KubeTestClient, namespace: str, kc: str
) -> None:
    """A second describe (the parsed catalog in the user's cache) rebuilds the definitions without
    pydantic's validators, imports neither the definition loader (only ``--definitions`` files and
    cluster Kartas are parsed) nor the cost client (no Prometheus is set), and shows the same."""
    seed(kube, namespace)
    args = ["describe", "jobset/train", "-n", namespace, "--kubeconfig", kc]
    env = dict(os.environ)
    runs = [
        subprocess.run(
            [sys.executable, "-c", _MODULES, *args], capture_output=True, text=True, env=env, check=False
        )
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr
    for run in runs:  # the same tree from the YAML and from the cache
        assert "train-direct-0" in run.stdout and "train-workers-0" in run.stdout
        assert run.stdout.splitlines()[2:] == runs[0].stdout.splitlines()[2:]
    lines = dict(
        line.split(" ", 1) for line in runs[1].stderr.splitlines() if line.split(" ", 1)[0].isupper()
    )
    modules = lines["MODULES"]
    for absent in ("workload_map.model.loader", "workload_map.model.findings", "'workload_map.cost'"):
        assert absent not in modules
    assert "workload_map.model.definition" in modules and "workload_map.live" in modules
    assert lines["VALIDATORS"] == "[]"
    assert Path(env["XDG_CACHE_HOME"], "workload-map", "catalog").is_dir()


_EXIT = """
import atexit, gc, sys
atexit.register(lambda: print("frozen", gc.get_freeze_count() > 0, file=sys.stderr))
sys.argv = ["wmap", *sys.argv[1:]]
from workload_map.cli.entry import main
main()
"""


def test_the_console_script_freezes_its_objects_before_exiting() -> None:
    """The interpreter's last collections at exit walk every object still alive (60 to 180 ms after
    a describe of 1,000 pods on this machine): the console script freezes them out first, with the
    command's exit code unchanged."""
    for args, code in (
        (["describe", "-f", str(EXAMPLE)], 0),
        (["describe", "-f", "/nonexistent.yaml"], None),
    ):
        proc = subprocess.run(
            [sys.executable, "-c", _EXIT, *args], capture_output=True, text=True, check=False
        )
        assert proc.stderr.splitlines()[-1] == "frozen True", proc.stderr
        if code is not None:
            assert proc.returncode == code and proc.stdout.startswith("JobSet/")
        else:
            assert proc.returncode not in (0, None)


@pytest.mark.cluster
def test_describe_lists_the_kartas_ahead_once_with_the_same_warning(
    cluster: TestCluster,
    kube: KubeTestClient,
    namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cluster's Kartas are asked for with the pods, in the background (resolving the type
    waited for them on the main thread): listed once, and a refusal is the same single warning."""
    seed(kube, namespace)
    kube.grant(
        "reader",
        [
            rule(["jobset.x-k8s.io"], ["jobsets"], ["get", "list"]),
            rule([""], ["pods", "events"], ["list"]),
            rule(["batch"], ["jobs"], ["get"]),
        ],
        namespace,
    )
    listed: list[tuple[str, str]] = []
    real = KubeClient.list_all

    def spy(self: KubeClient, path: str, **kwargs: Any) -> list[dict[str, Any]]:
        listed.append((threading.current_thread().name, path))
        return real(self, path, **kwargs)

    monkeypatch.setattr(KubeClient, "list_all", spy)
    admin = str(cluster.write_kubeconfig(tmp_path / "admin", user="admin", namespace=namespace))
    reader = str(cluster.write_kubeconfig(tmp_path / "reader", user="reader", namespace=namespace))
    for kc, warned in ((admin, False), (reader, True)):
        listed.clear()
        rc, out, err = wmap("describe", "jobset/train", "--kubeconfig", kc)
        assert rc == 0, err
        assert "train-direct-0" in out and "leader pulled" in out
        kartas = [thread for thread, path in listed if path == KARTA_PATH]
        assert kartas == ["wmap-describe-prefetch"], listed
        assert err.count("not allowed to list kartas.run.ai") == (1 if warned else 0), err
