"""The client against a malicious API server on loopback (issue #23): every ceiling holds and every
strange answer is an error naming the request and the server.

The server is the fake of ``tests/support/fake_apiserver.py`` (real sockets, real HTTP); its
documents have the shapes kube-apiserver sends (``PodList``, ``APIGroupList``, ``APIResourceList``,
``APIGroupDiscoveryList`` of ``apidiscovery.k8s.io/v2``). The attacks are rebuilt from the issue's
text: tiny objects under the byte cap in a small gzip body, a ``continue`` token on every page,
100,000 discovery groups, a 302 with an empty body. Ceilings are lowered per client where the real
ones would only cost test time; the real constants are exercised through the CLI in
``tests/cli/test_hostile_server_cli.py``.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from tests.support.fake_apiserver import FakeApiServer, Reply, Seen, status_doc
from workload_map.cluster.client import KubeClient
from workload_map.cluster.decode import INFLATE_PIECE, MAX_DECODED_VALUES, value_count
from workload_map.cluster.discovery import (
    MAX_DISCOVERY_DOCUMENT_VALUES,
    MAX_DISCOVERY_GROUP_VERSIONS,
    MAX_DISCOVERY_GROUPS,
    MAX_DISCOVERY_RESOURCES,
    Discovery,
)
from workload_map.cluster.kubeconfig import ClusterConfig
from workload_map.errors import ApiError, ConnectionFailedError

PODS = "/api/v1/namespaces/ml/pods"


@pytest.fixture
def fake() -> Iterator[FakeApiServer]:
    with FakeApiServer() as server:
        yield server


def client(fake: FakeApiServer, **kw: Any) -> KubeClient:
    return KubeClient(ClusterConfig(server=fake.url, token="good-token"), **kw)


def pod(name: str) -> dict[str, Any]:
    """A Pod as the API server lists it (metadata, one container, status phase)."""
    return {
        "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}", "resourceVersion": "7"},
        "spec": {"containers": [{"name": "main", "image": "registry.invalid/train:1"}]},
        "status": {"phase": "Running"},
    }


def pod_list(items: list[dict[str, Any]], cont: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": "7"}
    if cont:
        meta["continue"] = cont
    return {"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": items}


class TinyObjectsBomb:
    """``{"items":[{},{},...]}`` with ``count`` objects, gzipped and streamed in pieces; counts the
    pieces the client made the server send (the client stops reading at its ceiling)."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.pieces_sent = 0
        self.pieces_total = 0

    def body(self) -> Iterator[bytes]:
        packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        yield packer.compress(b'{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[')
        left = self.count - 1
        while left > 0:
            n = min(left, 100_000)
            left -= n
            self.pieces_sent += 1
            yield packer.compress(b"{}," * n)
            yield packer.flush(zlib.Z_SYNC_FLUSH)
        yield packer.compress(b"{}]}") + packer.flush()

    def reply(self, _seen: Seen) -> Reply:
        self.pieces_total = (self.count - 1 + 99_999) // 100_000
        return Reply(200, self.body(), {"Content-Type": "application/json", "Content-Encoding": "gzip"})


# ------------------------------------------------------------------------------------ decoded values


def test_tiny_objects_in_a_small_gzip_body_stop_at_the_value_ceiling(fake: FakeApiServer) -> None:
    bomb = TinyObjectsBomb(2_000_000)  # 6 MB inflated, under every byte cap; a few KB gzipped
    fake.on("GET", "/api/v1/namespaces/ml/pods/x", bomb.reply)
    with client(fake, max_values=100_000) as kube, pytest.raises(ApiError) as info:
        kube.get("/api/v1/namespaces/ml/pods/x")
    err = info.value
    assert err.reason == "ResponseTooLarge"
    assert str(err) == (
        f"GET /api/v1/namespaces/ml/pods/x on {fake.url}: the API server's response holds more than "
        "100000 JSON values (MAX_DECODED_VALUES); it was not decoded"
    )
    # Reading stopped at the ceiling: far from every piece of the body was asked for.
    assert bomb.pieces_sent < bomb.pieces_total // 2


