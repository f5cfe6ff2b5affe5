"""Workload Map: one declarative Karta definition answers, for any Kubernetes workload type,
what its structure is, what phase it is in, and how its pod specs can be changed safely."""

__version__ = "0.1.0"

import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workload_map.resolve import CompiledDefinition, Workload, compile_definition
    from workload_map.resolve.resolver import resolve

# The front door is exported lazily so that ``import workload_map`` stays light (no pydantic,
# no jq engine) until it is used.
_LAZY = {
    "resolve": "workload_map.resolve",
    "compile_definition": "workload_map.resolve",
    "CompiledDefinition": "workload_map.resolve",
    "Workload": "workload_map.resolve",
}

__all__ = ["CompiledDefinition", "Workload", "__version__", "compile_definition", "resolve"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'workload_map' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """``workload_map.resolve`` is the *function*; the import system would otherwise replace it
    with the subpackage of the same name as soon as that is imported. The subpackage stays
    importable with ``from workload_map.resolve import ...`` (it lives in ``sys.modules``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
