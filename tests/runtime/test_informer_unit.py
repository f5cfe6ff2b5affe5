"""Informer behaviour against a scripted client: relist diff on 410, reconnect, bookmarks."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from tests.runtime.fakes import FakeClient, gone, obj, refused
from workload_map.runtime import EventHandler, Informer


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []
        self.lock = threading.Lock()

    def handler(self) -> EventHandler:
        def add(o: dict[str, Any]) -> None:
            self._rec("add", o)

        def update(old: dict[str, Any], new: dict[str, Any]) -> None:
            self._rec("update", new)

        def delete(o: dict[str, Any]) -> None:
            self._rec("delete", o)

        return EventHandler(add, update, delete)

    def _rec(self, kind: str, o: dict[str, Any]) -> None:
        with self.lock:
            self.events.append((kind, o["metadata"]["name"], o["metadata"]["resourceVersion"]))


def make(client: FakeClient) -> tuple[Informer, Recorder]:
    inf = Informer(client, "/api/v1/pods", resource="pods", backoff_initial=0.01, backoff_max=0.02)  # type: ignore[arg-type]
    rec = Recorder()
    inf.add_handler(rec.handler())
    return inf, rec


def run_until_idle(client: FakeClient, inf: Informer) -> None:
    inf.start()
    assert client.idle.wait(5), "the informer never reached an idle watch"
    inf.stop()
    assert not inf.alive


def test_list_then_watch_events_and_bookmarks() -> None:
    client = FakeClient()
    client.lists = [([obj("a", 1), obj("b", 2)], "10")]
    client.watches = [
        [
            ("ADDED", obj("c", 11)),
            ("MODIFIED", obj("a", 12)),
            ("BOOKMARK", {"metadata": {"resourceVersion": "15"}}),
            ("DELETED", obj("b", 16)),
            ("DELETED", obj("never-seen", 17)),
        ]
    ]
    inf, rec = make(client)
    run_until_idle(client, inf)
    assert rec.events == [
        ("add", "a", "1"),
        ("add", "b", "2"),
        ("add", "c", "11"),
        ("update", "a", "12"),
        ("delete", "b", "16"),
    ]
    assert sorted(k[1] for k in inf.store) == ["a", "c"]
    assert inf.has_synced()
    # watched from the list RV, then re-watched from the last event's RV after the stream ended
    assert [p["resourceVersion"] for p in client.watch_params] == ["10", "17"]
    assert all(p["allowWatchBookmarks"] == "true" for p in client.watch_params)
    assert inf.stats.bookmarks == 1
    assert "managedFields" not in inf.store.get("ns", "a")["metadata"]  # type: ignore[index]


def test_bookmark_moves_resource_version() -> None:
    client = FakeClient()
    client.lists = [([], "5")]
    client.watches = [[("BOOKMARK", {"metadata": {"resourceVersion": "99"}})]]
    inf, rec = make(client)
    run_until_idle(client, inf)
    assert rec.events == []
    assert [p["resourceVersion"] for p in client.watch_params] == ["5", "99"]


def test_gone_relists_and_emits_the_difference() -> None:
    client = FakeClient()
    client.lists = [
        ([obj("keep", 1), obj("change", 2), obj("vanish", 3), obj("recreated", 4, uid="u1")], "10"),
        ([obj("keep", 1), obj("change", 20), obj("new", 21), obj("recreated", 22, uid="u2")], "30"),
    ]
    client.watches = [gone()]
    inf, rec = make(client)
    run_until_idle(client, inf)
    assert rec.events[:4] == [
        ("add", "keep", "1"),
        ("add", "change", "2"),
        ("add", "vanish", "3"),
        ("add", "recreated", "4"),
    ]
    assert sorted(rec.events[4:]) == sorted(
        [
            ("delete", "vanish", "3"),
            ("update", "change", "20"),
            ("add", "new", "21"),
            ("delete", "recreated", "4"),
            ("add", "recreated", "22"),
        ]
    )
    assert client.list_calls == 2
    assert inf.stats.relists_after_gone == 1
    assert client.watch_params[-1]["resourceVersion"] == "30"


def test_gone_as_watch_error_event_relists() -> None:
    client = FakeClient()
    client.lists = [([obj("a", 1)], "10"), ([], "40")]
    client.watches = [[("ERROR", {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"})]]
    inf, rec = make(client)
    run_until_idle(client, inf)
    assert rec.events == [("add", "a", "1"), ("delete", "a", "1")]
    assert client.list_calls == 2


def test_connection_errors_back_off_and_resume_from_last_rv() -> None:
    client = FakeClient()
    client.lists = [refused(), ([obj("a", 1)], "10")]
    client.watches = [[("ADDED", obj("b", 11))], refused(), refused(), [("ADDED", obj("c", 12))]]
    inf, rec = make(client)
    run_until_idle(client, inf)
    assert [e[1] for e in rec.events] == ["a", "b", "c"]
    # no relist after connection errors: the watch resumes from the last resourceVersion
    assert client.list_calls == 2
    assert [p["resourceVersion"] for p in client.watch_params] == ["10", "11", "11", "11", "12"]
    assert inf.stats.watch_errors == 2 and inf.stats.list_errors == 1
    assert inf.stats.errors_by_type == {"ConnectionFailedError": 3}


def test_handler_exception_does_not_stop_the_informer() -> None:
    client = FakeClient()
    client.lists = [([obj("a", 1)], "10")]
    client.watches = [[("ADDED", obj("b", 11))]]
    inf = Informer(client, "/x", backoff_initial=0.01)  # type: ignore[arg-type]

    def bad(o: dict[str, Any]) -> None:
        raise RuntimeError("handler bug")

    inf.add_handler(EventHandler(on_add=bad))
    rec = Recorder()
    inf.add_handler(rec.handler())
    run_until_idle(client, inf)
    assert [e[1] for e in rec.events] == ["a", "b"]


def test_late_handler_gets_replay_and_stop_is_prompt() -> None:
    client = FakeClient()
    client.lists = [([obj("a", 1), obj("b", 2)], "10")]
    inf = Informer(client, "/x")  # type: ignore[arg-type]
    inf.start()
    assert inf.wait_for_sync(5)
    assert client.idle.wait(5)
    rec = Recorder()
    inf.add_handler(rec.handler())
    assert sorted(e[1] for e in rec.events) == ["a", "b"]
    inf.stop()
    assert not inf.alive
    assert inf.last_sync_time is not None and inf.last_event_time is not None


def test_store_indexer() -> None:
    client = FakeClient()
    client.lists = [([obj("a", 1, uid="u-a"), obj("b", 2, uid="u-b")], "10")]
    client.watches = [[("DELETED", obj("a", 11, uid="u-a"))]]
    inf = Informer(client, "/x")  # type: ignore[arg-type]
    inf.store.add_indexer("uid", lambda o: [o["metadata"]["uid"]])
    run_until_idle(client, inf)
    assert inf.store.by_index("uid", "u-a") == []
    assert [o["metadata"]["name"] for o in inf.store.by_index("uid", "u-b")] == ["b"]


def test_transform_may_leave_objects_out() -> None:
    """A transform returning None keeps the object out of the store; an object it stops keeping
    goes away with a delete event (the exporter drops other shards' pods so)."""
    client = FakeClient()
    client.lists = [([obj("keep", 1), obj("skip", 2), obj("later", 3)], "10")]
    client.watches = [
        [("ADDED", obj("skip2", 11)), ("MODIFIED", obj("later", 12)), ("MODIFIED", obj("keep", 13))]
    ]
    dropped = {"skip", "skip2"}

    def transform(o: dict[str, Any]) -> dict[str, Any] | None:
        if o["metadata"]["name"] == "later" and o["metadata"]["resourceVersion"] == "12":
            return None
        return None if o["metadata"]["name"] in dropped else o

    inf = Informer(
        client,  # type: ignore[arg-type]
        "/api/v1/pods",
        resource="pods",
        backoff_initial=0.01,
        backoff_max=0.02,
        transform=transform,
    )
    rec = Recorder()
    inf.add_handler(rec.handler())
    run_until_idle(client, inf)
    assert rec.events == [
        ("add", "keep", "1"),
        ("add", "later", "3"),
        ("delete", "later", "3"),
        ("update", "keep", "13"),
    ]
    assert sorted(k[1] for k in inf.store) == ["keep"]


def test_a_transform_may_keep_any_mapping() -> None:
    """An ObjectInformer's transform may turn objects into another read-only mapping (the exporter's
    compact pods): the store keeps it and every handler, the delete's included, gets it."""
    from types import MappingProxyType

    from workload_map.runtime.informer import ObjectEventHandler, ObjectInformer

    client = FakeClient()
    client.lists = [([obj("a", 1), obj("b", 2)], "10")]
    client.watches = [[("MODIFIED", obj("a", 11)), ("DELETED", obj("b", 12))]]
    seen: list[tuple[str, str, type]] = []

    def note(kind: str) -> Callable[[Mapping[str, Any]], None]:
        return lambda o: seen.append((kind, o["metadata"]["resourceVersion"], type(o)))

    inf: ObjectInformer[Mapping[str, Any]] = ObjectInformer(
        client,  # type: ignore[arg-type]
        "/api/v1/pods",
        resource="pods",
        backoff_initial=0.01,
        backoff_max=0.02,
        transform=MappingProxyType,
    )
    inf.add_handler(
        ObjectEventHandler(
            on_add=note("add"), on_update=lambda _o, n: note("update")(n), on_delete=note("delete")
        )
    )
    run_until_idle(client, inf)  # type: ignore[arg-type]
    proxy = MappingProxyType
    assert seen == [
        ("add", "1", proxy),
        ("add", "2", proxy),
        ("update", "11", proxy),
        ("delete", "12", proxy),
    ]
    kept = inf.store.get("ns", "a")
    assert isinstance(kept, MappingProxyType) and kept["metadata"]["resourceVersion"] == "11"
    assert list(inf.store) == [("ns", "a")]


def test_shared_index_follows_every_attached_store() -> None:
    """One index over several stores: puts, replacements, removals and a retired store."""
    from workload_map.runtime.informer import SharedIndex, Store

    def owned(o: Mapping[str, Any]) -> list[str]:
        return [r["uid"] for r in o["metadata"].get("ownerReferences", [])]

    def child(name: str, *owners: str) -> dict[str, Any]:
        refs = [{"uid": u} for u in owners]
        return {"metadata": {"namespace": "ns", "name": name, "ownerReferences": refs}}

    index = SharedIndex(owned)
    pods, jobs = Store(), Store()
    jobs.put(child("job", "js"))
    jobs.attach(index, "jobs")  # present objects are indexed at once
    pods.attach(index, "pods")
    pods.put(child("p1", "job"))
    pods.put(child("p2", "job", "other"))
    assert sorted((tag, o["metadata"]["name"]) for tag, o in index.get("job")) == [
        ("pods", "p1"),
        ("pods", "p2"),
    ]
    assert [(t, o["metadata"]["name"]) for t, o in index.get("js")] == [("jobs", "job")]
    pods.put(child("p2", "other"))  # its owner reference changed
    assert [o["metadata"]["name"] for _t, o in index.get("job")] == ["p1"]
    pods.remove(("ns", "p1"))
    assert index.get("job") == [] and len(index) == 2  # empty values are dropped
    jobs.detach(index)
    assert index.get("js") == [] and [o["metadata"]["name"] for _t, o in index.get("other")] == ["p2"]
    jobs.put(child("job2", "js"))  # a detached store no longer feeds the index
    assert index.get("js") == []