def test_the_default_value_ceiling_refuses_a_list_of_millions_of_tiny_objects(fake: FakeApiServer) -> None:
    bomb = TinyObjectsBomb(MAX_DECODED_VALUES + 10)
    fake.on("GET", "/api/v1/namespaces/ml/pods/x", bomb.reply)
    with client(fake) as kube, pytest.raises(ApiError, match=f"more than {MAX_DECODED_VALUES} JSON values"):
        kube.get("/api/v1/namespaces/ml/pods/x")


def test_a_list_page_over_the_ceiling_is_asked_for_again_in_halves(fake: FakeApiServer) -> None:
    pods = [pod(f"p{i}") for i in range(40)]

    def pages(seen: Seen) -> Reply:
        limit = int(seen.param("limit") or 0)
        start = int(seen.param("continue") or 0)
        chunk = pods[start : start + limit]
        nxt = str(start + limit) if start + limit < len(pods) else None
        return Reply.json(pod_list(chunk, nxt), gzip=True)

    fake.on("GET", PODS, pages)
    per_pod = value_count(orjson.dumps(pods[0])) + 1
    with client(fake, max_values=12 * per_pod) as kube:  # about 10 pods per page fit
        got = kube.list_all(PODS, limit=40)
    assert [p["metadata"]["name"] for p in got] == [f"p{i}" for i in range(40)]
    limits = [int(s.param("limit") or 0) for s in fake.seen(PODS)]
    # 40 and 20 were over the ceiling, 10 fits; the next page tries 20 again, and so on.
    assert limits == [40, 20, 10, 20, 10, 20, 10, 20]  # the last 20 brings the last 10 pods


def test_after_one_huge_page_the_page_size_comes_back(fake: FakeApiServer) -> None:
    pods = [pod(f"p{i}") for i in range(64)]
    pods[0]["junk"] = list(range(300))  # only the first object is huge

    def pages(seen: Seen) -> Reply:
        limit = int(seen.param("limit") or 0)
        start = int(seen.param("continue") or 0)
        nxt = str(start + limit) if start + limit < len(pods) else None
        return Reply.json(pod_list(pods[start : start + limit], nxt))

    fake.on("GET", PODS, pages)
    with client(fake, max_values=400) as kube:
        assert len(kube.list_all(PODS, limit=16)) == 64
    limits = [int(s.param("limit") or 0) for s in fake.seen(PODS)]
    assert limits[:5] == [16, 8, 4, 8, 16]  # down until the huge object fits, then back up
    assert set(limits[5:]) == {16}


def test_a_page_that_no_halving_brings_under_the_ceiling_is_an_error(fake: FakeApiServer) -> None:
    fake.on("GET", PODS, lambda seen: Reply.json(pod_list([{"a": list(range(1000))}])))
    with client(fake, max_values=500) as kube, pytest.raises(ApiError, match="MAX_DECODED_VALUES"):
        kube.list_all(PODS, limit=8)
    assert [s.param("limit") for s in fake.seen(PODS)] == ["8", "4", "2", "1"]


def test_a_watch_event_over_the_value_ceiling_is_an_error(fake: FakeApiServer) -> None:
    event = {"type": "ADDED", "object": {"metadata": {"name": "x"}, "junk": [{}] * (MAX_DECODED_VALUES + 1)}}

    def watch(seen: Seen) -> Reply | None:
        if seen.param("watch") != "1":
            return None
        return Reply(200, iter([orjson.dumps(event) + b"\n"]), {"Content-Type": "application/json"})

    fake.on("GET", PODS, watch)
    with client(fake) as kube, pytest.raises(ApiError, match="MAX_DECODED_VALUES") as info:
        list(kube.watch(PODS, timeout_seconds=5))
    assert str(info.value).startswith(f"the watch on {PODS}: ")


def test_a_gzipped_watch_stream_is_inflated(fake: FakeApiServer) -> None:
    lines = b"".join(orjson.dumps({"type": "ADDED", "object": pod(f"p{i}")}) + b"\n" for i in range(3))

    def watch(seen: Seen) -> Reply | None:
        if seen.param("watch") != "1":
            return None
        body = gzip.compress(lines)
        return Reply(200, iter([body[:10], body[10:]]), {"Content-Encoding": "gzip"})

    fake.on("GET", PODS, watch)
    with client(fake) as kube:
        names = [e.object["metadata"]["name"] for e in kube.watch(PODS, timeout_seconds=5)]
    assert names == ["p0", "p1", "p2"]


