"""``wmap export argocd``: Argo CD health checks (``health.lua``) compiled from definitions.

Argo CD judges a resource's health with a Lua script per group and kind, run with the object as
the global ``obj``; the script returns ``{status=, message=}``. One script here serves every
definition of a group and kind (Argo CD keys its checks without the version): it picks the
definition by ``obj.apiVersion``, resolves the root's phases with the resolver's status algorithm
in Lua (:func:`workload_map.resolve.lua.status_prelude`, the same compiler and the same pruning of
the runtimes as ``wmap export karmada``) and maps the most severe phase with :data:`ARGO_HEALTH`.
The message is the one ``wmap describe`` prints under the phase: ``Phase: <phases>`` and, for each
phase it explains, ``<phase>: <component> rule: <rule>``.

:func:`health` gives the same answer in Python (from :func:`workload_map.resolve.resolve_status`):
the tests hold the Lua to it on every recorded state.

The scripts need Lua's string and math libraries: Argo CD opens them for a check from ``argocd-cm``
only with ``resource.customizations.useOpenLibs.<group>_<kind>: "true"``, which
:func:`config_map_data` sets beside every script.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workload_map.errors import WorkloadMapError
from workload_map.expr.lua import lua_string
from workload_map.model.definition import ResourceStatus
from workload_map.resolve import resolve_status
from workload_map.resolve.compiled import CompiledDefinition
from workload_map.resolve.lua import Refusal, definition_table, status_prelude
from workload_map.resolve.types import WorkloadStatus
from workload_map.views.explain import matcher_text
from workload_map.views.why import EXPLAINED

#: Our primary phase -> Argo CD's health status (docs/gitops.md explains each row).
ARGO_HEALTH: dict[ResourceStatus, str] = {
    ResourceStatus.RUNNING: "Healthy",
    ResourceStatus.COMPLETED: "Healthy",
    ResourceStatus.INITIALIZING: "Progressing",
    ResourceStatus.RESUMING: "Progressing",
    ResourceStatus.UNDEFINED: "Progressing",
    ResourceStatus.SUSPENDING: "Suspended",
    ResourceStatus.SUSPENDED: "Suspended",
    ResourceStatus.DEGRADED: "Degraded",
    ResourceStatus.FAILED: "Degraded",
}
assert set(ARGO_HEALTH) == set(ResourceStatus)

#: What a check answers when the object's apiVersion has no definition or its status rules fail
#: (Argo CD shows Unknown for a failing script too).
UNKNOWN = "Unknown"
ERROR_PREFIX = "wmap: the status rules failed: "
CONFIG_MAP = "argocd-cm"
HEALTH_KEY = "resource.customizations.health."
OPEN_LIBS_KEY = "resource.customizations.useOpenLibs."

#: (group, kind) whose health Argo CD computes in Go (gitops-engine's pkg/health); a check from
#: argocd-cm would replace it, so ``--all`` leaves them out unless asked.
ARGO_NATIVE: frozenset[tuple[str, str]] = frozenset(
    {
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
        ("apps", "ReplicaSet"),
        ("batch", "Job"),
        ("", "Pod"),
        ("", "PersistentVolumeClaim"),
        ("", "Service"),
    }
)


@dataclass(frozen=True)
class Health:
    """Argo CD's ``HealthStatus``."""

    status: str
    message: str


@dataclass
class HealthCheck:
    """The ``health.lua`` of one group and kind, and what it had to leave out."""

    group: str
    kind: str
    script: str
    #: apiVersion -> definition name, the versions the script answers for
    versions: dict[str, str]
    #: definition name -> why it is not in the script
    omitted: dict[str, list[str]] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """Argo CD's ``<group>_<kind>`` (``<kind>`` for the core group)."""
        return f"{self.group}_{self.kind}" if self.group else self.kind

    @property
    def path(self) -> str:
        """Where Argo CD's resource_customizations keep it: ``<group>/<kind>/health.lua``."""
        return f"{self.group}/{self.kind}/health.lua" if self.group else f"{self.kind}/health.lua"


def _root_status(cd: CompiledDefinition) -> Any:
    return cd.root.definition.status_definition


def health_message(cd: CompiledDefinition, status: WorkloadStatus) -> str:
    """``describe``'s phase block on one line: ``Phase: Failed; Failed: job rule: condition
    Failed is True``."""
    parts = ["Phase: " + ",".join(p.value for p in status.phases)]
    sd = _root_status(cd)
    for phase, index in zip(status.phases, status.matched_by, strict=False):
        if phase.value not in EXPLAINED or sd is None:
            continue
        matchers = sd.status_mappings.matchers_for(phase)
        rule = matcher_text(matchers[index]) if index < len(matchers) else "?"
        parts.append(f"{phase.value}: {cd.root_name} rule: {rule}")
    return "; ".join(parts)


def health(cd: CompiledDefinition, obj: Mapping[str, Any]) -> Health:
    """What the exported check answers for ``obj``, computed by the Python resolver."""
    try:
        status = resolve_status(cd, obj)
    except WorkloadMapError as exc:
        return Health(UNKNOWN, ERROR_PREFIX + str(exc))
    return Health(ARGO_HEALTH[status.primary_phase], health_message(cd, status))


