"""Workload types for the API: the merged definitions with origin, validation and served state,
and registering (validate, then create a Karta object) / deleting cluster types."""

from __future__ import annotations

import copy
import json
import re
from typing import TYPE_CHECKING, Any

from workload_map.errors import ClusterError, ConflictError
from workload_map.kube.objects import KARTA_PATH, gvk_text
from workload_map.server.errors import HttpError, from_cluster_error

if TYPE_CHECKING:
    from workload_map.definitions_source import DefinitionEntry
    from workload_map.model.findings import Finding
    from workload_map.server.state import ClusterState

__all__ = ["delete_type", "register_type", "type_info"]

KARTA_API_VERSION = "run.ai/v1alpha1"


def finding_dict(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code,
        "severity": f.severity,
        "message": f.message,
        "field": f.field,
        "definition": f.definition,
        "location": f.location,
    }


def type_info(state: ClusterState, entry: DefinitionEntry, *, with_karta: bool = False) -> dict[str, Any]:
    from workload_map.cluster.discovery import APIResource
    from workload_map.model.validator import validate_definition

    findings = validate_definition(entry.karta)
    gvk = entry.gvk
    served_versions: list[str] = []
    resource: APIResource | None = None
    if gvk is not None:
        try:
            served_versions = state.discovery.served_versions(gvk.group, gvk.kind)
            api_version = f"{gvk.group}/{gvk.version}" if gvk.group else gvk.version
            resource = state.discovery.resource_for_kind(api_version, gvk.kind)
        except ClusterError:
            served_versions, resource = [], None
    spec = entry.karta.spec
    components = [c.name for c in spec.components]
    gang = spec.optimization_instructions.gang_scheduling
    out: dict[str, Any] = {
        "name": entry.name,
        "origin": entry.origin,
        "group": gvk.group if gvk else None,
        "version": gvk.version if gvk else None,
        "kind": gvk.kind if gvk else None,
        "apiVersion": (f"{gvk.group}/{gvk.version}" if gvk.group else gvk.version) if gvk else None,
        "gvk": entry.key,
        "valid": not any(f.is_error for f in findings),
        "findings": [finding_dict(f) for f in findings],
        "served": resource is not None,
        "servedVersions": served_versions,
        "resource": {"name": resource.name, "namespaced": resource.namespaced} if resource else None,
        "components": components,
        "suspendable": any(
            c.suspend_definition is not None and bool(c.suspend_definition.suspend_actions)
            for c in spec.components
        ),
        "scalable": [
            c.name
            for c in spec.components
            if c.scale_definition is not None
            and (c.scale_definition.replicas_path or c.scale_definition.min_replicas_path)
        ],
        "gangScheduling": gang is not None and (gang.pod_group is not None or bool(gang.pod_groups)),
        "quarantine": _quarantine(state, entry.name),
    }
    if with_karta:
        out["karta"] = karta_object(entry)
    return out


def karta_object(entry: DefinitionEntry) -> dict[str, Any]:
    data: dict[str, Any] = entry.karta.model_dump(mode="json", by_alias=True, exclude_none=True)
    data.setdefault("apiVersion", KARTA_API_VERSION)
    data.setdefault("kind", "Karta")
    return data


def _slug(group: str, kind: str, version: str) -> str:
    base = f"{group or 'core'}-{kind}-{version}".lower()
    return re.sub(r"[^a-z0-9-]+", "-", base).strip("-")[:253]


def _root_gvk(body: dict[str, Any]) -> tuple[str, str, str] | None:
    try:
        kind = body["spec"]["structureDefinition"]["rootComponent"]["kind"]
        return str(kind.get("group") or ""), str(kind["version"]), str(kind["kind"])
    except (KeyError, TypeError, AttributeError):
        return None


