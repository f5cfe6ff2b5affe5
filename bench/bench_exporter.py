"""Benchmark: the metrics exporter at scale on the real test apiserver, per shard count.

Steps: start the test cluster (tests/support, etcd seed reused), create ``--workloads`` JobSets
(two replicated jobs of ``--pods-per-workload / 2`` pods each), one Job per replicated job and the
pods (labels + ownerReferences pod -> Job -> JobSet), concurrently with threads; print the create
rates. Then, for each shard count M of ``--shards`` (default ``1``), start ``wmap exporter --shard
0 --total-shards M`` as a separate process, wait for /readyz and until shard 0's workloads (the
JobSets whose UID hashes there) and their pods show up in /metrics, time ``--scrapes`` scrapes and
print median/p95 latency, body size and the exporter's peak RSS (VmHWM from /proc/<pid>/status);
last, each shard's memory as a fraction of the unsharded one.

Targets: p95 scrape < 1 s and peak RSS < 800 MB unsharded; exit 1 when missed unless
``--no-assert``. Run: ``.venv/bin/python -m bench.bench_exporter [--workloads 10000
--pods-per-workload 10 --shards 1,2,4]``.
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
TARGET_RSS_MB = 800.0


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


def vm_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def count(body: str, prefix: str) -> int:
    return sum(1 for line in body.splitlines() if line.startswith(prefix))


def run_exporter(
    cluster: TestCluster, ns: str, total: int, want_workloads: int, want_pods: int, scrapes: int
) -> dict[str, float]:
    """Shard 0 of ``total``: time to ready and to render its share, scrape latency, peak RSS."""
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
            "--shard",
            "0",
            "--total-shards",
            str(total),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        http = httpx.Client(timeout=120)
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
            body = http.get(url + "/metrics").text
            w = count(body, f'wmap_workload_info{{namespace="{ns}"')
            p = count(body, f'wmap_pod_workload_info{{namespace="{ns}"')
            q = [ln for ln in body.splitlines() if ln.startswith("wmap_exporter_queue_depth ")]
            if w == want_workloads and p == want_pods and q and q[0].endswith(" 0"):
                break
            if time.monotonic() - t2 > 1800:
                raise RuntimeError(f"exporter did not converge: {w} workloads, {p} pods")
            time.sleep(1.0)
        converge_s = time.monotonic() - t2
        times = []
        size = 0
        for _ in range(scrapes):
            t = time.perf_counter()
            r = http.get(url + "/metrics")
            times.append(time.perf_counter() - t)
            size = len(r.content)
        times.sort()
        median = statistics.median(times)
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        rss = vm_hwm_mb(exporter.pid)
        print(
            f"shards={total}: shard 0 renders {w} workloads/{p} pods; ready {ready_s:.1f}s, converged "
            f"{converge_s:.1f}s; scrape ({scrapes}x, {size / 1e6:.1f} MB) p50 {median * 1000:.0f} ms, "
            f"p95 {p95 * 1000:.0f} ms; peak RSS (VmHWM) {rss:.0f} MB",
            flush=True,
        )
        return {"p50": median, "p95": p95, "rss": rss}
    finally:
        exporter.terminate()
        try:
            exporter.wait(10)
        except subprocess.TimeoutExpired:
            exporter.kill()


def main() -> int:
    from workload_map.exporter.sharding import Shard

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", type=int, default=2000)
    ap.add_argument("--pods-per-workload", type=int, default=10)
    ap.add_argument("--threads", type=int, default=32)
    ap.add_argument("--scrapes", type=int, default=20)
    ap.add_argument("--shards", default="1", help="comma-separated shard counts, e.g. 1,2,4")
    ap.add_argument("--no-assert", action="store_true")
    args = ap.parse_args()
    per_job = max(1, args.pods_per_workload // 2)
    shard_counts = [int(x) for x in args.shards.split(",")]

    t0 = time.monotonic()
    cluster = start_corpus_cluster()
    print(f"cluster ready in {time.monotonic() - t0:.1f}s", flush=True)
    try:
        creator = Creator(cluster)
        ns = "bench"
        creator.post("/api/v1/namespaces", {"metadata": {"name": ns}})
        t1 = time.monotonic()
        objects = 0
        uids: list[str] = []
        with ThreadPoolExecutor(args.threads) as pool:
            futures = [pool.submit(creator.tree, ns, i, per_job) for i in range(args.workloads)]
            for n, f in enumerate(futures, 1):
                made, uid = f.result()
                objects += made
                uids.append(uid)
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
        results = {}
        for total in shard_counts:
            mine = sum(1 for u in uids if Shard(0, total).owns(u))
            results[total] = run_exporter(cluster, ns, total, mine, mine * per_job * 2, args.scrapes)
        if 1 in results:
            for total, r in results.items():
                print(
                    f"shards={total}: shard 0 peak RSS {r['rss'] / results[1]['rss']:.2f} of unsharded "
                    f"(ideal ~{1 / total:.2f} plus the fixed share)"
                )
        one = results.get(1)
        ok = one is None or (one["p95"] < TARGET_SCRAPE_S and one["rss"] < TARGET_RSS_MB)
        if not ok and not args.no_assert:
            print(f"FAIL: targets are p95 scrape < {TARGET_SCRAPE_S}s and RSS < {TARGET_RSS_MB} MB unsharded")
            return 1
        return 0
    finally:
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
