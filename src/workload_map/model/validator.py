"""Semantic validation of a Karta definition: upstream's rules, then our extra checks.

Upstream rules (spec 2.10) come first, with upstream's exact message text, order and stop rules:

1. a missing definition (``karta is nil``);
2. duplicate component names; if any, validation stops there;
3. root rules, 4. child owner references, 5. per-component rules;
6. ownership cycles, only if 3-5 found nothing;
7. alpha gang-scheduling members naming unknown components;
8. static jq validation of every expression field.

Then our extra checks (codes KARTA2xx), documented in ``docs/validation.md``. As upstream treats
an empty string like an unset field (Go zero values), so do these rules.

Every finding carries the camelCase field path and, when a ``SourceMap`` is given,
``file:line:column``.

Cost: linear in the size of the definition (the cycle check colours components, matchers are
compared by hash), plus expression compiling, which is charged to a :class:`CompileBudget` shared
by every definition of one file (KARTA301 when it runs out). At most :data:`MAX_FINDINGS`
findings are kept per definition; one more (KARTA302) says how many were left out.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from workload_map import messages
from workload_map.model import _jq
from workload_map.model._jq import CompileBudget
from workload_map.model.definition import (
    GANG_EXPRESSION_VARIABLES,
    ComponentDefinition,
    ComponentInstanceSelector,
    ComponentTypeSelector,
    ConditionsDefinition,
    ExpressionMatcher,
    FragmentedPodSpecDefinition,
    GangExpressions,
    Karta,
    PhaseDefinition,
    PodGroupMember,
    ReplicaSelector,
    ResourceStatus,
    ScaleDefinition,
    SpecDefinition,
    StatusDefinition,
    StatusMatcher,
    SuspendAction,
    Topology,
    gvk_text,
)
from workload_map.model.findings import CODES, ERROR, WARNING, Finding, Severity, make
from workload_map.model.locations import SourceMap

__all__ = [
    "MAX_FINDINGS",
    "CompileBudget",
    "expression_fields",
    "expression_variables",
    "go_field_path",
    "validate_definition",
]

#: Findings kept per definition; the rest are counted in one KARTA302 finding.
MAX_FINDINGS = 200

T = TypeVar("T")
ROOT = "spec.structureDefinition.rootComponent"
GANG = "spec.optimizationInstructions.gangScheduling"


def _child(i: int) -> str:
    return f"spec.structureDefinition.childComponents[{i}]"


def go_field_path(path: str) -> str:
    """camelCase path -> upstream's Go field path: ``spec.structureDefinition.childComponents[1]``
    -> ``Spec.StructureDefinition.ChildComponents[1]``."""
    return ".".join(part[:1].upper() + part[1:] for part in path.split("."))


# Fields holding jq expressions (upstream tags them for validation), per model class.
_JQ_FIELDS: dict[type[BaseModel], frozenset[str]] = {
    SpecDefinition: frozenset({"pod_template_spec_path", "pod_spec_path", "metadata_path"}),
    FragmentedPodSpecDefinition: frozenset(FragmentedPodSpecDefinition.model_fields),
    ScaleDefinition: frozenset(ScaleDefinition.model_fields),
    PhaseDefinition: frozenset({"path"}),
    ConditionsDefinition: frozenset({"path"}),
    ExpressionMatcher: frozenset({"expression"}),
    SuspendAction: frozenset({"path"}),
    ComponentDefinition: frozenset({"instance_id_path"}),
    ComponentTypeSelector: frozenset({"key_path"}),
    ComponentInstanceSelector: frozenset({"id_path"}),
    ReplicaSelector: frozenset({"key_path"}),
    PodGroupMember: frozenset({"group_by_key_paths", "filters"}),
    GangExpressions: frozenset(GangExpressions.model_fields),
}

#: Where the gang expressions live: they alone may read ``$pod``.
GANG_EXPRESSIONS_PATH = "spec.optimizationInstructions.gangScheduling.expressions."


def expression_variables(path: str) -> tuple[str, ...]:
    """The ``$variables`` the jq expression at ``path`` (from :func:`expression_fields`) sees."""
    return GANG_EXPRESSION_VARIABLES if path.startswith(GANG_EXPRESSIONS_PATH) else ()


_SKIP_TOP = frozenset({"metadata", "status", "api_version", "kind"})


@functools.cache
def _plan(cls: type[BaseModel]) -> tuple[tuple[str, str, bool], ...]:
    """(Python name, wire name, holds jq?) for each field of ``cls``, in declaration order."""
    jq = _JQ_FIELDS.get(cls, frozenset())
    return tuple((name, info.alias or name, name in jq) for name, info in cls.model_fields.items())


def expression_fields(karta: Karta) -> Iterator[tuple[str, str]]:
    """Every jq expression in the definition as ``(camelCase field path, expression)``, in the
    order of the Go structs' fields (the order upstream reports them)."""

    def walk(model: BaseModel, path: str) -> Iterator[tuple[str, str]]:
        for name, alias, is_jq in _plan(type(model)):
            if not path and name in _SKIP_TOP:
                continue
            value = getattr(model, name)
            if value is None:
                continue
            sub = f"{path}.{alias}" if path else alias
            if is_jq:
                if isinstance(value, str):
                    yield sub, value
                elif isinstance(value, tuple):
                    for i, item in enumerate(value):
                        if isinstance(item, str):
                            yield f"{sub}[{i}]", item
            elif isinstance(value, BaseModel):
                yield from walk(value, sub)
            elif isinstance(value, tuple):
                for i, item in enumerate(value):
                    if isinstance(item, BaseModel):
                        yield from walk(item, f"{sub}[{i}]")

    yield from walk(karta, "")


