"""The OpenAPI 3.1 document of ``wmap serve``, built from Python so shared fragments stay in step.

The repository keeps the rendered document at ``openapi/openapi.json`` (the web UI codes against
it; a test checks that the served document equals that file). Regenerate it with::

    python -m workload_map.server.openapi > openapi/openapi.json

The workload shapes reuse the published view schemas (``schemas/view.v1.json`` and
``schemas/describe-view.v1.json``); the error object keeps the fields of ``schemas/error.v1.json``
(``error``, ``message``, ``hint``) and adds ``status`` and, for invalid definitions, ``findings``.
"""

from __future__ import annotations

import copy
import json
import sys
from functools import cache
from importlib import resources
from typing import Any

from workload_map import __version__
from workload_map.kube.schedulers import DEFAULT_SCHEDULER, SCHEDULERS
from workload_map.resolve.editdoc import SCHEMA as EDITS_SCHEMA
from workload_map.views.filters import PHASES

__all__ = ["PHASES", "SORT_KEYS", "openapi_document", "render"]

Schema = dict[str, Any]

SORT_KEYS = ("name", "namespace", "kind", "createdAt", "phase", "gpus")
MAX_LIMIT = 500
DEFAULT_LIMIT = 100


def _ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


def _load(name: str) -> Schema:
    text = resources.files("workload_map.schemas").joinpath(name).read_text(encoding="utf-8")
    doc: Schema = json.loads(text)
    return doc


def _rewrite_refs(node: Any, prefix: str) -> Any:
    """``#/$defs/x`` -> ``#/components/schemas/<prefix>x`` throughout ``node``."""
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str) and v.startswith("#/$defs/"):
                out[k] = f"#/components/schemas/{prefix}{v[len('#/$defs/') :]}"
            else:
                out[k] = _rewrite_refs(v, prefix)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v, prefix) for v in node]
    return node


def _view_schemas() -> dict[str, Schema]:
    view = _load("view.v1.json")
    describe = _load("describe-view.v1.json")
    out: dict[str, Schema] = {}
    defs = view["$defs"]
    out["Resources"] = _rewrite_refs(defs["resources"], "")
    out["WorkloadCost"] = _rewrite_refs(defs["cost"], "")
    row = _rewrite_refs(copy.deepcopy(defs["view"]), "")
    row["properties"]["resources"] = _ref("Resources")
    row["properties"]["cost"] = _ref("WorkloadCost")
    out["WorkloadView"] = row
    ddefs = describe["$defs"]
    out["DescribePod"] = _rewrite_refs(ddefs["pod"], "Describe")
    out["DescribeComponent"] = _rewrite_refs(ddefs["component"], "Describe")
    body = {k: v for k, v in describe.items() if k not in ("$schema", "$id", "$defs", "title")}
    body = _rewrite_refs(body, "Describe")
    body["properties"]["cost"] = _ref("WorkloadCost")
    out["DescribeResources"] = _ref("Resources")
    out["DescribeView"] = body
    return out


