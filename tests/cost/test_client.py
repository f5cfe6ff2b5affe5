"""The Prometheus HTTP API client (workload_map.cost) against a fake Prometheus on loopback
(tests/support/fake_prometheus.py, answers shaped as Prometheus's /api/v1/query): answers decoded,
every bound enforced (deadline through a slow or trickling server, body size, series count,
redirects not followed), errors named without credentials."""

from __future__ import annotations

import math
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.support.fake_prometheus import Answer, FakePrometheus, error, series, success
from workload_map.cost import PrometheusClient, display_url
from workload_map.errors import PrometheusError

VECTOR = b'{"status":"success","data":{"resultType":"vector","result":%s}}'


@contextmanager
def serving(
    answer: Callable[[str], Answer], *, delay: float = 0.0, trickle: float = 0.0, path: str = "", **kw: Any
) -> Iterator[tuple[FakePrometheus, PrometheusClient]]:
    """A fake Prometheus giving ``answer``, and a client of it (``kw``: the client's bounds)."""
    with (
        FakePrometheus(answer, delay=delay, trickle=trickle) as prom,
        PrometheusClient(prom.url + path, **kw) as client,
    ):
        yield prom, client


def test_vector_answer_decoded() -> None:
    result = [
        series({"namespace": "ml", "workload_name": "train"}, 41.5),
        series({"namespace": "ml", "workload_name": "idle"}, "NaN"),
        series({"namespace": "ml", "workload_name": "huge"}, "+Inf"),
    ]
    with serving(lambda q: success(result, warnings=["some series dropped"]), timeout=5) as (prom, client):
        samples, warnings = client.query("sum by (workload_name) (x)")
    assert [dict(s.labels) for s in samples] == [r["metric"] for r in result]
    assert samples[0].value == 41.5 and math.isnan(samples[1].value) and samples[2].value == math.inf
    assert warnings == ["some series dropped"]
    (asked,) = prom.queries
    assert asked["path"] == "/api/v1/query" and asked["query"] == "sum by (workload_name) (x)"
    # the server's own evaluation timeout: seconds as a float, never more than ours
    assert 0 < float(asked["timeout"]) <= 5


def test_scalar_answer_and_path_prefix() -> None:
    scalar = b'{"status":"success","data":{"resultType":"scalar","result":[1.7e9,"3"]}}'
    with serving(lambda q: (200, scalar, {}), path="/prometheus/", timeout=5) as (prom, client):
        samples, _ = client.query("scalar(x)")
    assert [s.value for s in samples] == [3.0]
    assert prom.queries[0]["path"] == "/prometheus/api/v1/query"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            error(400, "bad_data", '1:5: parse error: unexpected "}"'),
            "refused the query: bad_data: 1:5: parse",
        ),
        (error(422, "execution", "many-to-many matching not allowed"), "execution: many-to-many"),
        (error(503, "timeout", "query timed out in expression evaluation"), "timeout: query timed out"),
        ((502, b"<html>Bad Gateway</html>", {}), "HTTP 502 without the API's JSON: <html>Bad Gateway"),
        ((200, b"", {}), "HTTP 200 without the API's JSON"),
        ((200, b"[1, 2]", {}), "without the API's JSON"),
        ((200, VECTOR.replace(b"vector", b"matrix") % b"[]", {}), "not an instant vector"),
        ((200, VECTOR % b"{}", {}), "result is not a list"),
        ((200, VECTOR % b'[{"value":[1,"1"]}]', {}), "has no labels"),
        ((200, VECTOR % b'[{"metric":{},"value":[1,2]}]', {}), "not [time, value]"),
        ((200, VECTOR % b'[{"metric":{},"value":[1,"abc"]}]', {}), "'abc' is not a number"),
    ],
)
def test_bad_answers_are_errors(answer: Answer, expected: str) -> None:
    with serving(lambda q: answer, timeout=5) as (prom, client), pytest.raises(PrometheusError) as info:
        client.query("x")
    assert str(info.value).startswith(f"Prometheus at {prom.url}") and expected in str(info.value)


