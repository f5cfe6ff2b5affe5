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


HOSTILE_XGBOOST = "hostile-xgboost-jobs"


def hostile_xgboost_yaml() -> str:
    """A Karta for kubeflow.org/v1 XGBoostJob whose replicasPath explodes on every object."""
    return f"""apiVersion: run.ai/v1alpha1
kind: Karta
metadata:
  name: {HOSTILE_XGBOOST}
spec:
  structureDefinition:
    rootComponent:
      name: xgb
      kind: {{group: kubeflow.org, version: v1, kind: XGBoostJob}}
      statusDefinition:
        statusMappings:
          running:
          - byPhase: Running
        phaseDefinition: {{path: .status.phase}}
      specDefinition:
        podTemplateSpecPath: .spec.xgbReplicaSpecs.Master.template
      scaleDefinition:
        replicasPath: '{EXPLOSION}'
"""


def xgboost_job(name: str, namespace: str) -> dict[str, object]:
    """An XGBoostJob as the Kubeflow training operator's CRD accepts it (one master)."""
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "XGBoostJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "xgbReplicaSpecs": {
                "Master": {
                    "replicas": 1,
                    "template": {
                        "spec": {"containers": [{"name": "xgboost", "image": "registry.invalid/x:1"}]}
                    },
                }
            }
        },
    }
