"""Queries that run on Pod objects (upstream spec 3.5), shared by pod attribution and gangs.

* component type: no selector, or one with neither ``keyPath`` nor ``matchLabels``, never
  matches; every ``matchLabels`` entry must equal the pod's label; then no ``keyPath`` matches,
  ``keyPath`` without ``value`` matches any non-null result, ``keyPath`` with ``value`` matches
  when any result equals that string;
* single-value queries (instance id, replica key, group keys): exactly one result, not null,
  not ``""``; stringified with Go's default formatting;
* filters: each yields exactly one result, and it is boolean ``true``.

The queries take the compiled forms from :mod:`workload_map.resolve.compiled` (a component's
:class:`~workload_map.resolve.compiled.CompiledPodSelector`, a gang member's compiled paths), so
no pod-side expression is parsed here. Failures raise :class:`PodQueryError` (a
:class:`~workload_map.errors.ResolveError`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workload_map.errors import ExpressionError, ResolveError
from workload_map.resolve.compiled import CompiledComponent, CompiledExpression


class PodQueryError(ResolveError):
    """A query on a pod failed (no single value, an evaluation error...)."""


def pod_name(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") if isinstance(pod, Mapping) else None
    name = meta.get("name") if isinstance(meta, Mapping) else None
    return name if isinstance(name, str) else ""


def pod_labels(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = pod.get("metadata") if isinstance(pod, Mapping) else None
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def go_string(value: Any) -> str:
    """A JSON scalar as Go's ``fmt`` default formatting prints it (``%v``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if value is None:
        return "<nil>"
    # Arrays and objects: Go prints maps/slices in its own syntax; no catalog key relies on it.
    return str(value)


def _go_float(f: float) -> str:
    if f != f:
        return "NaN"
    if f in (float("inf"), float("-inf")):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if str(f).startswith("-") else "0"
    text = repr(abs(f))
    mantissa, _, exp_text = text.partition("e")
    exp10 = int(exp_text) if exp_text else 0
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    # decimal point position relative to the start of ``digits``
    lead_zeros = len(int_part + frac_part) - len((int_part + frac_part).lstrip("0"))
    dp = len(int_part) - lead_zeros + exp10
    digits = digits.rstrip("0") or "0"
    exp = dp - 1
    sign = "-" if f < 0 else ""
    # strconv 'g' with shortest precision switches to an exponent at 1e+06 (Go %v).
    if exp < -4 or exp >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if dp <= 0:
        return f"{sign}0.{'0' * (-dp)}{digits}"
    if dp >= len(digits):
        return f"{sign}{digits}{'0' * (dp - len(digits))}"
    return f"{sign}{digits[:dp]}.{digits[dp:]}"


def _all(expr: CompiledExpression, pod: Mapping[str, Any]) -> list[Any]:
    try:
        return expr.expr.all(pod)
    except ExpressionError as exc:
        raise PodQueryError(
            f"failed to evaluate {expr.source!r} on pod {pod_name(pod)}: {exc.message}"
        ) from exc


def has_type_selector(comp: CompiledComponent) -> bool:
    sel = comp.pod_selector
    return sel is not None and (sel.type_key is not None or bool(sel.match_labels))


def matches_component_type(comp: CompiledComponent, pod: Mapping[str, Any]) -> bool:
    sel = comp.pod_selector
    if sel is None or not (sel.type_key is not None or sel.match_labels):
        return False
    labels = pod_labels(pod)
    for key, value in (sel.match_labels or {}).items():
        if labels.get(key) != value:
            return False
    if sel.type_key is None:
        return True
    results = _all(sel.type_key, pod)
    if sel.type_value is None:
        return any(r is not None for r in results)
    return any(isinstance(r, str) and r == sel.type_value for r in results)


def single_value(expr: CompiledExpression, pod: Mapping[str, Any]) -> str:
    results = _all(expr, pod)
    if len(results) != 1:
        raise PodQueryError(f"expected single query result, got {len(results)}")
    value = results[0]
    if value is None or value == "":
        raise PodQueryError(f"query result is empty {go_string(value)}")
    return go_string(value)


def passes_filters(filters: Iterable[CompiledExpression], pod: Mapping[str, Any]) -> bool:
    for expr in filters:
        results = _all(expr, pod)
        if len(results) != 1 or results[0] is not True:
            return False
    return True


def matching_instance_id(comp: CompiledComponent, pod: Mapping[str, Any], ids: tuple[str, ...]) -> str:
    """The pod's instance id among ``ids`` (spec 3.5)."""
    sel = comp.pod_selector.instance_id if comp.pod_selector else None
    if sel is None:
        if ids == ("",):
            return ""
        raise PodQueryError(
            f"component {comp.name!r} has instances {list(ids)} but no componentInstanceSelector"
        )
    value = single_value(sel, pod)
    if value not in ids:
        existing = "[" + " ".join(ids) + "]"
        raise PodQueryError(f'could not match instance id "{value}". existing instance ids {existing}')
    return value


def group_keys_of(paths: Iterable[CompiledExpression], pod: Mapping[str, Any]) -> tuple[str, ...]:
    """One non-empty single value per path (``groupByKeyPaths``)."""
    return tuple(single_value(p, pod) for p in paths)
