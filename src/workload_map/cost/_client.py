"""A small Prometheus HTTP API client for instant queries (``GET /api/v1/query``), bounded like
the Kubernetes client: one deadline covers the connection, the server's evaluation (passed on
as the ``timeout`` parameter) and the whole body; the body and the number of result series are
capped before they are kept; redirects are not followed. Every failure is a
:class:`~workload_map.errors.PrometheusError` naming the server (without credentials) and what
went wrong; the callers turn it into a warning. Texts the server sends (errors, warnings) are
cut and their control characters escaped before they reach a message (logs.safe_text)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import orjson

from workload_map import __version__
from workload_map.errors import PrometheusError
from workload_map.logs import safe_text

__all__ = ["DEFAULT_TIMEOUT", "MAX_BODY", "MAX_SERIES", "PrometheusClient", "Sample", "display_url"]

#: Seconds for one query, connection and body included (config ``prometheus.timeout``).
DEFAULT_TIMEOUT = 5.0
#: Largest answer kept; an endless or huge body is an error, not memory.
MAX_BODY = 8 * 1024 * 1024
#: Most result series one query may return (a cost listing returns one per workload).
MAX_SERIES = 20_000
#: Characters of a server's error text quoted in a message.
MAX_ERROR_TEXT = 300


@dataclass(frozen=True)
class Sample:
    """One series of an instant vector: its labels and its value (NaN and infinities kept)."""

    labels: Mapping[str, str]
    value: float


def display_url(url: str) -> str:
    """The URL as messages show it: no user name, password, query or fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


class PrometheusClient:
    """Instant queries against one Prometheus (or a Thanos/Mimir querier: the same API).

    ``url`` is the server's base URL (``http://prometheus:9090``, or with a path prefix such as
    ``https://host/prometheus``). Thread-safe: several queries may run at once.
    ``transport`` replaces the network in tests."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_body: int = MAX_BODY,
        max_series: int = MAX_SERIES,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PrometheusError(
                f'invalid Prometheus URL "{display_url(url)}": use http(s)://HOST[:PORT][/PATH]'
            )
        self.url = url.rstrip("/")
        self.shown = display_url(url)
        self.timeout = timeout
        self.max_body = max_body
        self.max_series = max_series
        self._clock = clock
        self._transport = transport
        self._lock = threading.Lock()
        self._http: httpx.Client | None = None

    def _client(self) -> httpx.Client:
        with self._lock:
            if self._http is None:
                self._http = httpx.Client(
                    transport=self._transport,
                    timeout=httpx.Timeout(self.timeout),
                    follow_redirects=False,
                    headers={"Accept": "application/json", "User-Agent": f"wmap/{__version__}"},
                )
            return self._http

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    def __enter__(self) -> PrometheusClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------ query

    def query(self, promql: str, *, deadline: float | None = None) -> tuple[list[Sample], list[str]]:
        """The instant vector ``promql`` evaluates to now, and the server's warnings.

        ``deadline`` (this client's clock) ends the query early; by default it is ``timeout``
        seconds from now."""
        start = self._clock()
        end = start + self.timeout if deadline is None else min(deadline, start + self.timeout)
        left = end - start
        if left <= 0:
            raise PrometheusError(f"Prometheus at {self.shown}: no time left for the query")
        # The server stops evaluating at our deadline too (seconds as a float: the API's form).
        params = {"query": promql, "timeout": f"{max(left, 0.001):.3f}"}
        http = self._client()
        request = http.build_request(
            "GET", self.url + "/api/v1/query", params=params, timeout=httpx.Timeout(left)
        )
        try:
            response = http.send(request, stream=True)
        except httpx.TimeoutException as exc:
            raise self._slow() from exc
        except httpx.HTTPError as exc:
            raise PrometheusError(f"cannot reach Prometheus at {self.shown}: {_reason(exc)}") from exc
        try:
            body = self._read(response, end)
        finally:
            response.close()
        return self._decode(response.status_code, response.headers.get("location"), body)

    def _slow(self) -> PrometheusError:
        return PrometheusError(f"Prometheus at {self.shown} did not answer within {self.timeout:g}s")

    def _read(self, response: httpx.Response, end: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > self.max_body:
                    raise PrometheusError(
                        f"Prometheus at {self.shown}: the answer is larger than {self.max_body} bytes"
                    )
                chunks.append(chunk)
                if self._clock() > end:  # a server trickling bytes defeats the per-read timeout
                    raise self._slow()
        except httpx.TimeoutException as exc:
            raise self._slow() from exc
        except httpx.HTTPError as exc:
            raise PrometheusError(
                f"Prometheus at {self.shown}: the answer broke off: {_reason(exc)}"
            ) from exc
        return b"".join(chunks)

    def _decode(self, status: int, location: str | None, body: bytes) -> tuple[list[Sample], list[str]]:
        if 300 <= status < 400:
            where = f" to {safe_text(display_url(location), MAX_ERROR_TEXT)}" if location else ""
            raise PrometheusError(
                f"Prometheus at {self.shown} answered with a redirect{where}: give that URL instead"
            )
        try:
            doc = orjson.loads(body) if body else None
        except orjson.JSONDecodeError:
            doc = None
        if not isinstance(doc, dict):
            text = safe_text(body[:MAX_ERROR_TEXT].decode("utf-8", "replace").strip(), MAX_ERROR_TEXT)
            raise PrometheusError(
                f"Prometheus at {self.shown} answered HTTP {status} without the API's JSON"
                + (f": {text}" if text else "")
            )
        if doc.get("status") != "success" or status >= 400:
            kind = safe_text(doc.get("errorType") or f"HTTP {status}", MAX_ERROR_TEXT)
            text = safe_text(doc.get("error") or "", MAX_ERROR_TEXT)
            raise PrometheusError(f"Prometheus at {self.shown} refused the query: {kind}: {text}")
        data = doc.get("data")
        if not isinstance(data, dict) or data.get("resultType") not in ("vector", "scalar"):
            raise PrometheusError(f"Prometheus at {self.shown}: the answer is not an instant vector")
        raw = doc.get("warnings")
        warnings = [safe_text(w, MAX_ERROR_TEXT) for w in (raw if isinstance(raw, list) else [])[:10]]
        if data["resultType"] == "scalar":
            return [Sample({}, _number(data.get("result"), self.shown))], warnings
        result = data.get("result")
        if not isinstance(result, list):
            raise PrometheusError(f"Prometheus at {self.shown}: the answer's result is not a list")
        if len(result) > self.max_series:
            raise PrometheusError(
                f"Prometheus at {self.shown} returned {len(result)} series, more than {self.max_series}"
            )
        return [_sample(item, self.shown) for item in result], warnings


def _sample(item: Any, shown: str) -> Sample:
    if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
        raise PrometheusError(f"Prometheus at {shown}: a result series has no labels")
    labels = {str(k): str(v) for k, v in item["metric"].items()}
    return Sample(labels, _number(item.get("value"), shown))


def _number(pair: Any, shown: str) -> float:
    """The value of ``[timestamp, "1.5"]`` (Prometheus sends numbers as strings: "NaN", "+Inf")."""
    if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[1], str):
        raise PrometheusError(f"Prometheus at {shown}: a sample is not [time, value]")
    try:
        value = float(pair[1])
    except ValueError:
        raise PrometheusError(
            f"Prometheus at {shown}: the sample value {safe_text(pair[1], 40)!r} is not a number"
        ) from None
    return value


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if "Connection refused" in text or "[Errno 111]" in text:
        return "connection refused"
    return safe_text(text, MAX_ERROR_TEXT)