def _schemas() -> dict[str, Schema]:
    s = _view_schemas()
    s["Error"] = {
        "type": "object",
        "description": "Every error response. Keeps the fields of schemas/error.v1.json "
        "(error, message, hint) and adds the HTTP status and, for an invalid Karta, the findings.",
        "required": ["error", "message", "hint", "status"],
        "properties": {
            "error": {
                "type": "string",
                "description": "Stable code: unauthorized, forbidden, writes_disabled, not_found, "
                "no_definition_for_type, already_exists, builtin_type, invalid_definition, "
                "invalid_request, unprocessable, cluster_error, not_ready, busy, "
                "request_header_fields_too_large.",
            },
            "message": {"type": "string"},
            "hint": {"type": "string"},
            "status": {"type": "integer"},
            "type": {"type": "string", "description": "The type token asked for (no_definition_for_type)."},
            "gvk": {"type": "string", "description": "group/version, Kind=Kind (no_definition_for_type)."},
            "findings": {"type": "array", "items": _ref("Finding")},
        },
        "additionalProperties": True,
    }
    s["Finding"] = {
        "type": "object",
        "description": "A loader or validator finding (codes in docs/validation.md).",
        "required": ["code", "severity", "message"],
        "properties": {
            "code": {"type": "string", "examples": ["KARTA005"]},
            "severity": {"enum": ["error", "warning"]},
            "message": {"type": "string"},
            "field": {"type": ["string", "null"]},
            "definition": {"type": ["string", "null"]},
            "location": {"type": ["string", "null"]},
        },
    }
    s["Status"] = {
        "type": "object",
        "required": ["status"],
        "properties": {"status": {"type": "string"}, "checks": {"type": "object"}},
    }
    s["WhoAmI"] = {
        "type": "object",
        "required": ["username", "groups", "writesEnabled"],
        "properties": {
            "username": {"type": "string"},
            "uid": {"type": ["string", "null"]},
            "groups": {"type": "array", "items": {"type": "string"}},
            "writesEnabled": {"type": "boolean"},
        },
    }
    s["Karta"] = {
        "type": "object",
        "description": "A Karta definition (apiVersion run.ai/v1alpha1, kind Karta). metadata.name "
        "is optional: when missing the name is derived from the root GVK "
        "(e.g. jobset-x-k8s-io-jobset-v1alpha2).",
        "required": ["spec"],
        "properties": {
            "apiVersion": {"type": "string", "examples": ["run.ai/v1alpha1"]},
            "kind": {"type": "string", "examples": ["Karta"]},
            "metadata": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "additionalProperties": True,
            },
            "spec": {"type": "object", "additionalProperties": True},
        },
        "additionalProperties": True,
    }
    s["WorkloadType"] = {
        "type": "object",
        "description": "One definition of the merged set (catalog, cluster Karta objects; cluster "
        "ones replace the catalog's for their GVK) and whether the cluster serves its kind.",
        "required": ["name", "origin", "valid", "findings", "served", "servedVersions", "components"],
        "properties": {
            "name": {"type": "string", "description": "The Karta's metadata.name."},
            "origin": {"enum": ["catalog", "cluster", "local"]},
            "group": {"type": ["string", "null"]},
            "version": {"type": ["string", "null"]},
            "kind": {"type": ["string", "null"]},
            "apiVersion": {"type": ["string", "null"]},
            "gvk": {"type": ["string", "null"], "examples": ["jobset.x-k8s.io/v1alpha2, Kind=JobSet"]},
            "valid": {"type": "boolean", "description": "No validator finding of severity error."},
            "findings": {"type": "array", "items": _ref("Finding")},
            "served": {"type": "boolean", "description": "The cluster serves this exact group/version/kind."},
            "servedVersions": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Versions of this group and kind the cluster serves.",
            },
            "resource": _nullable(
                {
                    "type": "object",
                    "required": ["name", "namespaced"],
                    "properties": {"name": {"type": "string"}, "namespaced": {"type": "boolean"}},
                }
            ),
            "components": {"type": "array", "items": {"type": "string"}},
            "suspendable": {"type": "boolean", "description": "Some component has suspend actions."},
            "scalable": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Components with a count to scale (replicasPath or minReplicasPath).",
            },
            "gangScheduling": {"type": "boolean"},
            "quarantine": _nullable(
                {
                    "type": "object",
                    "description": "This server's record of the definition exceeding the expression limits "
                    "(cost budget or deadline); null when it never did. While quarantined its workloads are "
                    "listed with an error instead of being evaluated; one evaluation is retried after "
                    "retryInSeconds.",
                    "required": ["definition", "quarantined", "retryInSeconds", "consecutiveFailures"],
                    "properties": {
                        "definition": {"type": "string"},
                        "quarantined": {"type": "boolean"},
                        "retryInSeconds": {"type": "number", "minimum": 0},
                        "consecutiveFailures": {"type": "integer", "minimum": 0},
                        "limitFailures": {"type": "integer", "minimum": 0},
                        "times": {"type": "integer", "minimum": 0},
                        "lastError": {"type": "string"},
                    },
                }
            ),
        },
        "additionalProperties": True,
    }
    s["WorkloadTypeDetail"] = {
        "allOf": [
            _ref("WorkloadType"),
            {"type": "object", "required": ["karta"], "properties": {"karta": _ref("Karta")}},
        ]
    }
    s["WorkloadTypeList"] = {
        "type": "object",
        "required": ["items", "count", "warnings"],
        "properties": {
            "items": {"type": "array", "items": _ref("WorkloadType")},
            "count": {"type": "integer", "minimum": 0},
            "warnings": {"type": "array", "items": {"type": "string"}},
        },
    }
    extra_row = {
        "uid": {"type": ["string", "null"]},
        "ageSeconds": {"type": ["integer", "null"], "description": "Seconds since creation."},
        "resourceVersion": {"type": ["string", "null"]},
    }
    s["Workload"] = {
        "allOf": [_ref("WorkloadView"), {"type": "object", "properties": extra_row}],
        "description": "One workload as a single unit: WorkloadView (schemas/view.v1.json) plus uid "
        "and age. components[].ready counts ready pods; pods.{ready,total} are the attributed pods.",
    }
    s["WorkloadList"] = {
        "type": "object",
        "required": ["items", "count", "continue", "warnings"],
        "properties": {
            "items": {"type": "array", "items": _ref("Workload")},
            "count": {"type": "integer", "minimum": 0, "description": "Items in this page."},
            "total": {"type": "integer", "minimum": 0, "description": "Matching workloads in all pages."},
            "continue": {
                "type": ["string", "null"],
                "description": "Pass as ?continue= to get the next page; null on the last page.",
            },
            "warnings": {"type": "array", "items": {"type": "string"}},
        },
    }
    detail_extra = {
        **extra_row,
        "warnings": {
            "type": "array",
            "items": {"type": "string"},
            "description": "What kept devices requested through DRA claims from being counted.",
        },
    }
    s["WorkloadDetail"] = {
        "allOf": [_ref("DescribeView"), {"type": "object", "properties": detail_extra}],
        "description": "One workload's tree and pods (schemas/describe-view.v1.json) plus uid and age.",
    }
    s["ChangeResult"] = {
        "type": "object",
        "required": ["action", "dryRun", "changed", "patchType", "patch", "jsonPatch", "mergePatch"],
        "properties": {
            "action": {"enum": ["suspend", "resume", "edit", "scale"]},
            "dryRun": {"type": "boolean"},
            "changed": {"type": "boolean", "description": "False when the object already had the values."},
            "patchType": {"enum": ["merge", "json"], "description": "The patch sent (or to send)."},
            "patch": {"description": "The body of that patch."},
            "jsonPatch": {"type": "array", "items": {"type": "object"}},
            "mergePatch": {"description": "RFC 7386 merge patch, or null when not expressible."},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "attempts": {"type": "integer", "description": "PATCHes tried (more than 1 after conflicts)."},
            "workload": _nullable(_ref("Workload")),
        },
    }
    s["EditRequest"] = {
        "type": "object",
        "required": ["edits"],
        "additionalProperties": False,
        "properties": {
            "edits": EDITS_SCHEMA,
            "components": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "description": "Only these components' pod templates (default: every one).",
            },
            "overwrite": {
                "type": "boolean",
                "default": True,
                "description": "false: a label, annotation or name already set to another value is an error.",
            },
        },
    }
    s["ScaleRequest"] = {
        "type": "object",
        "required": ["component", "replicas"],
        "additionalProperties": False,
        "properties": {
            "component": {"type": "string", "minLength": 1},
            "replicas": {
                "description": "The count in the definition's units (pods, as the list shows), for every "
                "instance, or an object instance id -> count naming each.",
                "oneOf": [
                    {"type": "integer", "minimum": 0, "maximum": 2147483647},
                    {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
                ],
            },
        },
    }
    s["PodGroup"] = {
        "type": "object",
        "description": "With scheduler=kai (the default): KAI's PodGroup and how it was computed "
        "(podGroup). With another scheduler: the object the pod's template is linked to, the pod's "
        "component and instance, and that template's change.",
        "required": ["pod", "namespace", "scheduler", "topOwner", "definition", "origin", "object"],
        "properties": {
            "pod": {"type": "string"},
            "namespace": {"type": "string"},
            "scheduler": {"enum": list(SCHEDULERS)},
            "component": {"type": "string", "description": "The pod's component (not with kai)."},
            "instanceId": {"type": "string", "description": "The pod's component instance (not with kai)."},
            "podTemplateChange": _nullable(_ref("PodTemplateChange")),
            "topOwner": {
                "type": "object",
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "name": {"type": "string"},
                    "uid": {"type": "string"},
                },
            },
            "definition": {
                "type": ["string", "null"],
                "description": "The definition of the top owner's exact GVK; null: KAI's default grouper.",
            },
            "origin": {"enum": ["catalog", "cluster", "local", None]},
            "object": {
                "type": "object",
                "description": "The object the pod joins (wmap group --scheduler S -o json): with kai the "
                "scheduling.run.ai/v2alpha2 PodGroup KAI creates.",
                "required": ["apiVersion", "kind", "metadata"],
            },
            "podGroup": {
                "type": "object",
                "description": "With kai only: how the gang was computed (wmap group's table).",
                "required": ["name", "format", "minAvailable", "subGroups"],
                "properties": {
                    "name": {"type": "string"},
                    "format": {"enum": ["podGroup", "podGroups", "default"]},
                    "minAvailable": {"type": "integer"},
                    "minMember": {"type": ["integer", "null"]},
                    "minSubGroup": {"type": ["integer", "null"]},
                    "subGroups": {"type": "array", "items": {"type": "object"}},
                },
                "additionalProperties": True,
            },
        },
    }
    s["PodTemplateChange"] = {
        "type": "object",
        "description": "What to set on one pod template (component instance) so its pods join their objects.",
        "required": ["component", "instanceId"],
        "properties": {
            "component": {"type": "string"},
            "instanceId": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            "schedulerName": {"type": "string"},
            "schedulingGroup": {
                "type": "object",
                "properties": {"podGroupName": {"type": "string"}},
            },
        },
    }
    s["GangObjects"] = {
        "type": "object",
        "description": "Every object a scheduler needs for a workload, from its definition's gang rules "
        "(wmap gang TYPE/NAME --scheduler S -o json), plus warnings.",
        "required": [
            "scheduler",
            "workload",
            "definition",
            "objects",
            "podTemplateChanges",
            "workloadChanges",
            "notes",
            "warnings",
        ],
        "properties": {
            "scheduler": {"enum": list(SCHEDULERS)},
            "workload": {
                "type": "object",
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "namespace": {"type": "string"},
                    "name": {"type": "string"},
                    "uid": {"type": "string"},
                },
            },
            "definition": {"type": "string"},
            "objects": {
                "type": "array",
                "description": "PodGroups, Workloads, CompositePodGroups...: ready to create.",
                "items": {"type": "object", "required": ["apiVersion", "kind", "metadata"]},
            },
            "podTemplateChanges": {"type": "array", "items": _ref("PodTemplateChange")},
            "workloadChanges": {
                "type": "object",
                "description": "Labels, annotations and suspend actions to set on the workload itself.",
                "properties": {
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
                    "suspend": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"path": {"type": "string"}, "value": {"type": "string"}},
                        },
                    },
                },
            },
            "notes": {
                "type": "array",
                "items": {"type": "string"},
                "description": "What the scheduler cannot express, what was left out and why.",
            },
            "warnings": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Kinds the cluster does not serve, objects another controller already "
                "holds, objects or DRA claims that could not be read.",
            },
        },
    }
    s["Placement"] = {
        "type": "object",
        "required": ["definition", "origin", "instances", "gangs", "totals"],
        "properties": {
            "definition": {"type": "string"},
            "origin": {"enum": ["catalog", "cluster", "local"]},
            "name": {"type": ["string", "null"]},
            "namespace": {"type": ["string", "null"]},
            "instances": {"type": "array", "items": {"type": "object"}},
            "gangs": {"type": "array", "items": {"type": "object"}},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "totals": {
                "type": "object",
                "required": ["desiredPods", "minPods", "desired", "minimum"],
                "properties": {
                    "desiredPods": {"type": "integer"},
                    "minPods": {"type": "integer"},
                    "desired": {"type": "object"},
                    "minimum": {"type": "object"},
                },
            },
        },
    }
    s["Manifest"] = {
        "type": "object",
        "description": "A workload manifest (JSON) with apiVersion and kind.",
        "required": ["apiVersion", "kind"],
        "properties": {
            "apiVersion": {"type": "string", "minLength": 1},
            "kind": {"type": "string", "minLength": 1},
            "metadata": {"type": "object"},
        },
        "additionalProperties": True,
    }
    s["WorkloadCostAnswer"] = {
        "type": "object",
        "description": "A workload's cost (WorkloadCost's fields) when the server runs with --prometheus, "
        'else {"configured": false}. A Prometheus that is down, slow or without the cost recording rules '
        "gives null numbers with error and warnings, never an error status. Answers are reused for "
        "30 s per workload.",
        "required": ["configured"],
        "properties": {
            "configured": {
                "type": "boolean",
                "description": "Whether the server has a Prometheus (--prometheus).",
            },
            **copy.deepcopy(s["WorkloadCost"]["properties"]),
            "warnings": {"type": "array", "items": {"type": "string"}},
        },
        "additionalProperties": True,
    }
    s["Namespaces"] = {
        "type": "object",
        "required": ["items", "source"],
        "properties": {
            "items": {"type": "array", "items": {"type": "string"}},
            "source": {
                "type": "string",
                "enum": ["cluster", "none"],
                "description": "cluster: every namespace (the user may list them); none: the user may not.",
            },
            "truncated": {"type": "boolean"},
        },
    }
    s["OtherTypes"] = {
        "type": "object",
        "required": ["items"],
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["kind", "group", "version", "resource", "namespaced"],
                    "properties": {
                        "kind": {"type": "string"},
                        "group": {"type": "string"},
                        "version": {"type": "string"},
                        "resource": {"type": "string"},
                        "namespaced": {"type": "boolean"},
                    },
                },
            }
        },
    }
    s["GenericWorkloads"] = {
        "type": "object",
        "required": ["items", "resource", "generic"],
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "description": 'A Workload row (definition "generic") with kstatus\'s verdict.',
                    "additionalProperties": True,
                },
            },
            "resource": {"type": "string"},
            "generic": {"const": True},
        },
    }
    s["Node"] = {
        "type": "object",
        "required": ["name", "capacity", "allocatable", "conditions", "taints", "pods", "podsHidden"],
        "properties": {
            "name": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "capacity": {"type": "object", "additionalProperties": {"type": "string"}},
            "allocatable": {"type": "object", "additionalProperties": {"type": "string"}},
            "conditions": {"type": "array", "items": {"type": "object"}},
            "taints": {"type": "array", "items": {"type": "object"}},
            "unschedulable": {"type": "boolean"},
            "pods": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "namespace", "status", "restarts"],
                    "properties": {
                        "name": {"type": "string"},
                        "namespace": {"type": "string"},
                        "status": {"type": "string"},
                        "restarts": {"type": "integer"},
                    },
                },
            },
            "podsHidden": {"type": "integer", "description": "Namespaces whose pods the user may not list."},
        },
    }
    return s