@dataclass
class _Ctx:
    karta: Karta
    source_map: SourceMap | None
    findings: list[Finding]
    expressions: list[tuple[str, str]]
    budget: CompileBudget
    #: Findings left out past MAX_FINDINGS, by severity.
    suppressed: dict[str, int] = field(default_factory=dict)
    #: (component, field) pairs declared read-only by the Karta's annotation.
    read_only: frozenset[tuple[str, str]] = frozenset()
    #: The first expression the compile budget left unchecked (field path), and how many.
    unchecked: str | None = None
    unchecked_count: int = 0

    def add(self, code: str, message: str, field: str | None, *, offset: int | None = None) -> None:
        if len(self.findings) >= MAX_FINDINGS:
            severity = CODES[code].severity
            self.suppressed[severity] = self.suppressed.get(severity, 0) + 1
            return
        self.findings.append(self._make(code, message, field, offset=offset))

    def _make(
        self,
        code: str,
        message: str,
        field: str | None,
        *,
        offset: int | None = None,
        severity: Severity | None = None,
    ) -> Finding:
        location = None
        if self.source_map is not None and field is not None:
            location = self.source_map.location(field, offset=offset)
        return make(
            code,
            message,
            field=field,
            definition=self.karta.name or None,
            location=location,
            severity=severity,
        )

    def compile(self, path: str, work: Callable[[], T]) -> tuple[bool, T | None]:
        """``work`` (compiling the expression at ``path``) charged to the compile budget."""
        done, result = self.budget.run(work)
        if not done:
            self.unchecked_count += 1
            self.unchecked = self.unchecked or path
        return done, result

    def finish(self) -> list[Finding]:
        """The findings with the budget and cap notes (never themselves left out)."""
        out = list(self.findings)
        if self.unchecked is not None:
            out.append(
                self._make(
                    "KARTA301",
                    messages.compile_budget_exceeded(
                        self.budget.origin, self.budget.seconds, self.unchecked_count
                    ),
                    self.unchecked,
                )
            )
        hidden = sum(self.suppressed.values())
        if hidden:
            severity: Severity = ERROR if self.suppressed.get(ERROR) else WARNING
            out.append(
                self._make(
                    "KARTA302", messages.findings_suppressed(hidden, MAX_FINDINGS), None, severity=severity
                )
            )
        return out


