"""Hostile builtin inputs (issue 23, expression engine): worst time and peak memory per attack.

Each attack, reconstructed from the issue's text, runs in its own Python process (a hang or a
gigabyte cannot take the others with it) against a source tree given by ``--src`` (default:
this checkout's ``src``), with the engine's default limits (1,000,000 units, 0.25 s deadline),
under a wall-clock timeout and an address-space cap. The parent reads each child's peak RSS
from ``wait4``. Give ``--src`` twice (``--src /old/src --src src``) to print before and after
side by side.

    .venv/bin/python bench/bench_hostile_expr.py [--src DIR ...] [--timeout 60] [--only regex]
    .venv/bin/python bench/bench_hostile_expr.py --registry [--top 25]

``--registry`` walks the builtin registry instead (this checkout only): every entry on the
megabyte adversarial inputs of ``tests/expr/adversarial.py`` with the default limits, in this
process, and prints the worst times (wall and thread CPU: on a loaded machine the wall time of a
run stopped by the 0.25 s deadline can be several times its CPU time) and tracemalloc peaks (the
registry test checks the same runs deterministically, with the deadline lifted). tracemalloc
counts orjson's buffer reallocations cumulatively: ``tojson`` of a 3 MB text shows ~66 MiB while
the process grows by 3 MB.

Columns: the outcome (``answer``, ``limit: <message>``, ``error: <message>``, ``killed``), the
evaluation's wall time, the process's peak RSS (the input itself takes 10-60 MB of it) and the
compile time (the ``compile`` class's worst time is its compile time).
Exit status 0 always: this prints numbers, it does not judge them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SRC = HERE.parent / "src"
MB = 1_000_000


@dataclass(frozen=True)
class Attack:
    cls: str  # the class: regex, several-regex, indices, dates
    name: str
    expression: str
    data: str  # a Python expression building the input (evaluated in the child)


_A = f'"a" * {MB}'
_AB = f'"ab" * {MB // 2}'
# a and b at random (a periodic subject lets RE2's DFA cache every state; this one does not)
_PATH_IFS = "[path(." + " | (if .a then .a else .b end)" * 8 + ")] | length"
_RANDOM_AB = f"''.join(__import__('random').Random(1).choices('ab', k={MB}))"
ATTACKS = [
    # Regex builtins on ~1 MB subjects: many matches, empty matches, many groups.
    Attack("regex", "match-empty-g", '[match(""; "g")] | length', _A),
    Attack("regex", "match-many-g", '[match("a"; "g")] | length', _A),
    Attack("regex", "match-64-groups-g", '[match("' + "(a?)" * 64 + '"; "g")] | length', _A),
    Attack("regex", "match-nested-groups", '[match("' + "(" * 40 + ".*" + ")" * 40 + '")] | length', _A),
    Attack("regex", "match-kept-g", '[match("(a)(a)(a)(a)"; "g")]', _A),
    Attack("regex", "capture-named-g", '[capture("(?<x>a)(?<y>a?)"; "g")] | length', _A),
    Attack("regex", "scan-empty", '[scan("")] | length', _A),
    Attack("regex", "scan-groups", '[scan("(a)(a)")] | length', _A),
    Attack("regex", "splits-empty", '[splits("")] | length', _A),
    Attack("regex", "splits-many", '[splits("a")] | length', _A),
    Attack("regex", "split2-many", 'split("b"; null) | length', _AB),
    Attack("regex", "sub-doubling", 'sub("(?<x>.*)"; "\\(.x)\\(.x)") | length', _A),
    Attack("regex", "gsub-empty", 'gsub(""; "-") | length', _A),
    Attack("regex", "gsub-many", 'gsub("a"; "bb") | length', _A),
    Attack("regex", "gsub-groups", 'gsub("' + "(a)" * 16 + '"; "x") | length', _A),
    Attack("regex", "test-leftmost-rescan", '[match("a*b|a"; "g")] | length', f'"a" * {MB // 10}'),
    Attack("regex", "test-large-program", 'test("(a|b)*a(a|b){30}c")', _RANDOM_AB),
    # Several regex calls in one expression: each alone is long; the deadline must stop the first.
    Attack(
        "several-regex",
        "four-calls",
        '[(gsub(""; "-") | length), ([scan("a")] | length), ([splits("a")] | length), '
        '([match(""; "g")] | length)]',
        _A,
    ),
    Attack("several-regex", "map-test", '[.[] | test("(a|b)*a(a|b){20}c")] | length', f"[{_RANDOM_AB}] * 40"),
    # String indices with long overlapping needles: quadratic work.
    Attack(
        "indices",
        "indices-overlap",
        ".[0] as $n | .[1] | indices($n) | length",
        f'["a" * {MB // 2}, "a" * {MB}]',
    ),
    Attack(
        "indices", "index-overlap", ".[0] as $n | .[1] | index($n)", f'["a" * {MB // 2} + "b", "a" * {MB}]'
    ),
    Attack("indices", "rindex-overlap", ".[0] as $n | .[1] | rindex($n)", f'["a" * {MB // 2}, "a" * {MB}]'),
    Attack(
        "indices",
        "indices-near-miss",
        ".[0] as $n | .[1] | indices($n) | length",
        f'["a" * 99 + "b", "a" * {MB}]',
    ),
    # Dates: huge formats, repeated directives, non-finite and out-of-range numbers.
    Attack("dates", "strptime-huge-format", 'strptime("%Y" * 500000)', '"2015" * 500000'),
    Attack("dates", "strptime-huge-literal", 'strptime("-" * 2000000 + "%Y")', '"-" * 2000000 + "2015"'),
    Attack("dates", "strptime-repeated-Y", 'strptime("%Y %Y %Y %Y")', '"2015 2016 2017 2018"'),
    Attack("dates", "strftime-huge-format", 'strftime("%c" * 1000000) | length', "0"),
    Attack("dates", "strftime-repeated-Y", 'strftime("%Y" * 1000) | length', "0"),
    Attack("dates", "todate-nan", "todate", "float('nan')"),
    Attack("dates", "todate-inf", "todate", "float('inf')"),
    Attack("dates", "todate-1e300", "todate", "1e300"),
    Attack("dates", "mktime-nan", "mktime", "[float('nan'), 0, 1, 0, 0, 0, 0, 0]"),
    Attack("dates", "mktime-1e300", "mktime", "[1e300, 0, 1, 0, 0, 0, 0, 0]"),
    Attack("dates", "strftime-1e300-array", 'strftime("%Y")', "[1e300, 0, 1, 0, 0, 0, 0, 0]"),
    Attack("dates", "gmtime-inf", "gmtime", "float('-inf')"),
    # Compile time (reported by a colleague): every fork generated the code after it per branch.
    Attack("compile", "comma-chain-10", "[." + " | (.a, .b)" * 10 + "] | length", "{}"),
    Attack("compile", "select-chain-12", "[." + " | select(.a, .b)" * 12 + "] | length", "{}"),
    Attack("compile", "path-if-chain-8", _PATH_IFS, "{}"),
]

_CHILD = r"""
import json, math, os, sys, time
spec = json.loads(sys.argv[1])
from workload_map.errors import ExpressionError, ExpressionLimitError
from workload_map.expr import compile_expression
data = eval(spec["data"])
def rss():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
before = rss()
start = time.perf_counter()
try:
    expr = compile_expression(spec["expression"])