def _error(description: str) -> Schema:
    return {"description": description, "content": {"application/json": {"schema": _ref("Error")}}}


def _ok(schema: str, description: str = "OK") -> Schema:
    return {"description": description, "content": {"application/json": {"schema": _ref(schema)}}}


COMMON_ERRORS: dict[str, Schema] = {
    "400": _error("Malformed request (bad parameter or body)."),
    "401": _error("Missing or invalid bearer token."),
    "403": _error("The user may not do this (Kubernetes RBAC, checked with a SubjectAccessReview)."),
    "431": _error("The request head (request line and headers) is larger than 32 KB."),
    "502": _error("The Kubernetes API failed."),
    "503": _error(
        "The server is not ready (its caches are still syncing), or busy: too many requests in "
        "flight or too many connections from this client (Retry-After)."
    ),
}


def _responses(ok: dict[str, Schema], *extra: tuple[str, str]) -> dict[str, Schema]:
    out = dict(ok)
    out.update(COMMON_ERRORS)
    for code, text in extra:
        out[code] = _error(text)
    return out


def _q(name: str, schema: Schema, description: str, **kw: Any) -> Schema:
    out: Schema = {"name": name, "in": "query", "required": False, "schema": schema}
    return {**out, "description": description, **kw}


def _p(name: str, description: str) -> Schema:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": {"type": "string", "minLength": 1, "pattern": "^[^/]+$"},
        "description": description,
    }