def _components(karta: Karta) -> list[tuple[str, ComponentDefinition]]:
    s = karta.spec.structure_definition
    return [(ROOT, s.root_component), *((_child(i), c) for i, c in enumerate(s.child_components))]


def validate_definition(
    karta: Karta | None, *, source_map: SourceMap | None = None, budget: CompileBudget | None = None
) -> list[Finding]:
    """All findings for ``karta``: upstream rules first (exact text), then our extra checks.
    ``budget`` is the compile budget of the file the definition came from (shared with the other
    definitions of that file); without one, the definition gets a file's budget of its own."""
    if karta is None:
        return [make("KARTA001", messages.KARTA_IS_NIL)]
    if budget is None:
        origin = source_map.origin if source_map is not None else f'definition "{karta.name}"'
        budget = CompileBudget(origin)
    ctx = _Ctx(
        karta, source_map, [], list(expression_fields(karta)), budget, read_only=read_only_paths(karta)
    )
    if _check_unique_names(ctx):
        return ctx.finish()
    before = len(ctx.findings) + sum(ctx.suppressed.values())
    _check_root(ctx)
    _check_children(ctx)
    _check_components(ctx)
    if len(ctx.findings) + sum(ctx.suppressed.values()) == before:
        _check_cycles(ctx)
    _check_gang_members(ctx)
    _check_expressions(ctx)
    _extra_checks(ctx)
    return ctx.finish()


# --- upstream rules -----------------------------------------------------------------------


def _check_unique_names(ctx: _Ctx) -> bool:
    seen: set[str] = set()
    found = False
    for path, c in _components(ctx.karta):
        if c.name in seen:
            ctx.add("KARTA002", messages.component_name_not_unique(c.name), f"{path}.name")
            found = True
        seen.add(c.name)
    return found


def _check_root(ctx: _Ctx) -> None:
    root = ctx.karta.spec.structure_definition.root_component
    gvk = root.kind
    if gvk is None or not gvk.version or not gvk.kind or (not gvk.group and gvk.kind != "Pod"):
        ctx.add("KARTA003", messages.ROOT_FULL_KIND, f"{ROOT}.kind")
    if root.owner_ref:
        ctx.add("KARTA004", messages.ROOT_OWNER_REF, f"{ROOT}.ownerRef")
    if root.status_definition is None:
        ctx.add("KARTA005", messages.ROOT_STATUS_DEFINITION, f"{ROOT}.statusDefinition")


def _check_children(ctx: _Ctx) -> None:
    names = {c.name for _, c in _components(ctx.karta)}
    for i, c in enumerate(ctx.karta.spec.structure_definition.child_components):
        if not c.owner_ref:
            ctx.add("KARTA006", messages.child_no_owner_ref(c.name), f"{_child(i)}.ownerRef")
        elif c.owner_ref not in names:
            ctx.add("KARTA007", messages.child_owner_missing(c.name, c.owner_ref), f"{_child(i)}.ownerRef")


