"""The informer against the real kube-apiserver: events, selectors, an apiserver restart, cut
watches."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from tests.support.cluster import TestCluster
from tests.support.kube import KubeTestClient
from workload_map.cluster import KubeClient
from workload_map.runtime import EventHandler, Informer


def cm(
    name: str, namespace: str, data: dict[str, str] | None = None, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {}}


class Log:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def handler(self) -> EventHandler:
        return EventHandler(
            on_add=lambda o: self.rec("add", o),
            on_update=lambda old, new: self.rec("update", new),
            on_delete=lambda o: self.rec("delete", o),
        )

    def rec(self, kind: str, o: dict[str, Any]) -> None:
        with self.lock:
            self.events.append((kind, o["metadata"]["name"]))

    def has(self, kind: str, name: str) -> bool:
        with self.lock:
            return (kind, name) in self.events

    def count(self, kind: str, name: str) -> int:
        with self.lock:
            return self.events.count((kind, name))


def wait(check: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def data_of(inf: Informer, ns: str, name: str) -> dict[str, str] | None:
    o = inf.store.get(ns, name)
    return None if o is None else o.get("data") or {}


def test_add_update_delete(client: KubeClient, kube: KubeTestClient, namespace: str) -> None:
    kube.create(cm("before", namespace, {"v": "0"}))
    inf = Informer(client, f"/api/v1/namespaces/{namespace}/configmaps", resource="configmaps")
    log = Log()
    inf.add_handler(log.handler())
    inf.start()
    try:
        assert inf.wait_for_sync(20)
        assert log.has("add", "before")
        created = kube.create(cm("x", namespace, {"v": "1"}))
        wait(lambda: log.has("add", "x"), what="add")
        kube.update({**created, "data": {"v": "2"}})
        wait(lambda: data_of(inf, namespace, "x") == {"v": "2"}, what="update")
        assert log.has("update", "x")
        kube.delete("v1", "configmaps", "x", namespace)
        wait(lambda: log.has("delete", "x"), what="delete")
        assert inf.store.get(namespace, "x") is None
        assert log.count("add", "x") == 1 and log.count("delete", "x") == 1
        assert inf.last_event_time is not None and inf.last_sync_time is not None
    finally:
        inf.stop()
    assert not inf.alive


def test_label_selector(client: KubeClient, kube: KubeTestClient, namespace: str) -> None:
    inf = Informer(client, f"/api/v1/namespaces/{namespace}/configmaps", label_selector="team=a")
    inf.start()
    try:
        assert inf.wait_for_sync(20)
        kube.create(cm("a1", namespace, labels={"team": "a"}))
        kube.create(cm("b1", namespace, labels={"team": "b"}))
        wait(lambda: inf.store.get(namespace, "a1") is not None)
        time.sleep(0.3)
        assert inf.store.get(namespace, "b1") is None
    finally:
        inf.stop()


def test_recovers_from_apiserver_restart(
    cluster: TestCluster, client: KubeClient, kube: KubeTestClient, namespace: str
) -> None:
    kube.create(cm("stay", namespace))
    doomed = kube.create(cm("doomed", namespace))
    inf = Informer(client, f"/api/v1/namespaces/{namespace}/configmaps", backoff_initial=0.2, backoff_max=1.0)
    log = Log()
    inf.add_handler(log.handler())
    inf.start()
    try:
        assert inf.wait_for_sync(20)
        cluster.stop_apiserver()
        time.sleep(1.5)  # the informer sees the watch break and starts reconnecting
        cluster.start_apiserver()
        # changes right after the restart, perhaps before the informer reconnected
        kube.delete_obj(doomed)
        kube.create(cm("after", namespace, {"v": "1"}))
        wait(lambda: log.has("add", "after") and log.has("delete", "doomed"), timeout=60, what="recovery")
        assert inf.store.get(namespace, "stay") is not None
        assert inf.stats.watch_errors + inf.stats.relists_after_gone >= 1
        assert inf.alive
        # and it keeps watching
        kube.create(cm("later", namespace))
        wait(lambda: log.has("add", "later"), timeout=30, what="later event")
    finally:
        inf.stop()
    assert log.count("add", "after") == 1 and log.count("delete", "doomed") == 1


def test_changes_between_watch_cut_and_reconnect(
    client: KubeClient, kube: KubeTestClient, namespace: str
) -> None:
    # watches end every second (timeoutSeconds=1): changes made in the gaps must all arrive, once.
    inf = Informer(client, f"/api/v1/namespaces/{namespace}/configmaps", watch_timeout=1)
    log = Log()
    inf.add_handler(log.handler())
    inf.start()
    try:
        assert inf.wait_for_sync(20)
        names = [f"c{i}" for i in range(30)]
        for i, name in enumerate(names):
            kube.create(cm(name, namespace, {"i": str(i)}))
            time.sleep(0.1)
            if i % 3 == 0:
                kube.delete("v1", "configmaps", name, namespace)
        live = {o["metadata"]["name"] for o in kube.list("v1", "configmaps", namespace)}
        wait(lambda: {k[1] for k in inf.store} == live, timeout=20, what="store == server")
        assert inf.stats.watches >= 3  # the watch was really cut and re-established
        for name in names:
            assert log.count("add", name) == 1, name
            assert log.count("delete", name) == (1 if name not in live else 0), name
    finally:
        inf.stop()


def test_cluster_wide_pods_informer_stops_promptly(
    client: KubeClient, kube: KubeTestClient, namespace: str
) -> None:
    inf = Informer(client, "/api/v1/pods", resource="pods", watch_timeout=600)
    inf.start()
    try:
        assert inf.wait_for_sync(20)
        kube.make_pod("p1", namespace)
        # make_pod creates the pod (Pending) and then sets its status, so two events arrive.
        wait(
            lambda: (inf.store.get(namespace, "p1") or {}).get("status", {}).get("phase") == "Running",
            what="pod Running",
        )
    finally:
        inf.stop()
    assert not inf.alive
