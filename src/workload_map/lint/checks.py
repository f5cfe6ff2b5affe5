"""``lint_definition``: check a Karta definition against the schema of its root kind.

Every expression evaluated on the workload object (spec, scale, status, instance id, suspend and
``byExpression`` paths) is analysed statically: each field path it reads must exist in the
schema (:data:`LINT001`/:data:`LINT002`), and the paths it yields must have the type the field
needs (replicas integers, templates pod templates, phase strings, ...). Selector and gang paths,
which run on pods, are checked against the built-in Pod schema. Codes: ``findings.CODES``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from workload_map import messages
from workload_map.errors import ExpressionError
from workload_map.expr import compile_expression, read_paths
from workload_map.expr import output_paths as _expr_output_paths
from workload_map.lint.findings import CODES, LintFinding, make
from workload_map.lint.navigate import ITER, Node, Resolution, kind_of, resolve_path, show_path
from workload_map.lint.schemas import KindSchema, SchemaError, SchemaSet, builtin_schemas
from workload_map.model.definition import ComponentDefinition, Karta, StatusDefinition
from workload_map.model.locations import SourceMap
from workload_map.model.validator import MAX_FINDINGS, CompileBudget

__all__ = ["LintTarget", "NoSchemaError", "lint_definition", "output_paths", "targets"]

ROOT = "spec.structureDefinition.rootComponent"


class NoSchemaError(SchemaError):
    """No schema is known for the definition's root kind and version."""


def output_paths(source: str) -> list[tuple[str, ...]]:
    """:func:`workload_map.expr.output_paths` of ``source``, ``[]`` when it does not parse (the
    validator reports that), e.g. ``.spec.replicas // 1`` -> ``[("spec", "replicas")]``."""
    try:
        return _expr_output_paths(source)
    except ExpressionError:
        return []


@dataclass(frozen=True)
class LintTarget:
    field: str  # camelCase definition path
    expression: str
    role: str  # read, replicas, pod_template, pod_spec, metadata, frag:<name>, phase, conditions,
    #            instance_id, suspend, pod (runs on pods)
    component: ComponentDefinition | None = None
    extra: Any = None


def _component_targets(path: str, c: ComponentDefinition) -> Iterator[LintTarget]:
    spec = c.spec_definition
    if spec is not None:
        if spec.pod_template_spec_path:
            yield LintTarget(
                f"{path}.specDefinition.podTemplateSpecPath", spec.pod_template_spec_path, "pod_template", c
            )
        if spec.pod_spec_path:
            yield LintTarget(f"{path}.specDefinition.podSpecPath", spec.pod_spec_path, "pod_spec", c)
        if spec.metadata_path:
            yield LintTarget(f"{path}.specDefinition.metadataPath", spec.metadata_path, "metadata", c)
        frag = spec.fragmented_pod_spec_definition
        if frag is not None:
            for name, info in type(frag).model_fields.items():
                value = getattr(frag, name)
                if value:
                    alias = info.alias or name
                    yield LintTarget(
                        f"{path}.specDefinition.fragmentedPodSpecDefinition.{alias}",
                        value,
                        f"frag:{alias}",
                        c,
                    )
    scale = c.scale_definition
    if scale is not None:
        for name, alias in (
            ("replicas_path", "replicasPath"),
            ("min_replicas_path", "minReplicasPath"),
            ("max_replicas_path", "maxReplicasPath"),
        ):
            value = getattr(scale, name)
            if value:
                yield LintTarget(f"{path}.scaleDefinition.{alias}", value, "replicas", c)
    if c.instance_id_path:
        yield LintTarget(f"{path}.instanceIdPath", c.instance_id_path, "instance_id", c)
    if c.status_definition is not None:
        yield from _status_targets(f"{path}.statusDefinition", c.status_definition, c)
    if c.suspend_definition is not None:
        for list_name, actions in (
            ("suspendActions", c.suspend_definition.suspend_actions),
            ("resumeActions", c.suspend_definition.resume_actions),
        ):
            for i, a in enumerate(actions):
                yield LintTarget(
                    f"{path}.suspendDefinition.{list_name}[{i}].path", a.path, "suspend", c, a.value
                )
    sel = c.pod_selector
    if sel is not None:
        if sel.component_type_selector is not None and sel.component_type_selector.key_path:
            yield LintTarget(
                f"{path}.podSelector.componentTypeSelector.keyPath",
                sel.component_type_selector.key_path,
                "pod",
                c,
            )
        if sel.component_instance_selector is not None:
            yield LintTarget(
                f"{path}.podSelector.componentInstanceSelector.idPath",
                sel.component_instance_selector.id_path,
                "pod",
                c,
            )
        if sel.replica_selector is not None:
            yield LintTarget(
                f"{path}.podSelector.replicaSelector.keyPath", sel.replica_selector.key_path, "pod", c
            )


