"""WorkloadPolicy admission cost: one /mutate-workload AdmissionReview for a ~20 KB JobSet with 5
matching policies, against resolving the same object, measured side by side.

Each round, for every object (bench/fixtures.py jobsets, ~20 KB each): the whole admission
decision as the operator's webhook makes it (AdmissionHandler.review: decode nothing, find the
definition, match 5 policies with namespace selectors and label sources, apply their edits in
order with conflict detection, build the JSONPatch and base64 it) and, interleaved, ``resolve``
of the same object with the same (compiled) definition. Prints p50/p95/max per request for both
and the ratio admission/resolve of the p95s (and medians); rounds are interleaved so machine
load hits both alike.

    python bench/bench_admission.py [--count 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixtures import jobset
from workload_map.definitions_source import DefinitionSet, catalog_entries
from workload_map.operator.certs import MUTATE_WORKLOAD_PATH
from workload_map.operator.policies import PolicyAdmission
from workload_map.operator.webhooks import AdmissionHandler
from workload_map.resolve import compile_definition, resolve
from workload_map.resolve.policy import WorkloadPolicy, parse_policy

NAMESPACE_LABELS = {"team": "ml", "queue": "research", "tier": "gpu"}


def policies() -> list[WorkloadPolicy]:
    """Five policies that all match a JobSet in the ml namespace (the issue's example and four
    more, one of them conflicting with an earlier one)."""
    spec = [
        {
            "order": 10,
            "namespaceSelector": {"matchLabels": {"team": "ml"}},
            "set": {
                "schedulerName": "kai-scheduler",
                "podLabels": {"set": {"kai.scheduler/queue": {"fromNamespaceLabel": "queue"}}},
                "tolerations": {"add": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
                "priorityClassName": {"fromWorkloadLabel": "priority", "default": "train-normal"},
            },
        },
        {"order": 20, "kinds": ["JobSet"], "set": {"nodeSelector": {"set": {"pool": "a100"}}}},
        {
            "order": 30,
            "namespaceSelector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]}]},
            "set": {
                "env": [{"set": {"NCCL_DEBUG": "WARN"}}],
                "podAnnotations": {"set": {"owner": "ml-platform"}},
            },
        },
        {"order": 40, "overwrite": True, "set": {"schedulerName": "kai-scheduler-v2"}},
        {"order": 50, "set": {"labels": {"set": {"cost-center": {"fromNamespaceLabel": "team"}}}}},
    ]
    return [parse_policy({"metadata": {"name": f"p{i}"}, "spec": s}) for i, s in enumerate(spec)]


class Source:
    def __init__(self) -> None:
        self.defs = DefinitionSet(catalog_entries())
        self.policies = policies()

    def current(self) -> tuple[list[WorkloadPolicy], DefinitionSet]:
        return self.policies, self.defs

    def namespace_labels(self, _name: str) -> dict[str, str]:
        return NAMESPACE_LABELS


def review(i: int, obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "request": {
            "uid": f"u{i}",
            "operation": "CREATE",
            "namespace": "ml",
            "kind": {"group": "jobset.x-k8s.io", "version": "v1alpha2", "kind": "JobSet"},
            "object": obj,
        }
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    source = Source()
    handler = AdmissionHandler(None, PolicyAdmission(source))  # type: ignore[arg-type]
    (entry,) = source.defs.for_gvk("jobset.x-k8s.io", "v1alpha2", "JobSet")
    compiled = compile_definition(entry.karta)
    objects = [jobset(i) for i in range(args.count)]
    size = sum(len(orjson.dumps(o)) for o in objects) / len(objects)
    first = handler.review(MUTATE_WORKLOAD_PATH, review(0, objects[0]))["response"]
    assert first["allowed"] and first.get("patchType") == "JSONPatch", first
    admit: list[float] = []
    resolved: list[float] = []
    for _ in range(args.rounds):
        for i, obj in enumerate(objects):
            t = time.perf_counter()
            handler.review(MUTATE_WORKLOAD_PATH, review(i, obj))
            admit.append(time.perf_counter() - t)
            t = time.perf_counter()
            resolve(compiled, obj)
            resolved.append(time.perf_counter() - t)
    ms = 1000.0
    print(
        f"objects: {args.count} JobSets of ~{size / 1024:.1f} KiB of JSON, {len(source.policies)} policies, "
        f"{args.rounds} rounds"
    )
    for name, values in (("admission", admit), ("resolve", resolved)):
        print(
            f"{name:>9}: p50 {statistics.median(values) * ms:.2f} ms  "
            f"p95 {percentile(values, 0.95) * ms:.2f} ms  max {max(values) * ms:.2f} ms"
        )
    p95 = percentile(admit, 0.95) / percentile(resolved, 0.95)
    p50 = statistics.median(admit) / statistics.median(resolved)
    print(f"ratio admission/resolve: p95 {p95:.2f}  p50 {p50:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
