"""Kueue admission at scale: N ~20 KB JobSets (bench/fixtures.py, three replicated jobs each)
labelled for a LocalQueue, through the whole cycle the operator's Kueue admission controller runs
(in this process, 4 workers), on the test API server with Kueue's and JobSet's real CRDs.

Phases, each timed until every workload got there (Kueue's scheduler played by status PUTs, as
the tests do):

1. held: from the first create, every JobSet suspended and its Workload created (the controller's
   two writes each);
2. admitted: every Workload admitted (flavor with node labels and a toleration) -> every JobSet
   resumed with the flavor in all three templates (one write each);
3. evicted: every Workload evicted -> every JobSet suspended with its templates restored.

Side by side, the API server's own cost of as many writes: N merge patches of a label on the same
JobSets from one client (sequential), so each phase's time is also printed as a ratio to it
(writes the controller makes / writes the plain client makes: held = 2 per workload, the others
1). Also the process's peak RSS.

    python bench/bench_kueue.py [--count 300]
"""

from __future__ import annotations

import argparse
import copy
import logging
import os
import resource
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tests.support.fixtures import start_corpus_cluster  # noqa: E402
from tests.support.kube import KubeTestClient  # noqa: E402

from fixtures import jobset as big_jobset  # noqa: E402
from workload_map.catalog import get_definition  # noqa: E402
from workload_map.cluster import ConnectionOptions, KubeClient  # noqa: E402
from workload_map.definitions_source import DefinitionEntry  # noqa: E402
from workload_map.operator.kueue import KueueAdmission  # noqa: E402

KUEUE = "kueue.x-k8s.io/v1beta2"
T0 = "2026-12-02T07:00:00Z"


def _cond(kind: str, status: str, reason: str) -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": reason, "lastTransitionTime": T0}


def _jobset(i: int, namespace: str) -> dict[str, Any]:
    obj = big_jobset(i)
    meta = obj["metadata"]
    for key in ("managedFields", "uid", "resourceVersion", "creationTimestamp", "generation", "selfLink"):
        meta.pop(key, None)
    meta.update(namespace=namespace, name=f"js-{i:05d}")
    meta.setdefault("labels", {})["kueue.x-k8s.io/queue-name"] = "team-a"
    obj.pop("status", None)
    obj["spec"]["suspend"] = False
    return obj


def _parallel(fn: Callable[[Any], Any], items: list[Any], threads: int = 8) -> None:
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(fn, items))


def _until(what: str, check: Callable[[], int], total: int, timeout: float, every: float = 0.1) -> float:
    start = time.perf_counter()
    while True:
        done = check()
        if done >= total:
            return time.perf_counter() - start
        if time.perf_counter() - start > timeout:
            raise SystemExit(f"{what}: {done}/{total} after {timeout:.0f}s")
        time.sleep(every)


