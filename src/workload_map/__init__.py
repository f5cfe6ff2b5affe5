"""Workload Map: one declarative Karta definition answers, for any Kubernetes workload type,
what its structure is, what phase it is in, and how its pod specs can be changed safely."""

from __future__ import annotations

__version__ = "0.1.0"

# Not ``from typing import TYPE_CHECKING``: importing typing costs about as much as starting the
# interpreter, and ``wmap --help`` imports this package (workload_map.cli.entry).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from workload_map.resolve import CompiledDefinition, Workload, compile_definition
    from workload_map.resolve.resolver import resolve

# The front door is exported lazily so that ``import workload_map`` stays light (no pydantic,
# no jq engine) until it is used.
_LAZY = {
    "compile_definition": "workload_map.resolve",
    "CompiledDefinition": "workload_map.resolve",
    "Workload": "workload_map.resolve",
}

__all__ = ["CompiledDefinition", "Workload", "__version__", "compile_definition", "resolve"]


def __getattr__(name: str) -> Any:
    import importlib

    if name == "resolve":
        # ``workload_map.resolve`` is the resolver package, and the package is callable:
        # ``resolve(definition, obj)`` calls ``workload_map.resolve.resolver.resolve``. (A
        # function of the same name would be replaced by the package as soon as any of its
        # modules is imported.) Type checkers see the function.
        return importlib.import_module("workload_map.resolve")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'workload_map' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
