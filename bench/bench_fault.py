"""Fault benchmark (issue #10): a hostile definition beside 1,000 normal workloads.

On the real test apiserver: ``--workloads`` JobSets (the catalog's definition) in namespace
``calm`` and ``--hostile`` XGBoostJobs in ``hostile`` whose definition (``tests/support/hostile.py``,
loaded with ``--definitions``) explodes on every object. Two exporters and two ``wmap serve``
processes run side by side on the same cluster: one pair with the hostile definition, one without.
Printed, each as the ratio hostile / baseline measured in the same run:

- exporter convergence: seconds until every JobSet is rendered and the queue is empty;
- exporter ``/metrics`` scrape latency (median of alternating scrapes);
- ``wmap serve`` ``GET /api/v1/workloads?namespace=calm`` latency and ``/healthz`` latency.

The isolation target: every ratio under 2 (the hostile pair answers about as fast as the
baseline); exit 1 when missed unless ``--no-assert``.
Run: ``.venv/bin/python bench/bench_fault.py [--workloads 1000 --hostile 200]``.
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

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tests.support.cluster import TestCluster, free_port  # noqa: E402
from tests.support.fixtures import start_corpus_cluster  # noqa: E402
from tests.support.hostile import hostile_xgboost_yaml, xgboost_job  # noqa: E402

from bench_exporter import Creator, count, jobset  # noqa: E402

TARGET_RATIO = 2.0


class Proc:
    """``wmap COMMAND`` on a free port, logging to a file."""

    def __init__(self, command: str, kubeconfig: Path, tmp: Path, extra: list[str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp / f"{command}-{self.port}.log"
        self.proc = subprocess.Popen(
            [
                sys.executable, "-m", "workload_map.cli.main", command,
                "--kubeconfig", str(kubeconfig), "--listen", f"127.0.0.1:{self.port}",
                "--log-level", "warning", *extra,
            ],
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )  # fmt: skip

    def wait_ready(self, http: httpx.Client) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(self.log.read_text()[-2000:])
            try:
                if http.get(self.url + "/readyz").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"not ready: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def timed(http: httpx.Client, url: str, headers: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    answer = http.get(url, headers=headers)
    elapsed = time.perf_counter() - start
    if answer.status_code != 200:
        raise RuntimeError(f"GET {url}: {answer.status_code} {answer.text[:300]}")
    return elapsed


def converged(http: httpx.Client, exporter: Proc, workloads: int) -> bool:
    body = http.get(exporter.url + "/metrics").text
    queue = [ln for ln in body.splitlines() if ln.startswith("wmap_exporter_queue_depth ")]
    return (
        count(body, 'wmap_workload_info{namespace="calm"') == workloads
        and bool(queue)
        and queue[0].endswith(" 0")
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", type=int, default=1000)
    ap.add_argument("--hostile", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--no-assert", action="store_true")
    args = ap.parse_args()

    cluster: TestCluster = start_corpus_cluster()
    procs: list[Proc] = []
    try:
        creator = Creator(cluster)
        for ns in ("calm", "hostile"):
            creator.post("/api/v1/namespaces", {"metadata": {"name": ns}})
        t0 = time.monotonic()
        with ThreadPoolExecutor(32) as pool:
            jobs = [
                pool.submit(creator.post, "/apis/jobset.x-k8s.io/v1alpha2/namespaces/calm/jobsets",
                            jobset(f"js-{i:05d}", "calm", 2))
                for i in range(args.workloads)
            ]  # fmt: skip
            jobs += [
                pool.submit(creator.post, "/apis/kubeflow.org/v1/namespaces/hostile/xgboostjobs",
                            xgboost_job(f"x-{i:05d}", "hostile"))
                for i in range(args.hostile)
            ]  # fmt: skip
            for job in jobs:
                job.result()
        print(
            f"created {args.workloads} JobSets and {args.hostile} XGBoostJobs in {time.monotonic() - t0:.1f}s"
        )

        tmp = Path(tempfile.mkdtemp(prefix="wmap-fault-"))
        kubeconfig = cluster.write_kubeconfig(tmp / "kubeconfig")
        hostile_file = tmp / "hostile.yaml"
        hostile_file.write_text(hostile_xgboost_yaml())
        hostile_args = ["--definitions", str(hostile_file)]
        http = httpx.Client(timeout=120)
        started = time.monotonic()
        exporters = {
            "baseline": Proc("exporter", kubeconfig, tmp, []),
            "hostile": Proc("exporter", kubeconfig, tmp, hostile_args),
        }
        servers = {
            "baseline": Proc("serve", kubeconfig, tmp, []),
            "hostile": Proc("serve", kubeconfig, tmp, hostile_args),
        }
        procs = [*exporters.values(), *servers.values()]
        converge: dict[str, float] = {}
        while len(converge) < 2:
            for name, exporter in exporters.items():
                if name in converge:
                    continue
                try:
                    if converged(http, exporter, args.workloads):
                        converge[name] = time.monotonic() - started
                except httpx.HTTPError:
                    pass
                if exporter.proc.poll() is not None:
                    raise RuntimeError(exporter.log.read_text()[-2000:])
            if time.monotonic() - started > 900:
                raise RuntimeError(f"exporters did not converge: {converge}")
            time.sleep(0.3)
        for server in servers.values():
            server.wait_ready(http)
        auth = {"Authorization": f"Bearer {cluster.admin_token}"}
        list_path = "/api/v1/workloads?namespace=calm&type=jobsets&limit=50"
        samples: dict[str, dict[str, list[float]]] = {
            n: {"scrape": [], "list": [], "healthz": []} for n in ("baseline", "hostile")
        }
        for name in ("baseline", "hostile"):  # warm-up: the first list starts the informers
            timed(http, servers[name].url + list_path, auth)
            timed(http, servers[name].url + "/api/v1/workloads?namespace=hostile", auth)
        for _ in range(args.rounds):
            for name in ("baseline", "hostile"):
                samples[name]["scrape"].append(timed(http, exporters[name].url + "/metrics"))
                samples[name]["list"].append(timed(http, servers[name].url + list_path, auth))
                samples[name]["healthz"].append(timed(http, servers[name].url + "/healthz"))
                # The hostile server is also asked for the hostile namespace every round.
                timed(http, servers[name].url + "/api/v1/workloads?namespace=hostile", auth)
        hostile_metrics = http.get(exporters["hostile"].url + "/metrics").text
        quarantined = [
            ln for ln in hostile_metrics.splitlines() if ln.startswith("wmap_definition_quarantined{")
        ]
        failures = [
            ln
            for ln in hostile_metrics.splitlines()
            if ln.startswith("wmap_definition_limit_failures_total{")
        ]
        print(f"hostile exporter: {quarantined} {failures}")
        ratios = {
            "exporter convergence": converge["hostile"] / converge["baseline"],
        }
        print(
            f"exporter convergence: baseline {converge['baseline']:.1f}s, hostile {converge['hostile']:.1f}s "
            f"-> ratio {ratios['exporter convergence']:.2f}"
        )
        for what in ("scrape", "list", "healthz"):
            base = statistics.median(samples["baseline"][what])
            bad = statistics.median(samples["hostile"][what])
            ratios[what] = bad / base
            print(f"{what}: baseline median {base * 1000:.1f} ms, hostile {bad * 1000:.1f} ms", end="")
            print(f" -> ratio {bad / base:.2f}")
        worst = max(ratios.values())
        print(f"worst ratio (hostile / baseline) = {worst:.2f} (target < {TARGET_RATIO})")
        if worst >= TARGET_RATIO and not args.no_assert:
            return 1
        return 0
    finally:
        for proc in procs:
            proc.stop()
        cluster.stop()


if __name__ == "__main__":
    raise SystemExit(main())
