"""Test setup for the resolver.

The jq engine (``workload_map.expr``) is written in parallel. Until it provides
``compile_expression``, a stand-in on the ``jq`` bindings (a dev dependency) is installed here
so the resolver tests run; once the engine lands the stand-in is never used.
"""

from __future__ import annotations

from typing import Any

from workload_map.errors import ExpressionRuntimeError, ExpressionSyntaxError


def _install_stand_in() -> None:
    try:
        from workload_map.expr import compile_expression  # noqa: F401

        return
    except ImportError:
        pass
    import functools
    import importlib

    import jq

    class _StandIn:
        def __init__(self, source: str) -> None:
            self.source = source
            try:
                self._prog = jq.compile(source)
            except ValueError as exc:
                raise ExpressionSyntaxError(source, str(exc)) from None

        def all(self, data: Any, variables: Any = None) -> list[Any]:
            try:
                out: list[Any] = self._prog.input_value(data).all()
            except ValueError as exc:
                raise ExpressionRuntimeError(self.source, str(exc)) from None
            return out

        def first(self, data: Any) -> Any:
            results = self.all(data)
            return results[0] if results else None

    engine = importlib.import_module("workload_map.expr")
    engine.compile_expression = functools.lru_cache(maxsize=4096)(_StandIn)  # type: ignore[attr-defined]


_install_stand_in()
