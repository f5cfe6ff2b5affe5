"""The seed example through the catalog's JobSet definition (skipped until the catalog has it).

The core tests build their own JobSet definition (defs.py); this one only checks that the
catalog's file gives the same numbers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.resolve.defs import jobset
from workload_map import resolve
from workload_map.model.definition import Karta, ResourceStatus

CATALOG = Path(__file__).resolve().parents[2] / "src/workload_map/catalog/data"
JOBSET = CATALOG / "jobset-x-k8s-io-jobset-v1alpha2.yaml"


@pytest.mark.skipif(not JOBSET.exists(), reason="catalog JobSet definition not written yet")
def test_catalog_jobset_seed_example() -> None:
    karta = Karta.model_validate(yaml.safe_load(JOBSET.read_text()))
    w = resolve(karta, jobset())
    rj = w.components["replicatedjob"]
    assert rj.instance_ids == ("leader", "workers")
    assert [i.desired_replicas for i in rj.instances] == [1, 2]
    assert w.resources.gpus == 12
    assert w.desired_pods == 3
    running = jobset(
        {
            "replicatedJobsStatus": [
                {"name": "leader", "active": 1, "ready": 1, "failed": 0},
                {"name": "workers", "active": 2, "ready": 2, "failed": 0},
            ]
        }
    )
    assert resolve(karta, running).primary_phase is ResourceStatus.RUNNING


@pytest.mark.parametrize("path", sorted(CATALOG.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_catalog_definition_compiles(path: Path) -> None:
    from workload_map import compile_definition

    for doc in yaml.safe_load_all(path.read_text()):
        compiled = compile_definition(Karta.model_validate(doc))
        assert compiled.root_name in compiled.components