def _status_targets(path: str, status: StatusDefinition, c: ComponentDefinition) -> Iterator[LintTarget]:
    if status.phase_definition is not None:
        yield LintTarget(f"{path}.phaseDefinition.path", status.phase_definition.path, "phase", c, status)
    if status.conditions_definition is not None:
        yield LintTarget(
            f"{path}.conditionsDefinition.path", status.conditions_definition.path, "conditions", c, status
        )
    mappings = status.status_mappings
    for name in type(mappings).model_fields:
        for i, m in enumerate(getattr(mappings, name)):
            if m.by_expression is not None:
                yield LintTarget(
                    f"{path}.statusMappings.{name}[{i}].byExpression.expression",
                    m.by_expression.expression,
                    "read",
                    c,
                )


def targets(karta: Karta) -> list[LintTarget]:
    """Every expression of the definition with the role it plays."""
    s = karta.spec.structure_definition
    out = list(_component_targets(ROOT, s.root_component))
    for i, c in enumerate(s.child_components):
        out.extend(_component_targets(f"spec.structureDefinition.childComponents[{i}]", c))
    gs = karta.spec.optimization_instructions.gang_scheduling
    if gs is not None:
        for gi, g in enumerate(gs.pod_groups or ()):
            for mi, m in enumerate(g.members):
                base = f"spec.optimizationInstructions.gangScheduling.podGroups[{gi}].members[{mi}]"
                for ki, k in enumerate(m.group_by_key_paths or ()):
                    out.append(LintTarget(f"{base}.groupByKeyPaths[{ki}]", k, "pod"))
                for fi, f in enumerate(m.filters or ()):
                    out.append(LintTarget(f"{base}.filters[{fi}]", f, "pod"))
        ge = gs.expressions
        if ge is not None:
            # They run on the top owner (the pod is $pod, which static paths do not follow).
            base = "spec.optimizationInstructions.gangScheduling.expressions"
            for name, info in type(ge).model_fields.items():
                value = getattr(ge, name)
                if value:
                    out.append(LintTarget(f"{base}.{info.alias or name}", value, "read"))
    return out


@dataclass
class _Ctx:
    karta: Karta
    schema: KindSchema
    pod: KindSchema
    source_map: SourceMap | None
    findings: list[LintFinding]
    budget: CompileBudget
    #: Findings left out past MAX_FINDINGS, by severity; targets the compile budget left unchecked.
    suppressed: dict[str, int] = field(default_factory=dict)
    unchecked: list[LintTarget] = field(default_factory=list)

    def add(
        self,
        code: str,
        message: str,
        t: LintTarget,
        node: Node | None = None,
        *,
        schema: KindSchema | None = None,
    ) -> None:
        if len(self.findings) >= MAX_FINDINGS:
            severity = CODES[code][0]
            self.suppressed[severity] = self.suppressed.get(severity, 0) + 1
            return
        ks = schema or (self.pod if t.role == "pod" else self.schema)
        where = None
        if node is not None:
            where = f"{ks.source}#{node.pointer or '/'}"
        location = self.source_map.location(t.field) if self.source_map is not None else None
        self.findings.append(
            make(
                code,
                message,
                field=t.field,
                expression=t.expression,
                schema=where,
                definition=self.karta.name or None,
                location=location,
            )
        )


def _pod_schema() -> KindSchema:
    for s in builtin_schemas():
        if s.kind == "Pod" and s.group == "":
            return s
    raise SchemaError("built-in Pod schema missing")  # pragma: no cover


def schema_for(karta: Karta, schemas: SchemaSet) -> KindSchema:
    gvk = karta.root_gvk
    if gvk is None or not gvk.kind:
        raise NoSchemaError(f"definition {karta.name!r} has no root kind")
    found = schemas.get(gvk.group, gvk.version, gvk.kind)
    if found is None:
        for b in builtin_schemas():
            if (b.group, b.version, b.kind) == (gvk.group, gvk.version, gvk.kind):
                return b
        api = f"{gvk.group}/{gvk.version}" if gvk.group else gvk.version
        versions = schemas.versions_of(gvk.group, gvk.kind)
        more = f" (it has versions {', '.join(versions)})" if versions else ""
        raise NoSchemaError(f"no schema for {api} {gvk.kind}{more}")
    return found


