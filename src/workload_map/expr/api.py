"""Public entry points: ``compile_expression``, ``Expression``, ``analyze``.

Safety model, in short (details in the package docstring): static rules reject forbidden
constructs before anything runs; every evaluation carries a step budget, a result cap, size caps
for strings/arrays and a recursion bound; internal Python exceptions never escape as such.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from threading import Lock
from typing import Any

from workload_map.errors import (
    ExpressionError,
    ExpressionLimitError,
    ExpressionRuntimeError,
    ExpressionSafetyError,
    ExpressionSyntaxError,
    PathError,
)

from . import ast as A
from .checks import Finding, find_issues
from .compiler import CompileFailure, Program, build
from .parser import parse, tree_depth
from .paths import setpath
from .readpaths import static_output_paths, static_read_paths
from .runtime import MAX_RESULTS, TEMPLATE, BreakOut, JqError, JqPathError, LimitExceeded, Meter, measure

CACHE_SIZE = 1024


def _caret(source: str, offset: int | None) -> str:
    if offset is None:
        return ""
    line_start = source.rfind("\n", 0, offset) + 1
    line_end = source.find("\n", offset)
    if line_end < 0:
        line_end = len(source)
    return f"\n    {source[line_start:line_end]}\n    {' ' * (offset - line_start)}^"


def _syntax_error(source: str, message: str, offset: int | None) -> ExpressionSyntaxError:
    where = f" at offset {offset}" if offset is not None else ""
    return ExpressionSyntaxError(source, f"{message}{where}{_caret(source, offset)}", offset)


# What a called name means to ``_assignable``: a definition (with the functions visible where it
# was defined) or a closure argument (with the functions visible at the call site).
_Funcs = dict[tuple[str, int], tuple[str, A.Node, "Any"]]

# Builtins that are path expressions whatever their arguments (arguments run as values).
_PATH_BUILTINS = frozenset(
    {
        ("select", 1),
        ("empty", 0),
        ("getpath", 1),
        ("first", 0),
        ("last", 0),
        ("nth", 1),
        ("debug", 0),
        ("debug", 1),
        ("stderr", 0),
        *((name, 0) for name in ("values", "nulls", "booleans", "numbers", "strings", "arrays")),
        *((name, 0) for name in ("objects", "iterables", "scalars", "finites", "normals")),
    }
)


def _assignable(
    node: A.Node,
    funcs: _Funcs | None = None,
    active: frozenset[int] = frozenset(),
    *,
    alternatives: bool = True,
) -> bool:
    """Static: does the expression denote paths (so ``paths()``/``assign`` cannot fail with
    "Invalid path expression")? Conservative; follows user functions like path mode does.
    With ``alternatives=False`` an ``a // b`` is refused: which side it writes depends on the data."""
    fs: _Funcs = funcs if funcs is not None else {}

    def ok(n: A.Node, f: _Funcs = fs) -> bool:
        return _assignable(n, f, active, alternatives=alternatives)

    if isinstance(node, (A.Identity, A.Break)):
        return True
    if isinstance(node, (A.Index, A.Slice, A.Iterate)):
        return ok(node.target)
    if isinstance(node, A.Alt) and not alternatives:
        return False
    if isinstance(node, (A.Pipe, A.Comma, A.Alt)):
        return ok(node.left) and ok(node.right)
    if isinstance(node, A.Try):
        handler_ok = node.handler is None or (
            isinstance(node.handler, A.Call) and node.handler.name == "empty" and not node.handler.args
        )
        return handler_ok and ok(node.body)
    if isinstance(node, A.If):
        return ok(node.then) and (node.otherwise is None or ok(node.otherwise))
    if isinstance(node, A.As):
        # libjq indexes destructured values in path-tracking mode (and fails); `$x` binds are fine.
        return isinstance(node.pattern, A.VarPattern) and not node.alternatives and ok(node.body)
    if isinstance(node, A.Reduce):
        return ok(node.init) and ok(node.update)
    if isinstance(node, A.Foreach):
        return ok(node.init) and ok(node.update) and (node.extract is None or ok(node.extract))
    if isinstance(node, A.Label):
        return ok(node.body)
    if isinstance(node, A.FuncDef):
        return ok(node.rest, {**fs, (node.name, len(node.params)): ("def", node, fs)})
    if isinstance(node, A.Call):
        key = (node.name, len(node.args))
        entry = fs.get(key)
        if entry is not None:
            kind, target, where = entry
            if kind == "arg":
                return _assignable(target, where, active, alternatives=alternatives)
            assert isinstance(target, A.FuncDef)
            if id(target) in active:
                return True  # recursion: assume the other branches decide
            inner: _Funcs = {**where, key: entry}
            for param, arg in zip(target.params, node.args, strict=True):
                inner[(param.lstrip("$"), 0)] = ("arg", arg, fs)
            return _assignable(target.body, inner, active | {id(target)}, alternatives=alternatives)
        if key in _PATH_BUILTINS:
            return True
        if key in (("first", 1), ("limit", 2), ("nth", 2)):
            return ok(node.args[-1])
        return False
    return False


