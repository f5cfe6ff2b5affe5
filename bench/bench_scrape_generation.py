"""Benchmark: the exporter's per-generation work on the workload body, in-process (issue 24).

``--workloads`` JobSet-shaped workloads (10 pods each; lines shaped as the exporter renders them,
about 6 KB per workload over the workload families) are built into a :class:`WorkloadBody` and
streamed once (the first generation compresses everything). Then 30 generations in which
``--changed`` workloads get new lines (a worker re-rendering them: 20 pods a second at 10 pods
per workload between two scrapes a second is 2): per generation the build, the deflated stream
and ``gzip_body``, the calling thread's CPU time, and the plain bytes compressed. Last, 20
generations in which nothing changed: no compression, so their CPU time is the Python work that
holds the GIL (the server threads wait for it). Run with ``PYTHONPATH=<tree>/src`` to measure
another tree (e.g. the baseline): only ``WorkloadBody.build``, ``deflated`` and ``gzip_body`` are
used.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import uuid

from workload_map.exporter import metrics as m
from workload_map.exporter.exposition import Family, encode
from workload_map.exporter.scrape import DeflateCache, WorkloadBody, admit, gzip_body

Key = tuple[str, str, str]
PODS = 10


def lines_of(i: int, tick: int) -> dict[str, bytes]:
    """Workload ``i``'s lines, family by family, as render_workload shapes them for a JobSet."""
    base = [("namespace", "bench"), ("group", "jobset.x-k8s.io"), ("kind", "JobSet"), ("name", f"js-{i:05d}")]
    out: dict[str, list[str]] = {}

    def add(fam: Family, labels: list[tuple[str, str]], value: float) -> None:
        out.setdefault(fam.name, []).append(fam.line(labels, value))

    add(m.WORKLOAD_INFO, [*base, ("uid", str(uuid.UUID(int=i))), ("definition", "jobset")], 1)
    add(m.RESOLVE_FAILED, base, 0)
    add(m.PRIMARY_PHASE, [*base, ("phase", "Running")], 1)
    for phase in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
        add(m.PHASE, [*base, ("phase", phase)], 1 if phase == "Running" else 0)
    for resource, unit in (("cpu", "core"), ("memory", "byte"), ("nvidia.com/gpu", "integer")):
        add(m.RESOURCE_REQUESTS, [*base, ("resource", resource), ("unit", unit)], 10 + tick)
        for comp in ("leader", "workers"):
            labels = [*base, ("component", comp), ("resource", resource), ("unit", unit)]
            add(m.COMPONENT_RESOURCE_REQUESTS, labels, 5)
    for comp in ("leader", "workers"):
        for state in ("desired", "current", "ready"):
            add(m.COMPONENT_PODS, [*base, ("component", comp), ("state", state)], 5)
            add(m.INSTANCE_PODS, [*base, ("component", comp), ("instance", "0"), ("state", state)], 5)
        for p in range(PODS // 2):
            pod = [
                ("namespace", "bench"),
                ("pod", f"js-{i:05d}-{comp}-0-{p}"),
                ("uid", str(uuid.UUID(int=i * 100 + p))),
                ("workload_kind", "JobSet"),
                ("workload_name", f"js-{i:05d}"),
                ("component", comp),
                ("instance", "0"),
                ("node", f"node-{p}"),
            ]
            add(m.POD_INFO, pod, 1)
    add(m.UNATTRIBUTED_PODS, base, 0)
    return {k: encode("".join(v)) for k, v in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", type=int, default=10_000)
    ap.add_argument("--changed", type=int, default=2, help="workloads re-rendered per generation")
    args = ap.parse_args()
    keys: list[Key] = [("jobset.x-k8s.io/JobSet", "bench", f"js-{i:05d}") for i in range(args.workloads)]
    entries = {key: lines_of(i, 0) for i, key in enumerate(keys)}
    series = {key: sum(chunk.count(b"\n") for chunk in lines.values()) for key, lines in entries.items()}
    cache = DeflateCache()

    def generation(g: int) -> tuple[float, float, float, float]:
        """Milliseconds of the build, the stream and gzip_body, and the thread's CPU time."""
        c0, t0 = time.thread_time(), time.perf_counter()
        admitted = admit(series, 0, sort_key=lambda key: (key[1], key[0], key[2]))
        body = WorkloadBody.build(
            g, m.WORKLOAD_FAMILIES, [entries[k] for k in admitted.keys], admitted, cache
        )
        t1 = time.perf_counter()
        body.deflated()
        t2 = time.perf_counter()
        gzip_body(body, b"wmap_exporter_ready 1\n")
        if body.size <= 0:
            raise AssertionError("an empty body")
        t3 = time.perf_counter()
        return (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, (time.thread_time() - c0) * 1e3

    first = generation(0)
    print(f"{args.workloads} workloads: first stream {first[1]:.0f} ms", flush=True)
    rng = random.Random(1)
    rows: list[tuple[float, float, float, float]] = []
    compressed = cache.compressed_bytes
    for g in range(1, 31):
        for _ in range(args.changed):
            i = rng.randrange(args.workloads)
            entries[keys[i]] = lines_of(i, g)
        rows.append(generation(g))
    per_gen_mb = (cache.compressed_bytes - compressed) / 30 / 1e6
    build, stream, tail, cpu = (statistics.median(col) for col in zip(*rows, strict=True))
    print(
        f"per generation with {args.changed} workloads changed (median of 30): build {build:.1f} ms, "
        f"stream {stream:.1f} ms, gzip_body {tail:.1f} ms; thread CPU {cpu:.1f} ms; "
        f"{per_gen_mb:.1f} MB compressed"
    )
    quiet = [generation(g)[3] for g in range(100, 120)]
    print(f"per generation with nothing changed (all Python): {statistics.median(quiet):.1f} ms thread CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
