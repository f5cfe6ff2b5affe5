"""A small definition for the interpreter's unit tests: a ``Widget`` with a fixed leader pod
(``replicasPath: "1"``) and named worker groups whose ``replicas`` are plain, writable paths."""

from __future__ import annotations

import copy
from typing import Any

from tests.resolve.defs import karta
from workload_map.model.definition import Karta

WIDGET = """
metadata: {name: widgets-example-com-v1}
spec:
  structureDefinition:
    rootComponent:
      name: widget
      kind: {group: example.com, version: v1, kind: Widget}
      statusDefinition:
        conditionsDefinition: {path: .status.conditions}
        statusMappings:
          initializing:
          - byExpression: {expression: '(.status.conditions // []) | length == 0', expectedResult: "true"}
          running:
          - byConditions: [{type: Running, status: "True"}]
          completed:
          - byConditions: [{type: Done, status: "True"}]
          failed:
          - byConditions: [{type: Failed, status: "True"}]
          degraded:
          - byConditions: [{type: Running, status: "True"}, {type: Degraded, status: "True"}]
          suspended:
          - byExpression: {expression: '.spec.suspend // false', expectedResult: "true"}
    childComponents:
    - name: leader
      ownerRef: widget
      specDefinition: {podTemplateSpecPath: .spec.leader.template}
      scaleDefinition: {replicasPath: "1"}
    - name: workers
      ownerRef: widget
      instanceIdPath: '.spec.groups[].name'
      specDefinition: {podTemplateSpecPath: '.spec.groups[].template'}
      scaleDefinition: {replicasPath: '.spec.groups[].replicas'}
"""


def widget_definition() -> Karta:
    return karta(WIDGET)


def template(cpu: str = "1", memory: str = "1Gi", **spec: Any) -> dict[str, Any]:
    return {
        "spec": {
            "containers": [
                {"name": "main", "image": "x", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
            ],
            **spec,
        }
    }


def widget(groups: list[tuple[str, int]], **extra: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ml"},
        "spec": {
            "leader": {"template": template("2", "4Gi")},
            "groups": [{"name": n, "replicas": r, "template": template()} for n, r in groups],
        },
    }
    obj.update(copy.deepcopy(extra))
    return obj


SCALED = """
metadata: {name: scaleds-example-com-v1}
spec:
  structureDefinition:
    rootComponent:
      name: scaled
      kind: {group: example.com, version: v1, kind: Scaled}
      specDefinition: {podTemplateSpecPath: .spec.template}
      scaleDefinition: {replicasPath: .spec.replicas}
      statusDefinition:
        phaseDefinition: {path: .status.phase}
        statusMappings:
          running:
          - byPhase: Running
          failed:
          - byPhase: Failed
"""


def scaled_definition() -> Karta:
    """One pod template whose count is a plain, writable path (no instances)."""
    return karta(SCALED)


def scaled(replicas: int | None, phase: str | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Scaled",
        "metadata": {"name": "s", "namespace": "ml"},
        "spec": {"template": template("250m", "512Mi")},
    }
    if replicas is not None:
        obj["spec"]["replicas"] = replicas
    if phase is not None:
        obj["status"] = {"phase": phase}
    return obj