def _check_built(value: Any, meter: Meter | None) -> Meter:
    """A result the expression built (not a part of its input) may share children, so its
    expanded size can be exponential in the work done: measured, on the evaluation's budget,
    before a caller walks or serializes it. Path expressions only return parts of the input.
    A program that charged no meter gets a fresh one for the measure."""
    if meter is None:
        meter = TEMPLATE[:]
    measure(meter, value)
    return meter


class Expression:
    """A compiled jq expression. Thread-safe; evaluate as often as you like."""

    __slots__ = ("_program", "_variables", "denotes_paths", "is_assignable", "source")

    def __init__(
        self,
        source: str,
        program: Program,
        assignable: bool,
        variables: tuple[str, ...],
        denotes_paths: bool | None = None,
    ) -> None:
        self.source = source
        self._program = program
        # Safe to write through: denotes paths that do not depend on the data's truthiness
        # (upstream's authoring rule: `//` alternatives read fine but are not write paths).
        self.is_assignable = assignable
        # jq's own rule: `path(expr)` cannot fail with "Invalid path expression" (`//` included).
        self.denotes_paths = assignable if denotes_paths is None else denotes_paths
        self._variables = variables

    def __repr__(self) -> str:
        return f"Expression({self.source!r})"

    def _vars(self, variables: Mapping[str, Any] | None) -> Mapping[str, Any]:
        if not self._variables:
            return {}
        given = variables or {}
        missing = [n for n in self._variables if n not in given]
        if missing:
            raise ExpressionRuntimeError(self.source, f"${missing[0]} is not defined (no value given)")
        return given

    def _fail(self, exc: BaseException) -> ExpressionError:
        if isinstance(exc, ExpressionError):
            return exc
        if isinstance(exc, JqPathError):
            return PathError(self.source, exc.message)
        if isinstance(exc, JqError):
            return ExpressionRuntimeError(self.source, exc.message)
        if isinstance(exc, LimitExceeded):
            return ExpressionLimitError(self.source, str(exc))
        if isinstance(exc, RecursionError):
            return ExpressionLimitError(self.source, "recursion or nesting too deep (limit exceeded)")
        if isinstance(exc, MemoryError):
            return ExpressionLimitError(self.source, "out of memory while evaluating")
        if isinstance(exc, BreakOut):
            return ExpressionRuntimeError(self.source, "break")
        return ExpressionRuntimeError(self.source, f"internal error: {type(exc).__name__}: {exc}")

    def all(
        self, data: Any, variables: Mapping[str, Any] | None = None, *, meter: Meter | None = None
    ) -> list[Any]:
        """Every output in order; more than MAX_RESULTS raises ExpressionLimitError. ``meter``
        (``runtime.start()``) is charged instead of a fresh one: pass one to read afterwards
        what the evaluation used (``runtime.used``)."""
        try:
            program = self._program
            if meter is None and program.all_metered:
                meter = TEMPLATE[:]
            out = program.all_fn(data, self._vars(variables), meter)
            if not self.denotes_paths:
                for value in out:
                    if type(value) is list or type(value) is dict:  # inlined: the hot path is scalars
                        meter = _check_built(value, meter)
            return out
        except Exception as exc:
            raise self._fail(exc) from exc

    def first(
        self, data: Any, variables: Mapping[str, Any] | None = None, *, meter: Meter | None = None
    ) -> Any:
        """The first output, or None when there is none; later outputs are not computed."""
        try:
            program = self._program
            if meter is None and program.first_metered:
                meter = TEMPLATE[:]
            value = program.first_fn(data, self._vars(variables), meter)
            if not self.denotes_paths and (type(value) is list or type(value) is dict):
                _check_built(value, meter)
            return value
        except Exception as exc:
            raise self._fail(exc) from exc

    def paths(self, data: Any, variables: Mapping[str, Any] | None = None) -> list[tuple[str | int, ...]]:
        """Like jq ``[path(expr)]``; raises PathError for expressions that are not paths."""
        try:
            return self._program.paths_fn(data, self._vars(variables))
        except Exception as exc:
            raise self._fail(exc) from exc

    def assign(self, data: Any, value: Any, variables: Mapping[str, Any] | None = None) -> Any:
        """jq ``(expr) = value``: a new document with ``value`` at every path; input untouched."""
        result = data
        for p in self.paths(data, variables):
            try:
                result = setpath(result, p, value)
            except Exception as exc:
                raise self._fail(exc) from exc
        return result

    def set_each(self, data: Any, values: Sequence[Any], variables: Mapping[str, Any] | None = None) -> Any:
        """Write ``values[i]`` at the i-th path of ``paths(data)``."""
        paths = self.paths(data, variables)
        if len(paths) != len(values):
            raise PathError(
                self.source, f"array length mismatch: expected {len(paths)} values but got {len(values)}"
            )
        result = data
        for p, v in zip(paths, values, strict=False):
            try:
                result = setpath(result, p, v)
            except Exception as exc:
                raise self._fail(exc) from exc
        return result

    @property
    def generated_source(self) -> str:
        """The Python source generated for this expression (for debugging)."""
        return self._program.code


