"""``wmap explain``: one definition in words (the detail view upstream designed in #203).

:func:`explanation` builds a structured explanation (JSON-ready dict, ``-o json|yaml``);
:func:`render_explanation` turns it into prose: the component tree, where each component's pods
come from, replica formulas, instance ids, pod selectors, how each phase is decided (every
matcher in words), suspend/resume actions and gang rules.
"""

from __future__ import annotations

from typing import Any

from workload_map.model.definition import (
    STATUS_SEVERITY_ORDER,
    ComponentDefinition,
    Karta,
    PodSelector,
    ResourceStatus,
    StatusDefinition,
    StatusMatcher,
)

__all__ = ["explanation", "matcher_text", "render_explanation"]

_STATUS_ORDER = (
    ResourceStatus.INITIALIZING,
    ResourceStatus.RUNNING,
    ResourceStatus.COMPLETED,
    ResourceStatus.FAILED,
    ResourceStatus.DEGRADED,
    ResourceStatus.SUSPENDED,
    ResourceStatus.SUSPENDING,
    ResourceStatus.RESUMING,
)


def _gvk(c: ComponentDefinition) -> str | None:
    if c.kind is None or not c.kind.kind:
        return None
    return f"{c.kind.api_version} {c.kind.kind}"


def matcher_text(m: StatusMatcher) -> str:
    """``condition Ready is True and phase is "Running"``."""
    parts: list[str] = []
    if m.by_phase:
        parts.append(f'phase is "{m.by_phase}"')
    for cm in m.by_conditions or ():
        text = f"condition {cm.type}"
        if cm.status:
            text += f" is {cm.status}"
        if cm.reason:
            text += f" with reason {cm.reason}" if cm.status else f" has reason {cm.reason}"
        if not cm.status and not cm.reason:
            text += " exists"
        parts.append(text)
    if m.by_expression is not None:
        expr = " ".join(m.by_expression.expression.split())
        parts.append(f"`{expr}` gives {m.by_expression.expected_result}")
    return " and ".join(parts) if parts else "always (empty matcher)"


def _pods(c: ComponentDefinition) -> dict[str, Any] | None:
    spec = c.spec_definition
    if spec is None:
        return None
    if spec.pod_template_spec_path:
        return {"source": "podTemplateSpec", "path": spec.pod_template_spec_path}
    if spec.pod_spec_path:
        out: dict[str, Any] = {"source": "podSpec", "path": spec.pod_spec_path}
        if spec.metadata_path:
            out["metadataPath"] = spec.metadata_path
        return out
    frag = spec.fragmented_pod_spec_definition
    if frag is not None:
        fields = {
            (info.alias or name): getattr(frag, name)
            for name, info in type(frag).model_fields.items()
            if getattr(frag, name)
        }
        return {"source": "fragmented", "fields": fields}
    return None


def _selector(sel: PodSelector | None) -> dict[str, Any] | None:
    if sel is None:
        return None
    out: dict[str, Any] = {}
    t = sel.component_type_selector
    if t is not None:
        out["componentType"] = {
            k: v
            for k, v in (("keyPath", t.key_path), ("value", t.value), ("matchLabels", t.match_labels))
            if v is not None
        }
    if sel.component_instance_selector is not None:
        out["instanceIdPath"] = sel.component_instance_selector.id_path
    if sel.replica_selector is not None:
        out["replicaKeyPath"] = sel.replica_selector.key_path
    return out or None


def _status(s: StatusDefinition) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if s.phase_definition is not None:
        out["phasePath"] = s.phase_definition.path
    cd = s.conditions_definition
    if cd is not None:
        out["conditions"] = {
            "path": cd.path,
            "typeField": cd.type_field_name,
            "statusField": cd.status_field_name,
            "reasonField": cd.reason_field_name,
            "messageField": cd.message_field_name,
        }
    rules: dict[str, list[str]] = {}
    for status in _STATUS_ORDER:
        matchers = s.status_mappings.matchers_for(status)
        if matchers:
            rules[status.value] = [matcher_text(m) for m in matchers]
    out["rules"] = rules
    out["unmapped"] = [st.value for st in _STATUS_ORDER if st.value not in rules]
    return out


