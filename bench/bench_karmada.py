"""Benchmark: the Karmada interpreter webhook per request vs our resolve of the same object.

Setup: ``wmap``'s interpreter webhook (the operator's bounded TLS server) on a local port with a
certificate made for it; 200 realistic ~20 KiB JobSets (bench/fixtures.py, the generator of
bench_resolve.py and bench_expr.py) with three member statuses each. A client keeping its TLS
connection open (as karmada-controller-manager's does) sends ``ResourceInterpreterContext``
requests shaped as Karmada sends them (tests/support/karmada_webhook.py) for each operation; the
same objects are resolved in-process (``resolve(definition, json_text)``: JSON parse, instances,
pod templates, scale, status, resource totals), interleaved, several rounds.

Prints per operation the webhook's p50/p95 per request (TLS, HTTP, JSON both ways, the answer)
and our resolve's p50/p95 on the same objects, side by side with ``p95 ratio (webhook /
resolve)``. For reference, the exported Lua under C Lua 5.1 (lupa, not Karmada's gopher-lua):
the script's load (Karmada compiles it at every call) and the call. No target is asserted: the
figures are for the reader.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import orjson  # noqa: E402
from tests.support.karmada_webhook import interpreter_webhook  # noqa: E402

from fixtures import jobset  # noqa: E402
from workload_map import resolve  # noqa: E402
from workload_map.catalog import get_definition  # noqa: E402
from workload_map.definitions_source import load_definition_set  # noqa: E402
from workload_map.interpret import DefinitionIndex  # noqa: E402
from workload_map.resolve import compile_definition  # noqa: E402

OPERATIONS = (
    "InterpretComponent",
    "InterpretReplica",
    "InterpretHealth",
    "InterpretStatus",
    "AggregateStatus",
    "InterpretDependency",
    "ReviseReplica",
)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _members(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"clusterName": f"member{i}", "status": obj.get("status") or {}} for i in range(3)]


def run(objects: int, rounds: int) -> None:
    objs = [jobset(i) for i in range(objects)]
    sizes = [len(orjson.dumps(o)) for o in objs]
    print(f"{objects} JobSets, JSON {statistics.median(sizes) / 1024:.1f} KiB median")
    karta = get_definition("jobset.x-k8s.io/v1alpha2", "JobSet")
    assert karta is not None, "the catalog has no JobSet definition"
    cd = compile_definition(karta)
    texts = [orjson.dumps(o) for o in objs]
    index = DefinitionIndex(load_definition_set())
    webhook: dict[str, list[float]] = {op: [] for op in OPERATIONS}
    resolved: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, interpreter_webhook(Path(tmp), index) as client:
        for obj in objs[:5]:  # warm up: TLS session, compile caches
            client.call("InterpretComponent", obj)
        for _ in range(rounds):
            for obj, text in zip(objs, texts, strict=True):
                for op in OPERATIONS:
                    kw: dict[str, Any] = {}
                    if op == "AggregateStatus":
                        kw["aggregated_status"] = _members(obj)
                    if op == "ReviseReplica":
                        kw["replicas"] = sum(
                            rj["replicas"] * rj["template"]["spec"].get("parallelism", 1)
                            for rj in obj["spec"]["replicatedJobs"]
                        )
                    started = time.perf_counter()
                    out = client.call(op, obj, **kw)
                    webhook[op].append(time.perf_counter() - started)
                    if not out.successful:
                        sys.exit(f"{op} refused: {out.response['status']}")
                started = time.perf_counter()
                resolve(cd, text)
                resolved.append(time.perf_counter() - started)
    r50, r95 = percentile(resolved, 0.5) * 1e3, percentile(resolved, 0.95) * 1e3
    head = f"{'operation':<22}{'webhook p50':>13}{'p95':>9}{'resolve p50':>14}{'p95':>9}"
    print(f"\n{head}   p95 ratio (webhook / resolve)")
    for op in OPERATIONS:
        w50, w95 = percentile(webhook[op], 0.5) * 1e3, percentile(webhook[op], 0.95) * 1e3
        print(f"{op:<22}{w50:>10.2f} ms{w95:>6.2f} ms{r50:>11.2f} ms{r95:>6.2f} ms   {w95 / r95:.2f}")
    lua_reference(objs[:20], cd)


def lua_reference(objs: list[dict[str, Any]], cd: Any) -> None:
    try:
        from tests.support.karmada_lua import KarmadaLua
    except ImportError:
        print("\n(lupa not installed: no Lua figure)")
        return
    from workload_map.interpret.export import export_customization

    script = export_customization(cd).customization["spec"]["customizations"]["componentResource"][
        "luaScript"
    ]
    k = KarmadaLua(track_depth=False)
    loads: list[float] = []
    calls: list[float] = []
    for obj in objs:
        started = time.perf_counter()
        k.lua.execute(script)  # Karmada compiles and runs the chunk at every call
        loads.append(time.perf_counter() - started)
        arg = k.to_lua(obj)
        started = time.perf_counter()
        k.lua.globals().GetComponents(arg)
        calls.append(time.perf_counter() - started)
    print(
        f"\nexported Lua, GetComponents under C Lua 5.1 (lupa; Karmada runs gopher-lua): "
        f"script load p50 {percentile(loads, 0.5) * 1e3:.2f} ms ({len(script) / 1024:.0f} KiB), "
        f"call p50 {percentile(calls, 0.5) * 1e3:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--objects", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    run(args.objects, args.rounds)


if __name__ == "__main__":
    main()