def _check_components(ctx: _Ctx) -> None:
    for path, c in _components(ctx.karta):
        if not c.name:
            ctx.add("KARTA008", messages.COMPONENT_NAME_EMPTY, f"{path}.name")
        spec = c.spec_definition
        if spec is not None:
            shapes = sum(
                (
                    bool(spec.pod_template_spec_path),
                    bool(spec.pod_spec_path),
                    spec.fragmented_pod_spec_definition is not None,
                )
            )
            if shapes > 1:
                ctx.add("KARTA009", messages.multiple_pod_specs(c.name), f"{path}.specDefinition")
        selector = c.pod_selector
        ts = selector.component_type_selector if selector else None
        if ts is not None:
            where = f"{path}.podSelector.componentTypeSelector"
            if not ts.key_path and not ts.match_labels:
                ctx.add("KARTA010", messages.type_selector_empty(c.name), where)
            if ts.value and not ts.key_path:
                ctx.add("KARTA011", messages.type_selector_value_without_key(c.name), where)
        has_instance_selector = selector is not None and selector.component_instance_selector is not None
        if c.instance_id_path and not has_instance_selector:
            ctx.add("KARTA012", messages.instance_id_without_selector(c.name), f"{path}.instanceIdPath")
        if has_instance_selector and not c.instance_id_path:
            ctx.add(
                "KARTA013",
                messages.instance_selector_without_id(c.name),
                f"{path}.podSelector.componentInstanceSelector",
            )


_ON_PATH, _DONE = 1, 2


def _check_cycles(ctx: _Ctx) -> None:
    """One finding per ownership cycle, naming its first declared member. Each component is
    coloured when its owner chain is walked (on the current walk, then done), so every component
    is visited once: linear in the number of components."""
    s = ctx.karta.spec.structure_definition
    owner = {c.name: c.owner_ref or "" for c in s.child_components}
    index = {c.name: i for i, c in enumerate(s.child_components)}
    colour: dict[str, int] = {s.root_component.name: _DONE}
    for c in s.child_components:
        chain: list[str] = []
        current = c.name
        while current in owner and current not in colour:
            colour[current] = _ON_PATH
            chain.append(current)
            current = owner[current]
        if colour.get(current) == _ON_PATH:  # the walk came back to itself: a new cycle
            cycle = chain[chain.index(current) :]
            first = min(cycle, key=lambda n: index[n])
            ctx.add("KARTA014", messages.ownership_cycle(first), f"{_child(index[first])}.ownerRef")
        for name in chain:
            colour[name] = _DONE


def _check_gang_members(ctx: _Ctx) -> None:
    gang = ctx.karta.spec.optimization_instructions.gang_scheduling
    if gang is None or not gang.pod_groups:
        return
    names = {c.name for _, c in _components(ctx.karta)}
    for g, group in enumerate(gang.pod_groups):
        for m, member in enumerate(group.members):
            if member.component_name not in names:
                ctx.add(
                    "KARTA015",
                    messages.pod_group_member_undefined(member.component_name),
                    f"{GANG}.podGroups[{g}].members[{m}].componentName",
                )


def _check_expressions(ctx: _Ctx) -> None:
    for path, expr in ctx.expressions:
        if not expr.strip():
            continue
        variables = expression_variables(path)
        done, problem = ctx.compile(path, lambda e=expr, v=variables: _jq.check(e, v))  # type: ignore[misc]
        if not done or problem is None:
            continue
        go = go_field_path(path)
        if problem.kind == "syntax":
            ctx.add(
                "KARTA016", messages.jq_parse_failed(expr, go, problem.message), path, offset=problem.offset
            )
        else:
            ctx.add("KARTA017", messages.jq_validation_failed(expr, go, problem.message), path)


# --- extra checks -------------------------------------------------------------------------


def _extra_checks(ctx: _Ctx) -> None:
    root_path, root = _components(ctx.karta)[0]
    if root.instance_id_path:
        ctx.add("KARTA218", messages.root_instance_id_path(root.name), f"{root_path}.instanceIdPath")
    for path, c in _components(ctx.karta):
        if c.status_definition is not None:
            _check_status(ctx, path, c.name, c.status_definition)
        _check_spec_paths(ctx, path, c)
        _check_suspend(ctx, path, c)
        _check_type_selector_values(ctx, path, c)
    _check_selectors_distinct(ctx)
    _check_child_kinds(ctx)
    _check_gang_extra(ctx)
    for path, expr in ctx.expressions:
        # "" on a field means unset (as in upstream); blank text, or an empty list entry, is a slip.
        if not expr.strip() and (expr or path.endswith("]")):
            ctx.add("KARTA223", messages.empty_expression(path), path)