def lint_definition(
    karta: Karta,
    schemas: SchemaSet | KindSchema,
    *,
    source_map: SourceMap | None = None,
    budget: CompileBudget | None = None,
) -> list[LintFinding]:
    """Findings for ``karta`` against the schema of its root GVK (``schemas`` may be that one
    schema). Raises :class:`NoSchemaError` when no schema covers the root kind and version.
    Parsing and compiling its expressions is charged to ``budget`` (the file's, shared with its
    other definitions; a file's budget of its own without one): targets past it are not checked
    (LINT018). At most MAX_FINDINGS findings are kept; LINT019 counts the rest."""
    schema = schemas if isinstance(schemas, KindSchema) else schema_for(karta, schemas)
    origin = source_map.origin if source_map is not None else f'definition "{karta.name}"'
    ctx = _Ctx(karta, schema, _pod_schema(), source_map, [], budget or CompileBudget(origin))
    if not schema.served:
        t = LintTarget(f"{ROOT}.kind", "", "read")
        ctx.add("LINT017", f"{schema.gvk} is not served by its CRD ({schema.source})", t)
    for t in targets(karta):
        done, _ = ctx.budget.run(lambda t=t: _check_target(ctx, t))  # type: ignore[misc]
        if not done:
            ctx.unchecked.append(t)
    out = list(ctx.findings)
    if ctx.unchecked:
        first = ctx.unchecked[0]
        out.append(
            make(
                "LINT018",
                messages.compile_budget_exceeded(ctx.budget.origin, ctx.budget.seconds, len(ctx.unchecked)),
                field=first.field,
                expression=first.expression,
                definition=karta.name or None,
                location=source_map.location(first.field) if source_map is not None else None,
            )
        )
    hidden = sum(ctx.suppressed.values())
    if hidden:
        summary = make(
            "LINT019", messages.findings_suppressed(hidden, MAX_FINDINGS), definition=karta.name or None
        )
        out.append(summary if not ctx.suppressed.get("error") else replace(summary, severity="error"))
    return out


def _check_target(ctx: _Ctx, t: LintTarget) -> None:
    ks = ctx.pod if t.role == "pod" else ctx.schema
    try:
        reads = read_paths(t.expression)
    except ExpressionError:
        return  # the validator reports expressions that do not parse
    bad = False
    for p in reads:
        r = resolve_path(ks.schema, p)
        if not r.ok:
            bad = True
            shown = show_path(p[: r.depth + 1])
            code = (
                "LINT016"
                if t.role == "pod"
                else ("LINT001" if "no field" in (r.problem or "") else "LINT002")
            )
            where = "a Pod" if t.role == "pod" else ks.gvk
            ctx.add(code, f"{shown}: {r.problem} in {where}", t, r.at)
    if t.role == "pod":
        return
    if t.role.startswith("frag:") or t.role == "suspend":
        _check_assignable(ctx, t)
    if bad:
        return
    for p in output_paths(t.expression):
        r = resolve_path(ks.schema, p)
        if r.ok and not r.open:
            _check_type(ctx, t, p, r)


def _check_assignable(ctx: _Ctx, t: LintTarget) -> None:
    try:
        assignable = compile_expression(t.expression).is_assignable
    except ExpressionError:
        return
    if not assignable:
        if t.role == "suspend":
            ctx.add(
                "LINT014", "suspend/resume path is not an assignable jq path; the action cannot be applied", t
            )
        else:
            ctx.add(
                "LINT013", "fragmented path is not assignable: reads work, write-back of this field fails", t
            )


def _kinds(r: Resolution) -> set[str]:
    return {kind_of(n.schema) for n in r.nodes}


def _declared(r: Resolution, *path: str) -> bool:
    """Does some candidate declare ``path`` as named properties (or allow anything there)? A
    map's ``additionalProperties`` does not count: ``containers`` must be a real field."""
    for n in r.nodes:
        node: Mapping[str, Any] = n.schema
        ok = True
        for key in path:
            if kind_of(node) == "any" or (
                node.get("x-kubernetes-preserve-unknown-fields") and not node.get("properties")
            ):
                break
            props = node.get("properties")
            if not isinstance(props, Mapping) or key not in props:
                ok = False
                break
            node = props[key]
        if ok:
            return True
    return False


def _sub(r: Resolution, *path: str) -> Resolution:
    """Follow ``path`` from every candidate; ok when any candidate has it."""
    best: Resolution | None = None
    for n in r.nodes:
        sub = resolve_path(n.schema, path, root_pointer=n.pointer)
        if sub.ok:
            return sub
        best = best or sub
    return best or Resolution(problem="nothing to follow")


