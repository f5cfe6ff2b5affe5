"""Instance ids, extracted specs and scales of one component (spec 3.2, with fixes).

Every function takes the compiled component, the definition name (for error messages) and the
workload object, and raises :class:`~workload_map.resolve.ResolveFieldError` with the
definition, component and field on any problem.

Zipping rules (documented in docs/library.md):

* ids come from ``instanceIdPath`` in result order (not sorted); strings as they are, numbers
  stringified as jq ``tostring`` does (``1`` -> ``"1"``); anything else, an empty id or a
  duplicate id is an error;
* without ``instanceIdPath`` there is one instance, id ``""``;
* each aspect's results must be as many as the ids
  (``instance ids count (<n>) does not match results count (<m>)``), except that a
  single-instance component (no ``instanceIdPath``) whose path yields nothing at all is treated
  like a path yielding ``null``: the aspect is unset (upstream fails there).
"""

from __future__ import annotations

from typing import Any

from workload_map.resolve._fast import build
from workload_map.resolve._support import ResolveFieldError, jq_tostring, jq_type, wrap_error
from workload_map.resolve.compiled import CompiledComponent, CompiledExpression
from workload_map.resolve.types import ExtractedSpec, FragmentedPodSpec, Scale

_INT32_MAX = 2**31 - 1
_ARTICLE: dict[type, str] = {str: "a string", dict: "an object", list: "an array"}

# Expected JSON type per fragmented field.
_FRAGMENT_TYPES: dict[str, type] = {
    "scheduler_name_path": str,
    "labels_path": dict,
    "annotations_path": dict,
    "resources_path": dict,
    "resource_claims_path": list,
    "pod_affinity_path": dict,
    "node_affinity_path": dict,
    "containers_path": list,
    "container_path": dict,
    "priority_class_name_path": str,
    "image_path": str,
}


def evaluate(definition: str, component: str, ce: CompiledExpression, data: Any) -> list[Any]:
    """All results of ``ce`` on ``data``; engine errors become :class:`ResolveFieldError`."""
    try:
        return ce.expr.all(data)
    except Exception as exc:
        raise ResolveFieldError(
            definition, component, _field(ce), f"failed to evaluate {ce.source!r}: {wrap_error(exc)}"
        ) from exc


def _field(ce: CompiledExpression) -> str:
    return ce.field or ce.location


