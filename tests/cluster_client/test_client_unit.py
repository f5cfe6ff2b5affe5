"""KubeClient behaviour against httpx.MockTransport: retries, paging and the 410 relist, watch decoding,
error mapping, auth headers. A closed port checks the connection-refused message for real."""

from __future__ import annotations

import itertools
import socket
import threading
from collections.abc import Callable
from typing import Any

import httpx
import orjson
import pytest

from workload_map.cluster.client import KubeClient, api_path
from workload_map.cluster.kubeconfig import ClusterConfig
from workload_map.errors import (
    ApiError,
    ConflictError,
    ConnectionFailedError,
    ForbiddenError,
    GoneError,
    NotFoundError,
    UnauthorizedError,
)

Handler = Callable[[httpx.Request], httpx.Response]


def status(code: int, reason: str, message: str) -> httpx.Response:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": reason,
        "message": message,
        "code": code,
    }
    return httpx.Response(code, json=body)


def make(handler: Handler, sleeps: list[float] | None = None, **cfg: Any) -> KubeClient:
    config = ClusterConfig(server="https://k8s.test", token=cfg.pop("token", "tok"), **cfg)
    recorded = sleeps if sleeps is not None else []
    return KubeClient(config, transport=httpx.MockTransport(handler), sleep=recorded.append)


def test_api_path() -> None:
    assert api_path("v1", "pods", "ns", "p", "status") == "/api/v1/namespaces/ns/pods/p/status"
    assert api_path("apps/v1", "deployments") == "/apis/apps/v1/deployments"
    assert (
        api_path("jobset.x-k8s.io/v1alpha2", "jobsets", "a b")
        == "/apis/jobset.x-k8s.io/v1alpha2/namespaces/a%20b/jobsets"
    )


def test_429_with_retry_after_then_ok() -> None:
    calls: list[int] = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            return httpx.Response(429, headers={"Retry-After": "2"}, json={"kind": "Status", "code": 429})
        return httpx.Response(200, json={"kind": "Pod", "metadata": {"name": "p"}})

    sleeps: list[float] = []
    client = make(handler, sleeps)
    assert client.get("/api/v1/namespaces/x/pods/p")["metadata"]["name"] == "p"
    assert len(calls) == 2 and sleeps == [2.0]


def test_503_then_ok_uses_backoff() -> None:
    answers = [status(503, "ServiceUnavailable", "busy"), httpx.Response(200, json={"ok": True})]
    sleeps: list[float] = []
    client = make(lambda req: answers.pop(0), sleeps)
    assert client.get("/x") == {"ok": True}
    assert len(sleeps) == 1 and 0.0 < sleeps[0] <= 0.2


def test_retries_are_bounded() -> None:
    calls: list[int] = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(1)
        return status(500, "InternalError", "etcd is sad")

    sleeps: list[float] = []
    with pytest.raises(ApiError, match="etcd is sad") as info:
        make(handler, sleeps).get("/x")
    assert info.value.status == 500 and info.value.reason == "InternalError"
    assert len(calls) == 5 and len(sleeps) == 4
    assert all(b >= a / 2 for a, b in itertools.pairwise(sleeps))  # grows (with jitter)


def test_post_is_not_retried_on_500_but_is_on_429() -> None:
    calls: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req.method)
        return status(500, "InternalError", "boom")

    with pytest.raises(ApiError):
        make(handler).create("/api/v1/namespaces", {"metadata": {"name": "x"}})
    assert calls == ["POST"]
    answers = [httpx.Response(429, json={}), httpx.Response(201, json={"metadata": {"name": "x"}})]
    assert make(lambda r: answers.pop(0)).create("/api/v1/namespaces", {})["metadata"]["name"] == "x"


