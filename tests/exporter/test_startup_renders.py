"""At start the exporter renders every workload once, with all of its pods, after the pods' first
list is in (issue 24: rendering while the list arrived rendered each workload two or three times)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient
from tests.support.seed import create_jobset_tree
from workload_map.cluster.client import KubeClient
from workload_map.cluster.kubeconfig import ConnectionOptions, load_cluster_config
from workload_map.exporter import Exporter

pytestmark = pytest.mark.cluster

ROLES = (("leader", 1), ("workers", 3))


def test_each_workload_is_rendered_once_with_all_its_pods(
    cluster: TestCluster, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    names = [f"train-{i}" for i in range(4)]
    for name in names:
        create_jobset_tree(kube, name, namespace, ROLES)
    config = load_cluster_config(ConnectionOptions(kubeconfig=str(cluster.write_kubeconfig(tmp_path / "kc"))))
    exporter = Exporter(config, namespaces=[namespace], rediscover_interval=1)
    renders: list[tuple[str, int]] = []
    render = exporter._render

    def counting(key: Any, wk: Any, obj: Any, rv: str, pods: dict[str, Any]) -> Any:
        renders.append((key[2], len(pods)))
        return render(key, wk, obj, rv, pods)

    exporter._render = counting  # type: ignore[method-assign]
    exporter.start()
    try:
        deadline = time.monotonic() + 120
        while not (exporter.ready() and exporter.workload_count() == len(names) and exporter.idle()):
            assert time.monotonic() < deadline, f"not converged: {exporter.unsynced()} {renders}"
            time.sleep(0.1)
        pods = sum(n for _role, n in ROLES)
        assert sorted(renders) == [(name, pods) for name in names]
        body = exporter.render().decode()
        assert body.count(f'wmap_pod_workload_info{{namespace="{namespace}"') == pods * len(names)
    finally:
        exporter.stop()


def test_unsharded_pods_are_listed_beside_the_owner_kinds_and_rendered_once_all_are_in(
    cluster: TestCluster, kube: KubeTestClient, namespace: str, tmp_path: Path
) -> None:
    """Unsharded, the pods are listed at once, while the owner kinds are still listing (the wait
    for their chains exists only to drop another shard's pods on arrival). Rendering still waits
    for the owner kinds: here the Jobs' list is held until the pods' list is in, and no workload
    is rendered before it, so no pod is taken for a workload of its own (its Job not in a store
    yet). Only the top-level JobSets are queued then, not their Jobs and pods (the Jobs' own
    events may still queue them: harmless, they are not top-level)."""
    names = [f"train-{i}" for i in range(3)]
    for name in names:
        create_jobset_tree(kube, name, namespace, ROLES)
    config = load_cluster_config(ConnectionOptions(kubeconfig=str(cluster.write_kubeconfig(tmp_path / "kc"))))
    pods_listed = threading.Event()
    jobs_listed = threading.Event()
    jobs_held_until_pods: list[bool] = []

    class HeldJobs(KubeClient):
        """Lists the Jobs only once the pods are listed (or 60 s passed, as the old order needs)."""

        def list(self, path: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
            batch_jobs = path == f"/apis/batch/v1/namespaces/{namespace}/jobs"
            if batch_jobs:
                jobs_held_until_pods.append(pods_listed.wait(60))
            yield from super().list(path, **kwargs)
            if path.endswith("/pods"):
                pods_listed.set()
            if batch_jobs:
                jobs_listed.set()

    exporter = Exporter(
        config,
        namespaces=[namespace],
        rediscover_interval=1,
        client_factory=lambda: HeldJobs(config, connect_tries=1),
    )
    renders: list[tuple[str, int, bool]] = []
    enqueued_at_start: list[str] = []  # what the start enqueues once every list is in
    render, add = exporter._render, exporter.queue.add

    def counting(key: Any, wk: Any, obj: Any, rv: str, pods: dict[str, Any]) -> Any:
        renders.append((key[2], len(pods), jobs_listed.is_set()))
        return render(key, wk, obj, rv, pods)

    def recording(key: Any) -> None:
        if threading.current_thread().name == "wmap-pods-synced":
            enqueued_at_start.append(key[0])
        add(key)

    exporter._render = counting  # type: ignore[method-assign]
    exporter.queue.add = recording  # type: ignore[method-assign]
    exporter.start()
    try:
        deadline = time.monotonic() + 180
        while not (exporter.ready() and exporter.workload_count() == len(names) and exporter.idle()):
            assert time.monotonic() < deadline, f"not converged: {exporter.unsynced()} {renders}"
            time.sleep(0.1)
        assert jobs_held_until_pods == [True]  # the pods were listed while the Jobs' list was held
        pods = sum(n for _role, n in ROLES)
        assert sorted(renders) == [(name, pods, True) for name in names]
        assert enqueued_at_start == ["jobset.x-k8s.io/JobSet"] * len(names)
    finally:
        exporter.stop()
