"""Benchmark: the metrics exporter at scale on the real test apiserver, at several sizes.

Steps: start the test cluster (tests/support, etcd seed reused) and, size after size (``--sizes``,
default 2,000, 5,000 and 10,000 workloads), create JobSets up to that many (two replicated jobs of
``--pods-per-workload / 2`` pods each), one Job per replicated job and the pods (labels +
ownerReferences pod -> Job -> JobSet), concurrently with threads. At each size, wait until the API
server is done with the creations (every served resource listed once, since the API server builds
a custom resource's handler at its first request; then under 0.15 of a core over 5 s, at most
180 s: right after 100,000 creations the first run saw lists 1.7-2x slower than the next, whichever
tree it was), then start ``wmap exporter`` as a separate process (``--runs`` times; with
``--baseline SRC`` also the exporter of another source tree, e.g. a checkout of the previous
commit, interleaved and each run starting with the other tree, for ratios measured side by side),
and measure:

- **convergence**: from the start to /readyz 200 and then until every workload and pod shows up
  in /metrics with an empty work queue (polled once a second without compression); beside it
  what of it is ours and what the test API server's: the exporter's CPU seconds until then
  (user + system, /proc/<pid>/stat; what load on the machine does not change), the API server's
  CPU seconds over the same window, and the wall time of the same lists (JobSets, Jobs, pods,
  500 per page as the informers ask) fetched plainly just before by a client that only reads the
  bytes: convergence minus that is the time beyond the API server's lists;
- **scrape**: ``--scrapes`` scrapes as Prometheus asks (``Accept-Encoding: gzip``), p50 and p95 of
  the time until the body is received and inflated the way Prometheus's scrape loop does it: the
  gzip stream inflated piece by piece into a buffer kept from the previous scrape (the judged
  figure). Beside it: the same with httpx's ``Response.content`` (a fresh 74 MB ``bytes`` per
  scrape at 100,000 pods, whose cost depends on the Python client's own heap: glibc raises its
  mmap threshold after large frees, see runtime/allocator.py), the time until the raw gzip body is
  in (what the exporter controls) and an uncompressed scrape, with the exporter's CPU time and
  minor page faults per uncompressed scrape (its write path, see exporter/server.py WRITE_CHUNK);
- **scrape under churn** (``--churn N``, default 20): the same Prometheus-style scrapes, one a
  second, while N pods a second get a new annotation (each re-renders its workload, so the
  generation changes before every scrape, as in a cluster whose pods come and go): p95 and the
  exporter's CPU per scrape;
- **a real Prometheus** (``--prometheus``, Debian's ``prometheus`` on the PATH): at each size it
  scrapes the exporter every 5 s for ``--prometheus-seconds``; p50 and p95 of its own
  ``scrape_duration_seconds`` (fetch, inflate, parse and append to its TSDB head, first scrape
  excluded: it creates every series) and ``scrape_samples_scraped``;
- **memory**: peak RSS (VmHWM from /proc/<pid>/status), fitted over the sizes as fixed MB + KB
  per pod (least squares).

With ``--shards 1,2,4``, at the largest size, shard 0 of each count (its workloads with their pods),
each shard's memory as a fraction of the unsharded one.

Targets (issue 24), at 10 pods per workload: scrape p95 < 300 ms at 100,000 pods (the
Prometheus-style inflating client), convergence
< 30 s at 10,000 workloads (judged on the time beyond the API server's plain lists; the wall time is
printed beside it), < 4 KB of memory per pod. Printed as absolute figures and as ratios to the
target (and to the baseline); exit 1 when the largest size misses one unless ``--no-assert``.
Run: ``.venv/bin/python -m bench.bench_exporter [--sizes 2000,5000,10000] [--baseline
../base/src] [--runs 2] [--shards 1,2,4] [--prometheus]``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.cluster import TestCluster, free_port  # noqa: E402
from tests.support.fixtures import start_corpus_cluster  # noqa: E402
from tests.support.kube import owner_reference  # noqa: E402

TARGET_SCRAPE_S = 0.300  # p95 at 100,000 pods
TARGET_CONVERGE_S = 30.0  # at 10,000 workloads
TARGET_KB_PER_POD = 4.0


def _container(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "image": "registry.invalid/train:1",
        "resources": {"requests": {"cpu": "4", "memory": "16Gi"}, "limits": {"nvidia.com/gpu": "1"}},
    }


def jobset(name: str, ns: str, per_job: int) -> dict[str, Any]:
    rjs = [
        {
            "name": role,
            "replicas": 1,
            "template": {
                "spec": {
                    "parallelism": per_job,
                    "completions": per_job,
                    "template": {"spec": {"restartPolicy": "Never", "containers": [_container(role)]}},
                }
            },
        }
        for role in ("leader", "workers")
    ]
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicatedJobs": rjs},
    }


def cluster_http(cluster: TestCluster, timeout: float, limits: httpx.Limits | None = None) -> httpx.Client:
    """A client of the test API server as its admin."""
    return httpx.Client(
        base_url=cluster.server,
        verify=str(cluster.ca_file),
        headers={"Authorization": f"Bearer {cluster.admin_token}"},
        timeout=timeout,
        limits=limits or httpx.Limits(),
    )


class Creator:
    def __init__(self, cluster: TestCluster) -> None:
        self.http = cluster_http(cluster, 60, httpx.Limits(max_connections=64, max_keepalive_connections=64))

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        for attempt in range(5):
            try:
                r = self.http.post(path, json=body)
            except httpx.TransportError:  # a loaded machine drops connections now and then
                time.sleep(0.2 * (attempt + 1))
                continue
            if r.status_code == 409 and attempt > 0:  # created before the connection dropped
                r = self.http.get(f"{path}/{body['metadata']['name']}")
            if r.status_code < 300:
                result: dict[str, Any] = r.json()
                return result
            if r.status_code in (429, 500, 503, 504):
                time.sleep(0.2 * (attempt + 1))
                continue
            raise RuntimeError(f"POST {path}: {r.status_code} {r.text[:200]}")
        raise RuntimeError(f"POST {path}: gave up")

    def tree(self, ns: str, i: int, per_job: int) -> tuple[int, str]:
        js = self.post(
            f"/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets", jobset(f"js-{i:05d}", ns, per_job)
        )
        created = 1
        for role in ("leader", "workers"):
            labels = {
                "jobset.sigs.k8s.io/jobset-name": js["metadata"]["name"],
                "jobset.sigs.k8s.io/replicatedjob-name": role,
            }
            job = self.post(
                f"/apis/batch/v1/namespaces/{ns}/jobs",
                {
                    "metadata": {
                        "name": f"js-{i:05d}-{role}-0",
                        "labels": labels,
                        "ownerReferences": [owner_reference(js)],
                    },
                    "spec": {
                        "parallelism": per_job,
                        "completions": per_job,
                        "template": {
                            "metadata": {"labels": labels},
                            "spec": {"restartPolicy": "Never", "containers": [_container(role)]},
                        },
                    },
                },
            )
            created += 1
            job_ref = {**owner_reference({**job, "apiVersion": "batch/v1", "kind": "Job"})}
            for p in range(per_job):
                self.post(
                    f"/api/v1/namespaces/{ns}/pods",
                    {
                        "metadata": {
                            "name": f"js-{i:05d}-{role}-0-{p}",
                            "labels": labels,
                            "ownerReferences": [job_ref],
                        },
                        "spec": {
                            "restartPolicy": "Never",
                            "nodeName": f"node-{(i * 7 + p) % 250}",
                            "containers": [_container(role)],
                        },
                    },
                )
                created += 1
        return created, str(js["metadata"]["uid"])


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def minor_faults(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[7])


def apiserver_pid(cluster: TestCluster) -> int | None:
    proc = getattr(cluster, "_apiserver", None)
    popen = getattr(proc, "popen", None)
    return popen.pid if popen is not None else None


#: The API server counts as settled after creating objects once it uses less than this share of
#: a core (seconds of CPU per second) over SETTLE_WINDOW seconds; waited for at most SETTLE_MAX.
SETTLE_SHARE = 0.15
SETTLE_WINDOW = 5.0
SETTLE_MAX = 180.0


def warm_up(cluster: TestCluster) -> int:
    """List every served resource once (``limit=1``): the API server builds a custom resource's
    handler at its first request (4.5 s of its CPU for the test data's CRDs, which the first
    exporter run paid alone). Returns the resources listed."""
    http = cluster_http(cluster, 60)
    listed = 0
    with http:
        versions = ["/api/v1"] + [
            f"/apis/{v['groupVersion']}" for g in http.get("/apis").json()["groups"] for v in g["versions"]
        ]
        for base in versions:
            for res in http.get(base).json().get("resources", []):
                if "/" not in res["name"] and "list" in res.get("verbs", []):
                    http.get(f"{base}/{res['name']}", params={"limit": "1"})
                    listed += 1
    return listed


def settle(cluster: TestCluster) -> float:
    """Wait until the API server is done with the objects just created: for minutes after 100,000
    creations it keeps a core busy (measured: the first exporter run after them saw the same
    lists fetched plainly 1.7-2x slower, and API server CPU 1.4-1.6x, than the run after it,
    whichever tree ran first). Returns the seconds waited."""
    pid = apiserver_pid(cluster)
    began = time.monotonic()
    warm_up(cluster)
    if pid is None:
        return 0.0
    while time.monotonic() - began < SETTLE_MAX:
        c0 = cpu_seconds(pid)
        time.sleep(SETTLE_WINDOW)
        if cpu_seconds(pid) - c0 < SETTLE_SHARE * SETTLE_WINDOW:
            break
    return time.monotonic() - began


CONTINUE = re.compile(rb'"continue":"([^"]*)"')


def plain_lists(cluster: TestCluster) -> tuple[float, int]:
    """Wall seconds and bytes of the lists the exporter's informers make of the bench's objects
    (JobSets and Jobs, then pods; 500 per page), fetched by a client that only reads the bytes."""
    paths = ("/apis/jobset.x-k8s.io/v1alpha2/jobsets", "/apis/batch/v1/jobs", "/api/v1/pods")
    http = cluster_http(cluster, 300)
    size = 0
    t = time.monotonic()
    with http:
        for path in paths:
            token = ""
            while True:
                r = http.get(path, params={"limit": "500", **({"continue": token} if token else {})})
                r.raise_for_status()
                size += len(r.content)
                found = CONTINUE.search(r.content[:4096])
                token = found.group(1).decode() if found else ""
                if not token:
                    break
    return time.monotonic() - t, size


def vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


#: Inflated bytes per piece: under glibc's 128 KiB mmap threshold, as Prometheus's reader reads
#: the gzip stream into its buffer in small reads.
INFLATE_PIECE = 64 * 1024


def scrape_inflating(http: httpx.Client, url: str, buf: bytearray) -> int:
    """One gzip scrape inflated as Prometheus's scrape loop does: piece by piece into ``buf``, the
    buffer kept from the previous scrape (it grows only when a body outgrows it). The body's size."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    n = 0
    with http.stream("GET", url, headers={"Accept-Encoding": "gzip"}) as r:
        assert r.headers.get("Content-Encoding") == "gzip", "the exporter did not gzip the body"
        for chunk in r.iter_raw():
            data = chunk
            while data:
                piece = inflater.decompress(data, INFLATE_PIECE)
                buf[n : n + len(piece)] = piece
                n += len(piece)
                data = inflater.unconsumed_tail
    piece = inflater.flush()
    buf[n : n + len(piece)] = piece
    return n + len(piece)


