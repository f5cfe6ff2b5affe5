"""Tree scoping: which child instances sit under which parent instance.

Paths are absolute from the workload root, so a child of a multi-instance parent yields one
flat list of instances across all parent instances. :func:`scope_children` decides where each
child instance goes (rules in its docstring and in docs/library.md, "Tree scoping").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from workload_map.resolve._support import ResolveFieldError
from workload_map.resolve.types import Component, ComponentNode, Instance, InstanceNode


def scope_children(definition: str, parent: Component, child: Component) -> list[list[tuple[Instance, bool]]]:
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
        f'{n_parent} instances {list(parent.instance_ids)} of parent "{parent.name}": ids do not '
        "match the parent's and the counts differ",
    )


def build_tree(definition: str, components: Mapping[str, Component], root: str) -> ComponentNode:
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
