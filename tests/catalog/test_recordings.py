"""Replay of upstream's e2e recordings of real operators (issue #11): the recorded state is the oracle.

``$WMAP_SHARED_DIR/upstream-recordings`` (default ``../shared``; see its SOURCES.md) holds every
STATE event upstream's recorder saw while real operators (JobSet, LWS, KubeRay, Kubeflow, KServe,
Knative, Grove, Dynamo, NIM, Milvus, agent-sandbox, built-in controllers) ran on a kind cluster,
with the phase it judged from the custom resource's own fields. Every event is resolved through
our catalog definition for its apiVersion/kind and **every** matched phase must agree with the
recorded state: our phases are exactly ``{state}``, except the accepted deviations, which are
listed per definition in docs/catalog.md ("Recorded lifecycles") and checked against that table:

- recorded ``Undefined`` where ours says Initializing, Resuming or Suspending (upstream has no such
  mapping for that moment);
- recorded ``Suspended`` where ours says Resuming right after a resume (the controller has not yet
  cleared its Suspended condition) -- our phases then hold both.

Also checked on the recorded objects: the pod count the spec implies for RayCluster, LWS and
Grove, and that every recorded object's resources resolve.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.apiserver_binary import shared_dir
from workload_map.cases import deviation
from workload_map.catalog import get_definition
from workload_map.resolve import resolve

RECORDINGS = shared_dir() / "upstream-recordings"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "catalog.md"

pytestmark = pytest.mark.corpus  # skipped with the summary line of tests/conftest.py when absent


def _files() -> list[Path]:
    if not RECORDINGS.is_dir():
        return []
    return sorted(p for p in RECORDINGS.glob("*/*/*/*.yaml") if p.parts[-4] != "flows")


def _events() -> list[tuple[str, int, dict[str, Any]]]:
    out = []
    for path in _files():
        doc = yaml.safe_load(path.read_text())
        for index, event in enumerate(doc.get("events") or []):
            if event.get("kind") == "STATE":
                out.append((str(path.relative_to(RECORDINGS)), index, event))
    return out


EVENTS = _events()


def _phases(obj: dict[str, Any]) -> tuple[set[str], str]:
    workload = resolve(get_definition(obj["apiVersion"], obj["kind"]), obj)
    return {p.value for p in workload.status.phases}, workload.status.primary_phase.value


def test_the_corpus_is_complete() -> None:
    # SOURCES.md: 49 recordings, 253 STATE events. A partial copy would make the replay weaker.
    assert len(_files()) == 49
    assert len(EVENTS) == 253


@pytest.mark.parametrize(("path", "index", "event"), EVENTS, ids=[f"{p}#{i}" for p, i, _ in EVENTS])
def test_recorded_state_is_ours(path: str, index: int, event: dict[str, Any]) -> None:
    phases, primary = _phases(event["object"])
    recorded = event["state"]
    assert deviation(recorded, phases) != "wrong", (
        f"recorded {recorded}, ours {sorted(phases)} (primary {primary})"
    )


def _documented_deviations() -> Counter[tuple[str, str, str]]:
    """``| definition | recorded | ours | events |`` rows of docs/catalog.md's deviation table."""
    text = DOCS.read_text()
    section = text.split("### Accepted deviations from the recordings", 1)[1].split("\n## ", 1)[0]
    rows: Counter[tuple[str, str, str]] = Counter()
    for line in section.splitlines():
        m = re.match(r"\|\s*`([a-z0-9-]+)`\s*\|\s*(\w+)\s*\|\s*([\w, ]+?)\s*\|\s*(\d+)\s*\|", line)
        if m:
            rows[(m.group(1), m.group(2), m.group(3))] = int(m.group(4))
    return rows


def test_every_accepted_deviation_is_documented_per_definition() -> None:
    seen: Counter[tuple[str, str, str]] = Counter()
    for _path, _index, event in EVENTS:
        obj = event["object"]
        phases, _ = _phases(obj)
        if deviation(event["state"], phases) is not None:
            definition = get_definition(obj["apiVersion"], obj["kind"]).metadata.name
            ours = ", ".join(sorted(phases - {event["state"]}))
            seen[(definition, event["state"], ours)] += 1
    assert dict(seen) == dict(_documented_deviations())


def _spec_pods(obj: dict[str, Any]) -> int | None:
    """Pods the spec implies, computed here from the frameworks' documented semantics
    (framework-shapes.md): RayCluster head + replicas x numOfHosts per group, LWS replicas x size,
    Grove replicas x the cliques' replicas."""
    spec = obj.get("spec") or {}
    kind = obj["kind"]
    if kind == "RayCluster":
        groups = spec.get("workerGroupSpecs") or []
        return 1 + sum(
            0
            if g.get("suspend")
            else min(
                max(g.get("replicas", 0) or 0, g.get("minReplicas", 0) or 0), g.get("maxReplicas", 2**31 - 1)
            )
            * (g.get("numOfHosts") or 1)
            for g in groups
        )
    if kind == "LeaderWorkerSet":
        return int(spec.get("replicas", 1)) * int((spec.get("leaderWorkerTemplate") or {}).get("size") or 1)
    if kind == "PodCliqueSet":
        cliques = (spec.get("template") or {}).get("cliques") or []
        return int(spec.get("replicas", 1)) * sum(
            int((c.get("spec") or {}).get("replicas", 1)) for c in cliques
        )
    return None


SIZED = [(p, i, e) for p, i, e in EVENTS if _spec_pods(e["object"]) is not None]


def test_sized_recordings_exist() -> None:
    kinds = {e["object"]["kind"] for _, _, e in SIZED}
    assert kinds == {"RayCluster", "LeaderWorkerSet", "PodCliqueSet"}


@pytest.mark.parametrize(("path", "index", "event"), SIZED, ids=[f"{p}#{i}" for p, i, _ in SIZED])
def test_recorded_objects_give_the_pods_their_spec_implies(
    path: str, index: int, event: dict[str, Any]
) -> None:
    obj = event["object"]
    workload = resolve(get_definition(obj["apiVersion"], obj["kind"]), obj)
    assert workload.desired_pods == _spec_pods(obj)


def _raycluster() -> dict[str, Any]:
    for path, _index, event in EVENTS:
        if path.startswith("kuberay/") and event["object"]["kind"] == "RayCluster":
            return dict(event["object"])
    raise AssertionError("no recorded RayCluster")


@pytest.mark.parametrize("max_replicas", [None, 2147483647, 5])
@pytest.mark.parametrize("hosts", [1, 2, 4])
def test_a_recorded_raycluster_with_multi_host_groups_resolves(max_replicas: int | None, hosts: int) -> None:
    # KubeRay writes maxReplicas 2147483647 by default (framework-shapes-extra.md): with numOfHosts > 1
    # the product must not make the object unreadable.
    obj = _raycluster()
    template = obj["spec"]["headGroupSpec"]["template"]
    group: dict[str, Any] = {"groupName": "gpu", "replicas": 3, "minReplicas": 1, "numOfHosts": hosts}
    if max_replicas is not None:
        group["maxReplicas"] = max_replicas
    group["template"] = template
    obj = {**obj, "spec": {**obj["spec"], "workerGroupSpecs": [group]}}
    workload = resolve(get_definition(obj["apiVersion"], obj["kind"]), obj)
    assert workload.desired_pods == _spec_pods(obj)
    (instance,) = workload.components["worker"].instances
    assert instance.scale.max_replicas is not None and instance.scale.max_replicas <= 2**31 - 1