def test_gzip_bodies_within_the_ceilings_decode_as_before(fake: FakeApiServer) -> None:
    doc = pod_list([pod(f"p{i}") for i in range(300)])
    raw = orjson.dumps(doc)
    # Two gzip members one after the other (RFC 1952 allows it), big enough to inflate in pieces.
    padded = raw[:-1] + b',"pad":"' + b"x" * (3 * INFLATE_PIECE) + b'"}'
    two = gzip.compress(padded[:1000]) + gzip.compress(padded[1000:])
    fake.on("GET", PODS, Reply(200, two, {"Content-Type": "application/json", "Content-Encoding": "gzip"}))
    with client(fake) as kube:
        got = kube.get(PODS)
    assert got["items"] == doc["items"] and len(got["pad"]) == 3 * INFLATE_PIECE
    assert fake.seen(PODS)[0].headers["accept-encoding"] == "gzip"


def test_a_content_coding_that_was_not_asked_for_is_an_error(fake: FakeApiServer) -> None:
    fake.on("GET", PODS, Reply(200, b"\x1b\x00\x00", {"Content-Encoding": "br"}))
    with client(fake) as kube, pytest.raises(ApiError, match='content coding "br", which was not asked for'):
        kube.get(PODS)


def test_a_broken_gzip_body_is_an_error(fake: FakeApiServer) -> None:
    fake.on("GET", PODS, Reply(200, b"\x1f\x8b\x08\x00garbage-garbage", {"Content-Encoding": "gzip"}))
    with client(fake) as kube, pytest.raises(ApiError, match="the gzipped body is not valid gzip"):
        kube.get(PODS)


# -------------------------------------------------------------------------------------- list bounds


def test_a_continue_token_on_every_page_stops_at_the_page_ceiling(fake: FakeApiServer) -> None:
    def endless(seen: Seen) -> Reply:
        n = int(seen.param("continue") or 0) + 1
        return Reply.json(pod_list([], cont=str(n)))

    fake.on("GET", PODS, endless)
    with client(fake, max_list_pages=25) as kube, pytest.raises(ApiError) as info:
        kube.list_all(PODS)
    assert info.value.reason == "TooManyPages"
    assert str(info.value) == (
        f"GET {PODS} on {fake.url}: the list did not end after 25 pages (MAX_LIST_PAGES): "
        "the API server keeps sending continue tokens"
    )
    assert len(fake.seen(PODS)) == 25


def test_pages_of_tiny_objects_stop_at_the_object_ceiling(fake: FakeApiServer) -> None:
    def endless(seen: Seen) -> Reply:
        n = int(seen.param("continue") or 0) + 1
        return Reply.json(pod_list([{}] * 10, cont=str(n)))

    fake.on("GET", PODS, endless)
    with client(fake, max_list_items=25) as kube:
        pages = []
        with pytest.raises(ApiError) as info:
            for page in kube.list(PODS):
                pages.append(page)
    assert info.value.reason == "TooManyItems"
    assert (
        str(info.value) == f"GET {PODS} on {fake.url}: the list holds more than 25 objects (MAX_LIST_ITEMS)"
    )
    assert len(pages) == 2  # the page that crossed the ceiling was not handed out


def test_a_list_stops_at_its_time_ceiling(fake: FakeApiServer) -> None:
    """Each page costs 40 s of the client's (fake) clock: a 100 s list ceiling stops the third
    while it is read (its request had 20 s left). One page at a time (``list_ahead=False``): the
    consumer moves the same fake clock, which a request sent ahead would see move under it."""
    now = [1000.0]

    def slow(seen: Seen) -> Reply:
        now[0] += 40.0
        n = int(seen.param("continue") or 0) + 1
        return Reply.json(pod_list([pod(f"p{n}")], cont=str(n)))

    fake.on("GET", PODS, slow)
    with client(fake, max_list_seconds=100.0, clock=lambda: now[0], list_ahead=False) as kube:
        seen: list[str] = []
        with pytest.raises(ConnectionFailedError) as info:
            for item in kube.list_items(PODS):
                seen.append(item["metadata"]["name"])
                now[0] += 500.0  # the consumer's own time between pages does not count
    assert str(info.value) == (
        f"GET {PODS}?limit=500&continue=2 on {fake.url}: the list took more than 100s of requests "
        "(MAX_LIST_SECONDS); it was stopped at page 3"
    )
    assert seen == ["p1", "p2"] and len(fake.seen(PODS)) == 3


