"""The front door: :func:`resolve` a workload object through a definition.

See docs/library.md for the rules (instances, zipping, tree scoping, status, resources).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import orjson

from workload_map.errors import ResolveError, WorkloadMapError
from workload_map.model.definition import Karta
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
from workload_map.resolve.types import (
    UNDEFINED_STATUS,
    Component,
    ComponentNode,
    ExtractedSpec,
    Instance,
    InstanceNode,
    Workload,
)

WorkloadObject = Mapping[str, Any] | str | bytes | bytearray | memoryview


def load_object(obj: WorkloadObject) -> dict[str, Any]:
    """The workload object as JSON data: a mapping as is, JSON text or bytes parsed with orjson."""
    if isinstance(obj, dict):
        return obj
    if isinstance(obj, Mapping):
        return dict(obj)
    if isinstance(obj, str | bytes | bytearray | memoryview):
        try:
            data = orjson.loads(obj)
        except orjson.JSONDecodeError as exc:
            raise ResolveError(f"workload object is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise ResolveError(f"workload object must be a JSON object, got {jq_type(data)}")
        return data
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


def resolve_many(
    definition: Karta | CompiledDefinition, objects: list[WorkloadObject]
) -> list[Workload]:
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
            Instance(
                component=comp.name,
                id=iid,
                index=i,
                scale=scale,
                spec=spec,
                pod_resources=per_pod,
                resources=total,
            )
        )
    return Component(
        name=comp.name,
        definition=comp.definition,
        parent=comp.parent,
        children=comp.children,
        instances=tuple(instances),
        status=evaluate_status(comp, dname, data),
        resources=sum_totals(i.resources for i in instances) if pod_bearing else EMPTY_TOTALS,
    )


def scope_children(
    definition: str, parent: Component, child: Component
) -> list[list[tuple[Instance, bool]]]:
    """For each parent instance, the child instances attached under it and whether shared.

    Rules, first that applies:

    1. the parent has one instance: every child instance goes under it;
    2. the child has an ``instanceIdPath`` and every child id is a parent id: by id;
    3. the child has exactly one instance per parent instance: by position;
    4. the child has exactly one instance: under every parent instance, marked shared;
    5. the child has no instances: nothing;
    otherwise a :class:`ResolveFieldError`.
    """
    n_parent = len(parent.instances)
    kids = child.instances
    if n_parent == 1:
        return [[(k, False) for k in kids]]
    if n_parent == 0 or not kids:
        return [[] for _ in range(n_parent)]
    if child.definition.instance_id_path is not None:
        pos = {p.id: i for i, p in enumerate(parent.instances)}
        if all(k.id in pos for k in kids):
            out: list[list[tuple[Instance, bool]]] = [[] for _ in range(n_parent)]
            for k in kids:
                out[pos[k.id]].append((k, False))
            return out
    if len(kids) == n_parent:
        return [[(k, False)] for k in kids]
    if len(kids) == 1:
        return [[(kids[0], True)] for _ in range(n_parent)]
    raise ResolveFieldError(
        definition,
        child.name,
        "ownerRef",
        f"cannot scope {len(kids)} instances {list(child.instance_ids)} under the "
        f"{n_parent} instances {list(parent.instance_ids)} of parent \"{parent.name}\": ids do not "
        "match the parent's and the counts differ",
    )


def _tree(definition: str, components: Mapping[str, Component], root: str) -> ComponentNode:
    memo: dict[tuple[str, int], InstanceNode] = {}

    def instance_node(comp: Component, inst: Instance) -> InstanceNode:
        key = (comp.name, inst.index)
        hit = memo.get(key)
        if hit is not None:
            return hit
        child_nodes: list[ComponentNode] = []
        for child_name in comp.children:
            child = components[child_name]
            # Scoping is computed per parent once; pick this instance's share.
            scoped = scoping[(comp.name, child_name)][inst.index]
            child_nodes.append(
                ComponentNode(
                    name=child_name,
                    instances=tuple(
                        replace(instance_node(child, k), shared=True) if shared else instance_node(child, k)
                        for k, shared in scoped
                    ),
                )
            )
        node = InstanceNode(instance=inst, children=tuple(child_nodes))
        memo[key] = node
        return node

    scoping: dict[tuple[str, str], list[list[tuple[Instance, bool]]]] = {}
    for comp in components.values():
        for child_name in comp.children:
            scoping[(comp.name, child_name)] = scope_children(definition, comp, components[child_name])
    root_comp = components[root]
    return ComponentNode(name=root, instances=tuple(instance_node(root_comp, i) for i in root_comp.instances))


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _resolve(compiled: CompiledDefinition, data: dict[str, Any]) -> Workload:
    components: dict[str, Component] = {}
    for comp in compiled.components.values():
        components[comp.name] = _component(compiled, comp, data)
    tree = _tree(compiled.name, components, compiled.root_name)
    root = components[compiled.root_name]
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    return Workload(
        definition_name=compiled.name,
        api_version=_str_or_none(data.get("apiVersion")),
        kind=_str_or_none(data.get("kind")),
        name=_str_or_none(meta.get("name")),
        namespace=_str_or_none(meta.get("namespace")),
        uid=_str_or_none(meta.get("uid")),
        components=MappingProxyType(components),
        tree=tree,
        status=root.status if root.status is not None else UNDEFINED_STATUS,
        resources=sum_totals(c.resources for c in components.values() if c.has_pod_definition),
    )
