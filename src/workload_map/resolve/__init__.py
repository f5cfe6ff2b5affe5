"""The resolver: a workload object read through its Karta definition.

Front door::

    from workload_map import resolve, compile_definition

    workload = resolve(karta, obj)              # obj: dict, or JSON text/bytes
    compiled = compile_definition(karta)        # compile once ...
    workloads = [resolve(compiled, o) for o in objs]  # ... resolve many

The package itself is callable: ``workload_map.resolve(definition, obj)`` is
:func:`workload_map.resolve.resolver.resolve`, so ``from workload_map import resolve`` gives
the front door whether or not a submodule was imported first.

See docs/library.md.
"""

import sys
from types import ModuleType as _ModuleType
from typing import Any

from workload_map.resolve._support import ResolveFieldError
from workload_map.resolve.compiled import (
    CompiledComponent,
    CompiledDefinition,
    CompiledExpression,
    compile_definition,
)
from workload_map.resolve.quantity import QuantityError, parse_quantity
from workload_map.resolve.resolver import load_object, resolve, resolve_many, resolve_status
from workload_map.resolve.resources import ResourceTotals
from workload_map.resolve.tree import build_tree, scope_children
from workload_map.resolve.types import (
    Component,
    ComponentNode,
    Condition,
    ExtractedSpec,
    FragmentedPodSpec,
    Instance,
    InstanceNode,
    Scale,
    Workload,
    WorkloadStatus,
)

__all__ = [
    "CompiledComponent",
    "CompiledDefinition",
    "CompiledExpression",
    "Component",
    "ComponentNode",
    "Condition",
    "ExtractedSpec",
    "FragmentedPodSpec",
    "Instance",
    "InstanceNode",
    "QuantityError",
    "ResolveFieldError",
    "ResourceTotals",
    "Scale",
    "Workload",
    "WorkloadStatus",
    "build_tree",
    "compile_definition",
    "load_object",
    "parse_quantity",
    "resolve",
    "resolve_many",
    "resolve_status",
    "scope_children",
]


class _CallablePackage(_ModuleType):
    def __call__(self, definition: Any, obj: Any) -> Workload:
        return resolve(definition, obj)


sys.modules[__name__].__class__ = _CallablePackage