def test_redirect_not_followed() -> None:
    moved = (302, b"", {"Location": "http://elsewhere.invalid:9090/login?next=x"})
    with serving(lambda q: moved, timeout=5) as (prom, client), pytest.raises(PrometheusError) as info:
        client.query("x")
    assert "redirect to http://elsewhere.invalid:9090/login: give that URL instead" in str(info.value)
    assert len(prom.queries) == 1


def test_body_and_series_caps() -> None:
    big = success([series({"pod": f"p{i:06d}", "padding": "x" * 200}, 1) for i in range(5000)])  # ~1.3 MB
    with (
        serving(lambda q: big, timeout=10, max_body=256 * 1024) as (_, client),
        pytest.raises(PrometheusError, match="larger than 262144 bytes"),
    ):
        client.query("x")
    with (
        serving(lambda q: big, timeout=10, max_series=100) as (_, client),
        pytest.raises(PrometheusError, match="returned 5000 series, more than 100"),
    ):
        client.query("x")


def test_slow_server_ends_at_the_deadline() -> None:
    """The fake holds its answer back 3 s; the client gives up at its 0.3 s timeout (had it
    waited, the query would have succeeded)."""
    with (
        serving(lambda q: success([series({}, 1)]), delay=3, timeout=0.3) as (prom, client),
        pytest.raises(PrometheusError) as info,
    ):
        client.query("x")
    assert str(info.value) == f"Prometheus at {prom.url} did not answer within 0.3s"


def test_trickling_body_ends_at_the_deadline() -> None:
    """Bytes keep arriving (one per 20 ms: no read timeout ever fires), yet the whole answer
    must arrive within the deadline."""
    answer = success([series({"pod": "p" * 100}, 1)])
    with (
        serving(lambda q: answer, trickle=0.02, timeout=0.5) as (prom, client),
        pytest.raises(PrometheusError) as info,
    ):
        client.query("x")
    assert str(info.value) == f"Prometheus at {prom.url} did not answer within 0.5s"


def test_unreachable_and_invalid_urls() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with (
        PrometheusClient(f"http://127.0.0.1:{port}", timeout=2) as client,
        pytest.raises(PrometheusError) as info,
    ):
        client.query("x")
    assert str(info.value) == f"cannot reach Prometheus at http://127.0.0.1:{port}: connection refused"
    for bad in ("prometheus:9090", "ftp://host/x", "http://", ""):
        with pytest.raises(PrometheusError, match="invalid Prometheus URL"):
            PrometheusClient(bad)


def test_credentials_never_shown() -> None:
    shown = display_url("https://alice:s3cret@prom.example:9443/prom/?token=abc#x")
    assert shown == "https://prom.example:9443/prom"
    assert display_url("http://[::1]:9090/") == "http://[::1]:9090"
    with (
        FakePrometheus(lambda q: error(400, "bad_data", "nope")) as prom,
        PrometheusClient(prom.url.replace("http://", "http://alice:s3cret@"), timeout=5) as client,
        pytest.raises(PrometheusError) as info,
    ):
        client.query("x")
    assert "s3cret" not in str(info.value) and "alice" not in str(info.value)
    assert str(info.value).startswith(f"Prometheus at {prom.url} refused the query")


def test_server_texts_are_escaped() -> None:
    """A hostile server's error text and warnings cannot reach the terminal raw (escape
    sequences, forged lines) nor unbounded (cut at 300 characters)."""
    hostile = "\x1b[2J\x1b[31mbad\nwarning: forged line" + "x" * 5000
    with (
        serving(lambda q: error(400, "bad_data\r", hostile), timeout=5) as (_, client),
        pytest.raises(PrometheusError) as info,
    ):
        client.query("x")
    text = str(info.value)
    assert "\x1b" not in text and "\n" not in text and "\r" not in text
    assert "\\x1b[2J\\x1b[31mbad\\nwarning: forged line" in text and len(text) < 800
    with serving(lambda q: success([], warnings=[hostile]), timeout=5) as (_, client):
        _, warnings = client.query("x")
    assert "\x1b" not in warnings[0] and "\n" not in warnings[0] and len(warnings[0]) < 400