def instance_ids(comp: CompiledComponent, definition: str, data: Any) -> tuple[str, ...]:
    """The component's instance ids, in result order; ``("",)`` without ``instanceIdPath``."""
    ce = comp.instance_id
    if ce is None:
        return ("",)
    results = evaluate(definition, comp.name, ce, data)
    ids: list[str] = []
    for i, value in enumerate(results):
        if isinstance(value, str):
            ids.append(value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            ids.append(jq_tostring(value))
        else:
            raise ResolveFieldError(
                definition,
                comp.name,
                "instanceIdPath",
                f"instance id at index {i} is {jq_type(value)} ({jq_tostring(value)}), expected a string",
            )
    if "" in ids:
        raise ResolveFieldError(
            definition,
            comp.name,
            "instanceIdPath",
            f"instance id path contained empty string values {_fmt(ids)}",
        )
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dups = [x for x in ids if x in seen or seen.add(x)]  # type: ignore[func-returns-value]
        raise ResolveFieldError(
            definition,
            comp.name,
            "instanceIdPath",
            f"instance id path contained duplicate values {_fmt(sorted(set(dups)))} (ids {_fmt(ids)})",
        )
    return tuple(ids)


def _fmt(values: list[str]) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def scales_by_id(comp: CompiledComponent, definition: str, data: Any) -> dict[str, Scale]:
    """The component's scale per instance id, in instance order (:func:`instance_ids` then
    :func:`scales`)."""
    ids = instance_ids(comp, definition, data)
    return dict(zip(ids, scales(comp, definition, data, ids), strict=True))


def _zip(
    comp: CompiledComponent,
    definition: str,
    field_name: str,
    results: list[Any],
    ids: tuple[str, ...],
) -> list[Any]:
    if len(results) == len(ids):
        return results
    if not results and comp.instance_id is None:
        return [None] * len(ids)
    raise ResolveFieldError(
        definition,
        comp.name,
        field_name,
        f"instance ids count ({len(ids)}) does not match results count ({len(results)})",
    )


def _object(comp: CompiledComponent, definition: str, field_name: str, i: int, value: Any) -> Any:
    if value is None or isinstance(value, dict):
        return value
    raise ResolveFieldError(
        definition, comp.name, field_name, f"result at index {i} is {jq_type(value)}, expected an object"
    )


def specs(comp: CompiledComponent, definition: str, data: Any, ids: tuple[str, ...]) -> list[ExtractedSpec]:
    """Per instance (aligned with ``ids``) the extracted spec."""
    n = len(ids)
    templates: list[Any] = [None] * n
    pod_specs: list[Any] = [None] * n
    metas: list[Any] = [None] * n
    frags: list[FragmentedPodSpec | None] = [None] * n
    for ce, target in (
        (comp.pod_template_spec, templates),
        (comp.pod_spec, pod_specs),
        (comp.metadata, metas),
    ):
        if ce is None:
            continue
        fname = _field(ce)
        zipped = _zip(comp, definition, fname, evaluate(definition, comp.name, ce, data), ids)
        for i, value in enumerate(zipped):
            target[i] = _object(comp, definition, fname, i, value)
    if comp.fragmented is not None:
        frags = list(_fragments(comp, definition, data, ids))
    return [
        build(
            ExtractedSpec,
            {
                "pod_template": templates[i],
                "pod_spec": pod_specs[i],
                "metadata": metas[i],
                "fragmented": frags[i],
            },
        )
        for i in range(n)
    ]


def _fragments(
    comp: CompiledComponent, definition: str, data: Any, ids: tuple[str, ...]
) -> list[FragmentedPodSpec]:
    assert comp.fragmented is not None
    per_field: list[tuple[str, str, list[Any]]] = []
    count = 0
    for fname, ce in comp.fragmented:
        results = evaluate(definition, comp.name, ce, data)
        count = max(count, len(results))
        per_field.append((fname, _field(ce), results))
    if count != len(ids) and not (count == 0 and comp.instance_id is None):
        raise ResolveFieldError(
            definition,
            comp.name,
            "specDefinition.fragmentedPodSpecDefinition",
            f"instance ids count ({len(ids)}) does not match results count ({count})",
        )
    out: list[FragmentedPodSpec] = []
    for i in range(len(ids)):
        kwargs: dict[str, Any] = {}
        for fname, label, results in per_field:
            value = results[i] if i < len(results) else None
            if value is not None and not isinstance(value, _FRAGMENT_TYPES[fname]):
                raise ResolveFieldError(
                    definition,
                    comp.name,
                    label,
                    f"result at index {i} is {jq_type(value)}, expected {_ARTICLE[_FRAGMENT_TYPES[fname]]}",
                )
            kwargs[fname[: -len("_path")]] = value
        out.append(FragmentedPodSpec(**kwargs))
    return out


def parse_replicas(value: Any, index: int) -> int | None:
    """One scale value: ``null`` = unset; ints; integral floats; base-10 numeric strings.

    Raises ``ValueError`` with the message to report.
    """
    if value.__class__ is int and 0 <= value <= _INT32_MAX:
        n: int = value
        return n
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"replicas value {jq_tostring(value)} at index {index} is a boolean, not a number")
    if isinstance(value, int):
        n = value
    elif isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"replicas value {jq_tostring(value)} at index {index} is not an integer")
        n = int(value)
    elif isinstance(value, str):
        text = value
        body = text[1:] if text[:1] in "+-" else text
        if not body or not body.isascii() or not body.isdigit():
            raise ValueError(f'replicas value "{value}" at index {index} is not a number')
        n = int(text)
    else:
        raise ValueError(
            f"replicas value {jq_tostring(value)} at index {index} is {jq_type(value)}, not a number"
        )
    if n < 0:
        raise ValueError(f"replicas value {jq_tostring(value)} at index {index} is negative")
    if n > _INT32_MAX:
        raise ValueError(f"replicas value {jq_tostring(value)} at index {index} is out of range")
    return n


def scales(comp: CompiledComponent, definition: str, data: Any, ids: tuple[str, ...]) -> list[Scale]:
    """Per instance (aligned with ``ids``) the scale; all unset without a scale definition."""
    if not comp.has_scale:
        return [_EMPTY_SCALE] * len(ids)
    columns: list[list[int | None]] = []
    count = 0
    for ce in (comp.replicas, comp.min_replicas, comp.max_replicas):
        if ce is None:
            columns.append([])
            continue
        results = evaluate(definition, comp.name, ce, data)
        parsed: list[int | None] = []
        for i, value in enumerate(results):
            try:
                parsed.append(parse_replicas(value, i))
            except ValueError as exc:
                raise ResolveFieldError(definition, comp.name, _field(ce), str(exc)) from None
        count = max(count, len(parsed))
        columns.append(parsed)
    if count != len(ids):
        if count == 0 and comp.instance_id is None:
            return [_EMPTY_SCALE] * len(ids)
        raise ResolveFieldError(
            definition,
            comp.name,
            "scaleDefinition",
            f"instance ids count ({len(ids)}) does not match results count ({count})",
        )
    reps, mins, maxs = columns
    nr, nmin, nmax = len(reps), len(mins), len(maxs)
    return [
        build(
            Scale,
            {
                "replicas": reps[i] if i < nr else None,
                "min_replicas": mins[i] if i < nmin else None,
                "max_replicas": maxs[i] if i < nmax else None,
            },
        )
        for i in range(count)
    ]


_EMPTY_SCALE = Scale()
