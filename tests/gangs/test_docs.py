"""docs/gangs.md's generated sections equal what the code produces now: the catalog types by
scheduler table and the operator-parity counts with the deviations' reasons."""

from __future__ import annotations

import pytest

from tests.gangs.doc_tables import DOC, MARKERS, generated, section


@pytest.mark.parametrize("name", sorted(MARKERS))
def test_generated_section_is_current(name: str) -> None:
    text = DOC.read_text()
    assert section(text, name) == generated()[name], (
        f"docs/gangs.md section {name!r} is stale: run python -m tests.gangs.doc_tables --write"
    )


def test_every_scheduler_has_a_column_and_every_catalog_type_a_row() -> None:
    from workload_map.catalog.registry import DATA_DIR
    from workload_map.kube.schedulers import SCHEDULERS

    header = section(DOC.read_text(), "catalog").splitlines()[0]
    assert all(f" {s} " in header for s in SCHEDULERS)
    rows = section(DOC.read_text(), "catalog").splitlines()[2:]
    assert len(rows) == len(list(DATA_DIR.glob("*.yaml")))
