"""The resolver's algorithms as Lua, for engines that run Lua (Karmada's resource interpreter,
Argo CD's health checks).

* :func:`runtime_chunks` -> the jq runtime (``J``) and the resolver runtime (``R``:
  instances, pod specs, replica counts, requests per pod, status phases; resolver.lua) as Lua
  chunks; :func:`prelude` declares both as locals of a script, whole or only what the script's
  code reaches (:mod:`.shake`: Karmada compiles a script at every call).
* :func:`definition_table` -> a :class:`LuaDefinition`: the Lua table ``D`` of one definition,
  every expression compiled by :mod:`workload_map.expr.lua`, with what could not be translated
  (:class:`Refusal`, per definition field).
* :func:`status_chunk` -> a Lua chunk ``function(obj)`` returning ``{phases=, primary=, phase=,
  conditions=}`` for one definition: the status part alone, for a health-check exporter.

``R.status(D, obj)`` and ``R.needs(D, obj)`` give what :func:`workload_map.resolve.resolve_status`
and :func:`workload_map.resolve.placement.instance_needs` give in Python.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from workload_map.errors import ExpressionError, ExpressionNotTranslatableError
from workload_map.expr.lua import compile_lua, lua_string, runtime_chunk
from workload_map.model.definition import FRAGMENTED_FIELDS
from workload_map.resolve.compiled import CompiledComponent, CompiledDefinition, CompiledExpression

from .shake import Chunk, references, shake

__all__ = [
    "ALL_PARTS",
    "Chunk",
    "LuaDefinition",
    "Refusal",
    "compact",
    "definition_table",
    "prelude",
    "resolver_chunk",
    "runtime_chunks",
    "shake",
    "status_chunk",
    "status_prelude",
]

_FRAGMENT_WIRE = {
    "scheduler_name_path": ("schedulerName", "schedulerNamePath"),
    "labels_path": ("labels", "labelsPath"),
    "annotations_path": ("annotations", "annotationsPath"),
    "resources_path": ("resources", "resourcesPath"),
    "resource_claims_path": ("resourceClaims", "resourceClaimsPath"),
    "pod_affinity_path": ("podAffinity", "podAffinityPath"),
    "node_affinity_path": ("nodeAffinity", "nodeAffinityPath"),
    "containers_path": ("containers", "containersPath"),
    "container_path": ("container", "containerPath"),
    "priority_class_name_path": ("priorityClassName", "priorityClassNamePath"),
    "image_path": ("image", "imagePath"),
}
assert set(_FRAGMENT_WIRE) == set(FRAGMENTED_FIELDS)


@dataclass(frozen=True)
class Refusal:
    """An expression the Lua back end refused: where it is and why."""

    component: str
    field: str
    expression: str
    construct: str
    reason: str
    #: "structure" (pods, counts, specs), "status" or "write" (the replica write-back paths)
    part: str

    def text(self) -> str:
        return f'component "{self.component}" {self.field}: {self.reason} (in {self.expression!r})'


@dataclass
class LuaDefinition:
    """One definition as the Lua table ``D`` (``source`` is an expression evaluating to it)."""

    name: str
    source: str
    refusals: list[Refusal] = field(default_factory=list)
    #: components whose replicas the Lua side writes through a translated path
    scalable: frozenset[str] = frozenset()

    def refused(self, part: str) -> list[Refusal]:
        return [r for r in self.refusals if r.part == part]


class _Writer:
    def __init__(self, cd: CompiledDefinition) -> None:
        self.cd = cd
        self.refusals: list[Refusal] = []
        self.scalable: set[str] = set()

    def expr(self, comp: str, ce: CompiledExpression | None, part: str, *, paths: bool = False) -> str:
        if ce is None:
            return "nil"
        try:
            lua = compile_lua(ce.source, paths=paths)
        except ExpressionNotTranslatableError as exc:
            self.refusals.append(Refusal(comp, ce.field, ce.source, exc.construct, exc.message, part))
            return "nil"
        except ExpressionError as exc:  # compiled in Python already: never expected
            self.refusals.append(Refusal(comp, ce.field, ce.source, "expression", exc.message, part))
            return "nil"
        return lua.paths if paths and lua.paths else lua.filter

    def component(self, c: CompiledComponent, parts: frozenset[str]) -> str:
        n = c.name
        items = [f"name = {lua_string(n)}", f"pod = {'true' if c.has_pod_definition else 'false'}"]
        if "status" in parts and c.status is not None:
            items.append(f"status = {self.status(c)}")
        if "structure" not in parts:
            return "{" + ", ".join(items) + "}"
        for key, ce in (
            ("instance_id", c.instance_id),
            ("template", c.pod_template_spec),
            ("pod_spec", c.pod_spec),
            ("metadata", c.metadata),
            ("replicas", c.replicas),
            ("min_replicas", c.min_replicas),
            ("max_replicas", c.max_replicas),
        ):
            if ce is not None:
                items.append(f"{key} = {self.expr(n, ce, 'structure')}")
        if c.replicas is not None and c.replicas.expr.is_assignable:
            paths = self.expr(n, c.replicas, "write", paths=True)
            if paths != "nil":
                items.append(f"replicas_paths = {paths}")
                self.scalable.add(n)
        if c.fragmented is not None:
            frags = []
            for fname, ce in c.fragmented:
                wire, label = _FRAGMENT_WIRE[fname]
                f = self.expr(n, ce, "structure")
                where = lua_string("specDefinition.fragmentedPodSpecDefinition." + label)
                frags.append(f"{{name = {lua_string(wire)}, field = {where}, filter = {f}}}")
            items.append("fragments = {" + ", ".join(frags) + "}")
        return "{" + ", ".join(items) + "}"

    def status(self, c: CompiledComponent) -> str:
        st = c.status
        assert st is not None
        n = c.name
        items = [
            f"type_field = {lua_string(st.type_field)}",
            f"status_field = {lua_string(st.status_field)}",
        ]
        if st.reason_field:
            items.append(f"reason_field = {lua_string(st.reason_field)}")
        if st.message_field:
            items.append(f"message_field = {lua_string(st.message_field)}")
        if st.phase is not None:
            items.append(f"phase = {self.expr(n, st.phase, 'status')}")
        if st.conditions is not None:
            items.append(f"conditions = {self.expr(n, st.conditions, 'status')}")
        mappings = []
        for status, matchers in st.mappings:
            ms = []
            for m in matchers:
                parts = []
                if m.by_phase:
                    parts.append(f"by_phase = {lua_string(m.by_phase)}")
                if m.by_conditions:
                    conds = []
                    for cm in m.by_conditions:
                        fields = [f"type = {lua_string(cm.type)}"]
                        if cm.status:
                            fields.append(f"status = {lua_string(cm.status)}")
                        if cm.reason:
                            fields.append(f"reason = {lua_string(cm.reason)}")
                        conds.append("{" + ", ".join(fields) + "}")
                    parts.append("by_conditions = {" + ", ".join(conds) + "}")
                if m.by_expression is not None:
                    parts.append(f"by_expression = {self.expr(n, m.by_expression, 'status')}")
                    parts.append(f"field = {lua_string(m.by_expression.field)}")
                    parts.append(f"expected = {lua_string(m.expected_result or '')}")
                ms.append("{" + ", ".join(parts) + "}")
            mappings.append(f"{{status = {lua_string(status.value)}, matchers = {{{', '.join(ms)}}}}}")
        items.append("mappings = {" + ", ".join(mappings) + "}")
        return "{" + ", ".join(items) + "}"


ALL_PARTS = frozenset({"structure", "status"})


def definition_table(cd: CompiledDefinition, parts: frozenset[str] = ALL_PARTS) -> LuaDefinition:
    """The Lua table ``D`` of ``cd``: components in declaration order with their compiled
    expressions (``parts``: "structure" for pod specs, counts and instances with the replica
    write paths, "status" for the status rules); refused expressions are ``nil`` there and
    listed."""
    w = _Writer(cd)
    comps = [w.component(c, parts) for c in cd.components.values()]
    source = (
        f"{{name = {lua_string(cd.name)}, root = {lua_string(cd.root_name)}, components = {{\n"
        + ",\n".join(comps)
        + "\n}}"
    )
    return LuaDefinition(cd.name, source, w.refusals, frozenset(w.scalable))


@cache
def resolver_chunk() -> str:
    """The resolver runtime's Lua source: a chunk taking ``J`` and returning ``R``."""
    return resources.files(__package__).joinpath("resolver.lua").read_text(encoding="utf-8")


