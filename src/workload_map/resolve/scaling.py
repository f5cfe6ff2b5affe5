"""Scaling a component through its definition: the count expression inverted on its syntax tree.

A component's ``scaleDefinition.replicasPath`` is mostly a computed pod count (upstream-spec 2.4:
units at that level across the workload), e.g. ``.spec.replicas // 1``, ``if
.spec.pytorchReplicaSpecs.Worker then (.spec.pytorchReplicaSpecs.Worker.replicas // 1) else 0
end``, ``(.spec.replicas // 1) * ((.spec.leaderWorkerTemplate.size // 1) - 1)``. To make it read
``N``, :func:`scale` walks the expression with the object in hand and decides which field to write:

* a path: write ``N`` there; ``P // x``: write ``P``; ``P | E``: invert ``E`` on the value at ``P``
  (``PATH[] | E`` once per instance, in instance order);
* ``if C then A else B end``: invert the branch ``C`` picks on the object (a constant branch,
  typically ``else 0`` for a role the object does not declare, cannot be scaled);
* ``A * B``: the factor that evaluates to a positive constant ``K`` stays, the other is inverted
  with ``N / K`` (``N`` must be a multiple of ``K``: that many pods make one unit). When both
  could be written, the factor whose fields no other component's count reads is chosen (an LWS's
  workers scale by ``size``, not by ``replicas``, which the group and leader counts also read);
* ``A + c``, ``A - c``, ``c - A``: ``A`` gets ``N - c``, ``N + c``, ``c - N``;
* ``[A, B...] | min`` (or ``max``): the first element that can be written gets ``N``, and the whole
  must then read ``N`` (a Job's ``min(parallelism, completions)`` scales by ``parallelism``);
* ``tonumber``, ``E?``, ``x as $v | E``, ``def``s: through;
* anything else (a constant, ``length``, object construction...) cannot be scaled: the error names
  the component, the part that blocks and the expression.

A component with no ``replicasPath`` but a ``minReplicasPath`` (KServe's predictor, a Knative
revision's ``min-scale`` annotation) is scaled through that: its desired count is its minimum.
After the writes the count is read again and must be exactly ``N`` for every instance (and
instance ids unchanged), else nothing is returned but an error. A value already equal to ``N``
needs no write, whatever the expression.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workload_map.errors import ExpressionError, PathError, ResolveError, WriteBackError
from workload_map.expr import ast as A
from workload_map.expr import compile_expression, parse_tree, read_paths, to_source
from workload_map.expr.unparse import definition_source
from workload_map.resolve._jq import Path, getpath, setpath
from workload_map.resolve._writepaths import Change, Target, compiled_for, component_of, make_change, set_at
from workload_map.resolve.compiled import CompiledComponent, CompiledExpression, Definition
from workload_map.resolve.extract import instance_ids, parse_replicas

#: Syntax nodes one inversion may visit, and how deeply nested: hostile expressions end in an
#: error, not in unbounded work (every evaluation is bounded by the engine's meter as well).
MAX_STEPS = 512
MAX_DEPTH = 64
INT32_MAX = 2**31 - 1


class CannotScaleError(WriteBackError):
    """The component's count cannot be made to read the requested number."""

    def __init__(self, message: str, *, definition: str, component: str, expression: str) -> None:
        super().__init__(message)
        self.definition = definition
        self.component = component
        self.expression = expression


class _Blocked(Exception):
    """This part of the expression cannot be inverted (``reason`` says why)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Write:
    """One field to write: an absolute path in the object and the value."""

    path: Path
    value: int | str


@dataclass(frozen=True)
class _Scope:
    """What a part of the expression sees: the ``def``s before it (as text, to compile parts with,
    and the zero-argument ones as trees, to invert through) and the bound variables' values."""

    defs: tuple[str, ...] = ()
    env: Mapping[str, Any] = field(default_factory=dict)
    functions: Mapping[str, A.Node] = field(default_factory=dict)

    def bind(self, name: str, value: Any) -> _Scope:
        return _Scope(self.defs, {**self.env, name: value}, self.functions)

    def define(self, node: A.FuncDef) -> _Scope:
        functions = dict(self.functions)
        if node.params:
            functions.pop(node.name, None)
        else:
            functions[node.name] = node.body
        return _Scope((*self.defs, definition_source(node)), self.env, functions)


