"""Benchmark: workload_map.expr vs gojq on 2,000 ~20 KB JobSets x 20 realistic expressions.

gojq runs once over a JSON-lines file with the combined program ``{e0: [expr0], ...}``; our
engine reads the same bytes, ``orjson.loads`` each line and evaluates all 20 with ``.all()``.
Three interleaved rounds; medians are compared. Exit status 1 when the throughput ratio is
below 2.0 (``--no-assert`` only prints).

``--baseline-src DIR`` also runs the engine of another source tree (e.g. a checkout of the
commit before a change: ``--baseline-src /path/to/old/src``) in the same rounds: this tree and
that one each run in a fresh interpreter (``--worker``), interleaved with gojq, and both ratios
are printed side by side.

    .venv/bin/python bench/bench_expr.py [--objects 2000] [--rounds 3] [--no-assert]
    .venv/bin/python bench/bench_expr.py --baseline-src ../base/src --no-assert
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import orjson

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures import jsonl_lines
from workload_map.expr import compile_expression

# Typical Karta paths and status/gang rules (dependency-evaluation.md section 1).
EXPRESSIONS = [
    # 10 plain paths, with and without `//`
    ".metadata.name",
    ".metadata.namespace",
    ".spec.suspend // false",
    ".spec.replicatedJobs[].name",
    ".spec.replicatedJobs[].replicas // 1",
    ".spec.replicatedJobs[].template.spec.template",
    ".spec.replicatedJobs[].template.spec.parallelism // 1",
    '.metadata.labels["kueue.x-k8s.io/queue-name"] // ""',
    '.spec.replicatedJobs[].template.spec.template.spec.schedulerName // "default-scheduler"',
    ".status.restarts // 0",
    # rules
    'any(.status.conditions[]?; .type == "Completed" and .status == "True")',
    'any(.status.conditions[]?; .type == "Failed" and .status == "True")',
    "(.status.replicatedJobsStatus // []) | any(.[]; (.active // 0) > 0 or (.ready // 0) > 0)"
    " and all(.[]; (.failed // 0) == 0)",
    "any((.status.replicatedJobsStatus // [])[]; .active > 0 and (.ready // 0) == 0)",
    "[.status.replicatedJobsStatus[]? | select(.ready > 0 and .active > 0)] | length > 0",
    '.status.conditions[]? | select(.type == "Suspended") | .status',
    '.metadata.labels | to_entries | map(select(.key | startswith("kueue") | not)) | from_entries',
    "[.spec.replicatedJobs[].template.spec.template.spec.containers[].image] | unique",
    "[.spec.replicatedJobs[] | .replicas * .template.spec.parallelism] | add",
    "[.spec.replicatedJobs[] | .replicas * (.template.spec.template.spec.containers[]"
    ' | .resources.limits["nvidia.com/gpu"] // "0" | tonumber)] | add',
]


VERIFY_SAMPLE = 50


def combined_program() -> str:
    return "{" + ", ".join(f"e{i}: [{e}]" for i, e in enumerate(EXPRESSIONS)) + "}"


def run_gojq(gojq: str, prog_path: str, data_path: str) -> float:
    start = time.perf_counter()
    subprocess.run([gojq, "-c", "-f", prog_path, data_path], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def run_ours(data_path: str) -> tuple[float, list[list[list[Any]]]]:
    exprs = [compile_expression(e) for e in EXPRESSIONS]
    start = time.perf_counter()
    with open(data_path, "rb") as fh:
        raw = fh.read()
    loads = orjson.loads
    results = []
    for n, line in enumerate(raw.splitlines()):
        obj = loads(line)
        answers = [e.all(obj) for e in exprs]
        # Keep only the verification sample: gojq's output goes to /dev/null, so holding every
        # answer (which share subtrees with the parsed input) would measure the GC, not us.
        if n < VERIFY_SAMPLE:
            results.append(answers)
    return time.perf_counter() - start, results


def run_tree(src: str, data_path: str) -> float:
    """Seconds ``run_ours`` takes with the engine of the source tree ``src``, in a fresh
    interpreter (imports and compiling are not timed, as in-process)."""
    env = dict(os.environ, PYTHONPATH=src)
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--worker", data_path],
        env=env,
        capture_output=True,
        check=True,
    )
    return float(json.loads(out.stdout)["seconds"])


def _canon(v: Any) -> bytes:
    return orjson.dumps(v, option=orjson.OPT_SORT_KEYS)


def verify(
    gojq: str, prog_path: str, data_path: str, ours: list[list[list[Any]]], sample: int = VERIFY_SAMPLE
) -> None:
    with open(data_path, "rb") as fh:
        lines = fh.read().splitlines()[:sample]
    out = subprocess.run(
        [gojq, "-c", "-f", prog_path], input=b"\n".join(lines), capture_output=True, check=True
    )
    for i, row in enumerate(out.stdout.splitlines()):
        theirs = orjson.loads(row)
        for j in range(len(EXPRESSIONS)):
            if _canon(theirs[f"e{j}"]) != _canon(ours[i][j]):
                raise SystemExit(
                    f"mismatch on object {i}, expression e{j} {EXPRESSIONS[j]!r}:\n"
                    f"  gojq: {theirs[f'e{j}']!r}\n  ours: {ours[i][j]!r}"
                )
    print(f"verified: all {len(EXPRESSIONS)} answers equal gojq's on {sample} objects")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--objects", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-assert", action="store_true")
    ap.add_argument("--baseline-src", help="another tree's src directory to measure side by side")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        seconds, _ = run_ours(args.worker)
        print(json.dumps({"seconds": seconds}))
        return 0
    gojq = shutil.which("gojq")
    if gojq is None:
        print("gojq not found on PATH", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        data_path = os.path.join(tmp, "jobsets.jsonl")
        prog_path = os.path.join(tmp, "prog.jq")
        lines = jsonl_lines(args.objects)
        with open(data_path, "wb") as fh:
            fh.write(b"\n".join(lines) + b"\n")
        with open(prog_path, "w") as fh:
            fh.write(combined_program())
        avg = sum(len(x) for x in lines) / len(lines)
        print(f"{args.objects} objects, average {avg / 1024:.1f} KiB, {len(EXPRESSIONS)} expressions")
        theirs: list[float] = []
        ours: list[float] = []
        baseline: list[float] = []
        _, results = run_ours(data_path)
        verify(gojq, prog_path, data_path, results)
        here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
        for _ in range(args.rounds):
            theirs.append(run_gojq(gojq, prog_path, data_path))
            if args.baseline_src:
                ours.append(run_tree(here, data_path))
                baseline.append(run_tree(args.baseline_src, data_path))
            else:
                ours.append(run_ours(data_path)[0])
    g = statistics.median(theirs)
    w = statistics.median(ours)
    ratio = g / w
    print(f"gojq median:         {g:.3f} s  (rounds: {', '.join(f'{x:.3f}' for x in theirs)})")
    print(f"workload_map median: {w:.3f} s  (rounds: {', '.join(f'{x:.3f}' for x in ours)})")
    if baseline:
        b = statistics.median(baseline)
        print(f"baseline median:     {b:.3f} s  (rounds: {', '.join(f'{x:.3f}' for x in baseline)})")
        print(f"throughput ratio vs gojq: this tree {ratio:.2f}, baseline {g / b:.2f} ({args.baseline_src})")
    print(f"throughput ratio (workload_map / gojq) = {ratio:.2f}")
    if ratio < 2.0 and not args.no_assert:
        print("FAIL: ratio below 2.0", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