_cache: OrderedDict[tuple[str, tuple[str, ...]], Expression] = OrderedDict()
_cache_lock = Lock()


def _parse(source: str) -> A.Node:
    try:
        return parse(source)
    except ExpressionSyntaxError as exc:
        raise _syntax_error(source, exc.message, exc.offset) from None


# The checks and the code generator recurse over the tree, several Python frames per level:
# a tree deeper than this compiles on a helper thread with a large stack and recursion limit, so
# every tree the parser accepts (up to MAX_TREE_DEPTH) compiles.
SHALLOW_TREE = 24
_DEEP_STACK_BYTES = 256 << 20
_DEEP_RECURSION = 60_000
_deep_lock = Lock()


def _on_deep_stack(work: Callable[[], Expression]) -> Expression:
    box: list[Expression | BaseException] = []

    def run() -> None:
        try:
            box.append(work())
        except BaseException as exc:  # re-raised on the calling thread
            box.append(exc)

    with _deep_lock:  # the recursion limit is per process: raise it for one compile at a time
        old_limit = sys.getrecursionlimit()
        old_stack = threading.stack_size(_DEEP_STACK_BYTES)
        try:
            sys.setrecursionlimit(max(old_limit, _DEEP_RECURSION))
            worker = threading.Thread(target=run, name="wmap-compile")
            worker.start()
            worker.join()
        finally:
            threading.stack_size(old_stack)
            sys.setrecursionlimit(old_limit)
    result = box[0]
    if isinstance(result, BaseException):
        raise result
    return result


