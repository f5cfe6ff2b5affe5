"""Benchmark: resolve whole JobSet workloads vs gojq evaluating the same definition's expressions.

workload_map side: 2,000 realistic ~20 KB JobSets (``bench/fixtures.py``, the generator shared
with ``bench_expr.py``) as JSON text, each
resolved with the bundled catalog's JobSet definition, compiled once: JSON parse, instances, pod
templates, scale, status matching and Kubernetes resource totals.

gojq side: every jq expression of the same definition that runs on the workload object,
combined into one program ``{e0: [<expr0>], e1: [<expr1>], ...}`` and run by ``gojq -c`` over
the same objects as a JSON-lines file (one process; JSON parse and evaluation only, no
structure, status matching or resource arithmetic).

Three interleaved rounds; medians are printed with
``throughput ratio (workload_map / gojq) = X.XX``; exits 1 when the ratio is under 2.0 unless
``--no-assert``.

``--baseline-src DIR`` also resolves with another source tree (its engine, resolver and catalog,
e.g. a checkout of the commit before a change) in the same rounds: this tree and that one each
run in a fresh interpreter (``--worker``), interleaved with gojq, and both ratios are printed
side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixtures import jsonl_lines
from workload_map import compile_definition, resolve
from workload_map.catalog.registry import DATA_DIR, Catalog
from workload_map.model.definition import Karta
from workload_map.resolve import CompiledDefinition

JOBSET = "jobset-x-k8s-io-jobset-v1alpha2"


def load_definition() -> Karta:
    """The bundled catalog's JobSet definition (not ``WMAP_CATALOG_DIR``'s)."""
    karta = Catalog(DATA_DIR).by_name(JOBSET)
    if karta is None:
        raise SystemExit(f"catalog has no {JOBSET} definition")
    return karta


def gojq_program(compiled: CompiledDefinition) -> str:
    exprs = [e.source for e in compiled.root_expressions()]
    return "{" + ", ".join(f"e{i}: [{src}]" for i, src in enumerate(exprs)) + "}"


def run_workload_map(compiled: CompiledDefinition, path: str) -> tuple[float, float, int]:
    cpu = time.process_time()
    start = time.perf_counter()
    with open(path, "rb") as f:
        lines = f.read().splitlines()
    gpus = 0
    for line in lines:
        w = resolve(compiled, line)
        gpus += w.resources.gpus
        _ = w.primary_phase
    return time.perf_counter() - start, time.process_time() - cpu, gpus


def run_gojq(gojq: str, program: str, path: str) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([gojq, "-c", program, path], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def run_tree(src: str, path: str) -> tuple[float, float]:
    """(wall, cpu) seconds of ``run_workload_map`` with the source tree ``src``, in a fresh
    interpreter (imports and compiling the definition are not timed, as in-process)."""
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--worker", path],
        env=dict(os.environ, PYTHONPATH=src),
        capture_output=True,
        check=True,
    )
    row = json.loads(out.stdout)
    return float(row["wall"]), float(row["cpu"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gojq", default=os.environ.get("GOJQ", "/usr/bin/gojq"))
    ap.add_argument("--no-assert", action="store_true", help="report only; never fail on the ratio")
    ap.add_argument("--min-ratio", type=float, default=2.0)
    ap.add_argument("--baseline-src", help="another tree's src directory to measure side by side")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        compiled_here = compile_definition(load_definition())
        run_workload_map(compiled_here, args.worker)  # warm up, as in-process
        wall, cpu, _ = run_workload_map(compiled_here, args.worker)
        print(json.dumps({"wall": wall, "cpu": cpu}))
        return 0

    gojq = args.gojq if os.path.exists(args.gojq) else shutil.which("gojq")
    if not gojq:
        print("gojq not found", file=sys.stderr)
        return 0 if args.no_assert else 2
    compiled = compile_definition(load_definition())
    program = gojq_program(compiled)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "jobsets.jsonl")
        lines = jsonl_lines(args.count)
        with open(path, "wb") as f:
            f.write(b"\n".join(lines) + b"\n")
        size = sum(len(x) for x in lines)
        print(f"{len(lines)} JobSets, {size / len(lines) / 1024:.1f} KiB average, {size / 2**20:.1f} MiB")
        print(f"gojq program: {len(program)} chars, {len(list(compiled.root_expressions()))} expressions")
        # warm up both (imports, caches, page cache)
        run_workload_map(compiled, path)
        run_gojq(gojq, program, path)
        wm_times: list[float] = []
        gojq_times: list[float] = []
        wm_cpu: list[float] = []
        gojq_cpu: list[float] = []
        base_times: list[float] = []
        base_cpu: list[float] = []
        gpus = run_workload_map(compiled, path)[2]
        here = str(Path(__file__).resolve().parent.parent / "src")
        for r in range(args.rounds):
            if args.baseline_src:
                t, tc = run_tree(here, path)
                bt, btc = run_tree(args.baseline_src, path)
                base_times.append(bt)
                base_cpu.append(btc)
                print(f"round {r + 1}: baseline {bt:.3f}s (cpu {btc:.3f}s)")
            else:
                t, tc, gpus = run_workload_map(compiled, path)
            wm_times.append(t)
            wm_cpu.append(tc)
            g, gc_ = run_gojq(gojq, program, path)
            gojq_times.append(g)
            gojq_cpu.append(gc_)
            print(f"round {r + 1}: workload_map {t:.3f}s (cpu {tc:.3f}s)  gojq {g:.3f}s (cpu {gc_:.3f}s)")
    wm = statistics.median(wm_times)
    gq = statistics.median(gojq_times)
    print(
        f"workload_map median: {wm:.3f}s wall, {statistics.median(wm_cpu):.3f}s cpu "
        f"({args.count / wm:,.0f} workloads/s, {gpus} GPUs requested in total)"
    )
    print(
        f"gojq median:         {gq:.3f}s wall, {statistics.median(gojq_cpu):.3f}s cpu "
        f"({args.count / gq:,.0f} objects/s)"
    )
    cpu_ratio = statistics.median(gojq_cpu) / statistics.median(wm_cpu)
    print(f"cpu-time ratio (gojq / workload_map) = {cpu_ratio:.2f}")
    ratio = gq / wm
    if base_times:
        bm = statistics.median(base_times)
        bc = statistics.median(base_cpu)
        print(f"baseline median:     {bm:.3f}s wall, {bc:.3f}s cpu ({args.baseline_src})")
        print(f"throughput ratio vs gojq: this tree {ratio:.2f}, baseline {gq / bm:.2f}")
        base_cpu_ratio = statistics.median(gojq_cpu) / bc
        print(f"cpu-time ratio vs gojq:   this tree {cpu_ratio:.2f}, baseline {base_cpu_ratio:.2f}")
    print(f"throughput ratio (workload_map / gojq) = {ratio:.2f}")
    if ratio < args.min_ratio and not args.no_assert:
        print(f"FAIL: ratio under {args.min_ratio}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
