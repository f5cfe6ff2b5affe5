"""A small CRD and a Karta definition for it, correct as written; tests break them one way at a time."""

from __future__ import annotations

import copy
from typing import Any

STR: dict[str, Any] = {"type": "string"}
CONTAINER: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": STR,
        "image": STR,
        "resources": {
            "type": "object",
            "properties": {
                "requests": {"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": True}},
                "limits": {"type": "object", "additionalProperties": {"x-kubernetes-int-or-string": True}},
            },
        },
    },
}
POD_TEMPLATE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["containers"],
            "properties": {"containers": {"type": "array", "items": CONTAINER}, "schedulerName": STR},
        },
    },
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": STR,
        "kind": STR,
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["template"],
            "properties": {
                "replicas": {"type": "integer", "minimum": 0},
                "size": {"x-kubernetes-int-or-string": True},
                "name": STR,
                "suspend": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["Active", "Paused"]},
                "template": POD_TEMPLATE,
                "labels": {"type": "object", "additionalProperties": STR},
                "worker": {
                    "type": "object",
                    "properties": {
                        "containers": {"type": "array", "items": CONTAINER},
                        "main": CONTAINER,
                        "resources": CONTAINER["properties"]["resources"],
                        "schedulerName": STR,
                        "replicas": {"type": "integer"},
                    },
                },
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "phase": {"type": "string", "enum": ["Pending", "Running", "Done", "Broken"]},
                "count": {"type": "integer"},
                "conditions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["type", "status"],
                        "properties": {
                            "type": {"type": "string", "enum": ["Ready", "Progressing"]},
                            "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                            "reason": STR,
                        },
                    },
                },
            },
        },
    },
}

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": SCHEMA}}],
    },
}

DEFINITION: dict[str, Any] = {
    "apiVersion": "run.ai/v1alpha1",
    "kind": "Karta",
    "metadata": {"name": "example-com-widget-v1"},
    "spec": {
        "structureDefinition": {
            "rootComponent": {
                "name": "widget",
                "kind": {"group": "example.com", "version": "v1", "kind": "Widget"},
                "specDefinition": {"podTemplateSpecPath": ".spec.template"},
                "scaleDefinition": {"replicasPath": ".spec.replicas // 1"},
                "statusDefinition": {
                    "phaseDefinition": {"path": ".status.phase"},
                    "conditionsDefinition": {
                        "path": ".status.conditions",
                        "typeFieldName": "type",
                        "statusFieldName": "status",
                    },
                    "statusMappings": {
                        "initializing": [{"byPhase": "Pending"}],
                        "running": [{"byConditions": [{"type": "Ready", "status": "True"}]}],
                        "completed": [
                            {
                                "byExpression": {
                                    "expression": "(.status.count // 0) > 0",
                                    "expectedResult": "true",
                                }
                            }
                        ],
                        "failed": [
                            {"byConditions": [{"type": "Ready", "status": "False", "reason": "Crashed"}]}
                        ],
                    },
                },
                "suspendDefinition": {
                    "suspendActions": [
                        {"path": ".spec.suspend", "value": "true"},
                        {"path": ".spec.mode", "value": '"Paused"'},
                    ],
                    "resumeActions": [{"path": ".spec.suspend", "value": "false"}],
                },
            },
            "childComponents": [
                {
                    "name": "worker",
                    "ownerRef": "widget",
                    "specDefinition": {
                        "fragmentedPodSpecDefinition": {
                            "containersPath": ".spec.worker.containers",
                            "resourcesPath": ".spec.worker.resources",
                            "schedulerNamePath": ".spec.worker.schedulerName",
                            "labelsPath": ".spec.labels",
                        }
                    },
                    "scaleDefinition": {
                        "replicasPath": ".spec.worker.replicas // 1",
                        "maxReplicasPath": ".spec.size",
                    },
                    "podSelector": {
                        "componentTypeSelector": {
                            "keyPath": '.metadata.labels["example.com/role"]',
                            "value": "worker",
                        }
                    },
                }
            ],
        },
        "optimizationInstructions": {
            "gangScheduling": {
                "podGroups": [
                    {
                        "name": "all",
                        "members": [
                            {
                                "componentName": "widget",
                                "groupByKeyPaths": ['.metadata.labels["example.com/name"]'],
                                "filters": [
                                    '(.spec.containers[0].resources.limits["nvidia.com/gpu"] // 0) | tonumber > 0'  # noqa: E501
                                ],
                            }
                        ],
                    }
                ]
            }
        },
    },
}


def definition() -> dict[str, Any]:
    return copy.deepcopy(DEFINITION)


def root(d: dict[str, Any]) -> dict[str, Any]:
    r: dict[str, Any] = d["spec"]["structureDefinition"]["rootComponent"]
    return r


def worker(d: dict[str, Any]) -> dict[str, Any]:
    w: dict[str, Any] = d["spec"]["structureDefinition"]["childComponents"][0]
    return w