def test_a_list_asking_one_page_ahead_stops_at_the_same_time_ceiling(fake: FakeApiServer) -> None:
    """As above with the next page asked for while the caller holds this one (the default): the
    third page's request is sent with the 20 s left and stopped there, and no fourth is sent."""
    now = [1000.0]

    def slow(seen: Seen) -> Reply:
        now[0] += 40.0
        n = int(seen.param("continue") or 0) + 1
        return Reply.json(pod_list([pod(f"p{n}")], cont=str(n)))

    fake.on("GET", PODS, slow)
    with client(fake, max_list_seconds=100.0, clock=lambda: now[0]) as kube:
        seen: list[str] = []
        with pytest.raises(ConnectionFailedError) as info:
            for item in kube.list_items(PODS):
                seen.append(item["metadata"]["name"])
    assert str(info.value) == (
        f"GET {PODS}?limit=500&continue=2 on {fake.url}: the list took more than 100s of requests "
        "(MAX_LIST_SECONDS); it was stopped at page 3"
    )
    assert seen == ["p1", "p2"] and len(fake.seen(PODS)) == 3


# ------------------------------------------------------------------------------ redirects, bad bodies


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_an_error_naming_the_request_and_the_server(fake: FakeApiServer, status: int) -> None:
    fake.on("GET", PODS, Reply(status, b"", {"Location": "https://elsewhere.example/api"}))
    with client(fake) as kube, pytest.raises(ApiError) as info:
        kube.get(PODS)
    assert info.value.status == status and info.value.reason == "Redirect"
    assert str(info.value) == (
        f"GET {PODS} on {fake.url}: the API server answered HTTP {status} (a redirect to "
        "https://elsewhere.example/api); redirects are not followed: check the server address of the "
        "kubeconfig's cluster"
    )
    assert len(fake.seen(PODS)) == 1  # not followed, not retried


def test_a_redirect_of_a_write_is_an_error_too(fake: FakeApiServer) -> None:
    fake.on("POST", PODS, Reply(302, b""))
    with client(fake) as kube, pytest.raises(ApiError, match=r"POST .* answered HTTP 302 \(a redirect\)"):
        kube.create(PODS, pod("p"))


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (b"", "the API server sent an empty body where a JSON object was expected"),
        (b"   \n", "the API server sent an empty body where a JSON object was expected"),
        (b"<html>login</html>", "the API server sent a body that is not JSON"),
        (b"[1, 2]", "the API server sent JSON that is not an object (list)"),
    ],
)
def test_an_empty_or_non_json_success_body_is_an_error(fake: FakeApiServer, body: bytes, text: str) -> None:
    fake.on("GET", PODS, Reply(200, body, {"Content-Type": "application/json"}))
    with client(fake) as kube, pytest.raises(ApiError) as info:
        kube.get(PODS)
    assert info.value.reason == "InvalidResponse"
    assert str(info.value).startswith(f"GET {PODS} on {fake.url}: {text}")


# ------------------------------------------------------------------------------------------ discovery


def discovery(fake: FakeApiServer) -> Discovery:
    return Discovery(client(fake), cache_dir=False)


def group(name: str, versions: int = 1) -> dict[str, Any]:
    served = [{"groupVersion": f"{name}/v{i + 1}", "version": f"v{i + 1}"} for i in range(versions)]
    return {"name": name, "versions": served, "preferredVersion": served[0]}


