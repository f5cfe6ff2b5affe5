"""Karmada's resource-interpreter fixtures (``$WMAP_SHARED_DIR/karmada``) read as test cases, and
the comparison rules of Karmada's own harness (``thirdparty_test.go``, described in the fixtures'
README): result keys per operation, components and dependencies compared after sorting, resource
quantities compared by value, ``{{EXCLUDE}}`` fields dropped from both sides of whole objects, nil
and empty maps or lists equal (apimachinery's ``Equalities.DeepEqual``)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.support.apiserver_binary import shared_dir
from workload_map.resolve.quantity import parse_quantity

FIXTURES = shared_dir() / "karmada" / "thirdparty"
EXCLUDE = "{{EXCLUDE}}"


@dataclass(frozen=True)
class FixtureCase:
    """One document of ``testdata/<operation>-test.yaml``."""

    type: str  # group/version/Kind
    file: str
    name: str
    operation: str
    desired: dict[str, Any] | None
    observed: dict[str, Any] | None
    #: None when the case gives none (Go's nil slice: Lua nil)
    status_items: list[dict[str, Any]] | None
    input_replicas: int
    output: dict[str, Any]

    @property
    def obj(self) -> dict[str, Any]:
        """The object the operation reads (Karmada's ``getObjectOrError``: the one given)."""
        obj = self.desired if self.desired is not None else self.observed
        assert obj is not None, self.name
        return obj

    @property
    def id(self) -> str:
        return f"{self.type.split('/')[-1]}:{self.operation}:{self.name}"


def fixture_cases() -> list[FixtureCase]:
    out: list[FixtureCase] = []
    if not FIXTURES.is_dir():
        return out
    for path in sorted(FIXTURES.glob("*/*/*/testdata/*-test.yaml")):
        rel = path.relative_to(FIXTURES)
        group, version, kind = rel.parts[:3]
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc:
                continue
            out.append(
                FixtureCase(
                    type=f"{group}/{version}/{kind}",
                    file=str(rel),
                    name=doc["name"],
                    operation=doc["operation"],
                    desired=doc.get("desiredObj"),
                    observed=doc.get("observedObj"),
                    status_items=None if doc.get("statusItems") is None else list(doc["statusItems"]),
                    input_replicas=int(doc.get("inputReplicas") or 0),
                    output=dict(doc.get("output") or {}),
                )
            )
    return out


def api_version(case: FixtureCase) -> tuple[str, str]:
    group, version, kind = case.type.split("/")
    return f"{group}/{version}", kind


# --- Karmada's comparison ---------------------------------------------------------------------


def _empty(value: Any) -> bool:
    return value is None or value == {} or value == []


def normalize(value: Any, quantities: bool = False) -> Any:
    """A value in the form Karmada's typed comparison sees: nil and empty maps/lists dropped from
    objects, and with ``quantities`` every ``resourceRequest`` quantity as its exact value."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if quantities and k == "resourceRequest" and isinstance(v, dict):
                v = {name: parse_quantity(q) for name, q in v.items()}
            else:
                v = normalize(v, quantities)
            if not _empty(v):
                out[k] = v
        return out
    if isinstance(value, list):
        return [normalize(v, quantities) for v in value]
    return value


def without_excluded(expected: Any, actual: Any) -> tuple[Any, Any]:
    """Both objects without the fields ``expected`` marks ``{{EXCLUDE}}`` (same paths)."""
    paths: list[tuple[Any, ...]] = []

    def collect(value: Any, path: tuple[Any, ...]) -> Any:
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if v == EXCLUDE:
                    paths.append((*path, k))
                    continue
                out[k] = collect(v, (*path, k))
            return out
        if isinstance(value, list):
            return [collect(v, (*path, i)) for i, v in enumerate(value)]
        return value

    def drop(value: Any, path: tuple[Any, ...]) -> Any:
        if isinstance(value, dict):
            return {k: drop(v, (*path, k)) for k, v in value.items() if (*path, k) not in paths}
        if isinstance(value, list):
            return [drop(v, (*path, i)) for i, v in enumerate(value)]
        return value

    exp = collect(copy.deepcopy(expected), ())
    return exp, drop(copy.deepcopy(actual), ())


def _sorted_by(items: Any, *keys: str) -> Any:
    if not isinstance(items, list):
        return items
    return sorted(items, key=lambda d: tuple(str(d.get(k, "")) for k in keys))


def comparable(key: str, expected: Any, actual: Any) -> tuple[Any, Any]:
    """(expected, actual) of one result key, in the form Karmada's harness compares them: typed
    results (components, requirements, dependencies) as normalized structs, whole objects as
    they are (less ``{{EXCLUDE}}`` fields), everything else as JSON."""
    if key == "components":
        return (
            normalize(_sorted_by(expected, "name"), True),
            normalize(_sorted_by(actual, "name"), True),
        )
    if key == "dependencies":
        order = ("apiVersion", "kind", "namespace", "name")
        return normalize(_sorted_by(expected, *order)), normalize(_sorted_by(actual, *order))
    if key == "requires":
        return normalize(expected, True), normalize(actual, True)
    if key == "aggregatedStatus":
        # Karmada writes only the status of the aggregated object (UpdateStatus in
        # pkg/controllers/status/common.go): its Ray scripts drop .spec, which changes nothing.
        exp, act = without_excluded(expected, actual)
        return _status(exp), _status(act)
    if key in ("revised", "retained"):
        return without_excluded(expected, actual)
    return expected, actual


def _status(obj: Any) -> Any:
    return obj.get("status") if isinstance(obj, dict) else obj


def cases_by_type() -> Iterator[tuple[str, list[FixtureCase]]]:
    cases = fixture_cases()
    for t in sorted({c.type for c in cases}):
        yield t, [c for c in cases if c.type == t]


def fixtures_present() -> bool:
    return Path(FIXTURES).is_dir()


# --- our answers, as Karmada's harness names them ---------------------------------------------


def karmada_results(
    operation: str, response: dict[str, Any], patched: dict[str, Any] | None
) -> dict[str, Any]:
    """The result keys Karmada's harness reads for ``operation`` (``pkg/util/interpreter/rule.go``),
    from a webhook response and the object with its patch applied. ``requires`` leaves out the
    namespace: Karmada's detector sets it itself (``applyReplicaInterpretation``), and its Lua
    fixtures never carry it."""
    if operation == "InterpretReplica":
        requires = {k: v for k, v in (response.get("replicaRequirements") or {}).items() if k != "namespace"}
        return {"replica": response.get("replicas"), "requires": requires}
    if operation == "InterpretComponent":
        return {"components": response.get("components") or []}
    if operation == "ReviseReplica":
        return {"revised": patched}
    if operation == "Retain":
        return {"retained": patched}
    if operation == "AggregateStatus":
        return {"aggregatedStatus": patched}
    if operation == "InterpretStatus":
        return {"status": response.get("rawStatus")}
    if operation == "InterpretHealth":
        return {"healthy": response.get("healthy")}
    if operation == "InterpretDependency":
        return {"dependencies": response.get("dependencies") or []}
    raise ValueError(operation)


def differences(case: FixtureCase, results: dict[str, Any]) -> list[str]:
    """The output keys whose expected and actual values differ under Karmada's rules (a missing
    result key counts as a difference, as in Karmada's harness)."""
    out = []
    for key, expected in case.output.items():
        if key not in results:
            out.append(key)
            continue
        exp, act = comparable(key, expected, results[key])
        if exp != act:
            out.append(key)
    return out
