"""The gang plan, rendered per scheduler, against the operators' own gang-scheduling code.

``operator-parity.yaml`` holds cases translated from KubeRay's batch-scheduler plugins (Volcano,
scheduler-plugins, KAI, the Workload API), the Kubeflow training operator (PyTorchJob, TFJob,
XGBoostJob, JAXJob, MPIJob), the MPI operator, Kubeflow Trainer's podGroupPolicy, the Spark
operator's Volcano scheduler and JobSet's Workload API examples: inputs and asserted values only,
each naming its source. Every case is equal to the operator, or differs exactly as its documented
deviation says (a deviation that stops holding fails too: it must then be dropped or updated).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.gangs.parity import load_cases, outcome

CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[c["source"].split(" ", 1)[-1] for c in CASES])
def test_case_equals_the_operator_or_its_documented_deviation(case: dict[str, Any]) -> None:
    _, problems = outcome(case)
    assert not problems, f"{case['source']}: {problems}"


def test_every_source_the_issue_names_is_covered() -> None:
    """Dropping a source's cases (or all of one scheduler's) fails here."""
    by_operator: dict[str, set[str]] = {}
    kinds: set[str] = set()
    for c in CASES:
        by_operator.setdefault(c["operator"], set()).add(c["scheduler"])
        if c["operator"] == "training-operator":
            kinds.add(c["workload"]["kind"])
    assert by_operator["kuberay"] >= {"volcano", "coscheduling", "kai", "workload-api"}
    assert by_operator["training-operator"] >= {"volcano", "coscheduling"}
    assert kinds >= {"PyTorchJob", "TFJob", "XGBoostJob", "JAXJob", "MPIJob"}
    assert by_operator["mpi-operator"] >= {"volcano", "coscheduling"}
    assert by_operator["trainer"] >= {"volcano", "coscheduling"}
    assert by_operator["spark-operator"] >= {"volcano"}
    assert by_operator["jobset"] >= {"workload-api"}


def test_unique_sources() -> None:
    sources = [c["source"] for c in CASES]
    assert len(sources) == len(set(sources))