def brief(source: str, limit: int = 120) -> str:
    """An expression on one line, cut to ``limit`` characters (for messages)."""
    text = " ".join(source.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _truthy(value: Any) -> bool:
    return value is not None and value is not False


def _number(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value)


def _same(value: Any, target: int) -> bool:
    n = _number(value)
    if n is None and isinstance(value, str):
        try:
            n = parse_replicas(value, 0)
        except ValueError:
            return False
    return n == target


def _elements(node: A.Node | None) -> list[A.Node]:
    if node is None:
        return []
    if isinstance(node, A.Comma):
        return [*_elements(node.left), *_elements(node.right)]
    return [node]


def _overlap(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


class _Inverter:
    def __init__(self, protected: Sequence[tuple[str, ...]]) -> None:
        self.protected = list(protected)
        self.steps = 0

    # -- evaluation of parts ----------------------------------------------------------------
    def _compile(self, node: A.Node, scope: _Scope) -> Any:
        text = " ".join((*scope.defs, to_source(node)))
        try:
            return compile_expression(text, tuple(scope.env))
        except ExpressionError as exc:
            raise _Blocked(f"`{brief(to_source(node))}` does not compile on its own: {exc}") from exc

    def values(self, node: A.Node, data: Any, scope: _Scope) -> list[Any]:
        try:
            out: list[Any] = self._compile(node, scope).all(data, dict(scope.env))
        except ExpressionError as exc:
            raise _Blocked(f"`{brief(to_source(node))}` fails on the object: {exc}") from exc
        return out

    def current(self, node: A.Node, data: Any, scope: _Scope) -> Any:
        """The one value ``node`` gives (``None`` for none or for an error)."""
        try:
            found = self._compile(node, scope).all(data, dict(scope.env))
        except (ExpressionError, _Blocked):
            return None
        if len(found) > 1:
            raise _Blocked(f"`{brief(to_source(node))}` gives {len(found)} values where one count is read")
        return found[0] if found else None

    def paths(self, node: A.Node, data: Any, scope: _Scope) -> list[Path] | None:
        """The paths ``node`` denotes, or ``None`` when it is not a path expression."""
        if isinstance(node, A.Literal):
            return None
        expr = self._compile(node, scope)
        if not expr.denotes_paths:
            return None
        try:
            return [tuple(p) for p in expr.paths(data, dict(scope.env))]
        except ExpressionError:
            return None

    def write_paths(self, node: A.Node, data: Any, scope: _Scope) -> list[Path] | None:
        """Where writing through ``node`` goes: its paths; for ``P // x`` the paths of ``P``."""
        while isinstance(node, A.Alt):
            node = node.left
        if isinstance(node, A.Try) and node.handler is None:
            node = node.body
        expr = self._compile(node, scope)
        if not expr.is_assignable:
            return None
        return self.paths(node, data, scope)

    def tick(self, depth: int) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _Blocked(f"the expression is too large to invert (more than {MAX_STEPS} steps)")
        if depth > MAX_DEPTH:
            raise _Blocked(f"the expression is nested too deeply to invert (more than {MAX_DEPTH} levels)")

    def protected_reads(self, node: A.Node, at: Path) -> bool:
        """Does ``node`` (read at ``at``) read a field another component's count reads?"""
        if not self.protected:
            return False
        base = tuple("[]" if isinstance(k, int) else str(k) for k in at)
        try:
            reads = read_paths(to_source(node))
        except ExpressionError:
            return True
        return any(_overlap((*base, *r), p) for r in reads for p in self.protected)

    # -- a stream of counts (one per instance) ---------------------------------------------
    def stream(
        self, node: A.Node, data: Any, scope: _Scope, targets: list[int], at: Path, depth: int
    ) -> list[Write]:
        self.tick(depth)
        if isinstance(node, A.FuncDef):
            return self.stream(node.rest, data, scope.define(node), targets, at, depth + 1)
        if isinstance(node, A.As) and isinstance(node.pattern, A.VarPattern) and not node.alternatives:
            out: list[Write] = []
            i = 0
            for v in self.values(node.source, data, scope):
                inner = scope.bind(node.pattern.name, v)
                n = len(self.values(node.body, data, inner))
                out += self.stream(node.body, data, inner, targets[i : i + n], at, depth + 1)
                i += n
            return out
        if isinstance(node, A.Comma):
            n = len(self.values(node.left, data, scope))
            return [
                *self.stream(node.left, data, scope, targets[:n], at, depth + 1),
                *self.stream(node.right, data, scope, targets[n:], at, depth + 1),
            ]
        if isinstance(node, A.Pipe):
            found = self.paths(node.left, data, scope)
            if found is not None and (len(found) != 1 or len(targets) != 1):
                out = []
                i = 0
                for p in found:
                    sub = getpath(data, p)
                    n = len(self.values(node.right, sub, scope))
                    out += self.stream(node.right, sub, scope, targets[i : i + n], (*at, *p), depth + 1)
                    i += n
                return out
        if len(targets) != 1:
            found = self.write_paths(node, data, scope)
            if found is not None and len(found) == len(targets):
                return [
                    self._write(data, p, t, at)
                    for p, t in zip(found, targets, strict=True)
                    if not _same(getpath(data, p), t)
                ]
            raise _Blocked(f"`{brief(to_source(node))}` gives one count where {len(targets)} are asked for")
        self.steps = 0  # the step budget is per instance
        return self.single(node, data, scope, targets[0], at, depth)

    # -- one count -----------------------------------------------------------------------
    def single(
        self, node: A.Node, data: Any, scope: _Scope, target: int, at: Path, depth: int
    ) -> list[Write]:
        self.tick(depth)
        now = self.current(node, data, scope)
        if _same(now, target):
            return []
        d = depth + 1
        if isinstance(node, A.FuncDef):
            return self.single(node.rest, data, scope.define(node), target, at, d)
        if isinstance(node, A.As) and isinstance(node.pattern, A.VarPattern) and not node.alternatives:
            bound = self.values(node.source, data, scope)
            if len(bound) != 1:
                raise _Blocked(f"`{brief(to_source(node.source))}` gives {len(bound)} values to bind")
            return self.single(node.body, data, scope.bind(node.pattern.name, bound[0]), target, at, d)
        if isinstance(node, A.If):
            cond = _truthy(self.current(node.cond, data, scope))
            branch = node.then if cond else (node.otherwise or A.Identity(node.offset))
            try:
                return self.single(branch, data, scope, target, at, d)
            except _Blocked as exc:
                why = f"`{brief(to_source(node.cond))}` is {'true' if cond else 'false'} on the object"
                raise _Blocked(f"{exc.reason}, because {why}") from None
        if isinstance(node, A.Alt):
            return self.single(node.left, data, scope, target, at, d)
        if isinstance(node, A.Try) and node.handler is None:
            return self.single(node.body, data, scope, target, at, d)
        if isinstance(node, A.Call) and not node.args and node.name in scope.functions:
            return self.single(scope.functions[node.name], data, scope, target, at, d)
        if isinstance(node, A.Call) and node.name == "tonumber" and not node.args:
            if not at:
                raise _Blocked("`tonumber` of the whole object cannot be written")
            return [Write(at, str(target))]
        if isinstance(node, A.Pipe):
            return self._pipe(node, data, scope, target, at, d)
        if isinstance(node, A.Binary) and node.op in ("*", "+", "-"):
            return self._arithmetic(node, data, scope, target, at, d)
        if isinstance(node, A.Literal):
            if node.value is None:
                raise _Blocked("the definition gives it no count here (null)")
            raise _Blocked(f"its count is the constant {to_source(node)}")
        found = self.write_paths(node, data, scope)
        if found is None:
            raise _Blocked(f"`{brief(to_source(node))}` is computed, not a field that can be written")
        if len(found) != 1:
            raise _Blocked(f"`{brief(to_source(node))}` denotes {len(found)} fields where one count is read")
        return [self._write(data, found[0], target, at)]

    @staticmethod
    def _write(data: Any, rel: Path, target: int, at: Path) -> Write:
        """``target`` at ``rel`` (a string where the field holds one, e.g. an annotation)."""
        if not (*at, *rel):
            raise _Blocked("the count is the whole object")
        return Write((*at, *rel), str(target) if isinstance(getpath(data, rel), str) else target)

    def _pipe(self, node: A.Pipe, data: Any, scope: _Scope, target: int, at: Path, d: int) -> list[Write]:
        right = node.right
        extreme = isinstance(right, A.Call) and right.name in ("min", "max") and not right.args
        if extreme and isinstance(node.left, A.ArrayCons):
            return self._extreme(node, _elements(node.left.body), data, scope, target, at, d)
        if not _invertible(right, scope):
            raise _Blocked(f"`{brief(to_source(right))}` computes the count")
        found = self.write_paths(node.left, data, scope)
        if found is None or len(found) != 1:
            raise _Blocked(f"`{brief(to_source(node.left))}` is not one field to descend into")
        p = found[0]
        return self.single(node.right, getpath(data, p), scope, target, (*at, *p), d)

    def _extreme(
        self, node: A.Pipe, elements: list[A.Node], data: Any, scope: _Scope, target: int, at: Path, d: int
    ) -> list[Write]:
        element = next((e for e in elements if _invertible(e, scope)), None)
        if element is None:
            raise _Blocked(f"`{brief(to_source(node))}` has no element that is a field to write")
        writes = self.single(element, data, scope, target, at, d)
        trial = data
        for w in writes:
            trial = set_at_plain(trial, w.path[len(at) :], w.value)
        got = self.current(node, trial, scope)
        if not _same(got, target):
            name = node.right.name if isinstance(node.right, A.Call) else "min"
            raise _Blocked(
                f"writing {target} into `{brief(to_source(element))}` leaves the {name} of "
                f"`{brief(to_source(node.left))}` at {got}"
            )
        return writes

    def _arithmetic(
        self, node: A.Binary, data: Any, scope: _Scope, target: int, at: Path, d: int
    ) -> list[Write]:
        sides = [(node.left, node.right, "left"), (node.right, node.left, "right")]
        candidates = [s for s in sides if _invertible(s[0], scope)]
        if not candidates:
            raise _Blocked(f"`{brief(to_source(node))}` has no factor that is a field to write")
        # One factor is written, the other stays: the one whose fields no other component's count
        # reads, else the first.
        candidates.sort(key=lambda s: self.protected_reads(s[0], at))
        side, other, which = candidates[0]
        k = _number(self.current(other, data, scope))
        if k is None:
            raise _Blocked(f"`{brief(to_source(other))}` is not a whole number on the object")
        if node.op == "*":
            if k <= 0:
                raise _Blocked(f"`{brief(to_source(other))}` is {k}, so the count stays 0")
            if target % k:
                raise _Blocked(
                    f"{target} is not a multiple of {k}: each unit of `{brief(to_source(side))}` is {k} pods "
                    f"(`{brief(to_source(other))}`)"
                )
            want = target // k
        elif node.op == "+":
            want = target - k
        else:
            want = target + k if which == "left" else k - target
        if want < 0 or want > INT32_MAX:
            raise _Blocked(f"`{brief(to_source(side))}` would have to be {want}")
        return self.single(side, data, scope, want, at, d)


def _invertible(node: A.Node, scope: _Scope | None = None, seen: int = 0) -> bool:
    """Static: could writing a field make ``node`` read a chosen number?"""
    if isinstance(node, (A.Index, A.Slice, A.Identity)):
        return True
    if isinstance(node, A.Alt):
        return _invertible(node.left, scope, seen)
    if isinstance(node, A.Try):
        return node.handler is None and _invertible(node.body, scope, seen)
    if isinstance(node, A.If):
        return _invertible(node.then, scope, seen) or (
            node.otherwise is not None and _invertible(node.otherwise, scope, seen)
        )
    if isinstance(node, (A.As, A.Label)):
        return _invertible(node.body, scope, seen)
    if isinstance(node, A.FuncDef):
        return _invertible(node.rest, (scope or _Scope()).define(node), seen)
    if isinstance(node, A.Binary) and node.op in ("*", "+", "-"):
        return _invertible(node.left, scope, seen) or _invertible(node.right, scope, seen)
    if isinstance(node, A.Pipe):
        right = node.right
        if isinstance(right, A.Call) and right.name in ("min", "max") and isinstance(node.left, A.ArrayCons):
            return any(_invertible(e, scope, seen) for e in _elements(node.left.body))
        return _invertible(node.left, scope, seen) and _invertible(right, scope, seen)
    if isinstance(node, A.Call) and not node.args and scope is not None and node.name in scope.functions:
        return seen < MAX_DEPTH and _invertible(scope.functions[node.name], scope, seen + 1)
    return isinstance(node, A.Call) and node.name == "tonumber" and not node.args


def set_at_plain(data: Any, path: Path, value: Any) -> Any:
    """``data`` with ``value`` at ``path`` (copy-on-write; a failure is :class:`_Blocked`)."""
    try:
        return setpath(data, path, value)
    except PathError as exc:
        raise _Blocked(f"cannot write at {list(path)}: {exc}") from exc


# --- the front door ------------------------------------------------------------------------------


def _count_expression(comp: CompiledComponent, dname: str) -> tuple[CompiledExpression, str]:
    if comp.replicas is not None:
        return comp.replicas, "scaleDefinition.replicasPath"
    if comp.min_replicas is not None:
        return comp.min_replicas, "scaleDefinition.minReplicasPath"
    raise CannotScaleError(
        f"component '{comp.name}' of definition '{dname}' cannot be scaled: it has no "
        "scaleDefinition.replicasPath (or minReplicasPath)",
        definition=dname,
        component=comp.name,
        expression="",
    )


def replica_targets(
    comp: CompiledComponent, dname: str, obj: Any, replicas: int | Mapping[str, int]
) -> list[int]:
    """One validated count per instance, in the order of the instance ids (the order the count
    expression reads them)."""
    try:
        ids = instance_ids(comp, dname, obj)
    except ResolveError as exc:
        raise WriteBackError(f"component '{comp.name}': {exc}") from exc
    if isinstance(replicas, Mapping):
        known = set(ids)
        for iid in replicas:
            if iid not in known:
                raise WriteBackError(
                    f"instance id {iid!r} is not an instance of component '{comp.name}' "
                    f"(instances: {list(ids)})"
                )
        for iid in ids:
            if iid not in replicas:
                raise WriteBackError(f"value not found for instance id: {iid}")
        wanted = [replicas[iid] for iid in ids]
    else:
        wanted = [replicas] * len(ids)
    for i, value in enumerate(wanted):
        if isinstance(value, bool) or not isinstance(value, int):
            raise WriteBackError(f"replicas for component '{comp.name}' must be an integer, got {value!r}")
        try:
            parse_replicas(value, i)
        except ValueError as exc:
            raise WriteBackError(f"replicas for component '{comp.name}': {exc}") from None
    return wanted


def _reads(comp: CompiledComponent, dname: str, obj: Any, ce: CompiledExpression) -> list[int | None]:
    try:
        values = ce.expr.all(obj)
        return [parse_replicas(v, i) for i, v in enumerate(values)]
    except (ExpressionError, ValueError) as exc:
        raise WriteBackError(
            f"component '{comp.name}': the count cannot be read after the write: {exc}"
        ) from exc


def scale(
    definition: Definition,
    obj: Mapping[str, Any],
    component: str,
    replicas: int | Mapping[str, int],
) -> Change:
    """Make ``component``'s count (its ``replicasPath``, else ``minReplicasPath``) read
    ``replicas``: one count for every instance, or ``{instance_id: count}`` naming each (a
    component without ``instanceIdPath`` has the single id ``""``). The count is in the
    definition's units, what ``wmap get`` shows: pods at that level across the workload.

    Raises :class:`CannotScaleError` naming the component, the blocking part and the expression
    when no field can make the count read the number, and :class:`WriteBackError` for a bad
    number or instance id. ``obj`` is never mutated.
    """
    comp, dname = component_of(definition, obj, component)
    ce, label = _count_expression(comp, dname)
    targets = replica_targets(comp, dname, obj, replicas)
    cd, _ = compiled_for(definition, obj)
    others = [c for c in cd.components.values() if c.name != comp.name and c.replicas is not None]
    protected: list[tuple[str, ...]] = []
    for other in others:
        assert other.replicas is not None
        try:
            protected += read_paths(other.replicas.source)
        except ExpressionError:
            continue
    expression = brief(ce.source)

    def refuse(reason: str) -> CannotScaleError:
        wanted = targets[0] if len(set(targets)) == 1 else targets
        return CannotScaleError(
            f"component '{comp.name}' of definition '{dname}' cannot be scaled to {wanted}: {reason} "
            f"({label}: '{expression}')",
            definition=dname,
            component=comp.name,
            expression=ce.source,
        )

    try:
        tree = parse_tree(ce.source)
        writes = _Inverter(protected).stream(tree, obj, _Scope(), targets, (), 0)
    except _Blocked as exc:
        raise refuse(exc.reason) from None
    t = Target(dname, comp.name, label, ce)
    new: Any = dict(obj)
    for w in writes:
        new = set_at(new, w.path, w.value, t)
    before_ids = instance_ids(comp, dname, obj)
    try:
        after_ids = instance_ids(comp, dname, new)
    except ResolveError as exc:
        raise refuse(f"the write breaks the instance ids ({exc})") from None
    if after_ids != before_ids:
        raise refuse(f"the write changes the instances from {list(before_ids)} to {list(after_ids)}")
    got = _reads(comp, dname, new, ce)
    if got != targets:
        fields = ", ".join(f"{'.'.join(map(str, w.path))}={w.value}" for w in writes)
        raise refuse(f"writing {fields or 'nothing'} makes it read {got}")
    if comp.max_replicas is not None and ce is comp.min_replicas:
        maxima = _reads(comp, dname, new, comp.max_replicas)
        for t_, m in zip(targets, maxima, strict=False):
            if m is not None and t_ > m:
                raise refuse(f"its maxReplicasPath reads {m}, below {t_}")
    return make_change(obj, new)


__all__ = ["MAX_DEPTH", "MAX_STEPS", "CannotScaleError", "Write", "brief", "replica_targets", "scale"]