def _rules_table(cd: CompiledDefinition) -> str:
    """``{Failed = {"condition Failed is True", ...}, ...}``: each explained phase's matchers in
    words, in the definition's order (the Lua indexes them with ``matched``)."""
    sd = _root_status(cd)
    items = []
    for phase in ResourceStatus:
        if phase.value not in EXPLAINED or sd is None:
            continue
        texts = [lua_string(matcher_text(m)) for m in sd.status_mappings.matchers_for(phase)]
        if texts:
            items.append(f"{phase.value} = {{{', '.join(texts)}}}")
    return "{" + ", ".join(items) + "}"


def _lua_set(names: Iterable[str]) -> str:
    return "{" + ", ".join(f"{n} = true" for n in sorted(names)) + "}"


_ENTRY = """local HEALTH = {health}
local EXPLAINED = {explained}
local function check(o)
  local v = V[o.apiVersion]
  if v == nil then
    return {{status = "{unknown}", message = "wmap: no definition for apiVersion " .. tostring(o.apiVersion)}}
  end
  local st = R.status(v.D, o)
  local parts = {{"Phase: " .. table.concat(st.phases, ",")}}
  for i, p in ipairs(st.phases) do
    local m = st.matched and st.matched[i]
    if EXPLAINED[p] and m ~= nil then
      local rules = v.rules[p] or {{}}
      parts[#parts + 1] = p .. ": " .. v.component .. " rule: " .. (rules[m + 1] or "?")
    end
  end
  return {{status = HEALTH[st.primary] or "{unknown}", message = table.concat(parts, "; ")}}
end
local ok, hs = pcall(check, obj)
if ok then return hs end
return {{status = "{unknown}", message = {prefix} .. tostring(hs)}}
"""


def _omissions(cd: CompiledDefinition, refused: Sequence[Refusal]) -> list[str]:
    if _root_status(cd) is None:
        return [f'component "{cd.root_name}" has no statusDefinition: no phase to report']
    return [r.text() for r in refused]


def health_check(definitions: Sequence[CompiledDefinition]) -> HealthCheck:
    """One script for definitions of the same group and kind (one per apiVersion; a definition
    whose status rules do not translate is left out and named in ``omitted``)."""
    first = definitions[0].root.definition.kind
    assert first is not None
    versions: dict[str, str] = {}
    omitted: dict[str, list[str]] = {}
    tables: list[str] = []
    entries: list[str] = []
    for cd in definitions:
        gvk = cd.root.definition.kind
        assert gvk is not None and (gvk.group, gvk.kind) == (first.group, first.kind)
        d = definition_table(cd, frozenset({"status"}))
        problems = _omissions(cd, d.refused("status"))
        if gvk.api_version in versions:
            problems.append(f"{gvk.api_version} is already covered by {versions[gvk.api_version]}")
        if problems:
            omitted[cd.name] = problems
            continue
        versions[gvk.api_version] = cd.name
        tables.append(d.source)
        entries.append(
            f"V[{lua_string(gvk.api_version)}] = {{D = {d.source}, component = {lua_string(cd.root_name)}, "
            f"rules = {_rules_table(cd)}}}"
        )
    names = ", ".join(versions.values()) or "none"
    where = f"{first.group or 'core'}/{first.kind}"
    header = f"-- wmap export argocd: {where} from {names} (do not edit: regenerate from the definitions)"
    entry = _ENTRY.format(
        health="{" + ", ".join(f"{p.value} = {lua_string(h)}" for p, h in ARGO_HEALTH.items()) + "}",
        explained=_lua_set(EXPLAINED),
        unknown=UNKNOWN,
        prefix=lua_string(ERROR_PREFIX),
    )
    script = "\n".join([header, status_prelude(tables), "local V = {}", *entries, entry])
    return HealthCheck(first.group, first.kind, script, versions, omitted)


def health_checks(definitions: Iterable[CompiledDefinition]) -> list[HealthCheck]:
    """One :class:`HealthCheck` per group and kind of ``definitions`` (first-seen order)."""
    groups: dict[tuple[str, str], list[CompiledDefinition]] = {}
    for cd in definitions:
        gvk = cd.root.definition.kind
        assert gvk is not None
        groups.setdefault((gvk.group, gvk.kind), []).append(cd)
    return [health_check(cds) for cds in groups.values()]


def config_map_data(checks: Iterable[HealthCheck]) -> dict[str, str]:
    """``argocd-cm`` data: the script and ``useOpenLibs`` per group and kind (checks that kept
    no definition are skipped)."""
    data: dict[str, str] = {}
    for c in checks:
        if c.versions:
            data[HEALTH_KEY + c.key] = c.script
            data[OPEN_LIBS_KEY + c.key] = "true"
    return data


def config_map(checks: Iterable[HealthCheck], *, namespace: str = "argocd") -> dict[str, Any]:
    """The keys as an ``argocd-cm`` ConfigMap, to apply server-side or use as a kustomize patch."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": CONFIG_MAP,
            "namespace": namespace,
            "labels": {"app.kubernetes.io/name": CONFIG_MAP, "app.kubernetes.io/part-of": "argocd"},
        },
        "data": config_map_data(checks),
    }


def helm_values(checks: Iterable[HealthCheck]) -> dict[str, Any]:
    """Values for the argo-cd Helm chart (argo-helm), whose ``configs.cm`` lands in argocd-cm."""
    return {"configs": {"cm": config_map_data(checks)}}