def compact(source: str) -> str:
    """Lua source without comment lines, indentation and blank lines (scripts are stored in a
    Kubernetes object and parsed on every call)."""
    out = []
    for line in source.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("--"):
            continue
        out.append(stripped)
    return "\n".join(out)


#: How the runtimes name their tables: ``J`` (and its builtins ``J.B``), ``R``.
RUNTIME_TABLES = (("J", "J"), ("B", "B"), ("R", "R"))


def runtime_chunks() -> tuple[Chunk, Chunk]:
    """The jq runtime and the resolver runtime, for :func:`shake`."""
    return (
        Chunk("J", runtime_chunk(), (("J", "J"), ("B", "B"))),
        Chunk("R", resolver_chunk(), (("J", "J"), ("R", "R"))),
    )


def prelude(sources: dict[str, str] | None = None) -> str:
    """Lua statements declaring ``J`` and ``R`` as locals of a script: the whole runtimes, or the
    sources :func:`shake` kept of them."""
    j_chunk, r_chunk = runtime_chunks()
    j = j_chunk.source if sources is None else sources.get("J", "")
    r = r_chunk.source if sources is None else sources.get("R", "")
    return (
        "local J = (function(...)\n"
        + compact(j)
        + "\nend)()\nlocal R = (function(...)\n"
        + compact(r)
        + "\nend)(J)\n"
    )


def status_chunk(cd: CompiledDefinition) -> tuple[str, list[Refusal]]:
    """A self-contained Lua chunk whose value is ``function(obj)`` returning the workload's
    ``{phases=, primary=, phase=, conditions=}`` (its root component's status, as
    :func:`workload_map.resolve.resolve_status`), and the status expressions it refused (the
    chunk is only usable when there are none). The runtimes hold only what it reaches."""
    d = definition_table(cd, frozenset({"status"}))
    chunk = (
        status_prelude([d.source])
        + f"local D = {d.source}\nreturn function(obj) return R.status(D, obj) end\n"
    )
    return chunk, d.refused("status")


def status_prelude(tables: Iterable[str]) -> str:
    """:func:`prelude` holding only what ``R.status`` and the definition tables ``tables``
    (sources of :func:`definition_table` with the "status" part) reach: the runtime of a
    status-only script (:func:`status_chunk`, Argo CD's health checks)."""
    roots = {"R.status"}
    for source in tables:
        roots |= references(source, dict(RUNTIME_TABLES))
    return prelude(shake(runtime_chunks(), roots))
