"""Benchmark: the metrics exporter at 2,000 JobSets and 20,000 pods on the real test apiserver.

Steps: start the test cluster (tests/support, etcd seed reused), create ``--workloads`` JobSets
(two replicated jobs of ``--pods-per-workload / 2`` pods each), one Job per replicated job and the
pods (labels + ownerReferences pod -> Job -> JobSet), concurrently with threads; print the create
rates. Then start ``wmap exporter`` as a separate process, wait for /readyz and until every
workload and pod shows up in /metrics, time ``--scrapes`` scrapes and print median/p95 latency,
body size and the exporter's peak RSS (VmHWM from /proc/<pid>/status).

Targets: median scrape < 1 s and peak RSS < 500 MB; exit 1 when missed unless ``--no-assert``.
Run: ``.venv/bin/python -m bench.bench_exporter [--workloads 200 --pods-per-workload 10]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.cluster import TestCluster, free_port  # noqa: E402
from tests.support.fixtures import start_corpus_cluster  # noqa: E402
from tests.support.kube import owner_reference  # noqa: E402

TARGET_SCRAPE_S = 1.0
TARGET_RSS_MB = 500.0


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


class Creator:
    def __init__(self, cluster: TestCluster) -> None:
        self.http = httpx.Client(
            base_url=cluster.server,
            verify=str(cluster.ca_file),
            headers={"Authorization": f"Bearer {cluster.admin_token}"},
            timeout=60,
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=64),
        )

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        for attempt in range(5):
            r = self.http.post(path, json=body)
            if r.status_code < 300:
                result: dict[str, Any] = r.json()
                return result
            if r.status_code in (429, 500, 503, 504):
                time.sleep(0.2 * (attempt + 1))
                continue
            raise RuntimeError(f"POST {path}: {r.status_code} {r.text[:200]}")
        raise RuntimeError(f"POST {path}: gave up")

    def tree(self, ns: str, i: int, per_job: int) -> int:
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
        return created


def vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def count(body: str, prefix: str) -> int:
    return sum(1 for line in body.splitlines() if line.startswith(prefix))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", type=int, default=2000)
    ap.add_argument("--pods-per-workload", type=int, default=10)
    ap.add_argument("--threads", type=int, default=32)
    ap.add_argument("--scrapes", type=int, default=20)
    ap.add_argument("--no-assert", action="store_true")
    args = ap.parse_args()
    per_job = max(1, args.pods_per_workload // 2)

    t0 = time.monotonic()
    cluster = start_corpus_cluster()
    print(f"cluster ready in {time.monotonic() - t0:.1f}s", flush=True)
    exporter: subprocess.Popen[bytes] | None = None
    try:
        creator = Creator(cluster)
        ns = "bench"
        creator.post("/api/v1/namespaces", {"metadata": {"name": ns}})
        t1 = time.monotonic()
        objects = 0
        with ThreadPoolExecutor(args.threads) as pool:
            futures = [pool.submit(creator.tree, ns, i, per_job) for i in range(args.workloads)]
            for n, f in enumerate(futures, 1):
                objects += f.result()
                if n % max(1, args.workloads // 10) == 0:
                    el = time.monotonic() - t1
                    print(
                        f"  {n} workloads, {objects} objects in {el:.1f}s ({objects / el:.0f}/s)", flush=True
                    )
        create_s = time.monotonic() - t1
        pods = args.workloads * per_job * 2
        print(
            f"created {args.workloads} JobSets, {pods} pods ({objects} objects) in {create_s:.1f}s",
            flush=True,
        )

        tmp = Path(tempfile.mkdtemp(prefix="wmap-bench-"))
        kc = cluster.write_kubeconfig(tmp / "kubeconfig")
        port = free_port()
        log = (tmp / "exporter.log").open("wb")
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
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}"
        http = httpx.Client(timeout=60)
        while True:
            try:
                if http.get(url + "/readyz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if exporter.poll() is not None:
                raise RuntimeError((tmp / "exporter.log").read_text()[-2000:])
            time.sleep(0.2)
        ready_s = time.monotonic() - t2
        while True:
            body = http.get(url + "/metrics").text
            w = count(body, f'wmap_workload_info{{namespace="{ns}"')
            p = count(body, f'wmap_pod_workload_info{{namespace="{ns}"')
            q = [ln for ln in body.splitlines() if ln.startswith("wmap_exporter_queue_depth ")]
            if w == args.workloads and p == pods and q and q[0].endswith(" 0"):
                break
            if time.monotonic() - t2 > 600:
                raise RuntimeError(f"exporter did not converge: {w} workloads, {p} pods")
            time.sleep(0.5)
        converge_s = time.monotonic() - t2
        print(
            f"exporter ready in {ready_s:.1f}s, all {w} workloads/{p} pods rendered after {converge_s:.1f}s"
        )
        times = []
        size = 0
        for _ in range(args.scrapes):
            t = time.perf_counter()
            r = http.get(url + "/metrics")
            times.append(time.perf_counter() - t)
            size = len(r.content)
        gz = []
        for _ in range(5):
            t = time.perf_counter()
            http.get(url + "/metrics", headers={"Accept-Encoding": "gzip"})
            gz.append(time.perf_counter() - t)
        times.sort()
        median = statistics.median(times)
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        rss = vm_hwm_mb(exporter.pid)
        print(
            f"scrape ({args.scrapes}x, {size / 1e6:.1f} MB, {body.count(chr(10))} lines): "
            f"median {median * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms; gzip median "
            f"{statistics.median(gz) * 1000:.0f} ms; exporter peak RSS (VmHWM) {rss:.0f} MB"
        )
        ok = median < TARGET_SCRAPE_S and rss < TARGET_RSS_MB
        if not ok and not args.no_assert:
            print(f"FAIL: targets are scrape < {TARGET_SCRAPE_S}s and RSS < {TARGET_RSS_MB} MB")
            return 1
        return 0
    finally:
        if exporter is not None:
            exporter.terminate()
            try:
                exporter.wait(10)
            except subprocess.TimeoutExpired:
                exporter.kill()
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
