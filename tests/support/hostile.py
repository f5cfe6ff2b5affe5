"""A hostile definition for isolation tests and the fault benchmark: the catalog's JobSet definition
whose replicasPath explodes (the issue's g(40) recursion) on every workload. It passes validation
and the safety rules; only the engine's cost model stops each evaluation."""

from __future__ import annotations

from pathlib import Path

import workload_map.catalog

NAME = "hostile-jobsets"
EXPLOSION = "def g(n): if n > 0 then g(n-1), g(n-1) else . end; [g(40)] | length"
_REPLICAS = """        replicasPath: >-
          .spec.replicatedJobs[]
          | (.replicas // 1) * ([(.template.spec.parallelism // 1),
                                 (.template.spec.completions // (.template.spec.parallelism // 1))] | min)
"""


def hostile_jobset_yaml() -> str:
    catalog = Path(workload_map.catalog.__file__).parent / "data" / "jobset-x-k8s-io-jobset-v1alpha2.yaml"
    text = catalog.read_text()
    assert _REPLICAS in text, "the catalog's JobSet replicasPath changed: update tests/support/hostile.py"
    text = text.replace(_REPLICAS, f"        replicasPath: '.spec.replicatedJobs[] | ({EXPLOSION})'\n")
    return text.replace("name: jobset-x-k8s-io-jobset-v1alpha2", f"name: {NAME}", 1)


def write_hostile_jobset(directory: Path) -> Path:
    path = directory / f"{NAME}.yaml"
    path.write_text(hostile_jobset_yaml())
    return path