def explanation(karta: Karta) -> dict[str, Any]:
    """The structured explanation of ``karta``."""
    s = karta.spec.structure_definition
    comps = [s.root_component, *s.child_components]
    children: dict[str, list[str]] = {c.name: [] for c in comps}
    for c in s.child_components:
        if c.owner_ref in children:
            children[c.owner_ref].append(c.name)
    components: list[dict[str, Any]] = []
    for c in comps:
        scale = c.scale_definition
        entry: dict[str, Any] = {
            "name": c.name,
            "root": c is s.root_component,
            "owner": c.owner_ref,
            "kind": _gvk(c),
            "children": children.get(c.name, []),
            "pods": _pods(c),
            "replicas": None
            if scale is None
            else {
                k: v
                for k, v in (
                    ("replicas", scale.replicas_path),
                    ("min", scale.min_replicas_path),
                    ("max", scale.max_replicas_path),
                )
                if v
            },
            "instanceIdPath": c.instance_id_path,
            "podSelector": _selector(c.pod_selector),
        }
        components.append(entry)
    root = s.root_component
    status = _status(root.status_definition) if root.status_definition is not None else None
    suspend = None
    if root.suspend_definition is not None:
        sd = root.suspend_definition
        suspend = {
            "suspend": [{"path": a.path, "value": a.value} for a in sd.suspend_actions],
            "resume": [{"path": a.path, "value": a.value} for a in sd.resume_actions],
        }
    gangs: dict[str, Any] | None = None
    gs = karta.spec.optimization_instructions.gang_scheduling
    if gs is not None and gs.pod_group is not None:
        pg = gs.pod_group
        gangs = {
            "format": "podGroup",
            "name": pg.name,
            "topology": None if pg.topology is None else pg.topology.model_dump(by_alias=True),
            "subGroups": [
                {
                    "component": sg.component_name,
                    "topology": None if sg.topology is None else sg.topology.model_dump(by_alias=True),
                }
                for sg in pg.sub_groups or ()
            ],
        }
    elif gs is not None and gs.pod_groups:
        gangs = {
            "format": "podGroups",
            "groups": [
                {
                    "name": g.name,
                    "members": [
                        {
                            "component": m.component_name,
                            "keys": list(m.group_by_key_paths or ()),
                            "filters": list(m.filters or ()),
                        }
                        for m in g.members
                    ],
                }
                for g in gs.pod_groups
            ],
        }
    native: dict[str, str] | None = None
    if gs is not None and gs.expressions is not None:
        ge = gs.expressions
        native = {
            info.alias or name: value
            for name, info in type(ge).model_fields.items()
            if (value := getattr(ge, name)) is not None
        }
    gvk = karta.root_gvk
    return {
        "name": karta.name,
        "kind": None if gvk is None else f"{gvk.api_version} {gvk.kind}",
        "components": components,
        "status": status,
        "suspend": suspend,
        "gangScheduling": gangs,
        "gangExpressions": native,
        "additionalChildKinds": [
            f"{k.api_version} {k.kind}" for k in karta.spec.structure_definition.additional_child_kinds
        ],
    }


def _tree(ex: dict[str, Any]) -> list[str]:
    by_name = {c["name"]: c for c in ex["components"]}
    lines: list[str] = []

    def label(c: dict[str, Any]) -> str:
        kind = c["kind"] or "no kind: a logical grouping"
        extra = " [root]" if c["root"] else ""
        return f"{c['name']} ({kind}){extra}"

    def walk(name: str, prefix: str, last: bool, top: bool) -> None:
        c = by_name[name]
        lines.append(("  " + label(c)) if top else f"  {prefix}{'└─ ' if last else '├─ '}{label(c)}")
        kids = c["children"]
        for i, k in enumerate(kids):
            walk(k, "" if top else prefix + ("   " if last else "│  "), i == len(kids) - 1, False)

    roots = [c["name"] for c in ex["components"] if c["root"]]
    for r in roots:
        walk(r, "", True, True)
    return lines


def _selector_words(sel: dict[str, Any]) -> list[str]:
    out: list[str] = []
    t = sel.get("componentType")
    if t is not None:
        conds: list[str] = []
        if "keyPath" in t:
            conds.append(f'{t["keyPath"]} is "{t["value"]}"' if "value" in t else f"{t['keyPath']} is set")
        for k, v in (t.get("matchLabels") or {}).items():
            conds.append(f'label {k}="{v}"')
        out.append("pods of this role: " + " and ".join(conds))
    if "instanceIdPath" in sel:
        out.append(f"a pod's instance id: {sel['instanceIdPath']}")
    if "replicaKeyPath" in sel:
        out.append(f"a pod's replica (group) index: {sel['replicaKeyPath']}")
    return out