def test_a_discovery_document_with_100000_groups_is_refused_before_any_group_is_read(
    fake: FakeApiServer,
) -> None:
    groups = [group(f"g{i}.example.com") for i in range(100_000)]
    fake.on("GET", "/apis", Reply.json({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
    with pytest.raises(ApiError) as info:
        discovery(fake).resolve_type("widgets")
    assert str(info.value) == (
        f"discovery on {fake.url}: the API server lists more than {MAX_DISCOVERY_GROUPS} API groups "
        "(MAX_DISCOVERY_GROUPS)"
    )
    assert not [s for s in fake.requests if s.path.startswith("/apis/g")]


def test_too_many_group_versions_are_refused_before_they_are_read(fake: FakeApiServer) -> None:
    per_group = 5
    count = MAX_DISCOVERY_GROUP_VERSIONS // per_group + 1  # under the group ceiling
    groups = [group(f"g{i}.example.com", per_group) for i in range(count)]
    fake.on("GET", "/apis", Reply.json({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
    with pytest.raises(ApiError, match=r"more than \d+ group versions \(MAX_DISCOVERY_GROUP_VERSIONS\)"):
        discovery(fake).resources()
    assert not [s for s in fake.requests if s.path.startswith("/apis/g")]


def test_too_many_resources_over_the_group_versions_fail_the_discovery(fake: FakeApiServer) -> None:
    per_group = 9_000  # each document under its own value ceiling; together over the resources
    count = MAX_DISCOVERY_RESOURCES // per_group + 1
    fake.on(
        "GET",
        "/apis",
        Reply.json({"kind": "APIGroupList", "groups": [group(f"g{i}.x") for i in range(count)]}),
    )
    for i in range(count):
        rows = [
            {"name": f"r{j}", "singularName": "", "namespaced": True, "kind": f"R{j}", "verbs": ["list"]}
            for j in range(per_group)
        ]
        fake.on("GET", f"/apis/g{i}.x/v1", Reply.json({"kind": "APIResourceList", "resources": rows}))
    with pytest.raises(ApiError) as info:
        discovery(fake).resources()
    assert str(info.value) == (
        f"discovery on {fake.url}: the API server lists more than {MAX_DISCOVERY_RESOURCES} resources "
        "(MAX_DISCOVERY_RESOURCES)"
    )


def test_a_discovery_document_has_a_value_ceiling_of_its_own(fake: FakeApiServer) -> None:
    # Eight group versions are read at once: each document is held far under the client's ceiling.
    junk = {
        "kind": "APIResourceList",
        "groupVersion": "v1",
        "resources": [],
        "junk": [0] * (MAX_DISCOVERY_DOCUMENT_VALUES + 1000),
    }
    fake.on("GET", "/api/v1", Reply.json(junk))
    found = discovery(fake)
    assert [r.name for r in found.resources()] == ["kartas"]  # v1 failed; a broken one hides no other
    assert found.failed_groups["v1"] == (
        f"GET /api/v1 on {fake.url}: the API server's response holds more than "
        f"{MAX_DISCOVERY_DOCUMENT_VALUES} JSON values (MAX_DISCOVERY_DOCUMENT_VALUES); it was not decoded"
    )


def test_aggregated_discovery_has_the_same_ceilings(fake: FakeApiServer) -> None:
    items = [
        {"metadata": {"name": f"g{i}.example.com"}, "versions": [{"version": "v1", "resources": []}]}
        for i in range(MAX_DISCOVERY_GROUPS + 1)
    ]
    doc = {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "items": items}
    aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    fake.on("GET", "/apis", Reply(200, orjson.dumps(doc), {"Content-Type": aggregated}))
    with pytest.raises(ApiError, match=r"\(MAX_DISCOVERY_GROUPS\)"):
        discovery(fake).resources()


def test_a_redirected_discovery_is_an_error_not_an_internal_error(fake: FakeApiServer) -> None:
    fake.on("GET", re.compile(r"/.*"), Reply(302, b"", {"Location": "http://127.0.0.1:9/"}))
    with pytest.raises(
        ApiError, match=f"GET /api on {re.escape(fake.url)}: the API server answered HTTP 302"
    ):
        discovery(fake).resources()


def test_a_discovery_document_of_the_wrong_shape_is_read_as_empty(fake: FakeApiServer) -> None:
    fake.on("GET", "/apis", Reply.json({"kind": "APIGroupList", "groups": {"not": "a list"}}))
    fake.on("GET", "/api", Reply.json({"kind": "APIVersions", "versions": "v1"}))
    assert discovery(fake).resources() == []


def test_a_failing_group_does_not_hide_the_others(fake: FakeApiServer) -> None:
    fake.on("GET", "/apis", Reply.json({"kind": "APIGroupList", "groups": [group("broken.example.com")]}))
    fake.on("GET", "/apis/broken.example.com/v1", Reply.json(status_doc(403, "Forbidden", "no"), 403))
    found = discovery(fake)
    assert [r.name for r in found.resources()] == ["pods", "events", "namespaces", "nodes"]
    assert "broken.example.com/v1" in found.failed_groups