@pytest.mark.parametrize(
    ("code", "reason", "cls"),
    [
        (401, "Unauthorized", UnauthorizedError),
        (403, "Forbidden", ForbiddenError),
        (404, "NotFound", NotFoundError),
        (409, "AlreadyExists", ConflictError),
        (410, "Expired", GoneError),
        (422, "Invalid", ApiError),
    ],
)
def test_error_mapping_keeps_the_status_message(code: int, reason: str, cls: type[ApiError]) -> None:
    client = make(lambda req: status(code, reason, f"message {code}"))
    with pytest.raises(cls) as info:
        client.get("/apis/x/v1/things/a")
    assert str(info.value) == f"message {code}"
    assert (info.value.status, info.value.reason, info.value.path) == (code, reason, "/apis/x/v1/things/a")


def test_non_status_error_body() -> None:
    with pytest.raises(ApiError, match=r"POST /x: HTTP 502: bad gateway"):
        make(lambda req: httpx.Response(502, text="bad gateway")).request("POST", "/x", idempotent=False)


def test_paging_follows_continue_tokens() -> None:
    seen: list[dict[str, str]] = []

    def handler(req: httpx.Request) -> httpx.Response:
        params = dict(req.url.params)
        seen.append(params)
        start = int(params.get("continue") or 0)
        items = [{"metadata": {"name": f"o{i}", "uid": f"u{i}"}} for i in range(start, min(start + 2, 5))]
        cont = str(start + 2) if start + 2 < 5 else ""
        return httpx.Response(200, json={"kind": "List", "metadata": {"continue": cont}, "items": items})

    client = make(handler)
    pages = list(client.list("/api/v1/configmaps", limit=2, label_selector="a=b"))
    assert [len(p["items"]) for p in pages] == [2, 2, 1]
    assert seen[0] == {"limit": "2", "labelSelector": "a=b"}
    assert seen[1] == {"limit": "2", "labelSelector": "a=b", "continue": "2"}
    seen.clear()
    assert len(list(client.list("/x", limit=0))) == 3 and "limit" not in seen[0]


def test_expired_continue_token_relists_once_and_dedupes() -> None:
    """A real apiserver answers 410 Expired when etcd compacted the continue token's revision (see the
    cluster test); here the relist logic is checked in isolation."""
    calls: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        token = req.url.params.get("continue")
        calls.append(token or "")
        if token == "t1" and calls.count("t1") == 1:
            return status(410, "Expired", "The provided continue parameter is too old")
        if token is None:
            items = [{"metadata": {"uid": "a"}}, {"metadata": {"uid": "b"}}]
            return httpx.Response(200, json={"metadata": {"continue": "t1"}, "items": items})
        return httpx.Response(200, json={"metadata": {}, "items": [{"metadata": {"uid": "c"}}]})

    notes: list[str] = []
    client = make(handler)
    pages = list(client.list("/x", limit=2, on_relist=notes.append))
    assert calls == ["", "t1", "", "t1"]
    assert len(pages) == 3  # page 1 twice: consumers of raw pages must dedupe
    assert len(notes) == 1 and "listing again" in notes[0]
    calls.clear()
    uids = [i["metadata"]["uid"] for i in client.list_items("/x", limit=2)]
    assert uids == ["a", "b", "c"]


def test_the_next_page_is_asked_for_while_the_caller_holds_this_one() -> None:
    """One page ahead, never more: while the caller holds page k the request for page k+1 is sent
    (the API server encodes it meanwhile), not the one for k+2."""
    asked: list[str] = []
    arrived = {n: threading.Event() for n in range(1, 5)}

    def handler(req: httpx.Request) -> httpx.Response:
        n = int(req.url.params.get("continue") or 0) + 1
        asked.append(str(n))
        arrived[n].set()
        more = {"continue": str(n)} if n < 4 else {}
        return httpx.Response(200, json={"metadata": more, "items": [{"metadata": {"uid": f"u{n}"}}]})

    held: list[tuple[int, list[str]]] = []
    for k, page in enumerate(make(handler).list("/x", limit=1), start=1):
        assert page["items"] == [{"metadata": {"uid": f"u{k}"}}]
        if k < 4:
            assert arrived[k + 1].wait(30), f"page {k + 1} was not asked for while page {k} was held"
        held.append((k, list(asked)))
    assert held == [
        (1, ["1", "2"]),
        (2, ["1", "2", "3"]),
        (3, ["1", "2", "3", "4"]),
        (4, ["1", "2", "3", "4"]),
    ]