def register_type(
    state: ClusterState, body: Any, *, dry_run: bool, field_validation: str = "strict"
) -> tuple[dict[str, Any], bool]:
    """Validate ``body`` (a Karta) and create it in the cluster; returns (type info, created).
    Unknown fields and repeated keys are errors unless ``field_validation`` is ``warn`` (they are
    returned as warning findings) or ``ignore``; the API server would prune them silently. The
    body's expressions share one object's compile budget (0.5 s of CPU), so validating it costs
    about as much whatever it holds."""
    from workload_map.model._jq import OBJECT_COMPILE_SECONDS
    from workload_map.model.findings import ERROR
    from workload_map.model.loader import field_validation_mode, load_definitions_text

    if not isinstance(body, dict):
        raise HttpError(422, "invalid_definition", "the body must be a Karta object (JSON)", findings=[])
    doc = copy.deepcopy(body)
    doc.setdefault("apiVersion", KARTA_API_VERSION)
    doc.setdefault("kind", "Karta")
    meta = doc.get("metadata")
    if meta is None:
        meta = doc["metadata"] = {}
    gvk = _root_gvk(doc)
    if isinstance(meta, dict) and not meta.get("name") and gvk is not None:
        meta["name"] = _slug(gvk[0], gvk[2], gvk[1])
    result = load_definitions_text(
        json.dumps(doc),
        name="request",
        field_validation=field_validation_mode(field_validation),
        compile_seconds=OBJECT_COMPILE_SECONDS,
    )
    findings: list[Finding] = list(result.findings)
    for rejected in result.rejected:
        findings.extend(f for f in rejected.findings if f not in findings)
    loaded = result.definitions[0] if len(result.definitions) == 1 else None
    if loaded is not None:
        findings.extend(loaded.validate())
    errors = [f for f in findings if f.severity == ERROR]
    if loaded is None or errors:
        first = errors[0].format(location=False) if errors else "the body is not one Karta definition"
        raise HttpError(
            422,
            "invalid_definition",
            f"the Karta is invalid: {first}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
            "Fix the findings (wmap validate checks a file offline).",
            findings=[finding_dict(f) for f in findings],
        )
    karta = loaded.karta
    root = karta.root_gvk
    key = gvk_text(root.group, root.version, root.kind) if root is not None else None
    try:
        existing = state.client.list_all(KARTA_PATH)
    except ClusterError as exc:
        raise from_cluster_error(exc, "list kartas.run.ai") from exc
    from workload_map.definitions_source import decode_cluster_items

    entries, _ = decode_cluster_items(existing)
    for e in entries:
        if e.key == key:
            raise HttpError(
                409,
                "already_exists",
                f'Karta "{e.name}" already defines {key}',
                "Delete it first (DELETE /api/v1/workload-types/{name}) to register another.",
            )
    names = {str((i.get("metadata") or {}).get("name")) for i in existing}
    if karta.name in names:
        raise HttpError(409, "already_exists", f'a Karta named "{karta.name}" already exists')
    obj = {k: v for k, v in doc.items() if k in ("apiVersion", "kind", "metadata", "spec")}
    obj["metadata"] = {k: v for k, v in doc["metadata"].items() if k in ("name", "labels", "annotations")}
    try:
        created = state.client.create(KARTA_PATH, obj, field_manager="wmap-serve", dry_run=dry_run)
    except ConflictError as exc:
        raise HttpError(409, "already_exists", f"Karta {karta.name}: {exc}") from exc
    except ClusterError as exc:
        raise from_cluster_error(exc, f"create Karta {karta.name}") from exc
    from workload_map.definitions_source import DefinitionEntry

    if not dry_run:
        state.invalidate()
    made = decode_cluster_items([created])[0]
    entry = made[0] if made else DefinitionEntry(karta, "cluster", "cluster")
    info = type_info(state, entry, with_karta=True)
    info["findings"] = [finding_dict(f) for f in loaded.findings] + info["findings"]  # warn mode
    return info, not dry_run


def delete_type(state: ClusterState, name: str) -> dict[str, Any]:
    from workload_map.definitions_source import decode_cluster_items

    entry = next((e for e in state.definitions().entries if e.name == name), None)
    try:
        obj = state.client.get(f"{KARTA_PATH}/{name}")
    except ClusterError as exc:
        from workload_map.errors import NotFoundError

        if isinstance(exc, NotFoundError):
            if entry is not None:
                raise HttpError(
                    409,
                    "builtin_type",
                    f'"{name}" is a built-in ({entry.origin}) type and cannot be deleted',
                    "Register a Karta for its GVK to override it instead.",
                ) from exc
            raise HttpError(404, "not_found", f'workload type "{name}" not found') from exc
        raise from_cluster_error(exc, f"get Karta {name}") from exc
    made = decode_cluster_items([obj])[0]
    try:
        state.client.delete(f"{KARTA_PATH}/{name}")
    except ClusterError as exc:
        raise from_cluster_error(exc, f"delete Karta {name}") from exc
    state.invalidate()
    if made:
        return type_info(state, made[0], with_karta=True)
    return {
        "name": name,
        "origin": "cluster",
        "valid": False,
        "findings": [],
        "served": False,
        "servedVersions": [],
        "components": [],
        "karta": obj,
    }


def _quarantine(state: ClusterState, name: str) -> dict[str, object] | None:
    """The definition's limit-failure record in this server (None: it never exceeded the limits)."""
    record = state.quarantine.state(name)
    return None if record is None else record.to_dict(state.quarantine.now())