_FILTERS: list[Schema] = [
    _q(
        "type",
        {"type": "array", "items": {"type": "string", "minLength": 1}},
        "Workload type(s): a Kind (JobSet), resource (jobsets), Kind.group, Kind.version.group or "
        "a definition name. Repeat for several. Default: every type the cluster serves.",
        style="form",
        explode=True,
    ),
    _q(
        "namespace",
        {"type": "array", "items": {"type": "string", "minLength": 1}},
        "Namespace(s); repeat for several. Default: all namespaces the user may list.",
        style="form",
        explode=True,
    ),
    _q(
        "phase",
        {"type": "array", "items": {"enum": list(PHASES)}},
        "Keep workloads having any of these phases.",
        style="form",
        explode=True,
    ),
    _q("labelSelector", {"type": "string"}, "Kubernetes label selector on the workload objects."),
]

_WL_PARAMS = [
    _p("namespace", "Namespace of the workload."),
    _p("type", "Workload type token (see the type filter of the list)."),
    _p("name", "Workload name."),
]
_CLUSTER_WL_PARAMS = _WL_PARAMS[1:]


def _action(action: str, *, cluster: bool = False) -> Schema:
    return {
        "post": {
            "operationId": f"{action}{'ClusterScoped' if cluster else ''}Workload",
            "tags": ["workloads"],
            "summary": f"{action.capitalize()} a workload through its definition's {action} actions",
            "description": f"Applies the {action}Actions of the Karta (writeback.{action}) and PATCHes the "
            "object (merge patch, or JSON patch when a value is null). Authorised as SAR patch on the "
            "workload's resource. Needs --enable-writes (a dry run too).",
            "parameters": [
                *(_CLUSTER_WL_PARAMS if cluster else _WL_PARAMS),
                _q("dryRun", {"type": "boolean", "default": False}, "Return the patch only; change nothing."),
                _q("component", {"type": "string", "minLength": 1}, "Only this component's actions."),
            ],
            "responses": _responses(
                {"200": _ok("ChangeResult")},
                ("404", "No such workload, or no definition covers the type."),
                ("409", "The object changed meanwhile; retry."),
                ("422", "The definition has no such actions, or they cannot be applied."),
            ),
        }
    }