_FRAG_KIND: dict[str, tuple[set[str], str]] = {
    "schedulerNamePath": ({"string"}, "a string"),
    "priorityClassNamePath": ({"string"}, "a string"),
    "imagePath": ({"string"}, "a string"),
    "containerPath": ({"object"}, "an object (one container)"),
    "podAffinityPath": ({"object"}, "an object (PodAffinity)"),
    "nodeAffinityPath": ({"object"}, "an object (NodeAffinity)"),
    "resourceClaimsPath": ({"array"}, "an array (pod resource claims)"),
}


def _check_type(ctx: _Ctx, t: LintTarget, path: tuple[str, ...], r: Resolution) -> None:
    kinds = _kinds(r)
    node = r.nodes[0]
    shown = show_path(path)
    if "any" in kinds:
        return
    role = t.role
    if role == "replicas":
        if kinds & {"integer", "int-or-string"}:
            return
        if kinds <= {"number"}:
            return
        ctx.add("LINT003", f"{shown} is {'/'.join(sorted(kinds))} in the schema, not an integer", t, node)
    elif role == "instance_id":
        if not kinds & {"string", "integer", "int-or-string"}:
            ctx.add("LINT002", f"{shown} is {'/'.join(sorted(kinds))}; instance ids must be strings", t, node)
    elif role == "pod_template":
        if "object" not in kinds or not _declared(r, "spec", "containers"):
            ctx.add("LINT004", f"{shown} is not a pod template: no spec.containers below it", t, node)
    elif role == "pod_spec":
        if "object" not in kinds or not _declared(r, "containers"):
            ctx.add("LINT005", f"{shown} is not a pod spec: no containers below it", t, node)
    elif role == "metadata":
        if "object" not in kinds:
            ctx.add("LINT006", f"{shown} is {'/'.join(sorted(kinds))}, not an object", t, node)
    elif role.startswith("frag:"):
        _check_fragment(ctx, t, role[5:], shown, r, kinds)
    elif role == "phase":
        _check_phase(ctx, t, shown, r, kinds)
    elif role == "conditions":
        _check_conditions(ctx, t, shown, r, kinds)
    elif role == "suspend":
        _check_suspend_value(ctx, t, shown, r, kinds)


def _check_fragment(ctx: _Ctx, t: LintTarget, name: str, shown: str, r: Resolution, kinds: set[str]) -> None:
    node = r.nodes[0]
    if name in _FRAG_KIND:
        want, words = _FRAG_KIND[name]
        if not kinds & want:
            ctx.add("LINT007", f"{name}: {shown} is {'/'.join(sorted(kinds))}, expected {words}", t, node)
        return
    if name in ("labelsPath", "annotationsPath"):
        values = _sub(r, ITER)
        if "object" not in kinds or (
            values.ok and not values.open and not _kinds(values) & {"string", "any"}
        ):
            ctx.add("LINT007", f"{name}: {shown} is not a map of strings", t, node)
        return
    if name == "resourcesPath":
        if "object" not in kinds or not (_declared(r, "requests") or _declared(r, "limits")):
            ctx.add(
                "LINT007",
                f"resourcesPath: {shown} is not resource requirements (no requests/limits)",
                t,
                node,
            )
        return
    if name == "containersPath":
        if "array" not in kinds:
            ctx.add(
                "LINT007",
                f"containersPath: {shown} is {'/'.join(sorted(kinds))}, expected an array of containers",
                t,
                node,
            )
            return
        items = _sub(r, ITER)
        if items.open:
            return
        if not (
            items.ok and _kinds(items) & {"object"} and _sub(items, "name").ok and _sub(items, "image").ok
        ):
            ctx.add(
                "LINT007", f"containersPath: the items of {shown} are not containers (name, image)", t, node
            )


def _enum_of(r: Resolution) -> list[Any] | None:
    if not r.ok or r.open or not r.nodes:
        return None
    values: list[Any] = []
    for n in r.nodes:
        e = n.schema.get("enum")
        if not isinstance(e, list):
            return None
        values.extend(e)
    return values


