"""The exported health checks agree with the resolver on every recorded state of real operators
(``$WMAP_SHARED_DIR/upstream-recordings``): the scripts ``wmap export argocd --all
--include-native`` writes (one per group and kind, several versions in one), run under Lua 5.1 as
Argo CD runs them, give :data:`ARGO_HEALTH` of the resolver's primary phase and describe's message,
with C Lua's ``pairs`` order and reversed (gopher-lua iterates in insertion order)."""

from __future__ import annotations

from dataclasses import asdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.helpers import wmap
from tests.support.apiserver_binary import shared_dir
from tests.support.argocd_lua import ArgoCDLua
from tests.support.karmada_lua import DEPTH_LIMIT, karmada_json
from workload_map.catalog import get_definition as _catalog_definition
from workload_map.catalog import list_definitions
from workload_map.interpret.argocd import ARGO_HEALTH, health, health_checks
from workload_map.model import Karta
from workload_map.resolve import compile_definition, resolve_status

pytestmark = pytest.mark.corpus


def get_definition(api_version: str, kind: str) -> Karta:
    karta = _catalog_definition(api_version, kind)
    assert karta is not None, f"no catalog definition for {api_version} {kind}"
    return karta


RECORDINGS = shared_dir() / "upstream-recordings"


def _states() -> list[tuple[Path, dict[str, Any]]]:
    out: list[tuple[Path, dict[str, Any]]] = []
    for path in sorted(RECORDINGS.glob("*/*/*/*.yaml")) if RECORDINGS.is_dir() else []:
        if path.parts[-4] == "flows":  # inputs of the recording runs, not states
            continue
        doc = yaml.safe_load(path.read_text())
        out += [(path, e["object"]) for e in doc.get("events") or [] if e.get("kind") == "STATE"]
    return out


STATES = _states()


@cache
def _scripts() -> dict[tuple[str, str], str]:
    checks = health_checks(compile_definition(k) for k in list_definitions())
    return {(c.group, c.kind): c.script for c in checks}


def _script(obj: dict[str, Any]) -> str:
    group = obj["apiVersion"].rpartition("/")[0]
    return _scripts()[(group, obj["kind"])]


@pytest.mark.skipif(not STATES, reason=f"no recordings in {RECORDINGS}")
@pytest.mark.parametrize("pairs_order", ["lua", "reversed"])
def test_every_recorded_state_agrees_with_the_resolver(pairs_order: str) -> None:
    assert len(STATES) == 253
    seen: dict[str, int] = {}
    deepest = 0
    for path, obj in STATES:
        data = karmada_json(obj)
        cd = get_definition(obj["apiVersion"], obj["kind"])
        lua = ArgoCDLua(pairs_order=pairs_order)
        got = lua.health(_script(obj), data)
        deepest = max(deepest, lua.max_depth)
        want = health(compile_definition(cd), data)
        where = f"{path.relative_to(RECORDINGS)} {obj['metadata']['name']}"
        assert got == asdict(want), where
        assert got["status"] == ARGO_HEALTH[resolve_status(cd, data).primary_phase], where
        seen[got["status"]] = seen.get(got["status"], 0) + 1
    assert seen == {"Healthy": 53, "Progressing": 170, "Degraded": 11, "Suspended": 19}
    assert deepest < DEPTH_LIMIT


def test_a_script_serves_each_version_of_its_kind_and_says_unknown_for_others() -> None:
    scripts = _scripts()
    # 31 catalog definitions; MPIJob, LLMInferenceService and DynamoGraphDeployment have two versions
    assert (len(list_definitions()), len(scripts)) == (31, 28)
    mpi = scripts[("kubeflow.org", "MPIJob")]
    for version in ("v1", "v2beta1"):
        obj: dict[str, Any] = {
            "apiVersion": f"kubeflow.org/{version}",
            "kind": "MPIJob",
            "metadata": {"name": "m"},
            "status": {"conditions": [{"type": "Failed", "status": "True"}]},
        }
        got = ArgoCDLua().health(mpi, obj)
        assert got == asdict(health(compile_definition(get_definition(obj["apiVersion"], "MPIJob")), obj))
        assert got["status"] == "Degraded"
    other = {"apiVersion": "kubeflow.org/v9", "kind": "MPIJob", "metadata": {"name": "m"}}
    assert ArgoCDLua().health(mpi, other) == {
        "status": "Unknown",
        "message": "wmap: no definition for apiVersion kubeflow.org/v9",
    }


@pytest.mark.skipif(not STATES, reason=f"no recordings in {RECORDINGS}")
def test_the_message_is_what_describe_prints(tmp_path: Path) -> None:
    # A failed MPIJob and RayJob, an initializing and a suspended LLMInferenceService, a suspended
    # JobSet: describe's "Phase:" line and its rule lines are the message's parts.
    picked: dict[str, dict[str, Any]] = {}
    for _, obj in STATES:
        want = health(compile_definition(get_definition(obj["apiVersion"], obj["kind"])), obj)
        picked.setdefault(f"{obj['kind']}/{want.status}", obj)
    checked = 0
    keys = ("MPIJob/Degraded", "RayJob/Degraded", "LLMInferenceService/Progressing")
    for key in (*keys, "LLMInferenceService/Suspended", "JobSet/Suspended"):
        obj = picked[key]
        path = tmp_path / "obj.yaml"
        path.write_text(yaml.safe_dump(obj))
        rc, out, err = wmap("describe", "-f", str(path))
        assert rc == 0, err
        message = ArgoCDLua().health(_script(obj), karmada_json(obj))["message"]
        lines = [ln.strip() for ln in out.splitlines()]
        first, *rules = message.split("; ")
        assert any(ln.startswith(first + " (") or ln == first for ln in lines), (key, first, out)
        assert all(rule in lines for rule in rules), (key, rules, out)
        checked += len(rules) + 1
    assert checked >= 6