def _compile_tree(source: str, root: A.Node, names: tuple[str, ...]) -> Expression:
    issues = find_issues(root, names)
    if issues:
        first = issues[0]
        raise ExpressionSafetyError(source, first.message)
    try:
        program = build(root, names)
    except CompileFailure as exc:
        raise ExpressionSafetyError(source, str(exc)) from None
    except SyntaxError as exc:
        # CPython's own limits on generated code, e.g. "too many statically nested blocks".
        raise ExpressionSafetyError(
            source, f"expression is too complex to compile ({exc.msg}): fewer nested reduce/foreach/if"
        ) from None
    except (RecursionError, MemoryError, OverflowError):
        raise ExpressionSafetyError(source, "expression is too complex to compile") from None
    return Expression(
        source, program, _assignable(root, alternatives=False), names, denotes_paths=_assignable(root)
    )


def compile_expression(source: str, variables: Iterable[str] = ()) -> Expression:
    """Parse, check and compile ``source``. ``variables`` names the ``$vars`` callers will pass.

    Raises ExpressionSyntaxError (bad text) or ExpressionSafetyError (forbidden construct,
    undefined function or variable). Results are cached by source text.
    """
    names = tuple(sorted(set(variables)))
    key = (source, names)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    root = _parse(source)
    depth, _ = tree_depth(root)
    if depth > SHALLOW_TREE:
        expr = _on_deep_stack(lambda: _compile_tree(source, root, names))
    else:
        expr = _compile_tree(source, root, names)
    with _cache_lock:
        _cache[key] = expr
        if len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return expr


def analyze(source: str, variables: Iterable[str] = ()) -> list[Finding]:
    """Every static finding (syntax, Karta rules, undefined names) without raising."""
    try:
        root = parse(source)
    except ExpressionSyntaxError as exc:
        return [Finding("syntax", exc.message, exc.offset)]
    return find_issues(root, tuple(sorted(set(variables))))


def parse_tree(source: str) -> A.Node:
    """The syntax tree of ``source`` (frozen nodes of :mod:`workload_map.expr.ast`), for callers
    that take an expression apart, e.g. to invert a computed replica count. A part prints back
    as jq text with :func:`workload_map.expr.unparse.to_source` and compiles on its own with
    :func:`compile_expression`. Raises ``ExpressionSyntaxError`` (with a caret) like compiling."""
    return _parse(source)


def read_paths(expr: Expression | str) -> list[tuple[str, ...]]:
    """Static input field paths the expression reads (best effort), e.g.
    ``.spec.a[].b // 1`` -> ``[("spec", "a", "[]", "b")]``."""
    source = expr.source if isinstance(expr, Expression) else expr
    return static_read_paths(_parse(source))


def output_paths(expr: Expression | str) -> list[tuple[str, ...]]:
    """Static input field paths whose values the expression yields as its output (best effort),
    as opposed to the fields it only reads to compute something: ``.spec.replicas // 1`` ->
    ``[("spec", "replicas")]``; ``.spec.x | if .a then .a else .b end`` -> ``[("spec", "x", "a"),
    ("spec", "x", "b")]``; ``.spec.a * 2``, ``{r: .spec.r}`` or ``length`` -> ``[]``. The
    paths are a subset of :func:`read_paths`, in first-seen order without duplicates; the bare
    input (``.``) is not a path. Raises ``ExpressionSyntaxError`` for text that does not parse."""
    source = expr.source if isinstance(expr, Expression) else expr
    return static_output_paths(_parse(source))


__all__ = [
    "MAX_RESULTS",
    "Expression",
    "Finding",
    "analyze",
    "compile_expression",
    "output_paths",
    "parse_tree",
    "read_paths",
]