def render_explanation(ex: dict[str, Any]) -> str:
    """Prose for :func:`explanation`'s dict."""
    lines: list[str] = [
        f"Karta definition {ex['name']} for {ex['kind'] or '<no root kind>'}",
        "",
        "Components:",
    ]
    lines += _tree(ex)
    for c in ex["components"]:
        lines += ["", f"Component {c['name']}:"]
        pods = c["pods"]
        if pods is None:
            lines.append("  pods: none defined here (counts and groups only)")
        elif pods["source"] == "podTemplateSpec":
            lines.append(f"  pods: from the pod template at {pods['path']}")
        elif pods["source"] == "podSpec":
            meta = f", metadata at {pods['metadataPath']}" if "metadataPath" in pods else ""
            lines.append(f"  pods: from the pod spec at {pods['path']}{meta}")
        else:
            lines.append("  pods: assembled from fields scattered over the object:")
            lines += [f"    {k}: {' '.join(str(v).split())}" for k, v in pods["fields"].items()]
        rep = c["replicas"]
        if rep:
            if "replicas" in rep:
                lines.append(f"  replicas: {rep['replicas']}")
            if "min" in rep or "max" in rep:
                lines.append(f"  autoscaling: min {rep.get('min', '-')}, max {rep.get('max', '-')}")
        if c["instanceIdPath"]:
            lines.append(f"  instances: one per id of {c['instanceIdPath']}")
        if c["podSelector"]:
            lines += [f"  {w}" for w in _selector_words(c["podSelector"])]
    st = ex["status"]
    if st is not None:
        lines += ["", "Status (from the root component):"]
        if "phasePath" in st:
            lines.append(f"  phase read from {st['phasePath']}")
        if "conditions" in st:
            cd = st["conditions"]
            lines.append(
                f"  conditions read from {cd['path']} (type field {cd['typeField']}, "
                f"status field {cd['statusField']})"
            )
        for status, texts in st["rules"].items():
            lines.append(f"  {status} when {texts[0]}")
            lines += [f"  {' ' * len(status)}   or {t}" for t in texts[1:]]
        if st["unmapped"]:
            lines.append(f"  never reported: {', '.join(st['unmapped'])}")
        order = " > ".join(s.value for s in STATUS_SEVERITY_ORDER if s is not ResourceStatus.UNDEFINED)
        lines.append(f"  several can hold at once; the primary phase is the most severe: {order}")
        lines.append("  nothing matching gives Undefined")
    sp = ex["suspend"]
    lines += [""]
    if sp is None:
        lines.append("Suspend: not supported (no native suspend field)")
    else:
        lines.append("Suspend: " + "; then ".join(f"set {a['path']} to {a['value']}" for a in sp["suspend"]))
        lines.append("Resume: " + "; then ".join(f"set {a['path']} to {a['value']}" for a in sp["resume"]))
    g = ex["gangScheduling"]
    lines += [""]
    if g is None:
        lines.append("Gang scheduling: none (each pod is scheduled on its own)")
    elif g["format"] == "podGroup":
        lines.append(f'Gang scheduling (podGroup): one PodGroup "{g["name"]}" for the whole workload')
        if g["topology"]:
            t = g["topology"]
            lines.append(
                f"  topology {t['topologyName']}: required level {t['requiredTopologyLevel']}, "
                f"preferred {t['preferredTopologyLevel']}"
            )
        for sg in g["subGroups"]:
            lines.append(f"  subgroup {sg['component']}: all pods of {sg['component']} and its descendants")
        if not g["subGroups"]:
            lines.append("  size: every pod of the workload")
    else:
        lines.append("Gang scheduling (podGroups):")
        for grp in g["groups"]:
            for m in grp["members"]:
                keys = ", ".join(m["keys"]) if m["keys"] else "none (one gang per workload)"
                lines.append(
                    f'  group "{grp["name"]}": pods of {m["component"]} (and below); gang key {keys}'
                )
                lines += [f"    only pods where {f}" for f in m["filters"]]
    if ex["gangExpressions"] is not None:
        fields = ", ".join(ex["gangExpressions"]) or "none"
        lines.append(
            "KAI Scheduler (native plugin rules): the default grouper's PodGroup, with jq on the workload"
            f" and the pod computing {fields} (wmap group shows the result)"
        )
    if ex["additionalChildKinds"]:
        lines += ["", "Also owns: " + ", ".join(ex["additionalChildKinds"])]
    return "\n".join(lines) + "\n"
