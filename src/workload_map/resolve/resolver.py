"""The front door: :func:`resolve` a workload object through a definition.

See docs/library.md for the rules (instances, zipping, tree scoping, status, resources).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import orjson

from workload_map.errors import ResolveError, WorkloadMapError
from workload_map.model.definition import Karta
from workload_map.resolve._fast import build
from workload_map.resolve._support import ResolveFieldError, jq_type
from workload_map.resolve.compiled import CompiledComponent, CompiledDefinition, compile_definition
from workload_map.resolve.extract import instance_ids, scales, specs
from workload_map.resolve.resources import (
    EMPTY_TOTALS,
    ResourceTotals,
    fragmented_totals,
    pod_spec_totals,
    sum_totals,
)
from workload_map.resolve.status import evaluate_status
from workload_map.resolve.tree import scope_children
from workload_map.resolve.types import (
    UNDEFINED_STATUS,
    Component,
    ExtractedSpec,
    Instance,
    Workload,
    WorkloadStatus,
)

WorkloadObject = Mapping[str, Any] | str | bytes | bytearray | memoryview


def load_object(obj: WorkloadObject) -> dict[str, Any]:
    """The workload object as JSON data: a mapping as is, JSON text or bytes parsed with orjson."""
    if isinstance(obj, dict):
        return obj
    if isinstance(obj, str | bytes | bytearray | memoryview):
        try:
            data = orjson.loads(obj)
        except orjson.JSONDecodeError as exc:
            raise ResolveError(f"workload object is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ResolveError(f"workload object must be a JSON object, got {jq_type(data)}")
        return data
    if isinstance(obj, Mapping):
        return dict(obj)
    raise ResolveError(f"workload object must be a mapping or JSON text, got {type(obj).__name__}")


def as_compiled(definition: Karta | CompiledDefinition) -> CompiledDefinition:
    if isinstance(definition, CompiledDefinition):
        return definition
    if isinstance(definition, Karta):
        return compile_definition(definition)
    raise ResolveError(f"definition must be a Karta or a CompiledDefinition, got {type(definition).__name__}")


def resolve(definition: Karta | CompiledDefinition, obj: WorkloadObject) -> Workload:
    """Resolve ``obj`` (a dict, or JSON text/bytes) through ``definition``.

    Returns the :class:`~workload_map.resolve.types.Workload`: components with their instances,
    scales, extracted specs and requested resources, the tree scoped per instance, and the
    status. Raises only :class:`~workload_map.errors.WorkloadMapError` subclasses:
    :class:`~workload_map.errors.ResolveError` (usually a
    :class:`~workload_map.resolve.ResolveFieldError` naming definition, component and field)
    for the object, :class:`~workload_map.errors.DefinitionError` for a definition that does
    not compile.
    """
    compiled = as_compiled(definition)
    data = load_object(obj)
    try:
        return _resolve(compiled, data)
    except WorkloadMapError:
        raise
    except Exception as exc:  # a bug must still surface as one of ours, with context
        raise ResolveError(
            f'karta "{compiled.name}": unexpected {type(exc).__name__} while resolving: {exc}'
        ) from exc


def resolve_status(definition: Karta | CompiledDefinition, obj: WorkloadObject) -> WorkloadStatus:
    """The workload's status alone (its root component's phases, phase and conditions), without
    resolving its structure: what health checks need, even for an object whose pod specs or
    replica counts do not resolve. Raises like :func:`resolve`."""
    compiled = as_compiled(definition)
    data = load_object(obj)
    try:
        status = evaluate_status(compiled.root, compiled.name, data)
    except WorkloadMapError:
        raise
    except Exception as exc:  # a bug must still surface as one of ours, with context
        raise ResolveError(
            f'karta "{compiled.name}": unexpected {type(exc).__name__} while resolving the status: {exc}'
        ) from exc
    return status if status is not None else UNDEFINED_STATUS


def resolve_many(definition: Karta | CompiledDefinition, objects: list[WorkloadObject]) -> list[Workload]:
    """Resolve several objects with one compiled definition."""
    compiled = as_compiled(definition)
    return [resolve(compiled, o) for o in objects]


# --- internals ------------------------------------------------------------------------------


def _pod_totals(comp: CompiledComponent, spec: ExtractedSpec) -> ResourceTotals:
    if spec.pod_template is not None or spec.pod_spec is not None:
        return pod_spec_totals(spec.effective_pod_spec)
    frag = spec.fragmented
    if frag is not None:
        return fragmented_totals(frag.containers, frag.container, frag.resources, frag.resource_claims)
    return EMPTY_TOTALS


def _component(compiled: CompiledDefinition, comp: CompiledComponent, data: dict[str, Any]) -> Component:
    dname = compiled.name
    ids = instance_ids(comp, dname, data)
    extracted = specs(comp, dname, data, ids)
    scale_list = scales(comp, dname, data, ids)
    pod_bearing = comp.has_pod_definition
    instances: list[Instance] = []
    for i, iid in enumerate(ids):
        spec = extracted[i]
        scale = scale_list[i]
        if pod_bearing:
            try:
                per_pod = _pod_totals(comp, spec)
            except ResolveError as exc:
                where = f"instance {iid!r} resources" if iid else "resources"
                raise ResolveFieldError(dname, comp.name, where, str(exc)) from exc
            total = per_pod.times(scale.desired)
        else:
            per_pod = total = EMPTY_TOTALS
        instances.append(
            build(
                Instance,
                {
                    "component": comp.name,
                    "id": iid,
                    "index": i,
                    "scale": scale,
                    "spec": spec,
                    "pod_resources": per_pod,
                    "resources": total,
                },
            )
        )
    return build(
        Component,
        {
            "name": comp.name,
            "definition": comp.definition,
            "parent": comp.parent,
            "children": comp.children,
            "instances": tuple(instances),
            "status": evaluate_status(comp, dname, data),
            "resources": sum_totals(i.resources for i in instances) if pod_bearing else EMPTY_TOTALS,
        },
    )


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _resolve(compiled: CompiledDefinition, data: dict[str, Any]) -> Workload:
    components: dict[str, Component] = {}
    for comp in compiled.components.values():
        components[comp.name] = _component(compiled, comp, data)
    # Tree scoping is checked now (so a bad shape fails here); the nodes are built on first use.
    for resolved in components.values():
        if len(resolved.instances) != 1:
            for child_name in resolved.children:
                scope_children(compiled.name, resolved, components[child_name])
    root = components[compiled.root_name]
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    return build(
        Workload,
        {
            "definition_name": compiled.name,
            "api_version": _str_or_none(data.get("apiVersion")),
            "kind": _str_or_none(data.get("kind")),
            "name": _str_or_none(meta.get("name")),
            "namespace": _str_or_none(meta.get("namespace")),
            "uid": _str_or_none(meta.get("uid")),
            "components": MappingProxyType(components),
            "root_name": compiled.root_name,
            "status": root.status if root.status is not None else UNDEFINED_STATUS,
            "resources": sum_totals(c.resources for c in components.values() if c.has_pod_definition),
        },
    )
