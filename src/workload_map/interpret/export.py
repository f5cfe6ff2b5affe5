"""``wmap export karmada TYPE``: a ``ResourceInterpreterCustomization`` whose Lua gives Karmada the
answers the webhook gives, for clusters that should run no extra webhook.

Each customization's script is self-contained (Karmada runs each one on its own): of the jq
runtime, the resolver runtime (:mod:`workload_map.resolve.lua`) and the operations (karmada.lua)
the statements its code reaches (Karmada compiles the script at every call), the definition's
table ``D`` with every expression compiled to Lua (:mod:`workload_map.expr.lua`), and the entry
point Karmada calls (``GetReplicas``, ``GetComponents``, ``ReviseReplica``, ``Retain``,
``ReflectStatus``, ``AggregateStatus``, ``InterpretHealth``, ``GetDependencies``).

An operation whose expressions the Lua back end refuses is left out of the customization (Karmada
then asks its other interpreters) and reported with the construct, the field and the expression:
the structure operations need the structure expressions (pod specs, counts, instance ids), the
status operations the status rules, ``ReviseReplica`` also the replica paths the write-back can
write (every component the Python write-back scales must be written the same way in Lua).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from workload_map.expr.lua import lua_string
from workload_map.resolve.compiled import CompiledDefinition
from workload_map.resolve.lua import (
    ALL_PARTS,
    RUNTIME_TABLES,
    Chunk,
    Refusal,
    compact,
    definition_table,
    prelude,
    runtime_chunks,
    shake,
)
from workload_map.resolve.lua.shake import references

from .retain import replica_fields

#: customization field -> (entry point, Lua call of the operations table K, parts it needs)
CUSTOMIZATIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "replicaResource": ("GetReplicas(desiredObj)", "K.GetReplicas(desiredObj)", ("structure",)),
    "componentResource": ("GetComponents(desiredObj)", "K.GetComponents(desiredObj)", ("structure",)),
    "replicaRevision": (
        "ReviseReplica(desiredObj, desiredReplica)",
        "K.ReviseReplica(desiredObj, desiredReplica)",
        ("structure", "write"),
    ),
    "retention": ("Retain(desiredObj, observedObj)", "K.Retain(desiredObj, observedObj)", ()),
    "statusReflection": ("ReflectStatus(observedObj)", "K.ReflectStatus(observedObj)", ()),
    "statusAggregation": (
        "AggregateStatus(desiredObj, statusItems)",
        "K.AggregateStatus(desiredObj, statusItems)",
        ("status",),
    ),
    "healthInterpretation": ("InterpretHealth(observedObj)", "K.InterpretHealth(observedObj)", ("status",)),
    "dependencyInterpretation": (
        "GetDependencies(desiredObj)",
        "K.GetDependencies(desiredObj, kube)",
        ("structure",),
    ),
}
#: Karmada's operation name per customization field.
OPERATION_OF = {
    "replicaResource": "InterpretReplica",
    "componentResource": "InterpretComponent",
    "replicaRevision": "ReviseReplica",
    "retention": "Retain",
    "statusReflection": "InterpretStatus",
    "statusAggregation": "AggregateStatus",
    "healthInterpretation": "InterpretHealth",
    "dependencyInterpretation": "InterpretDependency",
}


@dataclass
class KarmadaExport:
    """The customization object and what it had to leave out."""

    customization: dict[str, Any]
    #: customization field -> the refusals that kept it out
    omitted: dict[str, list[Refusal]] = field(default_factory=dict)
    refusals: list[Refusal] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.omitted


@cache
def operations_chunk() -> Chunk:
    """karmada.lua, the operations table ``K``, for :func:`shake`."""
    source = resources.files(__package__).joinpath("karmada.lua").read_text(encoding="utf-8")
    return Chunk("K", source, (("J", "J"), ("R", "R"), ("K", "K")))


def _path_literal(path: tuple[str, ...]) -> str:
    return "{" + ", ".join(lua_string(p) for p in path) + "}"


def script(cd: CompiledDefinition, d_source: str, entry: str, call: str) -> str:
    """One self-contained script defining the global function ``entry``: of the runtimes and
    the operations only what the entry point and the definition table reach."""
    fields = ", ".join(_path_literal(p) for p in replica_fields(cd))
    roots = references(call, {"K": "K"}) | references(d_source, dict(RUNTIME_TABLES))
    kept = shake((*runtime_chunks(), operations_chunk()), roots)
    lines = [
        f"-- wmap export karmada: {cd.name} (do not edit: regenerate from the definition)",
        'local kube = require("kube")' if call.endswith("kube)") else "",
        prelude(kept),
        f"local D = {d_source}",
        f"D.replica_fields = {{{fields}}}",
        "local K = (function(...)",
        compact(kept.get("K", "")),
        "end)(J, R, D)",
        f"function {entry}",
        f"  return {call}",
        "end",
    ]
    return "\n".join(line for line in lines if line) + "\n"


def export_customization(cd: CompiledDefinition, *, name: str | None = None) -> KarmadaExport:
    """The ``ResourceInterpreterCustomization`` for ``cd`` (``name`` defaults to
    ``wmap-<definition name>``)."""
    d = definition_table(cd)
    tables = {
        parts: definition_table(cd, frozenset(parts) & ALL_PARTS).source
        for parts in {v[2] for v in CUSTOMIZATIONS.values()}
    }
    gvk = cd.root.definition.kind
    assert gvk is not None
    omitted: dict[str, list[Refusal]] = {}
    customizations: dict[str, Any] = {}
    for key, (entry, call, parts) in CUSTOMIZATIONS.items():
        refused = [r for p in parts for r in d.refused(p)]
        if refused:
            omitted[key] = refused
            continue
        customizations[key] = {"luaScript": script(cd, tables[parts], entry, call)}
    body = {
        "apiVersion": "config.karmada.io/v1alpha1",
        "kind": "ResourceInterpreterCustomization",
        "metadata": {
            "name": name or f"wmap-{cd.name}",
            "labels": {"app.kubernetes.io/name": "wmap"},
            "annotations": {"run.ai/karta": cd.name},
        },
        "spec": {
            "target": {"apiVersion": gvk.api_version, "kind": gvk.kind},
            "customizations": customizations,
        },
    }
    return KarmadaExport(body, omitted, list(d.refusals))


def customization_yaml(objects: list[dict[str, Any]]) -> str:
    """The objects as a YAML stream, scripts as ``|`` blocks."""
    import yaml

    base: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class Dumper(base):  # type: ignore[misc]
        pass

    def text(dumper: Any, value: str) -> Any:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return "---\n".join(
        yaml.dump(
            o, Dumper=Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1_000_000
        )
        for o in objects
    )