def _check_status(ctx: _Ctx, path: str, name: str, status: StatusDefinition) -> None:
    cond = status.conditions_definition
    # Each matcher -> the first status it was listed under (matchers are frozen, so hashable).
    first_status: dict[StatusMatcher, str] = {}
    for rs in ResourceStatus:
        if rs is ResourceStatus.UNDEFINED:
            continue
        key = rs.value.lower()
        label = rs.value
        matchers = status.status_mappings.matchers_for(rs)
        here: set[StatusMatcher] = set()
        for i, matcher in enumerate(matchers):
            where = f"{path}.statusDefinition.statusMappings.{key}[{i}]"
            if matcher.is_empty:
                ctx.add("KARTA204", messages.empty_matcher(name, label), where)
                continue
            if matcher.by_phase and status.phase_definition is None:
                ctx.add("KARTA202", messages.by_phase_without_definition(name, label), f"{where}.byPhase")
            if matcher.by_conditions:
                if cond is None:
                    ctx.add(
                        "KARTA201",
                        messages.by_conditions_without_definition(name, label),
                        f"{where}.byConditions",
                    )
                types_seen: set[str] = set()
                for j, cm in enumerate(matcher.by_conditions):
                    cwhere = f"{where}.byConditions[{j}]"
                    if cm.reason and cond is not None and not cond.reason_field_name:
                        ctx.add(
                            "KARTA203", messages.reason_without_reason_field(name, label), f"{cwhere}.reason"
                        )
                    if not cm.status and not cm.reason:
                        ctx.add(
                            "KARTA205",
                            messages.condition_without_status_or_reason(name, label, cm.type),
                            cwhere,
                        )
                    if cm.type in types_seen:
                        ctx.add(
                            "KARTA206",
                            messages.duplicate_condition_type(name, label, cm.type),
                            f"{cwhere}.type",
                        )
                    types_seen.add(cm.type)
            if matcher in here:
                ctx.add("KARTA207", messages.duplicate_matcher(name, label), where)
                continue
            here.add(matcher)
            other = first_status.setdefault(matcher, label)
            if other != label:
                ctx.add("KARTA208", messages.matcher_in_two_statuses(name, other, label), where)


def _check_spec_paths(ctx: _Ctx, path: str, c: ComponentDefinition) -> None:
    spec = c.spec_definition
    if spec is None:
        return
    if spec.metadata_path and not spec.pod_spec_path:
        ctx.add(
            "KARTA217",
            messages.metadata_path_without_pod_spec_path(c.name),
            f"{path}.specDefinition.metadataPath",
        )
    writable: list[tuple[str, str, str]] = []
    for field_name, alias in (
        ("pod_template_spec_path", "podTemplateSpecPath"),
        ("pod_spec_path", "podSpecPath"),
        ("metadata_path", "metadataPath"),
    ):
        value = getattr(spec, field_name)
        if value:
            writable.append((f"{path}.specDefinition.{alias}", alias, value))
    frag = spec.fragmented_pod_spec_definition
    if frag is not None:
        for field_name, info in FragmentedPodSpecDefinition.model_fields.items():
            value = getattr(frag, field_name)
            alias = info.alias or field_name
            if value:
                writable.append((f"{path}.specDefinition.fragmentedPodSpecDefinition.{alias}", alias, value))
    for where, alias, expr in writable:
        if (c.name, alias) in ctx.read_only:
            continue  # the author declared this path computed (read-only) on purpose
        if _not_assignable(ctx, where, expr):
            ctx.add("KARTA210", messages.path_not_assignable(c.name, alias, expr), where)