def _write_op(action: str, request: str, summary: str, description: str, *, cluster: bool = False) -> Schema:
    """A write that takes a JSON body (edits, scale): the shared parameters and answers."""
    return {
        "post": {
            "operationId": f"{action}{'ClusterScoped' if cluster else ''}Workload",
            "tags": ["workloads"],
            "summary": summary,
            "description": description + " Authorised as SAR patch on the workload's resource. The change "
            "is computed on the object as read and PATCHed with a resourceVersion precondition; a "
            "conflict is retried on the fresh object (5 attempts). Needs --enable-writes unless dryRun=true.",
            "parameters": [
                *(_CLUSTER_WL_PARAMS if cluster else _WL_PARAMS),
                _q("dryRun", {"type": "boolean", "default": False}, "Return the patch only; change nothing."),
            ],
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref(request)}}},
            "responses": _responses(
                {"200": _ok("ChangeResult")},
                ("404", "No such workload, or no definition covers the type."),
                ("409", "The object kept changing meanwhile; retry."),
                ("422", "The change cannot be made (the message names the component and field)."),
            ),
        }
    }


def _edits_op(*, cluster: bool = False) -> Schema:
    return _write_op(
        "edit",
        "EditRequest",
        "Change pod templates (image, resources, env, scheduler, node selector, tolerations, priority "
        "class, labels...) through the definition",
        "Applies the edits (resolve.writeback.apply_edits, the same write-back as wmap set and the "
        "admission policy) to every pod template and fragmented pod spec the definition locates.",
        cluster=cluster,
    )


def _scale_op(*, cluster: bool = False) -> Schema:
    return _write_op(
        "scale",
        "ScaleRequest",
        "Set a component's count through its definition (wmap scale)",
        "Inverts the component's replicasPath (or minReplicasPath) expression: the field that makes the "
        "count read the number is written; the count is read again and must match.",
        cluster=cluster,
    )


def _cost(*, cluster: bool = False) -> Schema:
    return {
        "parameters": _CLUSTER_WL_PARAMS if cluster else _WL_PARAMS,
        "get": {
            "operationId": f"get{'ClusterScoped' if cluster else ''}WorkloadCost",
            "tags": ["workloads"],
            "summary": "GPU-hours, cost and idle GPU cost of a workload, with the PromQL behind each",
            "description": "Read from the cost recording rules of deploy/prometheus/wmap-rules.yaml in the "
            "Prometheus given to wmap serve --prometheus (docs/metrics.md). Authorised as SAR get on the "
            "workload's resource.",
            "responses": _responses(
                {"200": _ok("WorkloadCostAnswer")},
                ("404", "No definition covers the type."),
            ),
        },
    }


