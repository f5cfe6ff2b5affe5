"""The exported Argo CD health checks on Argo CD's own test objects (``$WMAP_SHARED_DIR/argocd``:
the ``health_test.yaml`` cases of its bundled KServe InferenceService and LLMInferenceService,
Knative Service, SparkApplication and CronJob checks), run under Lua 5.1 as Argo CD runs a check
from argocd-cm (tests/support/argocd_lua.py). Every case is in argocd_parity.yaml with Argo CD's
status, ours and, where they differ, why."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.apiserver_binary import shared_dir
from tests.support.argocd_lua import ArgoCDLua
from tests.support.karmada_lua import karmada_json
from workload_map.catalog import get_definition as _catalog_definition
from workload_map.interpret.argocd import health_check
from workload_map.model import Karta
from workload_map.resolve import compile_definition, resolve_status


def get_definition(api_version: str, kind: str) -> Karta:
    karta = _catalog_definition(api_version, kind)
    assert karta is not None, f"no catalog definition for {api_version} {kind}"
    return karta


ARGOCD = shared_dir() / "argocd"
PARITY = Path(__file__).with_name("argocd_parity.yaml")
PREFIX = "argoproj/argo-cd resource_customizations/"
#: The sources the issue names (KServe, Knative, Spark); CronJob is counted on its own.
ISSUE_SOURCES = (
    "serving.kserve.io/InferenceService",
    "serving.kserve.io/LLMInferenceService",
    "serving.knative.dev/Service",
    "sparkoperator.k8s.io/SparkApplication",
)

pytestmark = pytest.mark.skipif(not ARGOCD.is_dir(), reason=f"no Argo CD fixtures in {ARGOCD}")


def _parity() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = yaml.safe_load(PARITY.read_text())["cases"]
    return cases


@cache
def _script(api_version: str, kind: str) -> str:
    return health_check([compile_definition(get_definition(api_version, kind))]).script


def _where(case: dict[str, Any]) -> str:
    source: str = case["source"]
    assert source.startswith(PREFIX) and source.endswith("/health_test.yaml"), source
    return source.removeprefix(PREFIX).removesuffix("/health_test.yaml")


def _run(case: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(Argo CD's expected status, ours, the resolver's phases) for one parity case."""
    folder = ARGOCD / _where(case)
    tests = yaml.safe_load((folder / "health_test.yaml").read_text())["tests"]
    expected = [t["healthStatus"]["status"] for t in tests if t["inputPath"] == case["input"]]
    assert len(expected) == 1, case
    obj = yaml.safe_load((folder / case["input"]).read_text())
    ours = ArgoCDLua().health(_script(obj["apiVersion"], obj["kind"]), karmada_json(obj))
    phases = resolve_status(get_definition(obj["apiVersion"], obj["kind"]), obj).phases
    return expected[0], ours["status"], [p.value for p in phases]


def test_the_parity_file_lists_every_case_of_the_fixtures() -> None:
    listed = {(_where(c), c["input"]) for c in _parity()}
    present = set()
    for test_file in ARGOCD.glob("*/*/health_test.yaml"):
        where = str(test_file.parent.relative_to(ARGOCD))
        present |= {(where, t["inputPath"]) for t in yaml.safe_load(test_file.read_text())["tests"]}
    assert listed == present
    assert len(listed) == len(_parity()) == 34


@pytest.mark.parametrize("case", _parity(), ids=lambda c: f"{_where(c)}:{c['input']}")
def test_each_case_is_what_the_parity_file_says(case: dict[str, Any]) -> None:
    argocd, ours, phases = _run(case)
    assert (argocd, ours, phases) == (case["argocd"], case["wmap"], case["phases"])
    assert ("why" in case) == (argocd != ours), "a difference needs a why, an agreement none"


def test_the_status_equals_argocds_in_at_least_90_percent() -> None:
    per_source: Counter[str] = Counter()
    equal: Counter[str] = Counter()
    for case in _parity():
        per_source[_where(case)] += 1
        equal[_where(case)] += case["argocd"] == case["wmap"]
    assert dict(equal) == {
        "batch/CronJob": 4,
        "serving.knative.dev/Service": 3,
        "serving.kserve.io/InferenceService": 11,
        "serving.kserve.io/LLMInferenceService": 6,
        "sparkoperator.k8s.io/SparkApplication": 7,
    }
    issue = sum(equal[s] for s in ISSUE_SOURCES) / sum(per_source[s] for s in ISSUE_SOURCES)
    assert issue >= 0.9  # 27 of 28
    assert sum(equal.values()) / sum(per_source.values()) >= 0.9  # 31 of 34
