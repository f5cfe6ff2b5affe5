"""WorkloadPolicy: declared pod-template changes for every workload a definition covers, applied
at admission (``wmap operator``'s mutating webhook) and shown offline (``wmap policy preview``).

A policy (``workload-map.dev/v1alpha1``, kind ``WorkloadPolicy``, cluster-scoped)::

    spec:
      order: 10                    # lower first; ties by name
      operations: [CREATE]         # and/or UPDATE (default CREATE)
      namespaceSelector: {matchLabels: {team: ml}}      # a LabelSelector; none: every namespace
      workloadSelector: {matchExpressions: [...]}       # on the workload's own labels
      kinds: [JobSet, leaderworkerset.x-k8s.io/LeaderWorkerSet]   # KIND or GROUP/KIND; none: all
      components: [worker]         # only these components' pod templates
      overwrite: false             # false: a value the workload (or an earlier policy) set is kept
      set:                         # the edits (workload_map.resolve.editdoc)
        schedulerName: kai-scheduler
        podLabels: {set: {kai.scheduler/queue: {fromNamespaceLabel: queue, default: default}}}
        priorityClassName: {fromWorkloadLabel: priority}
        tolerations: {add: [{key: nvidia.com/gpu, effect: NoSchedule}]}

String values may come from the namespace's or the workload's labels (``fromNamespaceLabel``,
``fromWorkloadLabel``, with an optional ``default``); a label that is missing without a default
drops that one value, with a warning. Policies are applied in ``(order, name)`` order, each on the
result of the ones before; a policy that changes what an earlier one set is reported as a
conflict (the later wins when it overwrites, the earlier when it keeps). Locations a definition
cannot carry an edit for (a fragmented spec without tolerations) are skipped with a warning rather
than refusing the workload.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workload_map.kube.objects import labels_of, meta, split_api_version
from workload_map.kube.validation import qualified_name_problem
from workload_map.resolve._writepaths import Change, make_change
from workload_map.resolve.compiled import Definition
from workload_map.resolve.editdoc import edits_from_document
from workload_map.resolve.edits import InvalidEditError
from workload_map.resolve.fit import label_requirement_error, label_requirement_matches
from workload_map.resolve.podedit import apply_edits

GROUP = "workload-map.dev"
VERSION = "v1alpha1"
KIND = "WorkloadPolicy"
PLURAL = "workloadpolicies"
API_VERSION = f"{GROUP}/{VERSION}"
OPERATIONS = ("CREATE", "UPDATE")
#: Policies applied to one object at most (the rest, by order, are reported and skipped).
MAX_POLICIES = 200
#: Entries of ``kinds``/``components``, selector terms and values at most.
MAX_LIST = 100
#: Where a value source may stand (string positions of the edit document).
SOURCE_KEYS = ("fromNamespaceLabel", "fromWorkloadLabel", "default")


class InvalidPolicyError(InvalidEditError):
    """A WorkloadPolicy breaks its schema (``field`` is the path, e.g. ``spec.kinds[0]``)."""


def _fail(where: str, message: str) -> InvalidPolicyError:
    return InvalidPolicyError(f"{where}: {message}", field=where)


@dataclass(frozen=True)
class Selector:
    """A Kubernetes LabelSelector (``matchLabels`` ANDed with ``matchExpressions``)."""

    match_labels: Mapping[str, str] = field(default_factory=dict)
    match_expressions: tuple[Mapping[str, Any], ...] = ()

    def matches(self, labels: Mapping[str, Any]) -> bool:
        if any(labels.get(k) != v for k, v in self.match_labels.items()):
            return False
        return all(label_requirement_matches(e, labels) for e in self.match_expressions)


def _selector(value: Any, where: str) -> Selector | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise _fail(where, "must be a LabelSelector object")
    unknown = [k for k in value if k not in ("matchLabels", "matchExpressions")]
    if unknown:
        raise _fail(f"{where}.{unknown[0]}", "unknown field (matchLabels, matchExpressions)")
    labels = value.get("matchLabels") or {}
    if not isinstance(labels, Mapping) or len(labels) > MAX_LIST:
        raise _fail(f"{where}.matchLabels", f"must be an object of at most {MAX_LIST} labels")
    for k, v in labels.items():
        if not isinstance(v, str):
            raise _fail(f"{where}.matchLabels[{k}]", "must be a string")
        problem = qualified_name_problem(str(k))
        if problem:
            raise _fail(f"{where}.matchLabels[{k}]", f"invalid label key: {problem}")
    exprs = value.get("matchExpressions") or []
    if not isinstance(exprs, list) or len(exprs) > MAX_LIST:
        raise _fail(f"{where}.matchExpressions", f"must be a list of at most {MAX_LIST} requirements")
    for i, e in enumerate(exprs):
        at = f"{where}.matchExpressions[{i}]"
        if isinstance(e, Mapping) and e.get("operator") in ("Gt", "Lt"):
            raise _fail(f"{at}.operator", "a label selector takes In, NotIn, Exists or DoesNotExist")
        problem = label_requirement_error(e)
        if problem:
            raise _fail(at, problem.replace("node selector operator", "label selector operator"))
    return Selector({str(k): v for k, v in labels.items()}, tuple(exprs))


def _names(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_LIST:
        raise _fail(where, f"must be a list of at most {MAX_LIST} strings")
    for i, v in enumerate(value):
        if not isinstance(v, str) or not v:
            raise _fail(f"{where}[{i}]", "must be a non-empty string")
    return tuple(value)


@dataclass(frozen=True)
class WorkloadPolicy:
    """A parsed, valid policy (see the module notes)."""

    name: str
    order: int
    operations: tuple[str, ...]
    namespace_selector: Selector | None
    workload_selector: Selector | None
    kinds: tuple[str, ...]
    components: tuple[str, ...]
    overwrite: bool
    set: Mapping[str, Any]

    def matches(
        self,
        operation: str,
        group: str,
        kind: str,
        namespace_labels: Mapping[str, Any],
        labels: Mapping[str, Any],
    ) -> bool:
        """Whether this policy applies to an admission of this object."""
        if operation not in self.operations:
            return False
        if self.kinds and kind not in self.kinds and f"{group}/{kind}" not in self.kinds:
            return False
        if self.namespace_selector is not None and not self.namespace_selector.matches(namespace_labels):
            return False
        return self.workload_selector is None or self.workload_selector.matches(labels)


_SPEC_KEYS = (
    "order",
    "operations",
    "namespaceSelector",
    "workloadSelector",
    "kinds",
    "components",
    "overwrite",
    "set",
)


def parse_policy(obj: Any) -> WorkloadPolicy:
    """A WorkloadPolicy object checked field by field; :class:`InvalidPolicyError` names the
    first bad field (``spec.set.tolerations.add[0].effect: ...``)."""
    if not isinstance(obj, Mapping):
        raise _fail("object", "a WorkloadPolicy must be an object")
    if obj.get("apiVersion") not in (None, API_VERSION) or obj.get("kind") not in (None, KIND):
        raise _fail("apiVersion", f"expected {API_VERSION} {KIND}")
    name = str(meta(obj).get("name") or "")
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        raise _fail("spec", "is required (an object)")
    unknown = [k for k in spec if k not in _SPEC_KEYS]
    if unknown:
        raise _fail(f"spec.{unknown[0]}", f"unknown field (expected one of {', '.join(_SPEC_KEYS)})")
    order = spec.get("order", 0)
    if isinstance(order, bool) or not isinstance(order, int) or not -(2**31) <= order < 2**31:
        raise _fail("spec.order", "must be a 32-bit integer")
    operations = _names(spec.get("operations"), "spec.operations") or ("CREATE",)
    for i, op in enumerate(operations):
        if op not in OPERATIONS:
            raise _fail(f"spec.operations[{i}]", f"{op!r} is not one of {', '.join(OPERATIONS)}")
    kinds = _names(spec.get("kinds"), "spec.kinds")
    for i, k in enumerate(kinds):
        group, slash, kind = k.rpartition("/")
        if not kind or (slash and not group) or not kind[:1].isupper():
            raise _fail(
                f"spec.kinds[{i}]", f"{k!r} is not KIND or GROUP/KIND (e.g. JobSet, jobset.x-k8s.io/JobSet)"
            )
    overwrite = spec.get("overwrite", False)
    if not isinstance(overwrite, bool):
        raise _fail("spec.overwrite", "must be true or false")
    body = spec.get("set")
    if not isinstance(body, Mapping):
        raise _fail("spec.set", "is required: the changes to make (schedulerName, podLabels, tolerations...)")
    _check_sources(body, "spec.set")
    edits_from_document(fill_sources(body, _Placeholder(), where="spec.set")[0], "spec.set")
    return WorkloadPolicy(
        name=name,
        order=order,
        operations=operations,
        namespace_selector=_selector(spec.get("namespaceSelector"), "spec.namespaceSelector"),
        workload_selector=_selector(spec.get("workloadSelector"), "spec.workloadSelector"),
        kinds=kinds,
        components=_names(spec.get("components"), "spec.components"),
        overwrite=overwrite,
        set=copy.deepcopy(dict(body)),
    )


# --- value sources -------------------------------------------------------------------------------

#: Positions (paths in the edit document, ``*`` for any key or index) where a value may be taken
#: from a label.
_SOURCE_POSITIONS = (
    ("schedulerName",),
    ("priorityClassName",),
    ("image", "*", "image"),
    ("env", "*", "set", "*"),
    ("nodeSelector", "set", "*"),
    ("tolerations", "add", "*", "value"),
    ("podLabels", "set", "*"),
    ("podAnnotations", "set", "*"),
    ("labels", "set", "*"),
    ("annotations", "set", "*"),
)


def _is_source(value: Any) -> bool:
    return isinstance(value, Mapping) and ("fromNamespaceLabel" in value or "fromWorkloadLabel" in value)


def _allowed(path: tuple[str, ...]) -> bool:
    return any(
        len(p) == len(path) and all(a == "*" or a == b for a, b in zip(p, path, strict=True))
        for p in _SOURCE_POSITIONS
    )


def _key(at: str, key: Any) -> str:
    """``at.key``, or ``at[key]`` for a key that is not a plain name (``kai.scheduler/queue``)."""
    text = str(key)
    return f"{at}.{text}" if text.isidentifier() else f"{at}[{text}]"


def _check_sources(node: Any, where: str, path: tuple[str, ...] = ()) -> None:
    if _is_source(node):
        if not _allowed(path):
            raise _fail(
                where,
                "a value from a label may stand only for a name, image, env, label, annotation, "
                "node selector or toleration value",
            )
        unknown = [k for k in node if k not in SOURCE_KEYS]
        if unknown:
            raise _fail(
                _key(where, unknown[0]), f"unknown field in a value source ({', '.join(SOURCE_KEYS)})"
            )
        keys = [k for k in ("fromNamespaceLabel", "fromWorkloadLabel") if k in node]
        if len(keys) != 1:
            raise _fail(where, "give exactly one of fromNamespaceLabel or fromWorkloadLabel")
        label = node[keys[0]]
        if not isinstance(label, str) or qualified_name_problem(label):
            raise _fail(f"{where}.{keys[0]}", f"{label!r} is not a label key")
        if "default" in node and not isinstance(node["default"], str):
            raise _fail(f"{where}.default", "must be a string")
        return
    if isinstance(node, Mapping):
        for k, v in node.items():
            _check_sources(v, _key(where, k), (*path, str(k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _check_sources(v, f"{where}[{i}]", (*path, str(i)))


class _Placeholder:
    """Label lookups for validation: every source gives ``x`` (valid in every source position)."""

    def label(self, _source: str, _key: str) -> str:
        return "x"


class _Labels:
    def __init__(self, namespace: Mapping[str, Any], workload: Mapping[str, Any]) -> None:
        self.namespace = namespace
        self.workload = workload

    def label(self, source: str, key: str) -> str | None:
        found = (self.namespace if source == "fromNamespaceLabel" else self.workload).get(key)
        return found if isinstance(found, str) else None


def fill_sources(node: Any, labels: _Labels | _Placeholder, where: str = "spec.set") -> tuple[Any, list[str]]:
    """``node`` with every value source replaced by its label's value (or default); a missing one
    without a default drops its entry. Returns (document, warnings)."""
    missing: list[str] = []

    def fill(n: Any, at: str) -> tuple[bool, Any]:
        if _is_source(n):
            source = "fromNamespaceLabel" if "fromNamespaceLabel" in n else "fromWorkloadLabel"
            value = labels.label(source, n[source])
            if value is None:
                value = n.get("default")
            if value is None:
                whose = "namespace" if source == "fromNamespaceLabel" else "workload"
                missing.append(
                    f"{at}: the {whose} has no label {n[source]!r} and there is no default; left out"
                )
                return False, None
            return True, value
        if isinstance(n, Mapping):
            out = {}
            for k, v in n.items():
                keep, value = fill(v, _key(at, k))
                if keep:
                    out[k] = value
            return True, out
        if isinstance(n, list):
            items = []
            for i, v in enumerate(n):
                keep, value = fill(v, f"{at}[{i}]")
                if keep:
                    items.append(value)
            return True, items
        return True, n

    return fill(node, where)[1], missing


# --- applying --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyResult:
    """What the policies did to one object: the :class:`Change` (from the object as given),
    the policies that applied (names, in order) and warnings (conflicts, kept values, missing
    labels, locations skipped)."""

    change: Change
    applied: tuple[str, ...]
    warnings: tuple[str, ...]


def ordered(policies: Iterable[WorkloadPolicy]) -> list[WorkloadPolicy]:
    """The defined order: ``spec.order`` ascending, then name."""
    return sorted(policies, key=lambda p: (p.order, p.name))


_ABSENT = object()


def _dig(value: Any, tokens: list[str]) -> Any:
    for t in tokens:
        if isinstance(value, Mapping) and t.replace("~1", "/").replace("~0", "~") in value:
            value = value[t.replace("~1", "/").replace("~0", "~")]
        elif isinstance(value, list) and t.isdigit() and int(t) < len(value):
            value = value[int(t)]
        else:
            return _ABSENT
    return value


def _conflict(path: str, value: Any, earlier_path: str, earlier_value: Any) -> bool:
    """Does a write of ``value`` at ``path`` change what an earlier policy wrote?"""
    if path == earlier_path:
        return bool(value != earlier_value)
    if path.startswith(earlier_path + "/"):  # inside what the earlier one wrote
        before = _dig(earlier_value, path[len(earlier_path) + 1 :].split("/"))
        return before is not _ABSENT and bool(before != value)
    if earlier_path.startswith(path + "/"):  # over it
        after = _dig(value, earlier_path[len(path) + 1 :].split("/"))
        return bool(after != earlier_value)
    return False


def apply_policies(
    definition: Definition,
    obj: Mapping[str, Any],
    policies: Sequence[WorkloadPolicy],
    *,
    operation: str = "CREATE",
    namespace_labels: Mapping[str, Any] | None = None,
) -> PolicyResult:
    """Apply the policies that match ``obj`` (see the module notes). Invalid values met at this
    point (a label's value that is not a valid scheduler name...) skip that policy with a warning;
    nothing raises for a policy's sake, so admission is never blocked by one."""
    group, _ = split_api_version(str(obj.get("apiVersion") or ""))
    kind = str(obj.get("kind") or "")
    ns_labels = dict(namespace_labels or {})
    current: dict[str, Any] = dict(obj)
    applied: list[str] = []
    warnings: list[str] = []
    owners: dict[str, tuple[str, Any]] = {}  # JSON pointer -> (policy, value) it wrote
    candidates = [
        p for p in ordered(policies) if p.matches(operation, group, kind, ns_labels, labels_of(obj))
    ]
    if len(candidates) > MAX_POLICIES:
        skipped = ", ".join(p.name for p in candidates[MAX_POLICIES:][:5])
        warnings.append(
            f"{len(candidates)} policies match; only the first {MAX_POLICIES} by order apply "
            f"(skipped {skipped}...)"
        )
        candidates = candidates[:MAX_POLICIES]
    for policy in candidates:
        doc, missing = fill_sources(policy.set, _Labels(ns_labels, labels_of(current)))
        warnings += [f"policy {policy.name!r}: {m}" for m in missing]
        try:
            edits = edits_from_document(doc, "spec.set", existing="overwrite" if policy.overwrite else "keep")
            step = apply_edits(
                definition, current, edits, components=policy.components or None, unsupported="warn"
            )
        except InvalidEditError as exc:
            warnings.append(f"policy {policy.name!r} not applied: {exc}")
            continue
        except Exception as exc:  # a definition that cannot locate this object's pods, for example
            warnings.append(f"policy {policy.name!r} not applied: {exc}")
            continue
        warnings += [f"policy {policy.name!r}: {w}" for w in step.warnings]
        if not step.changed:
            applied.append(policy.name)
            continue
        for op in step.json_patch:
            for path, (earlier, value) in list(owners.items()):
                if earlier != policy.name and _conflict(op["path"], op.get("value"), path, value):
                    warnings.append(
                        f"policies {earlier!r} and {policy.name!r} both set {op['path']}: "
                        f"{policy.name!r} comes later (order {policy.order}) and wins"
                    )
            owners[op["path"]] = (policy.name, op.get("value"))
        current = step.new_object
        applied.append(policy.name)
    return PolicyResult(make_change(obj, current), tuple(applied), tuple(dict.fromkeys(warnings)))


__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "MAX_POLICIES",
    "OPERATIONS",
    "PLURAL",
    "VERSION",
    "InvalidPolicyError",
    "PolicyResult",
    "Selector",
    "WorkloadPolicy",
    "apply_policies",
    "fill_sources",
    "ordered",
    "parse_policy",
]
