"""Our Karmada interpreter webhook against Karmada's own fixtures.

Every test case of Karmada's bundled customizations (``$WMAP_SHARED_DIR/karmada``: PyTorchJob,
TFJob, MPIJob, RayCluster, RayJob, RayService, Volcano Job, SparkApplication; v1.18.2) is sent to
the webhook over TLS as Karmada sends it (tests/support/karmada_webhook.py), the answer checked
and applied as Karmada does, and compared with the case's expected output under the rules of
Karmada's own harness (tests/support/karmada_fixtures.py). Each case either agrees, or is listed in
``karmada_deviations.yaml`` with a reason code that docs/multicluster.md explains; the per-type,
per-operation counts in docs/multicluster.md are the ones measured here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.karmada_fixtures import (
    FIXTURES,
    FixtureCase,
    differences,
    fixture_cases,
    karmada_results,
)
from tests.support.karmada_webhook import KarmadaClient, interpreter_webhook
from workload_map.definitions_source import load_definition_set
from workload_map.interpret import DefinitionIndex

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"Karmada fixtures missing ({FIXTURES})"),
]

HERE = Path(__file__).resolve().parent
DOCS = HERE.parents[1] / "docs" / "multicluster.md"
DEVIATIONS: list[dict[str, str]] = yaml.safe_load((HERE / "karmada_deviations.yaml").read_text())
CASES = fixture_cases()
REASONS = {
    "names",
    "undeclared-role",
    "submitter",
    "volcano-replicas",
    "spark-resources",
    "invalid-object",
    "aggregate-worst-member",
    "aggregate-no-members",
    "reflect-whole-status",
    "spark-empty-state",
    "computed-scale-path",
}


def _key(kind: str, operation: str, name: str) -> tuple[str, str, str]:
    return kind, operation, name


def _deviation_keys() -> dict[tuple[str, str, str], str]:
    return {_key(d["type"], d["operation"], d["case"]): d["reason"] for d in DEVIATIONS}


@pytest.fixture(scope="module")
def webhook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KarmadaClient]:
    index = DefinitionIndex(load_definition_set())
    with interpreter_webhook(tmp_path_factory.mktemp("karmada-certs"), index) as client:
        yield client


def _outcome(client: KarmadaClient, case: FixtureCase) -> tuple[bool, list[str]]:
    """(answered, differing keys) of one case."""
    out = client.call(
        case.operation,
        case.obj,
        observed=case.observed,
        replicas=case.input_replicas,
        aggregated_status=case.status_items or None,
    )
    if not out.successful:
        return False, sorted(case.output)
    return True, differences(case, karmada_results(case.operation, out.response, out.patched))


@pytest.fixture(scope="module")
def outcomes(webhook: KarmadaClient) -> dict[tuple[str, str, str], tuple[bool, list[str]]]:
    return {_key(c.type.split("/")[-1], c.operation, c.name): _outcome(webhook, c) for c in CASES}


def test_the_fixtures_are_all_there() -> None:
    kinds = {c.type for c in CASES}
    assert len(kinds) == 8, kinds
    assert len(CASES) >= 183
    # every case names an operation the webhook claims
    assert {c.operation for c in CASES} <= {
        "InterpretReplica",
        "InterpretComponent",
        "ReviseReplica",
        "InterpretStatus",
        "AggregateStatus",
        "InterpretHealth",
        "InterpretDependency",
    }


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_each_case_agrees_or_is_a_documented_deviation(
    case: FixtureCase, outcomes: dict[tuple[str, str, str], tuple[bool, list[str]]]
) -> None:
    key = _key(case.type.split("/")[-1], case.operation, case.name)
    answered, diff = outcomes[key]
    documented = _deviation_keys().get(key)
    if documented is None:
        assert answered and not diff, f"{case.file}: {case.name}: differs from Karmada in {diff}"
    else:
        assert not answered or diff, f"{case.file}: {case.name} now agrees: drop it from the deviations"
        if documented == "invalid-object":
            assert not answered, f"{case.name}: an invalid-object deviation must be refused"


def test_every_deviation_names_a_case_and_a_documented_reason() -> None:
    names = {_key(c.type.split("/")[-1], c.operation, c.name) for c in CASES}
    text = DOCS.read_text()
    for d in DEVIATIONS:
        assert _key(d["type"], d["operation"], d["case"]) in names, d
        assert d["reason"] in REASONS, d
    for reason in REASONS:
        assert f"`{reason}`" in text, f"docs/multicluster.md does not explain the reason {reason}"


def _counts(
    outcomes: dict[tuple[str, str, str], tuple[bool, list[str]]],
) -> dict[tuple[str, str], Counter[str]]:
    out: dict[tuple[str, str], Counter[str]] = {}
    for (kind, op, _), (answered, diff) in outcomes.items():
        out.setdefault((kind, op), Counter())["equal" if answered and not diff else "deviation"] += 1
    return out


def _doc_table() -> dict[tuple[str, str], tuple[int, int]]:
    """The "Parity with Karmada's fixtures" table of docs/multicluster.md: (type, operation) ->
    (equal, documented deviations)."""
    text = DOCS.read_text()
    section = text.split("## Parity with Karmada's fixtures", 1)[1].split("\n## ", 1)[0]
    rows: dict[tuple[str, str], tuple[int, int]] = {}
    for line in section.splitlines():
        m = re.match(r"^\| (\w+) \| (\w+) \| (\d+) \| (\d+) \| (\d+) \|", line)
        if m:
            rows[(m[1], m[2])] = (int(m[4]), int(m[5]))
    return rows


def test_the_parity_table_in_the_docs_is_the_measured_one(
    outcomes: dict[tuple[str, str, str], tuple[bool, list[str]]],
) -> None:
    measured = {k: (c["equal"], c["deviation"]) for k, c in _counts(outcomes).items()}
    assert _doc_table() == measured


def test_a_refusal_names_the_object_and_the_field(webhook: KarmadaClient) -> None:
    # A worker group without its (CRD-required) groupName: refused, naming what is wrong.
    case = next(c for c in CASES if c.name == "RayCluster with worker groups without explicit names")
    out = webhook.call("InterpretComponent", case.obj)
    message: Any = out.response["status"]["message"]
    assert not out.successful and out.response["status"]["code"] == 422
    assert "raycluster-noname" in message and "instanceIdPath" in message


def test_the_reason_table_counts_the_listed_deviations() -> None:
    text = DOCS.read_text()
    listed = Counter(d["reason"] for d in DEVIATIONS)
    for reason in REASONS:
        m = re.search(rf"^\| `{re.escape(reason)}` \| (\d+) \|", text, re.M)
        assert m is not None, reason
        assert int(m[1]) == listed[reason], reason
