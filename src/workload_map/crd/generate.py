"""Generate the ``kartas.run.ai`` CustomResourceDefinition from the pydantic definition model.

One model, one schema: :func:`build_crd` walks :class:`~workload_map.model.definition.KartaSpec`
and every model class it references, and emits an ``openAPIV3Schema`` with the camelCase wire
names, the descriptions of :mod:`.descriptions`, and the constraints upstream's CRD carries
(upstream-spec 2.1-2.10): required keys, list-map keys, sets, ``minItems`` on suspend actions, the
two CEL rules on ``componentTypeSelector`` and the defaults of the four condition field names.

The shipped file ``kartas.run.ai.yaml`` is this output; ``python -m workload_map.crd`` rewrites
it and ``tests/crd`` fails when it drifts from the model.
"""

from __future__ import annotations

import types
import typing
from enum import Enum
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from workload_map.crd.descriptions import CLASS_DOCS, FIELD_DOCS
from workload_map.model.definition import (
    KARTA_GROUP,
    KARTA_KIND,
    KARTA_VERSION,
    ComponentTypeSelector,
    GroupVersionKind,
    KartaSpec,
)

Schema = dict[str, Any]

CRD_NAME = f"kartas.{KARTA_GROUP}"
PLURAL = "kartas"
SINGULAR = "karta"
SHORT_NAMES = ("krt",)
CRD_FILE = Path(__file__).with_name(f"{CRD_NAME}.yaml")

HEADER = (
    "# Generated from workload_map.model.definition by `python -m workload_map.crd --write`.\n"
    "# Do not edit by hand: tests/crd fails when this file and the model disagree.\n"
)

#: Fields the CRD requires although the Python model gives them a default. The model keeps
#: defaults so that the validator (not the parser) reports a missing value with upstream's text.
EXTRA_REQUIRED: dict[str, tuple[str, ...]] = {
    "ComponentDefinition": ("name",),
    # "In the CRD schema all three keys are required strings when kind is present."
    "GroupVersionKind": ("group", "version", "kind"),
    "StatusDefinition": ("status_mappings",),
    "SuspendDefinition": ("suspend_actions", "resume_actions"),
    "PodGroupAlpha": ("members",),
}

#: Python field names whose defaults must not become CRD defaults.
NO_DEFAULT: frozenset[tuple[str, str]] = frozenset({("GroupVersionKind", "group")})

#: Arrays that are list-maps (``x-kubernetes-list-type: map``): (class, field) -> key fields.
LIST_MAPS: dict[tuple[str, str], tuple[str, ...]] = {
    ("StructureDefinition", "child_components"): ("name",),
    # Upstream keys additionalChildKinds by kind only (spec 8 item 4): kept for wire compatibility.
    ("StructureDefinition", "additional_child_kinds"): ("kind",),
    ("GangScheduling", "pod_groups"): ("name",),
    ("PodGroupAlpha", "members"): ("componentName",),
    ("PodGroup", "sub_groups"): ("componentName",),
}

#: Arrays of scalars that are sets (no duplicates).
LIST_SETS: frozenset[tuple[str, str]] = frozenset(
    {("PodGroupMember", "group_by_key_paths"), ("PodGroupMember", "filters")}
)

#: Extra keywords per (class, field).
FIELD_EXTRAS: dict[tuple[str, str], Schema] = {
    ("SuspendDefinition", "suspend_actions"): {"minItems": 1},
    ("SuspendDefinition", "resume_actions"): {"minItems": 1},
    ("ComponentTypeSelector", "key_path"): {"minLength": 1},
    ("ComponentTypeSelector", "match_labels"): {"minProperties": 1},
}

#: CEL rules per class (``x-kubernetes-validations``). Not enforced before Kubernetes 1.25; the
#: validating webhook repeats both rules with the validator's messages.
CLASS_RULES: dict[str, list[dict[str, str]]] = {
    ComponentTypeSelector.__name__: [
        {
            "rule": "has(self.keyPath) || has(self.matchLabels)",
            "message": "at least one of keyPath or matchLabels must be set",
        },
        {"rule": "!has(self.value) || has(self.keyPath)", "message": "value requires keyPath"},
    ],
}


def _wire_name(model: type[BaseModel], field: str) -> str:
    info = model.model_fields[field]
    return info.alias or field


def _unwrap_optional(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) != 1:
            raise TypeError(f"unsupported union {annotation!r}")
        return args[0]
    return annotation


def _type_schema(annotation: Any, owner: str, field: str) -> Schema:
    annotation = _unwrap_optional(annotation)
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return model_schema(annotation)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return {"type": "string", "enum": [m.value for m in annotation]}
    if annotation is str:
        return {"type": "string"}
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is int:
        return {"type": "integer"}
    if origin in (tuple, list):
        args = typing.get_args(annotation)
        item = args[0]
        schema: Schema = {"type": "array", "items": _type_schema(item, owner, field)}
        keys = LIST_MAPS.get((owner, field))
        if keys is not None:
            schema["x-kubernetes-list-type"] = "map"
            schema["x-kubernetes-list-map-keys"] = list(keys)
        elif (owner, field) in LIST_SETS:
            schema["x-kubernetes-list-type"] = "set"
        return schema
    if origin is dict:
        _key, value = typing.get_args(annotation)
        return {"type": "object", "additionalProperties": _type_schema(value, owner, field)}
    raise TypeError(f"{owner}.{field}: no CRD schema for {annotation!r}")