except ExpressionError as exc:
    compiled = time.perf_counter() - start
    print(json.dumps({"outcome": "rejected: " + exc.message[:70], "seconds": 0.0, "rss_before": before,
                      "compile_seconds": compiled}))
    raise SystemExit
compiled = time.perf_counter() - start
start = time.perf_counter()
try:
    out = expr.all(data)
    outcome = "answer: " + json.dumps(out)[:40]
except ExpressionLimitError as exc:
    outcome = "limit: " + exc.message[:70]
except ExpressionError as exc:
    outcome = "error: " + exc.message[:70]
except MemoryError:
    outcome = "MemoryError"
seconds = time.perf_counter() - start
print(json.dumps({"outcome": outcome, "seconds": seconds, "rss_before": before, "compile_seconds": compiled}))
"""


@dataclass
class Result:
    outcome: str
    seconds: float
    peak_rss: int  # bytes
    rss_before: int
    compile_seconds: float = 0.0


def run(attack: Attack, src: Path, timeout: float, memory_cap: int) -> Result:
    env = dict(os.environ, PYTHONPATH=str(src))

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))
        os.setsid()

    spec = json.dumps({"expression": attack.expression, "data": attack.data})
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, spec],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=cap,
    )
    killed = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - started > timeout:
            os.killpg(proc.pid, signal.SIGKILL)
            killed = True
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    peak = usage.ru_maxrss * 1024
    if killed:
        return Result(f"killed after {timeout:g} s", time.perf_counter() - started, peak, 0)
    try:
        line = json.loads(out.strip().splitlines()[-1])
    except (IndexError, ValueError):
        last = (err.strip().splitlines() or ["?"])[-1]
        return Result(f"crashed: {last[:70]}", time.perf_counter() - started, peak, 0)
    return Result(line["outcome"], line["seconds"], peak, line["rss_before"], line["compile_seconds"])


def walk_registry(top: int) -> int:
    """Every registry entry on its adversarial cases, default limits: the worst times."""
    import tracemalloc

    sys.path.insert(0, str(HERE.parent))
    from tests.expr.adversarial import all_cases, pools

    from workload_map.errors import ExpressionError
    from workload_map.expr import compile_expression

    pools()
    rows: list[tuple[float, float, int, str, str, str]] = []
    for entry, case in all_cases():
        expr = compile_expression(case.source, case.variables)
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            expr.all(None, case.variables)
            outcome = "answer"
        except ExpressionError as exc:
            outcome = exc.message[:60]
        seconds, cpu = time.perf_counter() - started, time.thread_time() - cpu
        # the peak in a second run: tracemalloc slows what it watches
        tracemalloc.start()
        with contextlib.suppress(ExpressionError):
            expr.all(None, case.variables)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rows.append((seconds, cpu, peak, entry.label, repr(case)[:70], outcome))
    rows.sort(reverse=True)
    print(f"{len(rows)} runs of {len({r[3] for r in rows})} registry entries; the {top} slowest (wall, CPU):")
    for seconds, cpu, peak, label, shown, outcome in rows[:top]:
        print(f"  {seconds:7.3f} s {cpu:6.3f} s {peak / 2**20:6.1f} MiB  {label:16} {shown}  -> {outcome}")
    print("the 5 largest peaks:")
    for seconds, cpu, peak, label, shown, outcome in sorted(rows, key=lambda r: r[2], reverse=True)[:5]:
        print(f"  {seconds:7.3f} s {cpu:6.3f} s {peak / 2**20:6.1f} MiB  {label:16} {shown}  -> {outcome}")
    print(f"worst CPU time {max(r[1] for r in rows):.3f} s; total {sum(r[0] for r in rows):.1f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--src", action="append", type=Path, help="a tree's src directory (repeat to compare)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds before an attack is killed")
    ap.add_argument("--memory-cap", type=int, default=4096, help="address-space cap per attack, MiB")
    ap.add_argument("--only", default="", help="run attacks whose class or name contains this text")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--registry", action="store_true", help="walk the builtin registry instead")
    ap.add_argument("--top", type=int, default=25, help="with --registry: how many slowest runs to print")
    args = ap.parse_args(argv)
    if args.registry:
        return walk_registry(args.top)
    trees = args.src or [DEFAULT_SRC]
    attacks = [a for a in ATTACKS if args.only in a.cls or args.only in a.name]
    results: dict[str, list[dict[str, object]]] = {str(t): [] for t in trees}
    worst: dict[tuple[str, str], tuple[float, int]] = {}
    for attack in attacks:
        print(f"{attack.cls:14} {attack.name:22} {attack.expression[:60]}", flush=True)
        for tree in trees:
            r = run(attack, tree, args.timeout, args.memory_cap << 20)
            print(
                f"    {str(tree)[-40:]:>40}: {r.seconds:8.3f} s  {r.peak_rss / 2**20:7.0f} MiB peak "
                f"({r.rss_before / 2**20:4.0f} before)  compiled in {r.compile_seconds:.3f} s  {r.outcome}",
                flush=True,
            )
            results[str(tree)].append({"class": attack.cls, "name": attack.name, **r.__dict__})
            key = (str(tree), attack.cls)
            t, m = worst.get(key, (0.0, 0))
            spent = r.compile_seconds if attack.cls == "compile" else r.seconds
            worst[key] = (max(t, spent), max(m, r.peak_rss))
    print("\nworst per class (time, peak RSS):")
    for cls in dict.fromkeys(a.cls for a in attacks):
        cells = [
            f"{worst[(str(t), cls)][0]:8.3f} s {worst[(str(t), cls)][1] / 2**20:6.0f} MiB" for t in trees
        ]
        print(f"  {cls:14} " + "  |  ".join(cells))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