def churn_pods(
    cluster: TestCluster, ns: str, workloads: int, per_job: int, rate: int, stop: threading.Event
) -> int:
    """Annotate ``rate`` pods a second (round robin over the bench's pods) until ``stop``; the
    number patched."""
    http = cluster_http(cluster, 60)
    n = 0
    nonce = f"{time.time_ns():x}"  # a value no earlier run wrote: a no-op patch changes nothing
    with http:
        while not stop.is_set():
            t = time.monotonic()
            for _ in range(rate):
                i, rest = divmod(n, 2 * per_job)
                role, p = ("leader", "workers")[rest // per_job], rest % per_job
                name = f"js-{i % workloads:05d}-{role}-0-{p}"
                http.patch(
                    f"/api/v1/namespaces/{ns}/pods/{name}",
                    content=f'{{"metadata":{{"annotations":{{"bench/tick":"{nonce}-{n}"}}}}}}',
                    headers={"Content-Type": "application/merge-patch+json"},
                ).raise_for_status()
                n += 1
            stop.wait(max(0.0, 1.0 - (time.monotonic() - t)))
    return n


def prometheus_scrapes(port: int, seconds: float) -> tuple[float, float, int]:
    """A real Prometheus scraping the exporter on ``port`` every 5 s for ``seconds``: p50 and p95 of
    its ``scrape_duration_seconds`` after the first scrape, and the samples of the last one."""
    from tests.support.prometheus import query, running_prometheus

    job = "wmap"
    config = {
        "global": {"scrape_interval": "5s", "scrape_timeout": "5s"},
        "scrape_configs": [{"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}],
    }
    workdir = Path(tempfile.mkdtemp(prefix="wmap-bench-prom-"))
    ready = f'scrape_duration_seconds{{job="{job}"}}'
    with running_prometheus(workdir, config, ready, timeout=300) as url:
        time.sleep(seconds)
        window = f"{int(seconds) + 30}s"
        r = httpx.get(url + "/api/v1/query", params={"query": f"{ready}[{window}]"}, timeout=30)
        r.raise_for_status()
        durations = [float(v) for _, v in r.json()["data"]["result"][0]["values"]][1:]
        samples = int(float(query(url, f'scrape_samples_scraped{{job="{job}"}}')[0]["value"][1]))
    if not durations:
        raise RuntimeError("Prometheus scraped the exporter once only; raise --prometheus-seconds")
    return statistics.median(durations), percentile(durations, 0.95), samples


QUEUE_EMPTY = re.compile(rb"^wmap_exporter_queue_depth 0$", re.MULTILINE)


@dataclass
class Run:
    """One exporter run at one size."""

    tree: str
    ready_s: float
    converge_s: float
    #: the exporter's CPU seconds until converged
    cpu_s: float
    #: the API server's CPU seconds over the same window
    api_cpu_s: float
    #: the same lists fetched plainly just before
    list_s: float
    p50: float
    p95: float
    #: httpx's Response.content: a fresh bytes object per scrape
    content_p95: float
    raw_p95: float
    #: Prometheus-style scrapes while pods change (--churn): p95 and exporter CPU ms per scrape
    churn_p95: float
    churn_cpu_ms: float
    identity_p95: float
    identity_p50: float
    #: exporter CPU ms and minor page faults per uncompressed scrape (medians)
    identity_cpu_ms: float
    identity_faults: float
    body_mb: float
    gzip_mb: float
    rss_mb: float
    #: a real Prometheus's scrape_duration_seconds (nan without --prometheus) and its samples
    prom_p50: float = float("nan")
    prom_p95: float = float("nan")
    prom_samples: float = float("nan")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_exporter(
    cluster: TestCluster,
    ns: str,
    total: int,
    want_workloads: int,
    want_pods: int,
    scrapes: int,
    tree: str,
    src: str | None,
    prometheus_s: float = 0.0,
    churn: int = 0,
    per_job: int = 5,
) -> Run:
    """Shard 0 of ``total`` (the exporter of source tree ``src`` when given): time to ready and to
    render its share, scrape latency, peak RSS."""
    list_s, _ = plain_lists(cluster)
    api_pid = apiserver_pid(cluster)
    api_cpu0 = cpu_seconds(api_pid) if api_pid else float("nan")
    tmp = Path(tempfile.mkdtemp(prefix="wmap-bench-"))
    kc = cluster.write_kubeconfig(tmp / "kubeconfig")
    port = free_port()
    log = (tmp / "exporter.log").open("wb")
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    t2 = time.monotonic()
    exporter = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workload_map.cli.main",
            "exporter",
            "--kubeconfig",
            str(kc),
            "--listen",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
            "--shard",
            "0",
            "--total-shards",
            str(total),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    workload_prefix = f'\nwmap_workload_info{{namespace="{ns}"'.encode()
    pod_prefix = f'\nwmap_pod_workload_info{{namespace="{ns}"'.encode()
    try:
        url = f"http://127.0.0.1:{port}"
        http = httpx.Client(timeout=300)
        plain = {"Accept-Encoding": "identity"}
        while True:
            try:
                if http.get(url + "/readyz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if exporter.poll() is not None:
                raise RuntimeError((tmp / "exporter.log").read_text()[-2000:])
            time.sleep(0.5)
        ready_s = time.monotonic() - t2
        while True:
            body = http.get(url + "/metrics", headers=plain).content
            w, p = body.count(workload_prefix), body.count(pod_prefix)
            if w == want_workloads and p == want_pods and QUEUE_EMPTY.search(body):
                break
            if time.monotonic() - t2 > 1800:
                raise RuntimeError(f"exporter did not converge: {w} workloads, {p} pods")
            time.sleep(1.0)
        converge_s = time.monotonic() - t2
        cpu_s = cpu_seconds(exporter.pid)
        api_cpu_s = (cpu_seconds(api_pid) if api_pid else float("nan")) - api_cpu0
        size = len(body)
        del body
        times, content_times, raw_times, plain_times = [], [], [], []
        gz = 0
        buf = bytearray()
        for _ in range(scrapes):  # as Prometheus asks and reads: gzip, inflated into a kept buffer
            t = time.perf_counter()
            n = scrape_inflating(http, url + "/metrics", buf)
            times.append(time.perf_counter() - t)
            assert n >= size * 0.9, "the inflated body is shorter than the plain one"
        del buf
        for _ in range(scrapes):  # gzip, decoded by httpx into a new bytes object each time
            t = time.perf_counter()
            r = http.get(url + "/metrics", headers={"Accept-Encoding": "gzip"})
            content_times.append(time.perf_counter() - t)
            assert len(r.content) >= size * 0.9, "the decoded body is shorter than the plain one"
            del r
        for _ in range(scrapes):  # the raw gzip body: what the exporter controls
            t = time.perf_counter()
            with http.stream("GET", url + "/metrics", headers={"Accept-Encoding": "gzip"}) as r:
                gz = sum(len(chunk) for chunk in r.iter_raw())
            raw_times.append(time.perf_counter() - t)
        churn_times: list[float] = []
        churn_cpu: list[float] = []
        if churn:
            stop = threading.Event()
            patcher = ThreadPoolExecutor(1)
            patched = patcher.submit(churn_pods, cluster, ns, want_workloads, per_job, churn, stop)
            buf = bytearray()
            try:
                for _ in range(scrapes):
                    time.sleep(1.0)  # the pods patched meanwhile change the generation
                    c0 = cpu_seconds(exporter.pid)
                    t = time.perf_counter()
                    scrape_inflating(http, url + "/metrics", buf)
                    churn_times.append(time.perf_counter() - t)
                    churn_cpu.append((cpu_seconds(exporter.pid) - c0) * 1000)
            finally:
                stop.set()
                patcher.shutdown()
            del buf
            patched.result()
        plain_cpu: list[float] = []
        plain_faults: list[float] = []
        for _ in range(max(5, scrapes // 2)):
            c0, f0 = cpu_seconds(exporter.pid), minor_faults(exporter.pid)
            t = time.perf_counter()
            with http.stream("GET", url + "/metrics", headers=plain) as r:
                sum(len(chunk) for chunk in r.iter_raw())
            plain_times.append(time.perf_counter() - t)
            plain_cpu.append((cpu_seconds(exporter.pid) - c0) * 1000)
            plain_faults.append(minor_faults(exporter.pid) - f0)
        prom = prometheus_scrapes(port, prometheus_s) if prometheus_s else (float("nan"),) * 3
        run = Run(
            tree,
            ready_s,
            converge_s,
            cpu_s,
            api_cpu_s,
            list_s,
            statistics.median(times),
            percentile(times, 0.95),
            percentile(content_times, 0.95),
            percentile(raw_times, 0.95),
            percentile(churn_times, 0.95) if churn_times else float("nan"),
            statistics.median(churn_cpu) if churn_cpu else float("nan"),
            percentile(plain_times, 0.95),
            statistics.median(plain_times),
            statistics.median(plain_cpu),
            statistics.median(plain_faults),
            size / 1e6,
            gz / 1e6,
            vm_hwm_mb(exporter.pid),
            *prom,
        )
        print(
            f"  {tree:8s} shards={total}: {w} workloads/{p} pods; ready {ready_s:.1f}s, converged "
            f"{converge_s:.1f}s (exporter CPU {cpu_s:.1f}s, API server CPU {api_cpu_s:.1f}s; the same "
            f"lists fetched plainly {list_s:.1f}s); scrape p50 {run.p50 * 1000:.0f} ms, p95 "
            f"{run.p95 * 1000:.0f} ms ({run.body_mb:.1f} MB, gzip {run.gzip_mb:.1f} MB; httpx .content p95 "
            f"{run.content_p95 * 1000:.0f} ms, raw gzip p95 "
            f"{run.raw_p95 * 1000:.0f} ms, under churn p95 {run.churn_p95 * 1000:.0f} ms with "
            f"{run.churn_cpu_ms:.0f} ms exporter CPU per scrape, uncompressed p50 "
            f"{run.identity_p50 * 1000:.0f} ms p95 "
            f"{run.identity_p95 * 1000:.0f} ms, exporter CPU {run.identity_cpu_ms:.0f} ms and "
            f"{run.identity_faults:.0f} page faults per uncompressed scrape); peak RSS {run.rss_mb:.0f} MB"
            + (
                f"; Prometheus scrape_duration_seconds p50 {run.prom_p50 * 1000:.0f} ms p95 "
                f"{run.prom_p95 * 1000:.0f} ms ({run.prom_samples:.0f} samples)"
                if prometheus_s
                else ""
            ),
            flush=True,
        )
        return run
    finally:
        exporter.terminate()
        try:
            exporter.wait(10)
        except subprocess.TimeoutExpired:
            exporter.kill()


def median_run(runs: list[Run]) -> Run:
    """Field by field medians of several runs of one tree at one size."""
    fields = [f for f in Run.__dataclass_fields__ if f != "tree"]
    return Run(runs[0].tree, *(statistics.median(getattr(r, f) for r in runs) for f in fields))


def fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares ``y = a + b x``: (a, b)."""
    if len(points) < 2:
        return float("nan"), float("nan")
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else float("nan")
    return my - b * mx, b


def main() -> int:
    from workload_map.exporter.sharding import Shard

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2000,5000,10000", help="comma-separated workload counts, ascending")
    ap.add_argument("--workloads", type=int, help="one size only (same as --sizes N)")
    ap.add_argument("--pods-per-workload", type=int, default=10)
    ap.add_argument("--threads", type=int, default=32)
    ap.add_argument("--scrapes", type=int, default=20)
    ap.add_argument("--runs", type=int, default=1, help="exporter runs per tree and size (medians)")
    ap.add_argument("--baseline", metavar="SRC", help="source tree of the exporter to compare with")
    ap.add_argument("--shards", default="1", help="comma-separated shard counts at the largest size")
    ap.add_argument(
        "--prometheus", action="store_true", help="also scrape with a real Prometheus (this tree)"
    )
    ap.add_argument("--churn", type=int, default=20, help="pods annotated per second in the churn scrapes")
    ap.add_argument("--prometheus-seconds", type=float, default=60.0, help="how long Prometheus scrapes")
    ap.add_argument("--no-assert", action="store_true")
    args = ap.parse_args()
    per_job = max(1, args.pods_per_workload // 2)
    sizes = [args.workloads] if args.workloads else sorted(int(x) for x in args.sizes.split(","))
    shard_counts = [int(x) for x in args.shards.split(",")]
    trees: list[tuple[str, str | None]] = [("this", None)]
    if args.baseline:
        trees.append(("baseline", str(Path(args.baseline).resolve())))
    print(
        f"conditions: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start; "
        f"python {sys.version.split()[0]}",
        flush=True,
    )

    t0 = time.monotonic()
    cluster = start_corpus_cluster()
    print(f"cluster ready in {time.monotonic() - t0:.1f}s", flush=True)
    try:
        creator = Creator(cluster)
        ns = "bench"
        creator.post("/api/v1/namespaces", {"metadata": {"name": ns}})
        uids: list[str] = []
        results: dict[int, dict[str, Run]] = {}
        for size in sizes:
            t1 = time.monotonic()
            objects = 0
            with ThreadPoolExecutor(args.threads) as pool:
                futures = [pool.submit(creator.tree, ns, i, per_job) for i in range(len(uids), size)]
                for f in futures:
                    made, uid = f.result()
                    objects += made
                    uids.append(uid)
            create_s = time.monotonic() - t1
            pods = size * per_job * 2
            print(
                f"{size} workloads, {pods} pods: created {objects} objects in {create_s:.1f}s "
                f"({objects / max(create_s, 1e-9):.0f}/s); load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
            settled = settle(cluster)
            print(f"  API server settled after {settled:.0f}s", flush=True)
            runs: dict[str, list[Run]] = {name: [] for name, _ in trees}
            for run_index in range(args.runs):
                # interleaved, the order alternating run by run: the first run after the objects
                # are created meets the API server still busy with them
                for name, src in trees if run_index % 2 == 0 else trees[::-1]:
                    prom_s = args.prometheus_seconds if args.prometheus and src is None else 0.0
                    runs[name].append(
                        run_exporter(
                            cluster, ns, 1, size, pods, args.scrapes, name, src, prom_s, args.churn, per_job
                        )
                    )
            results[size] = {name: median_run(rs) for name, rs in runs.items()}
        print("\nsummary (medians of --runs; 10 pods per workload unless told):")
        for size, by_tree in results.items():
            for name, r in by_tree.items():
                print(
                    f"  {size:6d} workloads {name:8s}: converged {r.converge_s:6.1f}s (beyond the plain "
                    f"lists {r.converge_s - r.list_s:6.1f}s, exporter CPU {r.cpu_s:6.1f}s, API server CPU "
                    f"{r.api_cpu_s:6.1f}s)  scrape p95 {r.p95 * 1000:5.0f} ms (httpx .content "
                    f"{r.content_p95 * 1000:4.0f} ms, raw gzip {r.raw_p95 * 1000:4.0f} ms, under churn "
                    f"{r.churn_p95 * 1000:4.0f} ms with {r.churn_cpu_ms:4.0f} ms CPU, "
                    f"{r.body_mb:5.1f} MB)  "
                    f"uncompressed p50 {r.identity_p50 * 1000:4.0f} ms ({r.identity_cpu_ms:4.0f} ms CPU, "
                    f"{r.identity_faults:6.0f} faults)  RSS {r.rss_mb:5.0f} MB"
                    + (
                        f"  Prometheus scrape p50 {r.prom_p50 * 1000:4.0f} ms "
                        f"p95 {r.prom_p95 * 1000:4.0f} ms "
                        f"({r.prom_samples:.0f} samples)"
                        if r.prom_p95 == r.prom_p95
                        else ""
                    )
                )
            if "baseline" in by_tree:
                new, old = by_tree["this"], by_tree["baseline"]
                print(
                    f"  {size:6d} workloads this/baseline: converged {new.converge_s / old.converge_s:.2f}x  "
                    f"exporter CPU {new.cpu_s / old.cpu_s:.2f}x  "
                    f"scrape p95 {new.p95 / old.p95:.2f}x  raw gzip p95 {new.raw_p95 / old.raw_p95:.2f}x  "
                    f"under churn p95 {new.churn_p95 / old.churn_p95:.2f}x "
                    f"(CPU {new.churn_cpu_ms:.0f} vs {old.churn_cpu_ms:.0f} ms)  "
                    f"uncompressed p50 {new.identity_p50 / old.identity_p50:.2f}x "
                    f"(CPU {new.identity_cpu_ms:.0f} vs {old.identity_cpu_ms:.0f} ms)  "
                    f"RSS {new.rss_mb / old.rss_mb:.2f}x"
                )
        largest = sizes[-1]
        pods_largest = largest * per_job * 2
        failed = []
        for name, _ in trees:
            a, b = fit([(s * per_job * 2, results[s][name].rss_mb) for s in sizes])
            kb = b * 1024
            r = results[largest][name]
            ours = r.converge_s - r.list_s
            print(
                f"{name}: memory {a:.0f} MB + {kb:.2f} KB per pod (target < {TARGET_KB_PER_POD} KB: "
                f"{kb / TARGET_KB_PER_POD:.2f} of it); at {largest} workloads / {pods_largest} pods: scrape "
                f"p95 {r.p95 * 1000:.0f} ms ({r.p95 / TARGET_SCRAPE_S:.2f} of the "
                f"{TARGET_SCRAPE_S * 1000:.0f} ms target), converged {r.converge_s:.1f}s of which "
                f"{ours:.1f}s beyond the API server's plain lists ({r.list_s:.1f}s): "
                f"{ours / TARGET_CONVERGE_S:.2f} of the {TARGET_CONVERGE_S:.0f} s target "
                f"({r.converge_s / TARGET_CONVERGE_S:.2f} counting the lists); exporter CPU {r.cpu_s:.1f}s"
            )
            if name == "this":
                if pods_largest >= 100_000 and r.p95 >= TARGET_SCRAPE_S:
                    failed.append("scrape p95")
                if largest >= 10_000 and ours >= TARGET_CONVERGE_S:
                    failed.append("convergence")
                if len(sizes) > 1 and kb >= TARGET_KB_PER_POD:
                    failed.append("memory per pod")
        if any(t > 1 for t in shard_counts):
            unsharded = results[largest]["this"].rss_mb
            for total in shard_counts:
                if total == 1:
                    continue
                mine = sum(1 for u in uids if Shard(0, total).owns(u))
                prom_s = args.prometheus_seconds if args.prometheus else 0.0
                r = run_exporter(
                    cluster,
                    ns,
                    total,
                    mine,
                    mine * per_job * 2,
                    args.scrapes,
                    "this",
                    None,
                    prom_s,
                    0,
                    per_job,
                )
                print(
                    f"shards={total}: shard 0 peak RSS {r.rss_mb / unsharded:.2f} of unsharded "
                    f"(ideal ~{1 / total:.2f} plus the fixed share)"
                    + (
                        f"; Prometheus scrape p50 {r.prom_p50 * 1000:.0f} ms p95 {r.prom_p95 * 1000:.0f} ms "
                        f"({r.prom_samples:.0f} samples)"
                        if prom_s
                        else ""
                    )
                )
        if failed and not args.no_assert:
            print(f"FAIL: missed {', '.join(failed)}")
            return 1
        return 0
    finally:
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
