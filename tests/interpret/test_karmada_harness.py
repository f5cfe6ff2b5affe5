"""The test harness's Lua is Karmada's: Karmada's own customizations (``customizations.yaml`` next
to the fixtures in ``$WMAP_SHARED_DIR/karmada``, byte copies of Karmada v1.18.2), run through
:class:`tests.support.karmada_lua.KarmadaLua` (the sandbox's libraries, arguments and results
converted as Karmada's ``luavm`` does, its ``kube.*`` helpers written from Karmada's Go source),
give the outputs Karmada's own test cases assert, under the same comparison rules.

This is what makes ``test_lua_agreement.py`` mean something: the Lua it runs our exported
customizations in behaves, on Karmada's own scripts and cases, as Karmada's Lua VM."""

from __future__ import annotations

import dataclasses
import json
from functools import cache
from typing import Any

import pytest
import yaml

from tests.support.karmada_fixtures import FIXTURES, FixtureCase, differences, fixture_cases
from tests.support.karmada_lua import KarmadaLua, run_customization

CASES = fixture_cases()
MISSING = sorted({c.type for c in CASES if not (FIXTURES / c.type / "customizations.yaml").is_file()})

# Karmada's Lua is not ours to commit: tests/data/shared-manifest.json pins each type's
# customizations.yaml (scripts/fetch-test-data fetches it); without them this check cannot run.
pytestmark = pytest.mark.skipif(
    bool(MISSING) or not CASES,
    reason=f"Karmada's customizations.yaml missing from $WMAP_SHARED_DIR/karmada for {MISSING} "
    "(scripts/fetch-test-data)",
)

#: Karmada operation -> the result key its harness reads for it (pkg/util/interpreter/rule.go)
RESULT_KEYS = {
    "InterpretComponent": "components",
    "ReviseReplica": "revised",
    "Retain": "retained",
    "InterpretStatus": "status",
    "AggregateStatus": "aggregatedStatus",
    "InterpretHealth": "healthy",
    "InterpretDependency": "dependencies",
}


@cache
def _customization(type_: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((FIXTURES / type_ / "customizations.yaml").read_text())
    return doc


@pytest.fixture(scope="module")
def lua() -> KarmadaLua:
    return KarmadaLua(track_depth=False)


def _results(lua: KarmadaLua, case: FixtureCase) -> dict[str, Any]:
    out = run_customization(
        lua,
        _customization(case.type),
        case.operation,
        case.obj,
        observed=case.observed,
        replicas=case.input_replicas,
        items=case.status_items,
    )
    if case.operation == "InterpretReplica":
        return {"replica": out["replicas"], "requires": out["replicaRequirements"]}
    return {RESULT_KEYS[case.operation]: out}


def test_the_customizations_are_there() -> None:
    assert len({c.type for c in CASES}) == 8
    for type_ in {c.type for c in CASES}:
        assert _customization(type_)["kind"] == "ResourceInterpreterCustomization"


#: Cases whose expected output depends on the order ``pairs`` visits a table the script built:
#: gopher-lua visits it in insertion order, a C Lua in hash order (the difference
#: test_lua_agreement.py shows our scripts do not depend on). Compared with lists in any order.
PAIRS_ORDER = {
    # `for _, v in pairs(latestTransition) do table.insert(status.conditions, v) end`
    ("MPIJob", "AggregateStatus", "MPIJob with failed cluster"),
}


def _unordered(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _unordered(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_unordered(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_karmadas_lua_gives_karmadas_expected_outputs(lua: KarmadaLua, case: FixtureCase) -> None:
    results = _results(lua, case)
    if (case.type.split("/")[-1], case.operation, case.name) in PAIRS_ORDER:
        case = dataclasses.replace(case, output=_unordered(case.output))
        results = _unordered(results)
    assert differences(case, results) == [], f"{case.file}: {case.name}"