def _check_phase(ctx: _Ctx, t: LintTarget, shown: str, r: Resolution, kinds: set[str]) -> None:
    node = r.nodes[0]
    if "string" not in kinds:
        ctx.add("LINT008", f"{shown} is {'/'.join(sorted(kinds))}, not a string", t, node)
        return
    enum = _enum_of(r)
    status = t.extra
    if enum is None or not isinstance(status, StatusDefinition):
        return
    mappings = status.status_mappings
    base = t.field.rsplit(".phaseDefinition", 1)[0]
    for name in type(mappings).model_fields:
        for i, m in enumerate(getattr(mappings, name)):
            if m.by_phase and m.by_phase not in enum:
                mt = LintTarget(f"{base}.statusMappings.{name}[{i}].byPhase", m.by_phase, "phase")
                ctx.add(
                    "LINT009",
                    f'byPhase "{m.by_phase}" is not a value of {shown} (enum: {", ".join(map(str, enum))})',
                    mt,
                    node,
                )


def _check_conditions(ctx: _Ctx, t: LintTarget, shown: str, r: Resolution, kinds: set[str]) -> None:
    node = r.nodes[0]
    status = t.extra
    if not isinstance(status, StatusDefinition) or status.conditions_definition is None:
        return
    cd = status.conditions_definition
    if "array" not in kinds:
        ctx.add("LINT010", f"{shown} is {'/'.join(sorted(kinds))}, not an array of conditions", t, node)
        return
    items = _sub(r, ITER)
    if items.open or not items.ok:
        return
    if not _kinds(items) & {"object"}:
        ctx.add(
            "LINT010", f"the items of {shown} are not objects", t, items.nodes[0] if items.nodes else node
        )
        return
    for label, fname in (("typeFieldName", cd.type_field_name), ("statusFieldName", cd.status_field_name)):
        if not _declared(items, fname):
            ctx.add(
                "LINT010", f'the conditions of {shown} have no "{fname}" field ({label})', t, items.nodes[0]
            )
    mappings = status.status_mappings
    matchers = [
        (name, i, j, cm)
        for name in type(mappings).model_fields
        for i, m in enumerate(getattr(mappings, name))
        for j, cm in enumerate(m.by_conditions or ())
    ]
    if (
        any(cm.reason for *_, cm in matchers)
        and cd.reason_field_name
        and not _declared(items, cd.reason_field_name)
    ):
        ctx.add(
            "LINT011",
            f'reason matchers are used but the conditions of {shown} have no "{cd.reason_field_name}" field',
            t,
            items.nodes[0],
        )
    type_enum = _enum_of(_sub(items, cd.type_field_name))
    status_enum = _enum_of(_sub(items, cd.status_field_name))
    base = t.field.rsplit(".conditionsDefinition", 1)[0]
    for name, i, j, cm in matchers:
        mt = LintTarget(f"{base}.statusMappings.{name}[{i}].byConditions[{j}]", cm.type, "conditions")
        if type_enum is not None and cm.type not in type_enum:
            ctx.add(
                "LINT012",
                f'condition type "{cm.type}" is not in the schema enum ({", ".join(map(str, type_enum))})',
                mt,
                items.nodes[0],
            )
        if status_enum is not None and cm.status and cm.status not in status_enum:
            ctx.add(
                "LINT012",
                f'condition status "{cm.status}" is not in the schema enum ({", ".join(map(str, status_enum))})',  # noqa: E501
                mt,
                items.nodes[0],
            )


_JSON_KIND = {bool: "boolean", int: "integer", float: "number", str: "string", dict: "object", list: "array"}


def _fits(value: Any, kinds: set[str]) -> bool:
    if value is None or "any" in kinds:
        return True
    k = _JSON_KIND.get(type(value), "?")
    if k in kinds:
        return True
    if k == "integer" and kinds & {"number", "int-or-string"}:
        return True
    return k == "string" and "int-or-string" in kinds


def _check_suspend_value(ctx: _Ctx, t: LintTarget, shown: str, r: Resolution, kinds: set[str]) -> None:
    node = r.nodes[0]
    raw = t.extra
    if not isinstance(raw, str):
        return
    try:
        value = json.loads(raw)
    except ValueError:
        return  # the validator reports invalid JSON (KARTA212)
    if not _fits(value, kinds):
        ctx.add("LINT015", f"value {raw} does not fit {shown} ({'/'.join(sorted(kinds))})", t, node)
        return
    enum = _enum_of(r)
    if enum is not None and value is not None and value not in enum:
        ctx.add(
            "LINT015",
            f"value {raw} is not one of {shown}'s enum values ({', '.join(map(str, enum))})",
            t,
            node,
        )


def lint_all(kartas: Sequence[tuple[Karta, SourceMap | None]], schemas: SchemaSet) -> list[LintFinding]:
    out: list[LintFinding] = []
    for karta, smap in kartas:
        out.extend(lint_definition(karta, schemas, source_map=smap))
    return out