def _phase(
    what: str, ctl: KueueAdmission, action: str, base: int, verify: Callable[[], int], n: int, timeout: float
) -> float:
    """Seconds until the controller did ``action`` ``n`` times (its own counter: polling 2 x n
    ~20 KB objects here would take the CPU the controller needs), then checked on the API server
    (listed again every 2 s until every workload is there)."""
    secs = _until(what, lambda: ctl.actions[action] - base, n, timeout)
    return secs + _until(f"{what} (checked)", verify, n, timeout, every=2.0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--timeout", type=float, default=900.0)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    n = args.count
    print(
        f"conditions: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; {n} JobSets", flush=True
    )
    cluster = start_corpus_cluster()
    try:
        kube = KubeTestClient(cluster.server, cluster.admin_token, cluster.ca_file)
        ns = kube.create_namespace("bench-kueue")
        kube.create(
            {
                "apiVersion": KUEUE,
                "kind": "ResourceFlavor",
                "metadata": {"name": f"spot-{ns}"},
                "spec": {
                    "nodeLabels": {"instance-type": "spot"},
                    "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
                },
            }
        )
        assert cluster.dir is not None
        kubeconfig = cluster.write_kubeconfig(cluster.dir / "bench-kubeconfig")
        client = KubeClient.from_options(ConnectionOptions(kubeconfig=str(kubeconfig)), connect_tries=1)
        karta = get_definition("jobset.x-k8s.io/v1alpha2", "JobSet")
        assert karta is not None
        ctl = KueueAdmission(client, [DefinitionEntry(karta, "catalog")], workers=4, resync=3600).start()
        _until("controller start", lambda: int(ctl.running and ctl.synced()), 1, 120)

        def listed() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            js = kube.list("jobset.x-k8s.io/v1alpha2", "jobsets", ns)
            wls = kube.list(KUEUE, "workloads", ns)
            return js, wls

        def held() -> int:
            js, wls = listed()
            return min(sum(1 for o in js if o["spec"].get("suspend") is True), len(wls))

        jobsets = [_jobset(i, ns) for i in range(n)]
        base = ctl.actions["created"]
        t_create = time.perf_counter()
        _parallel(kube.create, jobsets)
        create_s = time.perf_counter() - t_create
        held_s = create_s + _phase("held", ctl, "created", base, held, n, args.timeout)

        def admit(wl: dict[str, Any]) -> None:
            assignments = [
                {"name": ps["name"], "flavors": {"cpu": f"spot-{ns}"}, "count": ps["count"]}
                for ps in wl["spec"]["podSets"]
            ]
            kube.set_status(
                wl,
                {
                    "admission": {"clusterQueue": "cq", "podSetAssignments": assignments},
                    "conditions": [
                        _cond("QuotaReserved", "True", "QuotaReserved"),
                        _cond("Admitted", "True", "Admitted"),
                    ],
                },
            )

        def resumed() -> int:
            js, _ = listed()
            return sum(
                1
                for o in js
                if o["spec"].get("suspend") is False
                and all(
                    (rj["template"]["spec"]["template"]["spec"].get("nodeSelector") or {}).get(
                        "instance-type"
                    )
                    == "spot"
                    for rj in o["spec"]["replicatedJobs"]
                )
            )

        def played(what: str, action: str, play: Callable[[Any], None], verify: Callable[[], int]) -> float:
            """Kueue's status writes on every Workload, then until the controller answered them all."""
            _, wls = listed()
            base = ctl.actions[action]
            start = time.perf_counter()
            _parallel(play, wls)
            patched = time.perf_counter() - start
            return patched + _phase(what, ctl, action, base, verify, n, args.timeout)

        admitted_s = played("admitted", "admitted", admit, resumed)

        def evict(wl: dict[str, Any]) -> None:
            kube.set_status(
                wl,
                {
                    "conditions": [
                        _cond("QuotaReserved", "False", "Pending"),
                        _cond("Admitted", "False", "NoReservation"),
                        _cond("Evicted", "True", "Preempted"),
                    ]
                },
            )

        originals = {o["metadata"]["name"]: copy.deepcopy(o["spec"]["replicatedJobs"]) for o in jobsets}

        def restored() -> int:
            js, _ = listed()
            return sum(
                1
                for o in js
                if o["spec"].get("suspend") is True
                and [
                    rj["template"]["spec"]["template"]["spec"].get("nodeSelector")
                    for rj in o["spec"]["replicatedJobs"]
                ]
                == [
                    rj["template"]["spec"]["template"]["spec"].get("nodeSelector")
                    for rj in originals[o["metadata"]["name"]]
                ]
            )

        evicted_s = played("evicted", "stopped", evict, restored)

        # Side by side: the API server's cost of n writes to the same objects from one client.
        t = time.perf_counter()
        for o in jobsets:
            kube.patch(o, {"metadata": {"labels": {"bench": "x"}}})
        plain_s = time.perf_counter() - t
        ctl.stop()
        client.close()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        print(f"created {n} JobSets in {create_s:.1f}s (8 client threads)")
        print(f"plain client: {n} merge patches in {plain_s:.1f}s ({n / plain_s:.0f}/s)")
        for name, secs, writes in (
            ("held", held_s, 2),
            ("admitted", admitted_s, 1),
            ("evicted", evicted_s, 1),
        ):
            ratio = secs / (plain_s * writes)
            print(
                f"{name:9s}: {secs:6.1f}s  {n / secs:6.1f} workloads/s  "
                f"x{ratio:.2f} the plain client's time for as many writes"
            )
        print(f"actions: {dict(ctl.actions)}; problems: {len(ctl.problems())}")
        print(f"peak RSS of this process (controller + bench client + {n} objects): {rss:.0f} MB")
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