def _not_assignable(ctx: _Ctx, where: str, expr: str) -> bool:
    """Whether ``expr`` compiles but denotes no assignable path (charged to the compile budget)."""
    done, answer = ctx.compile(where, lambda: _jq.check(expr) is None and _jq.assignable(expr) is False)
    return bool(done and answer)


#: Karta annotation listing spec paths that are computed on purpose (``component.field``, comma
#: separated): they are read like any other, write-back refuses them, and KARTA210 is not reported.
READ_ONLY_PATHS_ANNOTATION = "workload-map.dev/read-only-paths"


def read_only_paths(karta: Karta) -> frozenset[tuple[str, str]]:
    """(component, field) pairs the Karta declares read-only (see READ_ONLY_PATHS_ANNOTATION)."""
    annotations = karta.metadata.annotations or {}
    text = annotations.get(READ_ONLY_PATHS_ANNOTATION, "")
    out = set()
    for item in text.split(","):
        component, dot, field = item.strip().partition(".")
        if dot and component and field:
            out.add((component, field))
    return frozenset(out)


def _check_suspend(ctx: _Ctx, path: str, c: ComponentDefinition) -> None:
    sd = c.suspend_definition
    if sd is None:
        return
    for which, actions in (("suspendActions", sd.suspend_actions), ("resumeActions", sd.resume_actions)):
        base = f"{path}.suspendDefinition.{which}"
        if not actions:
            ctx.add("KARTA213", messages.suspend_actions_empty(c.name, which), base)
        for i, action in enumerate(actions):
            label = f"{which}[{i}]"
            if action.path and _not_assignable(ctx, f"{base}[{i}].path", action.path):
                ctx.add(
                    "KARTA211",
                    messages.suspend_path_not_assignable(c.name, f"{label}.path", action.path),
                    f"{base}[{i}].path",
                )
            try:
                json.loads(action.value)
            except ValueError as exc:
                detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                ctx.add(
                    "KARTA212",
                    messages.suspend_value_not_json(c.name, label, action.value, detail),
                    f"{base}[{i}].value",
                )


def _check_type_selector_values(ctx: _Ctx, path: str, c: ComponentDefinition) -> None:
    ts = c.pod_selector.component_type_selector if c.pod_selector else None
    if ts is None:
        return
    where = f"{path}.podSelector.componentTypeSelector"
    # Upstream's rules already cover a selector with nothing usable; these catch the CRD limits
    # (keyPath minLength 1, matchLabels minProperties 1) when the other half is set.
    if ts.key_path == "" and ts.match_labels:
        ctx.add("KARTA219", messages.type_selector_empty_key_path(c.name), f"{where}.keyPath")
    if ts.match_labels is not None and not ts.match_labels and ts.key_path:
        ctx.add("KARTA219", messages.type_selector_empty_match_labels(c.name), f"{where}.matchLabels")


def _selector_key(c: ComponentDefinition) -> tuple[str, str, tuple[tuple[str, str], ...]] | None:
    ts = c.pod_selector.component_type_selector if c.pod_selector else None
    if ts is None or (not ts.key_path and not ts.match_labels):
        return None
    return (ts.key_path or "", ts.value or "", tuple(sorted((ts.match_labels or {}).items())))


def _check_selectors_distinct(ctx: _Ctx) -> None:
    # Linear: each component is compared with the first one that has the same selector key, so
    # n indistinguishable components give n - 1 findings (not one per pair).
    first_by_key: dict[Any, ComponentDefinition] = {}
    for path, c in _components(ctx.karta):
        if not c.has_pod_definition:
            continue
        key = _selector_key(c)
        first = first_by_key.setdefault(key, c)
        if first is c:
            continue
        why = (
            "neither has a componentTypeSelector"
            if key is None
            else "their componentTypeSelectors are identical"
        )
        message = messages.selectors_indistinguishable(first.name, c.name, why)
        ctx.add("KARTA216", message, f"{path}.podSelector")


