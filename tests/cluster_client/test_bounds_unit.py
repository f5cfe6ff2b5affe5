"""Every wait and every read of the CLI's client is bounded (issue #10): Retry-After, the whole-request
deadline of ``--request-timeout`` (retries and a trickling body included), response, watch-line and
token-file sizes, exec plugins that hang or print without end.

Time is a fake clock advanced by the fake sleeps and by the bytes a fake server sends, so the bounds
are checked by counting, not by wall-clock limits.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.pids import gone
from workload_map.cluster.auth import MAX_TOKEN_FILE, ExecCredentialProvider, TokenFileSource
from workload_map.cluster.client import MAX_RETRY_AFTER, KubeClient
from workload_map.cluster.kubeconfig import ClusterConfig, ExecConfig, read_local_file
from workload_map.cluster.watch import MAX_EVENT_BYTES, WatchStream
from workload_map.errors import ApiError, ConfigurationError, ConnectionFailedError, ExecPluginError


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class Trickle(httpx.SyncByteStream):
    """A body that never ends: ``size`` bytes per chunk, each chunk costing ``seconds`` of fake time."""

    def __init__(self, clock: FakeClock, size: int, seconds: float, newline: bool = False) -> None:
        self.clock, self.size, self.seconds, self.newline = clock, size, seconds, newline
        self.sent = 0

    def __iter__(self) -> Iterator[bytes]:
        while True:
            self.clock.now += self.seconds
            self.sent += 1
            yield b"x" * self.size


def client(handler: Any, clock: FakeClock, timeout: float | None = None, **kw: Any) -> KubeClient:
    config = ClusterConfig(server="https://k8s.test", token="t", timeout=timeout)
    return KubeClient(config, transport=httpx.MockTransport(handler), sleep=clock.sleep, clock=clock, **kw)


def test_retry_after_is_capped_and_the_deadline_covers_every_retry() -> None:
    clock = FakeClock()
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(
            429, headers={"Retry-After": "100000"}, json={"kind": "Status", "message": "slow"}
        )

    # Without --request-timeout: each wait is capped, and the retries stop at the default deadline.
    with pytest.raises(ApiError, match="slow"):
        client(handler, clock).get("/x")
    assert clock.sleeps and all(s <= MAX_RETRY_AFTER for s in clock.sleeps)
    # With --request-timeout 5s no retry starts whose wait would end after the 5 seconds.
    clock2 = FakeClock()
    calls.clear()
    with pytest.raises(ApiError, match="slow"):
        client(handler, clock2, timeout=5.0).get("/x")
    assert clock2.sleeps == [] and len(calls) == 1


def test_backoff_retries_stop_at_the_request_timeout() -> None:
    clock = FakeClock()

    def handler(request: httpx.Request) -> httpx.Response:
        clock.now += 2.0  # each answer takes 2 s
        return httpx.Response(503, json={"kind": "Status", "message": "busy"})

    with pytest.raises(ApiError, match="busy"):
        client(handler, clock, timeout=5.0, backoff_base=1.0).get("/x")
    assert clock.now - 1000.0 <= 5.0 + 2.0  # the last attempt started before the deadline


def test_a_trickling_body_times_out_at_the_request_timeout() -> None:
    clock = FakeClock()
    body = Trickle(clock, size=1, seconds=1.0)  # one byte per second, for ever
    handler = lambda request: httpx.Response(200, stream=body)  # noqa: E731
    with pytest.raises(ConnectionFailedError, match=r"no complete response within 5s \(--request-timeout\)"):
        client(handler, clock, timeout=5.0).get("/api/v1/pods")
    assert 5 <= body.sent <= 6


def test_without_request_timeout_a_trickling_body_still_has_a_deadline() -> None:
    clock = FakeClock()
    body = Trickle(clock, size=1, seconds=1.0)
    handler = lambda request: httpx.Response(200, stream=body)  # noqa: E731
    with pytest.raises(ConnectionFailedError, match="no complete response within 300s"):
        client(handler, clock).get("/api/v1/pods")
    assert body.sent <= 301


def test_an_endless_body_is_cut_at_the_size_cap() -> None:
    clock = FakeClock()
    body = Trickle(clock, size=1 << 20, seconds=0.0)
    handler = lambda request: httpx.Response(200, stream=body)  # noqa: E731
    with pytest.raises(ApiError, match="larger than 4194304 bytes") as info:
        client(handler, clock, max_response_bytes=4 << 20).get("/api/v1/pods")
    assert info.value.reason == "ResponseTooLarge"
    assert body.sent == 5  # stopped at the first chunk past the cap


def test_an_endless_error_body_keeps_only_its_start() -> None:
    clock = FakeClock()
    body = Trickle(clock, size=1 << 20, seconds=0.0)
    handler = lambda request: httpx.Response(404, stream=body)  # noqa: E731
    with pytest.raises(ApiError) as info:
        client(handler, clock).get("/api/v1/pods/x")
    assert info.value.status == 404 and body.sent == 1


def test_bodies_within_the_bounds_are_unchanged() -> None:
    clock = FakeClock()
    handler = lambda request: httpx.Response(200, json={"kind": "PodList", "items": [{"a": 1}]})  # noqa: E731
    kube = client(handler, clock, timeout=5.0)
    assert kube.get("/api/v1/pods") == {"kind": "PodList", "items": [{"a": 1}]}
    assert kube.get_bytes("/api/v1/pods").startswith(b'{"kind"')


def test_a_watch_line_without_end_is_an_error() -> None:
    clock = FakeClock()
    body = Trickle(clock, size=1 << 20, seconds=0.0)
    response = httpx.Response(200, stream=body)
    with pytest.raises(ApiError, match="over"):
        list(WatchStream(response, path="/api/v1/pods").lines())
    assert body.sent == MAX_EVENT_BYTES // (1 << 20) + 1


def test_watch_lines_split_across_chunks() -> None:
    chunks = [b'{"a"', b":1}\n{", b'"b":2}\n\n{"c"', b":3}"]

    class Chunked(httpx.SyncByteStream):
        def __iter__(self) -> Iterator[bytes]:
            yield from chunks

    response = httpx.Response(200, stream=Chunked())
    assert list(WatchStream(response, path="/x").lines()) == [b'{"a":1}', b'{"b":2}', b"", b'{"c":3}']


def test_token_file_and_local_files_are_capped(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="token file /dev/zero: it is a character device"):
        TokenFileSource("/dev/zero").get()  # refused by type, never opened
    big = tmp_path / "big"
    with open(big, "wb") as fh:
        fh.truncate(MAX_TOKEN_FILE + 1)  # sparse
    with pytest.raises(ConfigurationError, match=f"token file {big} is larger than 1 MiB"):
        TokenFileSource(str(big)).get()
    with pytest.raises(ConfigurationError, match=f"client certificate file {big} is larger than 1 KiB"):
        read_local_file(big, "client certificate", 1024)
    with pytest.raises(ConfigurationError, match=f"token file {tmp_path}/none does not exist"):
        TokenFileSource(str(tmp_path / "none")).get()
    (tmp_path / "t").write_text("abc\n")
    assert TokenFileSource(str(tmp_path / "t")).get() == "abc"


def plugin(tmp_path: Path, body: str) -> ExecCredentialProvider:
    script = tmp_path / "plugin"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    cfg = ExecConfig(
        command=str(script), api_version="client.authentication.k8s.io/v1", interactive_mode="Never"
    )
    return ExecCredentialProvider(cfg, None, stderr=subprocess.DEVNULL, timeout=0.5)


def test_a_hanging_exec_plugin_is_stopped_with_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    # The plugin starts a child that keeps stdout open: killing only the plugin would still block.
    provider = plugin(tmp_path, f"sleep 1000 & echo $! > {pidfile}\nwait\n")
    with pytest.raises(ExecPluginError, match=r'"[^"]+plugin" did not finish within 0.5s; it was stopped'):
        provider.get()
    assert gone([int(pidfile.read_text())])


def test_an_exec_plugin_that_prints_without_end_is_stopped(tmp_path: Path) -> None:
    provider = plugin(tmp_path, "exec yes\n")
    with pytest.raises(ExecPluginError, match="printed more than 1048576 bytes; it was stopped"):
        provider.get()


def test_a_well_behaved_plugin_still_works_with_the_bounds(tmp_path: Path) -> None:
    credential = (
        '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tk"}}'
    )
    provider = plugin(tmp_path, f"echo '{credential}'\n")
    assert provider.get().token == "tk"
