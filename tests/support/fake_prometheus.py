"""A fake Prometheus HTTP API on loopback: ``GET /api/v1/query`` answered the way Prometheus
answers it (https://prometheus.io/docs/prometheus/latest/querying/api/#instant-queries and the
error format beside it): ``{"status": "success", "data": {"resultType": "vector", "result":
[{"metric": {...}, "value": [<unix time>, "<value as a string>"]}]}}``, errors as HTTP 400/422/503
with ``{"status": "error", "errorType": ..., "error": ...}``.

It does not evaluate PromQL. :class:`RuleSeries` plays the cost recording rules: each query the
cost package builds names one rule and a label selector, and the fake returns that rule's
series that match the selector's equality matchers (the measure decides the value). Tests that
need other answers (slow, huge, broken, refused) set ``answer``.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

#: (status, body bytes, extra headers)
Answer = tuple[int, bytes, dict[str, str]]


def success(
    result: list[dict[str, Any]], result_type: str = "vector", warnings: list[str] | None = None
) -> Answer:
    doc: dict[str, Any] = {"status": "success", "data": {"resultType": result_type, "result": result}}
    if warnings:
        doc["warnings"] = warnings
    return 200, orjson.dumps(doc), {"Content-Type": "application/json"}


def error(status: int, error_type: str, text: str) -> Answer:
    doc = {"status": "error", "errorType": error_type, "error": text}
    return status, orjson.dumps(doc), {"Content-Type": "application/json"}


def series(labels: Mapping[str, str], value: float | str) -> dict[str, Any]:
    """One result entry as Prometheus writes it (the value a string: "NaN", "+Inf" too)."""
    return {"metric": dict(labels), "value": [time.time(), value if isinstance(value, str) else repr(value)]}


_MATCHER = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def equality_matchers(query: str) -> dict[str, str]:
    """The ``label="value"`` matchers of the query's first selector (``{...}``)."""
    m = re.search(r"\{([^}]*)\}", query)
    if not m:
        return {}
    return {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _MATCHER.findall(m.group(1))}


@dataclass
class RuleSeries:
    """The recorded series of the cost rules for a few workloads: per workload (its labels) the
    values each measure returns. ``measure(query)`` tells which measure a query asks for."""

    #: workload labels (namespace, workload_group, workload_kind, workload_name) -> measure -> value;
    #: "costPerHour" maps resource -> value, "components" (component, instance) -> value
    workloads: list[tuple[dict[str, str], dict[str, Any]]] = field(default_factory=list)

    def add(self, labels: Mapping[str, str], **measures: Any) -> None:
        self.workloads.append((dict(labels), measures))

    def answer(self, query: str) -> Answer:
        name = measure(query)
        wanted = equality_matchers(query)
        out: list[dict[str, Any]] = []
        if name == "diagnose":
            # the rules' inputs exist as soon as the rules have output
            names = ("workload:wmap_cost_per_hour:sum", "container_cpu_allocation", "wmap_pod_workload_info")
            present = list(names) if self.workloads else []
            return success([series({"__name__": n}, 1) for n in present])
        for labels, values in self.workloads:
            if any(labels.get(k, "") != v for k, v in wanted.items()) or name not in values:
                continue
            value = values[name]
            if name == "costPerHour":
                out += [series({**labels, "resource": r}, v) for r, v in value.items()]
            elif name == "components":
                for (component, instance), v in value.items():
                    extra = {"component": component, **({"instance": instance} if instance else {})}
                    out.append(series({**labels, **extra}, v))
            else:
                out.append(series(labels, value))
        return success(out)


#: What the tests' JobSet "train" (3 GPUs, a leader and two workers) gets from the cost rules.
TRAIN_MEASURES: dict[str, Any] = {
    "gpuHours": 72.0,
    "cost": 190.5,
    "costPerHour": {"cpu": 0.5, "gpu": 7.5, "memory": 0.25},
    "gpusAllocated": 3,
    "idleGpuCostPerHour": 1.25,
    "gpuUtilization": 62.5,
    "components": {("replicatedjob", "leader"): 2.75, ("replicatedjob", "workers"): 5.5},
}


def jobset_labels(namespace: str, name: str) -> dict[str, str]:
    """A JobSet's labels on the cost rules' series."""
    return {
        "namespace": namespace,
        "workload_group": "jobset.x-k8s.io",
        "workload_kind": "JobSet",
        "workload_name": name,
    }


def measure(query: str) -> str:
    """Which cost measure a query of workload_map.cost asks for."""
    if "count by (__name__)" in query:
        return "diagnose"
    if "sum_over_time(workload:wmap_gpus_allocated:sum" in query:
        return "gpuHours"
    if "sum_over_time(workload:wmap_cost_per_hour:sum" in query:
        return "cost"
    if "workload_component:wmap_cost_per_hour:sum" in query:
        return "components"
    if "resource) (workload:wmap_cost_per_hour:sum" in query:
        return "costPerHour"
    for rule, name in (
        ("workload:wmap_gpus_allocated:sum", "gpusAllocated"),
        ("workload:wmap_idle_gpu_cost_per_hour:sum", "idleGpuCostPerHour"),
        ("workload:wmap_gpu_utilization:avg", "gpuUtilization"),
    ):
        if rule in query:
            return name
    return "unknown"


class FakePrometheus:
    """``with FakePrometheus(answer) as prom: prom.url``; ``prom.queries`` lists what was asked
    (with the ``timeout`` parameter sent); ``answer(query) -> (status, body, headers)``. A
    ``delay`` (seconds) holds every answer back; ``trickle`` sends the body byte by byte."""

    def __init__(
        self,
        answer: Callable[[str], Answer] | None = None,
        *,
        delay: float = 0.0,
        trickle: float = 0.0,
    ) -> None:
        self.answer = answer or RuleSeries().answer
        self.delay = delay
        self.trickle = trickle
        self.queries: list[dict[str, str]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                params = {k: v[0] for k, v in parse_qs(parts.query).items()}
                with fake._lock:
                    fake.queries.append({"path": parts.path, **params})
                if parts.path.rstrip("/").endswith("/api/v1/query") and "query" in params:
                    status, body, headers = fake.answer(params["query"])
                else:
                    status, body, headers = error(404, "not_found", f"no route {parts.path}")
                if fake.delay:
                    time.sleep(fake.delay)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    if fake.trickle:
                        for i in range(len(body)):
                            self.wfile.write(body[i : i + 1])
                            self.wfile.flush()
                            time.sleep(fake.trickle)
                    else:
                        self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up: what the bounds are for

            def log_message(self, *_args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True, name="fake-prometheus")

    @property
    def url(self) -> str:
        port = self.server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def __enter__(self) -> FakePrometheus:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