def _check_child_kinds(ctx: _Ctx) -> None:
    kinds = ctx.karta.spec.structure_definition.additional_child_kinds
    seen: dict[tuple[str, str, str], int] = {}
    by_kind: dict[str, str] = {}
    for i, gvk in enumerate(kinds):
        where = f"spec.structureDefinition.additionalChildKinds[{i}]"
        text = gvk_text(gvk.group, gvk.version, gvk.kind)
        key = (gvk.group, gvk.version, gvk.kind)
        if key in seen:
            ctx.add("KARTA214", messages.duplicate_child_kind(text), where)
            continue
        seen[key] = i
        group = gvk.group or "core"
        first_group = by_kind.setdefault(gvk.kind, group)
        if first_group != group:
            ctx.add("KARTA215", messages.child_kind_same_kind(gvk.kind, first_group, group), where)


def _check_gang_extra(ctx: _Ctx) -> None:
    gang = ctx.karta.spec.optimization_instructions.gang_scheduling
    if gang is None:
        return
    names = {c.name for _, c in _components(ctx.karta)}
    if gang.pod_groups:
        _duplicates(
            ctx,
            "podGroups",
            [(f"{GANG}.podGroups[{g}].name", pg.name) for g, pg in enumerate(gang.pod_groups)],
        )
        for g, pg in enumerate(gang.pod_groups):
            base = f"{GANG}.podGroups[{g}]"
            _duplicates(
                ctx,
                f"pod-group '{pg.name}' members",
                [
                    (f"{base}.members[{m}].componentName", mb.component_name)
                    for m, mb in enumerate(pg.members)
                ],
            )
            for m, mb in enumerate(pg.members):
                mwhere = f"{base}.members[{m}]"
                if not mb.group_by_key_paths:
                    ctx.add(
                        "KARTA220", messages.member_without_group_keys(pg.name, mb.component_name), mwhere
                    )
                for attr, alias in (("group_by_key_paths", "groupByKeyPaths"), ("filters", "filters")):
                    values: tuple[str, ...] = getattr(mb, attr) or ()
                    _duplicates(
                        ctx,
                        f"pod-group '{pg.name}' member '{mb.component_name}' {alias}",
                        [(f"{mwhere}.{alias}[{k}]", v) for k, v in enumerate(values)],
                    )
    pod_group = gang.pod_group
    if pod_group is not None:
        base = f"{GANG}.podGroup"
        _check_topology(ctx, f"podGroup '{pod_group.name}'", pod_group.topology, f"{base}.topology")
        subs = pod_group.sub_groups or ()
        _duplicates(
            ctx,
            f"podGroup '{pod_group.name}' subGroups",
            [(f"{base}.subGroups[{s}].componentName", sg.component_name) for s, sg in enumerate(subs)],
        )
        for s, sg in enumerate(subs):
            where = f"{base}.subGroups[{s}]"
            if sg.component_name not in names:
                ctx.add(
                    "KARTA209",
                    messages.sub_group_unknown_component(sg.component_name),
                    f"{where}.componentName",
                )
            _check_topology(ctx, f"subgroup '{sg.component_name}'", sg.topology, f"{where}.topology")


def _duplicates(ctx: _Ctx, what: str, entries: list[tuple[str, str]]) -> None:
    seen: set[str] = set()
    for where, key in entries:
        if key in seen:
            ctx.add("KARTA221", messages.duplicate_list_entry(what, key), where)
        seen.add(key)


def _check_topology(ctx: _Ctx, label: str, topology: Topology | None, where: str) -> None:
    if topology is None:
        return
    empty = [
        alias
        for name, alias in (
            ("topology_name", "topologyName"),
            ("preferred_topology_level", "preferredTopologyLevel"),
            ("required_topology_level", "requiredTopologyLevel"),
        )
        if not getattr(topology, name)
    ]
    if empty:
        ctx.add("KARTA222", messages.topology_empty_fields(label, ", ".join(empty)), where)
