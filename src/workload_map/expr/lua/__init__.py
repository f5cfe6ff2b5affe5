"""workload_map.expr.lua: the Lua 5.1 back end of the expression compiler.

The front end is the Python back end's (lexer, parser, the same static checks); this package writes
Lua from the checked syntax tree for Lua as Karmada runs it (gopher-lua, with the base, table,
string and math libraries of Karmada's sandbox; ``string.gsub``/``rep``/``dump`` are not there).

* :func:`compile_lua` -> :class:`LuaExpression`: ``filter`` is a Lua expression evaluating to a
  function ``function(x, emit)`` that calls ``emit(v)`` for each output, in the Python back end's
  order; ``paths`` (when asked for and the expression is a translatable path) is a function
  ``function(x, path, emit)`` calling ``emit(value, path)``. An expression with ``$variables``
  compiles to a function of a table of them that returns the filter.
* :func:`runtime_chunk`: the Lua source of the runtime table ``J`` every filter uses (a chunk that
  returns it: ``local J = (function() ... end)()``).
* :data:`LUA_BUILTINS`: per builtin (name, arity) its translation or the reason it has none.

Semantics follow the Python back end, with the differences the Lua values force (also in
docs/multicluster.md): Karmada hands Lua an object whose ``null`` fields and array elements are
gone (gopher-json), so ``has("a")``/``keys``/``length`` do not see null members and ``null``
elements of input arrays are dropped; an empty ``{}`` or ``[]`` of the input is one empty table,
whose ``type`` is "object" and whose ``tojson`` is ``{}`` (indexing, iterating, adding and
comparing it work for either); input objects iterate in sorted key order (the order Karmada's JSON
has); numbers are doubles (integers beyond 2**53 are not exact, ``tonumber("1.0")`` prints as
``1``); error messages may differ. Every loop is bounded by the input: ``until``, recursive
functions, regular expressions, dates and the C library's transcendental functions are refused.
Each evaluation (``J.start()`` .. ``J.stop()``; the resolver runtime brackets every one) has a step
budget of ``J.BUDGET`` (the Python back end's 1,000,000): one step per element a loop visits, per
node ``tojson`` reads, per pair of containers ``==`` or a comparison reads, per element a copy or
a sort handles, per 32 characters built. The Python cost model charges at least that for the same
work, so the Lua refuses nothing the Python answers (tests/expr/test_lua_backend.py probes it near
the budget), and a hostile definition stops there instead of spending Karmada's one-second script
timeout.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from functools import cache
from importlib import resources
from threading import Lock

from workload_map.errors import (
    ExpressionNotTranslatableError,
    ExpressionSafetyError,
    ExpressionSyntaxError,
)

from ..checks import find_issues
from ..parser import parse, tree_depth
from .builtins import LUA_BUILTINS, Translation
from .emit import MAX_DEPTH, Emitter, Env, Untranslatable, lua_string

__all__ = [
    "LUA_BUILTINS",
    "LuaExpression",
    "Translation",
    "compile_lua",
    "lua_string",
    "runtime_chunk",
]


@dataclass(frozen=True)
class LuaExpression:
    source: str
    #: ``function(x, emit)`` (or, with variables, ``function(vars)`` returning it).
    filter: str
    variables: tuple[str, ...] = ()
    #: ``function(x, path, emit)``, when the expression is a path the back end writes through.
    paths: str | None = None


_CACHE: OrderedDict[tuple[str, tuple[str, ...], bool], LuaExpression] = OrderedDict()
_LOCK = Lock()
_CACHE_SIZE = 1024


def _not_translatable(source: str, exc: Untranslatable) -> ExpressionNotTranslatableError:
    return ExpressionNotTranslatableError(
        source, f"cannot translate {exc.construct} to Lua: {exc.reason}", exc.construct
    )


def compile_lua(source: str, variables: tuple[str, ...] = (), *, paths: bool = False) -> LuaExpression:
    """Translate ``source`` to Lua. Raises ``ExpressionSyntaxError``/``ExpressionSafetyError``
    exactly as :func:`workload_map.expr.compile_expression` would, and
    :class:`ExpressionNotTranslatableError` naming the construct the Lua back end refuses; with
    ``paths`` also when the expression is not a path it translates."""
    names = tuple(sorted(set(variables)))
    key = (source, names, paths)
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    try:
        root = parse(source)
    except ExpressionSyntaxError as exc:
        raise ExpressionSyntaxError(source, exc.message, exc.offset) from None
    issues = find_issues(root, names)
    if issues:
        raise ExpressionSafetyError(source, issues[0].message)
    depth, _ = tree_depth(root)
    if depth > MAX_DEPTH:
        raise _not_translatable(
            source, Untranslatable("nesting", f"more than {MAX_DEPTH} levels deep for Lua")
        )
    emitter = Emitter()
    env = Env(vars={n: f"vars[{lua_string(n)}]" for n in names})
    try:
        body = emitter.filter(root, env)
        path_body = emitter.paths(root, env, 0) if paths else None
    except Untranslatable as exc:
        raise _not_translatable(source, exc) from None
    if names:
        body = f"function(vars) return {body} end"
        if path_body is not None:
            path_body = f"function(vars) return {path_body} end"
    result = LuaExpression(source, body, names, path_body)
    with _LOCK:
        _CACHE[key] = result
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return result


@cache
def runtime_chunk() -> str:
    """The jq runtime's Lua source: a chunk whose value is the table ``J``."""
    return resources.files(__package__).joinpath("jq_runtime.lua").read_text(encoding="utf-8")
