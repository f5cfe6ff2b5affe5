"""Definition access, instance ids and scales for the write-back, pod and gang modules.

Thin adapters over the resolver core (:mod:`workload_map.resolve.compiled`,
:mod:`workload_map.resolve.extract`): every public function here accepts a
:class:`~workload_map.model.definition.Karta` or a
:class:`~workload_map.resolve.compiled.CompiledDefinition` (compiled once, cached by the core).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workload_map.errors import DefinitionError, ResolveError
from workload_map.model.definition import ComponentDefinition, Karta, KartaSpec
from workload_map.resolve.compiled import CompiledComponent, CompiledDefinition, compile_definition
from workload_map.resolve.extract import instance_ids as _instance_ids
from workload_map.resolve.extract import scales as _scales
from workload_map.resolve.types import Scale

Definition = Karta | CompiledDefinition


def compiled(definition: Definition) -> CompiledDefinition:
    if isinstance(definition, CompiledDefinition):
        return definition
    if isinstance(definition, Karta):
        return compile_definition(definition)
    raise ResolveError(f"definition must be a Karta or a CompiledDefinition, got {type(definition).__name__}")


def karta_spec(definition: Definition) -> KartaSpec:
    return compiled(definition).karta.spec


def definition_name(definition: Definition) -> str:
    return compiled(definition).name or "<unnamed>"


def compiled_component(definition: Definition, name: str) -> CompiledComponent:
    try:
        return compiled(definition).component(name)
    except DefinitionError as exc:
        raise ResolveError(str(exc)) from exc


def component_def(definition: Definition, name: str) -> ComponentDefinition:
    return compiled_component(definition, name).definition


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


def instance_ids(definition: Definition, obj: Mapping[str, Any], component: str) -> tuple[str, ...]:
    """Instance ids of a component (the core's rules: ``("",)`` without ``instanceIdPath``)."""
    c = compiled(definition)
    return _instance_ids(c.component(component), c.name, obj)


def scales(definition: Definition, obj: Mapping[str, Any], component: str) -> dict[str, Scale]:
    """Scale per instance id, in instance order."""
    c = compiled(definition)
    comp = c.component(component)
    ids = _instance_ids(comp, c.name, obj)
    return dict(zip(ids, _scales(comp, c.name, obj, ids), strict=True))