_GANG_PARAMS: list[Schema] = [
    _q(
        "scheduler",
        {"enum": list(SCHEDULERS), "default": DEFAULT_SCHEDULER},
        "The scheduler whose objects to show (another value: 422 naming these).",
    ),
    _q("queue", {"type": "string", "maxLength": 253}, "The gang's queue (Volcano queue, Kueue LocalQueue)."),
    _q("priorityClass", {"type": "string", "maxLength": 253}, "The gang's PriorityClass."),
    _q(
        "scheduleTimeoutSeconds",
        {"type": "integer", "minimum": 0, "maximum": 2147483647},
        "Seconds the gang may wait to be scheduled (coscheduling's scheduleTimeoutSeconds).",
    ),
    _q(
        "schedulerName",
        {"type": "string"},
        "The schedulerName pods get (default: the scheduler's usual one).",
    ),
    _q("disruptionMode", {"enum": ["single", "all"]}, "The Workload API's disruptionMode."),
]


def _gangs(*, cluster: bool = False) -> Schema:
    return {
        "parameters": _CLUSTER_WL_PARAMS if cluster else _WL_PARAMS,
        "get": {
            "operationId": f"get{'ClusterScoped' if cluster else ''}WorkloadGangs",
            "tags": ["gangs"],
            "summary": "Every gang object of a workload for a scheduler (wmap gang TYPE/NAME --scheduler)",
            "description": "The workload's gang plan rendered for the scheduler: its objects, the "
            "pod-template changes that link its pods to them and the change to the workload, as wmap gang "
            "-o json prints them, plus warnings. Authorised as SAR get on the workload's resource; the "
            "existing objects and PriorityClasses are read only where the caller may get them.",
            "parameters": _GANG_PARAMS,
            "responses": _responses(
                {"200": _ok("GangObjects")},
                ("404", "No such workload, or no definition covers the type."),
                ("422", "Unsupported scheduler, or the gang rules cannot be applied (a scheduler limit)."),
            ),
        },
    }