def test_a_page_asked_for_ahead_that_expired_relists_on_the_callers_thread() -> None:
    """The 410 of the page asked for ahead is handled as a 410 of a page asked for in turn: the
    list starts over once, ``on_relist`` is called on the caller's thread, nothing is lost."""
    calls: list[str] = []
    gone = threading.Event()

    def handler(req: httpx.Request) -> httpx.Response:
        token = req.url.params.get("continue") or ""
        calls.append(token)
        if token == "t1" and calls.count("t1") == 1:
            gone.set()
            return status(410, "Expired", "The provided continue parameter is too old")
        if not token:
            return httpx.Response(
                200, json={"metadata": {"continue": "t1"}, "items": [{"metadata": {"uid": "a"}}]}
            )
        return httpx.Response(200, json={"metadata": {}, "items": [{"metadata": {"uid": "b"}}]})

    notes: list[tuple[str, str]] = []
    uids: list[str] = []
    client = make(handler)
    for item in client.list_items(
        "/x", limit=1, on_relist=lambda m: notes.append((threading.current_thread().name, m))
    ):
        if not uids:
            assert gone.wait(30)  # the second page's request expired while the caller held the first
        uids.append(item["metadata"]["uid"])
    assert calls == ["", "t1", "", "t1"]
    assert uids == ["a", "b"]
    assert [thread for thread, _ in notes] == [threading.current_thread().name]
    assert "expired while paging" in notes[0][1]


def test_one_page_at_a_time_when_asked() -> None:
    """``list_ahead=False``: the next page is asked for only when the caller asks for it."""
    asked: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        n = int(req.url.params.get("continue") or 0) + 1
        asked.append(str(n))
        more = {"continue": str(n)} if n < 3 else {}
        return httpx.Response(200, json={"metadata": more, "items": []})

    config = ClusterConfig(server="https://k8s.test", token="tok")
    client = KubeClient(config, transport=httpx.MockTransport(handler), list_ahead=False)
    held = [list(asked) for _page in client.list("/x", limit=1)]
    assert held == [["1"], ["1", "2"], ["1", "2", "3"]]


def test_second_expiry_is_raised() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        if req.url.params.get("continue"):
            return status(410, "Expired", "too old")
        return httpx.Response(200, json={"metadata": {"continue": "t"}, "items": []})

    with pytest.raises(GoneError, match="too old"):
        list(make(handler).list("/x", limit=1))


def test_watch_decodes_events_and_410() -> None:
    lines = [
        {"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "5"}}},
        {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "6"}}},
        {"type": "MODIFIED", "object": {"metadata": {"name": "a", "resourceVersion": "7"}}},
    ]
    body = b"".join(orjson.dumps(x) + b"\n" for x in lines)

    def handler(req: httpx.Request) -> httpx.Response:
        assert req.url.params["watch"] == "1" and req.url.params["allowWatchBookmarks"] == "true"
        return httpx.Response(200, content=body)

    client = make(handler)
    events = list(client.watch("/api/v1/configmaps", resource_version="4"))
    assert [(e.type, e.resource_version) for e in events] == [("ADDED", "5"), ("MODIFIED", "7")]
    assert len(list(client.watch("/x", include_bookmarks=True))) == 3
    gone = orjson.dumps(
        {
            "type": "ERROR",
            "object": {
                "kind": "Status",
                "code": 410,
                "reason": "Expired",
                "message": "too old resource version",
            },
        }
    )
    with pytest.raises(GoneError, match="too old resource version"):
        list(make(lambda r: httpx.Response(200, content=gone + b"\n")).watch("/x"))


