"""Compile once, evaluate many: every jq expression of a definition compiled up front (the gang
expressions, which only the gang plan runs, when it first asks for them).

:func:`compile_definition` turns a :class:`~workload_map.model.definition.Karta` into a
:class:`CompiledDefinition`: the component graph (root, children by ``ownerRef`` in declaration
order) and, per component, the compiled expressions of every field. Resolving many objects of
one type with one compiled definition never parses jq again.

The compiled pieces are public so that other resolver modules (write-back, pod placement, gang
rules) build on them instead of re-reading the definition.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from threading import Lock
from types import MappingProxyType
from typing import Any

import orjson

from workload_map.errors import DefinitionError, ResolveError, WorkloadMapError
from workload_map.model.definition import (
    FRAGMENTED_FIELDS,
    GANG_EXPRESSION_VARIABLES,
    STATUS_MATCH_ORDER,
    ComponentDefinition,
    ConditionMatcher,
    Karta,
    ResourceStatus,
)
from workload_map.resolve._support import Expression, compile_jq

# Wire names of the fragmented fields, in model order (FRAGMENTED_FIELDS).
_FRAGMENT_WIRE = {
    "scheduler_name_path": "schedulerNamePath",
    "labels_path": "labelsPath",
    "annotations_path": "annotationsPath",
    "resources_path": "resourcesPath",
    "resource_claims_path": "resourceClaimsPath",
    "pod_affinity_path": "podAffinityPath",
    "node_affinity_path": "nodeAffinityPath",
    "containers_path": "containersPath",
    "container_path": "containerPath",
    "priority_class_name_path": "priorityClassNamePath",
    "image_path": "imagePath",
}


@dataclass(frozen=True)
class CompiledExpression:
    """One compiled jq expression with its source text and where it sits in the definition:
    ``field`` is the definition field (``specDefinition.podSpecPath``), ``location`` is
    ``<component>.<field>`` (just the field for definition-level expressions)."""

    location: str
    source: str
    expr: Expression
    field: str = ""


@dataclass(frozen=True)
class CompiledMatcher:
    by_phase: str | None
    by_conditions: tuple[ConditionMatcher, ...]
    by_expression: CompiledExpression | None
    expected_result: str | None

    @property
    def is_empty(self) -> bool:
        """Matches unconditionally (upstream behaviour; the validator flags it)."""
        return not self.by_phase and not self.by_conditions and self.by_expression is None


@dataclass(frozen=True)
class CompiledStatus:
    phase: CompiledExpression | None
    conditions: CompiledExpression | None
    type_field: str
    status_field: str
    message_field: str | None
    reason_field: str | None
    # In STATUS_MATCH_ORDER; statuses without matchers are left out.
    mappings: tuple[tuple[ResourceStatus, tuple[CompiledMatcher, ...]], ...]


@dataclass(frozen=True)
class CompiledAction:
    """A suspend/resume action: the compiled path and the JSON-decoded value."""

    path: CompiledExpression
    value: Any


@dataclass(frozen=True)
class CompiledPodSelector:
    """Pod-side expressions (they run on Pod objects, not on the workload)."""

    type_key: CompiledExpression | None
    type_value: str | None
    match_labels: Mapping[str, str] | None
    instance_id: CompiledExpression | None
    replica_key: CompiledExpression | None


@dataclass(frozen=True)
class CompiledComponent:
    """A component with every expression compiled. ``children`` are names in declaration order."""

    definition: ComponentDefinition
    name: str
    has_pod_definition: bool
    has_scale: bool
    index: int
    parent: str | None
    children: tuple[str, ...]
    instance_id: CompiledExpression | None
    pod_template_spec: CompiledExpression | None
    pod_spec: CompiledExpression | None
    metadata: CompiledExpression | None
    # (model field name, expression) in FRAGMENTED_FIELDS order; only the fields that are set.
    fragmented: tuple[tuple[str, CompiledExpression], ...] | None
    replicas: CompiledExpression | None
    min_replicas: CompiledExpression | None
    max_replicas: CompiledExpression | None
    status: CompiledStatus | None
    suspend_actions: tuple[CompiledAction, ...]
    resume_actions: tuple[CompiledAction, ...]
    pod_selector: CompiledPodSelector | None

    def root_expressions(self) -> Iterator[CompiledExpression]:
        """Every expression of this component that runs on the workload object."""
        for e in (self.instance_id, self.pod_template_spec, self.pod_spec, self.metadata):
            if e is not None:
                yield e
        for _, e in self.fragmented or ():
            yield e
        for e in (self.replicas, self.min_replicas, self.max_replicas):
            if e is not None:
                yield e
        if self.status is not None:
            for e in (self.status.phase, self.status.conditions):
                if e is not None:
                    yield e
            for _, matchers in self.status.mappings:
                for m in matchers:
                    if m.by_expression is not None:
                        yield m.by_expression


@dataclass(frozen=True)
class CompiledGangMember:
    """A ``podGroups`` member with its pod-side paths (group keys, filters) compiled."""

    component_name: str
    group_by: tuple[CompiledExpression, ...] | None
    filters: tuple[CompiledExpression, ...] | None


@dataclass(frozen=True)
class CompiledPodGroup:
    """One ``podGroups`` entry (alpha format) with its members compiled."""

    name: str
    members: tuple[CompiledGangMember, ...]


@dataclass(frozen=True)
class CompiledGangExpressions:
    """``gangScheduling.expressions`` compiled (they run on the top owner with ``$pod`` and
    ``$pods``)."""

    name: CompiledExpression | None = None
    min_member: CompiledExpression | None = None
    min_sub_group: CompiledExpression | None = None
    sub_groups: CompiledExpression | None = None
    pod_sub_group: CompiledExpression | None = None
    pods_selector: CompiledExpression | None = None
    queue: CompiledExpression | None = None
    priority_class_name: CompiledExpression | None = None
    schedule_timeout_seconds: CompiledExpression | None = None
    min_resources: CompiledExpression | None = None


@dataclass(frozen=True)
class CompiledDefinition:
    """A definition ready to resolve objects. Build with :func:`compile_definition`."""

    karta: Karta
    name: str
    components: Mapping[str, CompiledComponent]
    root_name: str
    # podGroups (alpha format): group name -> members, expressions compiled (they run on pods).
    gang_members: Mapping[str, tuple[CompiledGangMember, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    # The same groups in declaration order (names may repeat; the validator only warns).
    pod_groups: tuple[CompiledPodGroup, ...] = ()

    @cached_property
    def gang_expressions(self) -> CompiledGangExpressions | None:
        """``gangScheduling.expressions`` compiled on first use: only the gang plan reads them,
        and they are often the definition's largest (JobSet's: half of its compile time), which
        ``describe``, ``get`` and the exporter never run. A bad one raises the same
        :class:`~workload_map.errors.DefinitionError` here that :func:`compile_definition`
        raises for the others."""
        return _Compiler(self.karta).gang_expressions()

    @property
    def root(self) -> CompiledComponent:
        return self.components[self.root_name]

    def component(self, name: str) -> CompiledComponent:
        try:
            return self.components[name]
        except KeyError:
            raise DefinitionError(f'karta "{self.name}" has no component "{name}"') from None

    def children_of(self, name: str) -> tuple[CompiledComponent, ...]:
        return tuple(self.components[c] for c in self.component(name).children)

    def ancestors_of(self, name: str) -> tuple[CompiledComponent, ...]:
        """Parent first, up to the root."""
        out: list[CompiledComponent] = []
        parent = self.component(name).parent
        while parent is not None:
            comp = self.components[parent]
            out.append(comp)
            parent = comp.parent
        return tuple(out)

    def root_expressions(self) -> Iterator[CompiledExpression]:
        """Every expression in the definition that runs on the workload object, in order."""
        for comp in self.components.values():
            yield from comp.root_expressions()


# --- compilation ---------------------------------------------------------------------------


class _Compiler:
    def __init__(self, karta: Karta) -> None:
        self.karta = karta

    def fail(self, component: str | None, field_name: str | None, detail: str) -> DefinitionError:
        where = [f'karta "{self.karta.name}"']
        if component is not None:
            where.append(f'component "{component}"')
        if field_name:
            where.append(field_name)
        return DefinitionError(f"{', '.join(where)}: {detail}")

    def expr(
        self, component: str | None, location: str, source: str | None, variables: tuple[str, ...] = ()
    ) -> CompiledExpression | None:
        if source is None:
            return None
        try:
            compiled = compile_jq(source, variables)
        except WorkloadMapError as exc:
            raise self.fail(component, location, f"invalid jq {source!r}: {exc}") from exc
        except Exception as exc:  # the engine must not leak raw errors; report them as ours
            raise self.fail(component, location, f"invalid jq {source!r}: {exc}") from exc
        where = location if component is None else f"{component}.{location}"
        return CompiledExpression(location=where, source=source, expr=compiled, field=location)

    def required(self, component: str | None, location: str, source: str) -> CompiledExpression:
        compiled = self.expr(component, location, source)
        assert compiled is not None
        return compiled

    def status(self, comp: ComponentDefinition) -> CompiledStatus | None:
        sd = comp.status_definition
        if sd is None:
            return None
        n = comp.name
        phase = None
        if sd.phase_definition is not None:
            phase = self.required(n, "statusDefinition.phaseDefinition.path", sd.phase_definition.path)
        cd = sd.conditions_definition
        conditions = None
        if cd is not None:
            conditions = self.required(n, "statusDefinition.conditionsDefinition.path", cd.path)
        mappings: list[tuple[ResourceStatus, tuple[CompiledMatcher, ...]]] = []
        for status in STATUS_MATCH_ORDER:
            key = status.value.lower()
            matchers: list[CompiledMatcher] = []
            for i, m in enumerate(sd.status_mappings.matchers_for(status)):
                by_expr = None
                expected = None
                if m.by_expression is not None:
                    by_expr = self.required(
                        n,
                        f"statusDefinition.statusMappings.{key}[{i}].byExpression.expression",
                        m.by_expression.expression,
                    )
                    expected = m.by_expression.expected_result
                matchers.append(
                    CompiledMatcher(
                        by_phase=m.by_phase,
                        by_conditions=tuple(m.by_conditions or ()),
                        by_expression=by_expr,
                        expected_result=expected,
                    )
                )
            if matchers:
                mappings.append((status, tuple(matchers)))
        return CompiledStatus(
            phase=phase,
            conditions=conditions,
            type_field=(cd.type_field_name if cd else "type") or "type",
            status_field=(cd.status_field_name if cd else "status") or "status",
            message_field=(cd.message_field_name or None) if cd else None,
            reason_field=(cd.reason_field_name or None) if cd else None,
            mappings=tuple(mappings),
        )

    def actions(
        self, comp: ComponentDefinition
    ) -> tuple[tuple[CompiledAction, ...], tuple[CompiledAction, ...]]:
        sd = comp.suspend_definition
        if sd is None:
            return (), ()
        out: list[tuple[CompiledAction, ...]] = []
        for label, actions in (("suspendActions", sd.suspend_actions), ("resumeActions", sd.resume_actions)):
            compiled: list[CompiledAction] = []
            for i, action in enumerate(actions):
                loc = f"suspendDefinition.{label}[{i}]"
                path = self.required(comp.name, f"{loc}.path", action.path)
                try:
                    value = orjson.loads(action.value)
                except orjson.JSONDecodeError as exc:
                    raise self.fail(
                        comp.name, f"{loc}.value", f"value {action.value!r} is not valid JSON: {exc}"
                    ) from exc
                compiled.append(CompiledAction(path=path, value=value))
            out.append(tuple(compiled))
        return out[0], out[1]

    def pod_selector(self, comp: ComponentDefinition) -> CompiledPodSelector | None:
        ps = comp.pod_selector
        if ps is None:
            return None
        n = comp.name
        ts = ps.component_type_selector
        return CompiledPodSelector(
            type_key=self.expr(n, "podSelector.componentTypeSelector.keyPath", ts.key_path if ts else None),
            type_value=ts.value if ts else None,
            match_labels=MappingProxyType(dict(ts.match_labels)) if ts and ts.match_labels else None,
            instance_id=self.expr(
                n,
                "podSelector.componentInstanceSelector.idPath",
                ps.component_instance_selector.id_path if ps.component_instance_selector else None,
            ),
            replica_key=self.expr(
                n,
                "podSelector.replicaSelector.keyPath",
                ps.replica_selector.key_path if ps.replica_selector else None,
            ),
        )

    def component(
        self, comp: ComponentDefinition, index: int, children: tuple[str, ...]
    ) -> CompiledComponent:
        n = comp.name
        spec = comp.spec_definition
        fragmented: tuple[tuple[str, CompiledExpression], ...] | None = None
        if spec is not None and spec.fragmented_pod_spec_definition is not None:
            frag = spec.fragmented_pod_spec_definition
            items: list[tuple[str, CompiledExpression]] = []
            for fname in FRAGMENTED_FIELDS:
                compiled = self.expr(
                    n,
                    f"specDefinition.fragmentedPodSpecDefinition.{_FRAGMENT_WIRE[fname]}",
                    getattr(frag, fname),
                )
                if compiled is not None:
                    items.append((fname, compiled))
            fragmented = tuple(items)
        scale = comp.scale_definition
        suspend, resume = self.actions(comp)
        replicas = self.expr(n, "scaleDefinition.replicasPath", scale.replicas_path if scale else None)
        min_replicas = self.expr(
            n, "scaleDefinition.minReplicasPath", scale.min_replicas_path if scale else None
        )
        max_replicas = self.expr(
            n, "scaleDefinition.maxReplicasPath", scale.max_replicas_path if scale else None
        )
        return CompiledComponent(
            definition=comp,
            name=n,
            has_pod_definition=comp.has_pod_definition,
            has_scale=replicas is not None or min_replicas is not None or max_replicas is not None,
            index=index,
            parent=comp.owner_ref if index > 0 else None,
            children=children,
            instance_id=self.expr(n, "instanceIdPath", comp.instance_id_path),
            pod_template_spec=self.expr(
                n, "specDefinition.podTemplateSpecPath", spec.pod_template_spec_path if spec else None
            ),
            pod_spec=self.expr(n, "specDefinition.podSpecPath", spec.pod_spec_path if spec else None),
            metadata=self.expr(n, "specDefinition.metadataPath", spec.metadata_path if spec else None),
            fragmented=fragmented,
            replicas=replicas,
            min_replicas=min_replicas,
            max_replicas=max_replicas,
            status=self.status(comp),
            suspend_actions=suspend,
            resume_actions=resume,
            pod_selector=self.pod_selector(comp),
        )

    def compile(self) -> CompiledDefinition:
        karta = self.karta
        defs = karta.spec.components
        root = defs[0]
        if not root.name:
            raise self.fail(None, "rootComponent.name", "root component must have a name")
        if root.owner_ref:
            raise self.fail(root.name, "ownerRef", "root component must not have an ownerRef")
        names: dict[str, ComponentDefinition] = {}
        for comp in defs:
            if not comp.name:
                raise self.fail(None, "childComponents", "every component must have a name")
            if comp.name in names:
                raise self.fail(comp.name, "name", "component names must be unique")
            names[comp.name] = comp
        children: dict[str, list[str]] = {c.name: [] for c in defs}
        for comp in defs[1:]:
            if not comp.owner_ref:
                raise self.fail(comp.name, "ownerRef", "child component must have an ownerRef")
            if comp.owner_ref not in names:
                raise self.fail(comp.name, "ownerRef", f'owner "{comp.owner_ref}" is not a component')
            children[comp.owner_ref].append(comp.name)
        # Every child must reach the root: a cycle among children would never be resolved.
        for comp in defs[1:]:
            seen = {comp.name}
            cur = comp.owner_ref
            while cur is not None and cur != root.name:
                if cur in seen:
                    raise self.fail(comp.name, "ownerRef", "ownerRef chain contains a cycle")
                seen.add(cur)
                cur = names[cur].owner_ref
        compiled = OrderedDict(
            (c.name, self.component(c, i, tuple(children[c.name]))) for i, c in enumerate(defs)
        )
        gang: dict[str, tuple[CompiledGangMember, ...]] = {}
        pod_groups: list[CompiledPodGroup] = []
        gs = karta.spec.optimization_instructions.gang_scheduling
        for group in (gs.pod_groups or ()) if gs else ():
            members: list[CompiledGangMember] = []
            for mi, member in enumerate(group.members):
                loc = f"optimizationInstructions.gangScheduling.podGroups[{group.name}].members[{mi}]"
                group_by = None
                if member.group_by_key_paths is not None:
                    group_by = tuple(
                        self.required(None, f"{loc}.groupByKeyPaths[{i}]", p)
                        for i, p in enumerate(member.group_by_key_paths)
                    )
                filters = None
                if member.filters is not None:
                    filters = tuple(
                        self.required(None, f"{loc}.filters[{i}]", p) for i, p in enumerate(member.filters)
                    )
                members.append(
                    CompiledGangMember(
                        component_name=member.component_name, group_by=group_by, filters=filters
                    )
                )
            gang[group.name] = tuple(members)
            pod_groups.append(CompiledPodGroup(group.name, tuple(members)))
        return CompiledDefinition(
            karta=karta,
            name=karta.name,
            components=MappingProxyType(compiled),
            root_name=root.name,
            gang_members=MappingProxyType(gang),
            pod_groups=tuple(pod_groups),
        )

    def gang_expressions(self) -> CompiledGangExpressions | None:
        gs = self.karta.spec.optimization_instructions.gang_scheduling
        if gs is None or gs.expressions is None:
            return None
        ge = gs.expressions
        loc = "optimizationInstructions.gangScheduling.expressions"
        return CompiledGangExpressions(
            **{
                name: self.expr(
                    None, f"{loc}.{info.alias or name}", getattr(ge, name), GANG_EXPRESSION_VARIABLES
                )
                for name, info in type(ge).model_fields.items()
            }
        )


_CACHE: OrderedDict[int, tuple[Karta, CompiledDefinition]] = OrderedDict()
_CACHE_SIZE = 64
_CACHE_LOCK = Lock()


def compile_definition(karta: Karta) -> CompiledDefinition:
    """Compile every expression of ``karta`` once (the gang expressions on first use:
    :attr:`CompiledDefinition.gang_expressions`).

    Raises :class:`~workload_map.errors.DefinitionError` naming the component and field when an
    expression does not compile or the component graph is broken (duplicate names, unknown or
    cyclic ``ownerRef``). The last few compiled definitions are cached by identity.
    """
    key = id(karta)
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None and hit[0] is karta:
            _CACHE.move_to_end(key)
            return hit[1]
    compiled = _Compiler(karta).compile()
    with _CACHE_LOCK:
        _CACHE[key] = (karta, compiled)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return compiled


Definition = Karta | CompiledDefinition
"""What the write-back, pod, gang and placement functions accept."""


def as_compiled(definition: Definition) -> CompiledDefinition:
    """``definition`` itself when already compiled, else :func:`compile_definition` (cached)."""
    if isinstance(definition, CompiledDefinition):
        return definition
    if isinstance(definition, Karta):
        return compile_definition(definition)
    raise ResolveError(f"definition must be a Karta or a CompiledDefinition, got {type(definition).__name__}")