def _paths() -> dict[str, Schema]:
    public: list[Schema] = []
    return {
        "/healthz": {
            "get": {
                "operationId": "healthz",
                "tags": ["health"],
                "summary": "Liveness: the process serves requests",
                "security": public,
                "responses": {"200": _ok("Status")},
            }
        },
        "/readyz": {
            "get": {
                "operationId": "readyz",
                "tags": ["health"],
                "summary": "Readiness: the Kubernetes API is reachable and the caches are synced",
                "security": public,
                "responses": {"200": _ok("Status"), "503": _error("Not ready yet.")},
            }
        },
        "/openapi.json": {
            "get": {
                "operationId": "openapi",
                "tags": ["health"],
                "summary": "This document",
                "security": public,
                "responses": {
                    "200": {
                        "description": "OpenAPI 3.1 document",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        },
        "/api/v1/whoami": {
            "get": {
                "operationId": "whoAmI",
                "tags": ["session"],
                "summary": "The authenticated user (TokenReview) and whether writes are enabled",
                "responses": _responses({"200": _ok("WhoAmI")}),
            }
        },
        "/api/v1/workload-types": {
            "get": {
                "operationId": "listWorkloadTypes",
                "tags": ["workload-types"],
                "summary": "List workload types (catalog + cluster Karta objects, merged)",
                "description": "Catalog entries are always listed; cluster Karta objects only when the user "
                "may list kartas.run.ai.",
                "parameters": [
                    _q(
                        "origin",
                        {"enum": ["catalog", "cluster", "local"]},
                        "Only definitions of this origin.",
                    ),
                    _q("served", {"type": "boolean"}, "Only types the cluster serves (true) or not (false)."),
                ],
                "responses": _responses({"200": _ok("WorkloadTypeList")}),
            },
            "post": {
                "operationId": "registerWorkloadType",
                "tags": ["workload-types"],
                "summary": "Register a workload type with one call: POST its Karta",
                "description": "Validated with the project's loader and validator (errors -> 422 with "
                "findings), then created as a cluster-scoped Karta object (kartas.run.ai). 409 when a "
                "cluster Karta already claims the root GVK or the name is taken. Authorised as SAR "
                "create on kartas.run.ai. Needs --enable-writes (a dry run too). Unknown fields "
                "and repeated keys are errors (fieldValidation=Strict, the default here; the API "
                "server would prune them silently). The Karta's expressions share a compile budget "
                "of 0.5 s of CPU (KARTA301 when exceeded).",
                "parameters": [
                    _q(
                        "dryRun", {"type": "boolean", "default": False}, "Validate (and server dry-run) only."
                    ),
                    _q(
                        "fieldValidation",
                        {"type": "string", "enum": ["Strict", "Warn", "Ignore"], "default": "Strict"},
                        "Unknown fields and repeated keys: Strict rejects them (422), Warn returns them "
                        "as warning findings, Ignore drops them (the Kubernetes API's parameter).",
                    ),
                ],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref("Karta")}},
                },
                "responses": _responses(
                    {
                        "201": _ok("WorkloadTypeDetail", "Created"),
                        "200": _ok("WorkloadTypeDetail", "Dry run"),
                    },
                    ("409", "A cluster Karta already exists for this GVK or name."),
                    ("422", "The Karta is invalid; see findings."),
                ),
            },
        },
        "/api/v1/workload-types/{name}": {
            "parameters": [_p("name", "Definition name (Karta metadata.name).")],
            "get": {
                "operationId": "getWorkloadType",
                "tags": ["workload-types"],
                "summary": "One workload type with its Karta",
                "responses": _responses({"200": _ok("WorkloadTypeDetail")}, ("404", "No such type.")),
            },
            "delete": {
                "operationId": "deleteWorkloadType",
                "tags": ["workload-types"],
                "summary": "Delete a registered (cluster) workload type",
                "description": "Deletes the Karta object. Catalog types cannot be deleted (409). Authorised "
                "as SAR delete on kartas.run.ai. Needs --enable-writes.",
                "responses": _responses(
                    {"200": _ok("WorkloadTypeDetail", "Deleted")},
                    ("404", "No such type."),
                    ("409", "A built-in (catalog) type cannot be deleted."),
                ),
            },
        },
        "/api/v1/workloads": {
            "get": {
                "operationId": "listWorkloads",
                "tags": ["workloads"],
                "summary": "List workloads of every covered type as single units",
                "description": "Each row is one workload (not its pods): phases, primary phase, components "
                "with ready/desired replicas, GPU/CPU/memory totals and age. Only resources and "
                "namespaces the user may list (SubjectAccessReview per type and namespace) are shown.",
                "parameters": [
                    *_FILTERS,
                    _q(
                        "limit",
                        {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
                        "Page size.",
                    ),
                    _q("continue", {"type": "string"}, "Token from the previous page."),
                    _q(
                        "sort",
                        {"enum": [*SORT_KEYS, *(f"-{k}" for k in SORT_KEYS)], "default": "-createdAt"},
                        "Sort key; a leading - sorts descending. Ties: kind, namespace, name.",
                    ),
                ],
                "responses": _responses(
                    {"200": _ok("WorkloadList")},
                    ("404", "A type filter matches no definition (error no_definition_for_type)."),
                ),
            }
        },
        "/api/v1/namespaces/{namespace}/workloads/{type}/{name}": {
            "parameters": _WL_PARAMS,
            "get": {
                "operationId": "getWorkload",
                "tags": ["workloads"],
                "summary": "One workload: its component tree and pods (wmap describe)",
                "responses": _responses(
                    {"200": _ok("WorkloadDetail")},
                    ("404", "No such workload, or no definition covers the type."),
                ),
            },
        },
        "/api/v1/namespaces/{namespace}/workloads/{type}/{name}/manifest": {
            "parameters": _WL_PARAMS,
            "get": {
                "operationId": "getWorkloadManifest",
                "tags": ["workloads"],
                "summary": "The workload object as stored, without managedFields (the UI's YAML view)",
                "responses": _responses(
                    {"200": _ok("Manifest")},
                    ("404", "No such workload, or no definition covers the type."),
                ),
            },
        },
        "/api/v1/namespaces/{namespace}/workloads/{type}/{name}/cost": _cost(),
        "/api/v1/namespaces/{namespace}/workloads/{type}/{name}/gangs": _gangs(),
        "/api/v1/namespaces/{namespace}/workloads/{type}/{name}/suspend": _action("suspend"),
        "/api/v1/namespaces/{namespace}/workloads/{type}/{name}/resume": _action("resume"),
        "/api/v1/namespaces/{namespace}/workloads/{type}/{name}/edits": _edits_op(),
        "/api/v1/namespaces/{namespace}/workloads/{type}/{name}/scale": _scale_op(),
        "/api/v1/workloads/{type}/{name}": {
            "parameters": _CLUSTER_WL_PARAMS,
            "get": {
                "operationId": "getClusterScopedWorkload",
                "tags": ["workloads"],
                "summary": "One workload of a cluster-scoped kind: component tree and pods (wmap describe)",
                "responses": _responses(
                    {"200": _ok("WorkloadDetail")},
                    ("404", "No such workload, no definition covers the type, or the type is namespaced."),
                ),
            },
        },
        "/api/v1/workloads/{type}/{name}/cost": _cost(cluster=True),
        "/api/v1/workloads/{type}/{name}/gangs": _gangs(cluster=True),
        "/api/v1/workloads/{type}/{name}/suspend": _action("suspend", cluster=True),
        "/api/v1/workloads/{type}/{name}/resume": _action("resume", cluster=True),
        "/api/v1/workloads/{type}/{name}/edits": _edits_op(cluster=True),
        "/api/v1/workloads/{type}/{name}/scale": _scale_op(cluster=True),
        "/api/v1/workloads/{type}/{name}/manifest": {
            "parameters": _CLUSTER_WL_PARAMS,
            "get": {
                "operationId": "getClusterScopedWorkloadManifest",
                "tags": ["workloads"],
                "summary": "The object of a cluster-scoped workload, without managedFields",
                "responses": _responses(
                    {"200": _ok("Manifest")},
                    ("404", "No such workload, no definition covers the type, or the type is namespaced."),
                ),
            },
        },
        "/api/v1/namespaces": {
            "get": {
                "operationId": "listNamespaces",
                "tags": ["cluster"],
                "summary": "Namespaces for the UI's picker: all of them when the user may list namespaces",
                "responses": _responses({"200": _ok("Namespaces")}),
            }
        },
        "/api/v1/other-types": {
            "get": {
                "operationId": "listOtherTypes",
                "tags": ["cluster"],
                "summary": "Custom resource types the cluster serves that no definition covers",
                "responses": _responses({"200": _ok("OtherTypes")}),
            }
        },
        "/api/v1/generic/{resource}": {
            "parameters": [
                _p("resource", "A resource, kind or short name the cluster serves."),
                {
                    "name": "namespace",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "Only this namespace.",
                },
            ],
            "get": {
                "operationId": "listGenericWorkloads",
                "tags": ["workloads"],
                "summary": "Objects of a type without a definition, read generically (kstatus, owned pods)",
                "responses": _responses({"200": _ok("GenericWorkloads")}, ("404", "No such resource.")),
            },
        },
        "/api/v1/nodes/{name}": {
            "parameters": [_p("name", "Node name.")],
            "get": {
                "operationId": "getNode",
                "tags": ["cluster"],
                "summary": "A node: capacity, allocatable, conditions, taints and the pods the user may list",
                "responses": _responses({"200": _ok("Node")}, ("404", "No such node.")),
            },
        },
        "/api/v1/namespaces/{namespace}/pods/{name}/podgroup": {
            "parameters": [_p("namespace", "Namespace of the pod."), _p("name", "Pod name.")],
            "get": {
                "operationId": "getPodGroup",
                "tags": ["gangs"],
                "summary": "The gang object a pod joins: KAI's PodGroup by default (wmap group --scheduler)",
                "description": "With scheduler=kai, the PodGroup KAI Scheduler's pod-grouper creates (the "
                "policy parameters are ignored, as by wmap group). With another scheduler, the object of the "
                "pod's top owner's gang plan the pod's template is linked to (getWorkloadGangs lists "
                "them all).",
                "parameters": _GANG_PARAMS,
                "responses": _responses(
                    {"200": _ok("PodGroup")},
                    ("404", "No such pod."),
                    (
                        "422",
                        "Unsupported scheduler, the owner chain cannot be followed, the gang rules cannot be "
                        "applied, or the pod's component is in no gang.",
                    ),
                ),
            },
        },
        "/api/v1/placement": {
            "post": {
                "operationId": "placementNeeds",
                "tags": ["placement"],
                "summary": "Placement needs of a posted workload manifest (wmap requirements)",
                "description": "Computed from the manifest and its definition; the DRA claim templates its "
                "pods name come from the server's cache as far as the caller may get them (their GPUs "
                "count; warnings say what could not be). Needs authentication only.",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _ref("Manifest")}},
                },
                "responses": _responses(
                    {"200": _ok("Placement")},
                    ("404", "No definition covers the manifest's type."),
                    ("422", "The manifest cannot be resolved."),
                ),
            }
        },
        "/api/v1/watch/workloads": {
            "get": {
                "operationId": "watchWorkloads",
                "tags": ["workloads"],
                "summary": "Live workload views as server-sent events (from informers)",
                "description": "text/event-stream. First an `added` event per matching workload, then "
                "`synced`, then `added`/`modified`/`deleted` events as the cluster changes; each event's "
                "data is a JSON object {type, object: Workload}. Comment lines keep the stream alive. "
                "Filters as for listWorkloads (namespaces limited to what the user may watch).",
                "parameters": [
                    *_FILTERS,
                    _q(
                        "timeoutSeconds",
                        {"type": "integer", "minimum": 1, "maximum": 86400},
                        "End the stream after this many seconds.",
                    ),
                ],
                "responses": _responses(
                    {
                        "200": {
                            "description": "Event stream",
                            "content": {"text/event-stream": {"schema": {"type": "string"}}},
                        }
                    },
                    ("404", "A type filter matches no definition."),
                ),
            }
        },
    }


@cache
def _document() -> str:
    doc: Schema = {
        "openapi": "3.1.0",
        "info": {
            "title": "Workload Map API (wmap serve)",
            "version": __version__,
            "description": "Workloads of any Kubernetes kind read through Karta definitions: register "
            "types, list workloads as single units, see their component tree and pods, suspend and "
            "resume, gang and placement answers, and live updates. Every request under /api carries "
            "`Authorization: Bearer <Kubernetes token>`; the server checks it with a TokenReview and "
            "authorises each action with a SubjectAccessReview against the cluster's RBAC.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "tags": [
            {"name": "health"},
            {"name": "session"},
            {"name": "workload-types"},
            {"name": "workloads"},
            {"name": "gangs"},
            {"name": "placement"},
            {"name": "cluster"},
        ],
        "paths": _paths(),
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A Kubernetes bearer token (service account, static or OIDC token).",
                }
            },
            "schemas": _schemas(),
        },
    }
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


def render() -> str:
    """The document as the text kept in ``openapi/openapi.json``."""
    return _document()


def openapi_document() -> Schema:
    """A fresh copy of the document."""
    doc: Schema = json.loads(_document())
    return doc


if __name__ == "__main__":
    sys.stdout.write(render())