def test_patch_types_and_params() -> None:
    got: list[tuple[str, str, dict[str, str]]] = []

    def handler(req: httpx.Request) -> httpx.Response:
        got.append((req.method, req.headers["content-type"], dict(req.url.params)))
        return httpx.Response(200, json={})

    client = make(handler)
    client.patch("/p", {"a": 1})
    client.patch("/p", [{"op": "add", "path": "/a", "value": 1}], patch_type="json")
    client.patch("/p", {"a": 1}, patch_type="strategic")
    client.patch("/p", {"a": 1}, patch_type="apply", field_manager="wmap", force=True)
    client.patch_status("/p", {"status": {}})
    assert [g[1] for g in got] == [
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
        "application/merge-patch+json",
    ]
    assert got[3][2] == {"fieldManager": "wmap", "force": "true"}
    with pytest.raises(ValueError, match="field_manager"):
        client.patch("/p", {}, patch_type="apply")


def test_auth_and_impersonation_headers() -> None:
    got: list[httpx.Headers] = []

    def handler(req: httpx.Request) -> httpx.Response:
        got.append(req.headers)
        return httpx.Response(200, json={})

    make(
        handler,
        impersonate_user="jane",
        impersonate_groups=("g1", "g2"),
        impersonate_uid="7",
        impersonate_extra=(("scopes.example/x", ("a",)),),
    ).get("/x")
    h = got[-1]
    assert h["authorization"] == "Bearer tok"
    assert h["impersonate-user"] == "jane" and h.get_list("impersonate-group") == ["g1", "g2"]
    assert h["impersonate-uid"] == "7" and h["impersonate-extra-scopes.example%2Fx"] == "a"
    make(handler, token=None, username="u", password="p").get("/x")
    assert got[-1]["authorization"] == "Basic dTpw"


def test_token_file_is_reread_after_401(tmp_path: Any) -> None:
    token = tmp_path / "token"
    token.write_text("old\n")
    seen: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req.headers["authorization"])
        if req.headers["authorization"] == "Bearer old":
            token.write_text("new\n")  # the kubelet rotated it
            return status(401, "Unauthorized", "Unauthorized")
        return httpx.Response(200, json={"ok": 1})

    assert make(handler, token=None, token_file=str(token)).get("/x") == {"ok": 1}
    assert seen == ["Bearer old", "Bearer new"]


def test_warning_headers_are_reported_once() -> None:
    warnings: list[str] = []
    header = '299 - "batch/v1beta1 CronJob is deprecated"'
    client = KubeClient(
        ClusterConfig(server="https://k8s.test"),
        transport=httpx.MockTransport(lambda r: httpx.Response(200, json={}, headers={"Warning": header})),
        on_warning=warnings.append,
    )
    client.get("/a")
    client.get("/b")
    assert warnings == ["batch/v1beta1 CronJob is deprecated"]


def test_connection_refused_is_clear() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again when the block ends: nothing listens there
    sleeps: list[float] = []
    client = KubeClient(ClusterConfig(server=f"https://127.0.0.1:{port}", insecure=True), sleep=sleeps.append)
    with pytest.raises(ConnectionFailedError) as info:
        client.get("/version")
    assert (
        str(info.value)
        == f"cannot reach the Kubernetes API server at https://127.0.0.1:{port}: connection refused"
    )
    assert len(sleeps) == 1  # one quick retry, not five


def test_a_read_response_is_freed_without_the_cyclic_collector() -> None:
    """httpx's response and its stream refer to each other; the client breaks that cycle once the
    body is read, so a list page's body is freed by reference counting as soon as the caller drops
    it (the one-shot commands pause the cyclic collector, cli/collector_pause.py; the exporter runs
    it rarely, runtime/gcthresholds.py)."""
    import gc

    pages = {
        None: {"metadata": {"continue": "t1"}, "items": [{"n": 1}]},
        "t1": {"metadata": {}, "items": [{"n": 2}]},
    }

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=pages[request.url.params.get("continue")])

    client = make(handler)
    client.get("/api/v1/pods")  # the connection set up outside the measured part
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        got = [item["n"] for page in client.list("/api/v1/pods") for item in page["items"]]
        assert client.get("/api/v1/pods")["items"] == [{"n": 1}]
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage if isinstance(o, (httpx.Response, httpx.Request))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
    assert got == [1, 2]
    assert left == []
