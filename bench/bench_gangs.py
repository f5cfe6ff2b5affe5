"""Benchmark: the gang controller converging 1,000 workloads with 10,000 subgroups in all, on a real
kube-apiserver (tests/support), side by side with plain creates of the same objects.

Setup: a TestCluster with the corpus CRDs (KAI, Volcano, scheduler-plugins, JobSet...). 1,000
JobSets (shaped as the catalog's JobSet lifecycle fixture, tests/catalog/lifecycles) with 10
replicatedJobs each are created first. For ``--scheduler kai`` (default) each JobSet's plan is one
PodGroup with 10 subGroups: 10,000 subgroups.

Measured, in one run:

* **converge**: start the controller (``--workers`` threads) and wait until every workload has its
  object and its pod templates linked (one create and one template patch per workload);
* **scale**: grow every JobSet's first replicatedJob by one and wait until every object is updated;
* **baseline**: the same rendered objects created through the same client (``KubeClient.create``,
  the same number of threads) in another namespace: what the API server costs alone;
* **same calls**: the controller's own API calls made plainly (each object created, then the
  template patch, computed beforehand) on copies of the JobSets: the floor of converging.

Printed: objects per second of each, the ratio converge/baseline (time), the controller's API
calls, and memory: the process's resident set before the controller starts and once it has
converged (its informer caches of workloads and objects; plans are not kept). Report only
(benchmarks print ratios; no target is asserted).
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402
from tests.support.fixtures import start_corpus_cluster  # noqa: E402
from tests.support.kube import KubeTestClient  # noqa: E402

from workload_map.catalog import get_definition  # noqa: E402
from workload_map.cluster import ConnectionOptions, KubeClient  # noqa: E402
from workload_map.kube.objects import api_path  # noqa: E402
from workload_map.operator.gangs import GangController, decorated  # noqa: E402
from workload_map.operator.gangs_config import GangConfig  # noqa: E402
from workload_map.operator.gangs_links import linked  # noqa: E402
from workload_map.operator.handlers import ServedKinds  # noqa: E402
from workload_map.resolve.gang_plan import plan_gangs  # noqa: E402
from workload_map.resolve.patch import merge_patch  # noqa: E402
from workload_map.resolve.schedulers import render  # noqa: E402

FIXTURE = ROOT / "tests" / "catalog" / "lifecycles" / "jobset-x-k8s-io-jobset-v1alpha2" / "created.yaml"
TIMEOUT = 1800.0


def jobset(name: str, namespace: str, groups: int) -> dict[str, Any]:
    obj: dict[str, Any] = copy.deepcopy(yaml.safe_load(FIXTURE.read_text())["object"])
    meta = obj["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp", "generation"):
        meta.pop(key, None)
    meta.update(name=name, namespace=namespace)
    base = obj["spec"]["replicatedJobs"][-1]
    obj["spec"]["replicatedJobs"] = [dict(copy.deepcopy(base), name=f"rj-{i}") for i in range(groups)]
    return obj


def subgroups(obj: dict[str, Any]) -> int:
    spec = obj.get("spec") or {}
    return len(spec.get("subGroups") or spec.get("minTaskMember") or {}) or 1


def rss_mb() -> float:
    """Current resident set size (Linux /proc), MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def wait(what: str, check: Any, timeout: float = TIMEOUT) -> float:
    start = time.perf_counter()
    while not check():
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"{what}: not done in {timeout:g}s")
        time.sleep(0.2)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", type=int, default=1000)
    ap.add_argument("--groups", type=int, default=10, help="replicatedJobs (subgroups) per workload")
    ap.add_argument("--scheduler", default="kai", choices=["kai", "volcano", "coscheduling"])
    ap.add_argument("--workers", type=int, default=4)
    args = ap.parse_args(argv)
    os.environ.setdefault("WMAP_SHARED_DIR", "/work/shared")

    print(f"conditions: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)
    cluster = start_corpus_cluster()
    tmp = Path(tempfile.mkdtemp(prefix="wmap-bench-gangs-"))
    try:
        kube = KubeTestClient(cluster.server, cluster.admin_token, cluster.ca_file)
        kubeconfig = cluster.write_kubeconfig(tmp / "bench-gangs-kubeconfig")
        client = KubeClient.from_options(ConnectionOptions(kubeconfig=str(kubeconfig)), connect_tries=1)
        ns = kube.create_namespace("bench-gangs")
        names = [f"js-{i:05d}" for i in range(args.workloads)]
        with ThreadPoolExecutor(16) as pool:
            created = list(pool.map(lambda n: kube.create(jobset(n, ns, args.groups)), names))
        print(f"created {len(created)} JobSets x {args.groups} replicatedJobs", flush=True)

        # Baseline: the same objects, rendered once here, created by plain client calls.
        definition = get_definition(created[0]["apiVersion"], created[0]["kind"])
        assert definition is not None
        objects = [o for w in created for o in render(plan_gangs(definition, w), args.scheduler).objects]
        total_subgroups = sum(subgroups(o) for o in objects)
        base_ns = kube.create_namespace("bench-gangs-base")
        api_version, kind = objects[0]["apiVersion"], objects[0]["kind"]
        plural, _ = kube.plural_for(api_version, kind)
        path = api_path(api_version, plural, base_ns)

        def plain(obj: dict[str, Any]) -> None:
            body = copy.deepcopy(obj)
            body["metadata"]["namespace"] = base_ns
            body["metadata"].pop("ownerReferences", None)  # their owners live in the other namespace
            client.create(path, body)

        t = time.perf_counter()
        with ThreadPoolExecutor(args.workers) as pool:
            list(pool.map(plain, objects))
        baseline = time.perf_counter() - t

        # Baseline with the controller's calls: the same objects plus the same template patches
        # (computed beforehand) on copies of the JobSets: the API-server floor of converging.
        twin_ns = kube.create_namespace("bench-gangs-twin")
        with ThreadPoolExecutor(16) as pool:
            twins = list(pool.map(lambda n: kube.create(jobset(n, twin_ns, args.groups)), names))
        js_plural, _ = kube.plural_for(twins[0]["apiVersion"], twins[0]["kind"])
        twin_work = []
        for w in twins:
            rendered = render(plan_gangs(definition, w), args.scheduler)
            new, _ = linked(definition, w, rendered)
            twin_path = api_path(w["apiVersion"], js_plural, twin_ns, w["metadata"]["name"])
            twin_work.append(([decorated(o) for o in rendered.objects], twin_path, merge_patch(w, new)))
        twin_objects = api_path(api_version, plural, twin_ns)

        def plain_calls(work: tuple[list[dict[str, Any]], str, Any]) -> None:
            objs, js_path, patch = work
            for o in objs:
                client.create(twin_objects, o)
            client.patch(js_path, patch)

        t = time.perf_counter()
        with ThreadPoolExecutor(args.workers) as pool:
            list(pool.map(plain_calls, twin_work))
        baseline_calls = time.perf_counter() - t

        # The controller: converge from nothing.
        served = ServedKinds(client, list)
        rss0 = rss_mb()
        ctl = GangController(
            client, GangConfig.build(args.scheduler, [ns], workers=args.workers), served.resource
        )
        t = time.perf_counter()
        ctl.start()
        n = len(objects)
        wait("converge", lambda: ctl.stats.created >= n and ctl.stats.linked >= args.workloads)
        converge = time.perf_counter() - t
        rss_converged = rss_mb()
        calls_converge = ctl.stats.api_calls

        # Scale: one more replica of each JobSet's first replicatedJob.
        def grow(name: str) -> None:
            live = kube.get(created[0]["apiVersion"], "jobsets", name, ns)
            live["spec"]["replicatedJobs"][0]["replicas"] += 1
            kube.update(live)

        t = time.perf_counter()
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(grow, names))
        wait("scale", lambda: ctl.stats.updated >= n)
        scale = time.perf_counter() - t
        rss1 = rss_mb()
        ctl.stop()
        client.close()

        print(
            f"\n{args.workloads} workloads, {n} {kind} objects ({args.scheduler}), "
            f"{total_subgroups} subgroups"
        )
        print(f"{'':34} {'seconds':>8} {'objects/s':>10}")
        print(f"{'baseline: plain creates':34} {baseline:8.1f} {n / baseline:10.1f}")
        print(f"{'controller: converge (create+link)':34} {converge:8.1f} {n / converge:10.1f}")
        print(f"{'controller: scale (update)':34} {scale:8.1f} {n / scale:10.1f}")
        print(f"{'baseline: same calls (create+patch)':34} {baseline_calls:8.1f} {n / baseline_calls:10.1f}")
        print(f"ratio converge/baseline: {converge / baseline:.2f}x (time)")
        print(f"ratio converge/same calls: {converge / baseline_calls:.2f}x (time)")
        print(
            f"controller API calls while converging: {calls_converge} "
            f"({calls_converge / args.workloads:.2f} per workload); total {ctl.stats.api_calls}"
        )
        grown = rss_converged - rss0
        print(
            f"memory (resident, this process): {rss0:.0f} MB before the controller, {rss_converged:.0f} MB "
            f"converged (+{grown:.0f} MB, {grown * 1024 / args.workloads:.1f} KB per workload), "
            f"{rss1:.0f} MB after scaling"
        )
        print(f"stats: {ctl.stats}")
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