def model_schema(model: type[BaseModel]) -> Schema:
    """The structural schema of one model class (recursively)."""
    name = model.__name__
    properties: Schema = {}
    required: list[str] = []
    extra_required = EXTRA_REQUIRED.get(name, ())
    for field, info in model.model_fields.items():
        wire = _wire_name(model, field)
        prop = _type_schema(info.annotation, name, field)
        doc = FIELD_DOCS.get((name, field))
        if doc is None:
            raise KeyError(f"no description for {name}.{field} (add it to crd/descriptions.py)")
        # A nested model's own description comes first in its schema; the field's text wins.
        prop = {"description": doc, **{k: v for k, v in prop.items() if k != "description"}}
        prop.update(FIELD_EXTRAS.get((name, field), {}))
        if info.is_required() or field in extra_required:
            required.append(wire)
        elif (
            isinstance(info.default, str)
            and info.default
            and (name, field) not in NO_DEFAULT
            and field not in extra_required
        ):
            prop["default"] = info.default
        properties[wire] = prop
    schema: Schema = {"type": "object"}
    if name in CLASS_DOCS:
        schema["description"] = CLASS_DOCS[name]
    schema["properties"] = properties
    if required:
        schema["required"] = required
    if name in CLASS_RULES:
        schema["x-kubernetes-validations"] = [dict(r) for r in CLASS_RULES[name]]
    return schema


def _conditions_schema() -> Schema:
    return {
        "type": "array",
        "description": "Standard conditions written by the operator: Validated, CRDExists and Ready.",
        "items": {
            "type": "object",
            "description": "A metav1.Condition.",
            "properties": {
                "type": {"type": "string", "maxLength": 316, "description": "Condition type."},
                "status": {
                    "type": "string",
                    "enum": ["True", "False", "Unknown"],
                    "description": "True, False or Unknown.",
                },
                "observedGeneration": {
                    "type": "integer",
                    "format": "int64",
                    "minimum": 0,
                    "description": "The .metadata.generation the condition was set for.",
                },
                "lastTransitionTime": {
                    "type": "string",
                    "format": "date-time",
                    "description": "When the status last changed.",
                },
                "reason": {
                    "type": "string",
                    "maxLength": 1024,
                    "minLength": 1,
                    "description": "Machine-readable CamelCase reason.",
                },
                "message": {
                    "type": "string",
                    "maxLength": 32768,
                    "description": "Human-readable details.",
                },
            },
            "required": ["type", "status", "lastTransitionTime", "reason", "message"],
        },
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
    }


def build_crd() -> dict[str, Any]:
    """The whole CRD document (apiextensions.k8s.io/v1)."""
    spec = model_schema(KartaSpec)
    spec["description"] = CLASS_DOCS["KartaSpec"]
    status: Schema = {
        "type": "object",
        "description": "Written by the operator.",
        "properties": {
            "observedGeneration": {
                "type": "integer",
                "format": "int64",
                "description": "The .metadata.generation the operator last reconciled.",
            },
            "conditions": _conditions_schema(),
        },
    }
    root: Schema = {
        "type": "object",
        "description": (
            "Karta: a declarative map of a workload type (where its pod templates, replicas, status, "
            "suspend switch and gang rules live), keyed by the root component's group, version and kind."
        ),
        "properties": {
            "apiVersion": {"type": "string", "description": "APIVersion of this object."},
            "kind": {"type": "string", "description": "Kind of this object."},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": status,
        },
        "required": ["spec"],
    }
    root_kind = "." + ".".join(
        ["spec", "structureDefinition", "rootComponent", "kind", _wire_name(GroupVersionKind, "kind")]
    )
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": KARTA_GROUP,
            "names": {
                "kind": KARTA_KIND,
                "listKind": f"{KARTA_KIND}List",
                "plural": PLURAL,
                "singular": SINGULAR,
                "shortNames": list(SHORT_NAMES),
            },
            "scope": "Cluster",
            "versions": [
                {
                    "name": KARTA_VERSION,
                    "served": True,
                    "storage": True,
                    "additionalPrinterColumns": [
                        {"name": "Framework", "type": "string", "jsonPath": root_kind},
                        {
                            "name": "Root Component",
                            "type": "string",
                            "jsonPath": ".spec.structureDefinition.rootComponent.name",
                        },
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                    "schema": {"openAPIV3Schema": root},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


class _Dumper(yaml.SafeDumper):
    pass


def _str_representer(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_representer)


def render_crd() -> str:
    """The CRD as YAML text, exactly as shipped."""
    body = yaml.dump(build_crd(), Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=100)
    return HEADER + body


def shipped_crd_text() -> str:
    """The packaged ``kartas.run.ai.yaml``."""
    return CRD_FILE.read_text(encoding="utf-8")


def shipped_crd() -> dict[str, Any]:
    doc = yaml.safe_load(shipped_crd_text())
    if not isinstance(doc, dict):
        raise ValueError(f"{CRD_FILE} is not a YAML mapping")
    return doc


def write_crd(path: Path = CRD_FILE) -> bool:
    """Regenerate the shipped file; True when it changed."""
    text = render_crd()
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True


#: The WorkloadPolicy CRD (a hand-written schema: its ``spec.set`` is checked by the validating
#: webhook, which names fields in its messages; ``tests/crd`` checks names against
#: :mod:`workload_map.resolve.policy`).
POLICY_CRD_NAME = "workloadpolicies.workload-map.dev"
POLICY_CRD_FILE = Path(__file__).with_name(f"{POLICY_CRD_NAME}.yaml")


def shipped_policy_crd_text() -> str:
    """The packaged ``workloadpolicies.workload-map.dev.yaml``."""
    return POLICY_CRD_FILE.read_text(encoding="utf-8")


def shipped_policy_crd() -> dict[str, Any]:
    doc = yaml.safe_load(shipped_policy_crd_text())
    if not isinstance(doc, dict):
        raise ValueError(f"{POLICY_CRD_FILE} is not a YAML mapping")
    return doc
