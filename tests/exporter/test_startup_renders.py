"""At start the exporter renders every workload once, with all of its pods, after the pods' first
list is in (issue 24: rendering while the list arrived rendered each workload two or three times)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient
from tests.support.seed import create_jobset_tree
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
