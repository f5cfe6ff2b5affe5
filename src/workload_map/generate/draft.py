"""A draft Karta definition from one CRD version (:mod:`workload_map.generate.infer`), as YAML
where every guess carries a comment saying what it was inferred from."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workload_map.generate.infer import (
    Count,
    Path,
    PodSource,
    Scale,
    Schema,
    StatusGuess,
    Step,
    Suspend,
    find_pod_sources,
    find_status,
    find_suspend,
    jq_path,
)
from workload_map.logs import escape_controls

__all__ = ["Draft", "draft_definition", "to_commented_yaml"]

#: Phase enum words -> the shared phase they stand for (lowercase, as statusMappings keys).
_PHASE_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("running", ("running", "ready", "serving", "active", "available", "deployed", "healthy")),
    ("completed", ("succeeded", "completed", "complete", "finished", "done", "success")),
    ("failed", ("failed", "failure", "error", "errored", "crashloopbackoff", "invalid")),
    ("suspended", ("suspended", "stopped", "paused")),
    ("degraded", ("degraded", "unhealthy", "restarting", "warning")),
    (
        "initializing",
        (
            "pending",
            "initializing",
            "created",
            "creating",
            "starting",
            "queued",
            "provisioning",
            "deploying",
            "submitted",
            "new",
            "inqueue",
            "waiting",
            "scheduling",
        ),
    ),
)


@dataclass(frozen=True)
class Draft:
    """The draft definition (``karta`` as data, ``text`` with comments) and its name;
    ``comments`` (by key path) and ``header`` let a later step rewrite the text."""

    name: str
    karta: dict[str, Any]
    text: str
    comments: Mapping[tuple[Any, ...], str] = field(default_factory=dict)
    header: tuple[str, ...] = ()


def _name(group: str, kind: str, version: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", (group or "core").lower()).strip("-")
    return f"{base}-{kind.lower()}-{version.lower()}"


def _count(count: Count, fallback: Path | None = None) -> str:
    """``(.replicas // 1)``: the field, the autoscaling minimum when it is absent, then its
    schema default (1 when none); a guarded count is 1 while its object is absent."""
    default = count.default if count.default is not None else 1
    minimum = f" // {_rel(fallback)}" if fallback is not None else ""
    value = f"({_rel(count.path)}{minimum} // {default})"
    if count.nodes:
        value = (
            f"({_rel(count.path)} | if (.data // 0) > 0 then ((.data / (.dataLocal // 1)) | floor) "
            "else (.pipeline // 1) end)"
        )
    if count.guard is not None:
        value = f"(if {_rel(count.guard)} then {value} else 1 end)"
    return f"({value} - 1)" if count.less_one else value


def _terms(scale: Scale) -> list[str]:
    """The factors of the pod count: the base (falling back to the autoscaling minimum), each
    multiplier (outer ones as the variables :func:`_bindings` sets), a Job's
    ``min(parallelism, completions)``, and the replicas of a group naming the instance."""
    out: list[str] = []
    if scale.base is not None:
        out.append(_count(scale.base, scale.minimum))
    elif scale.minimum is not None:  # autoscaled only: the minimum is what is asked for
        out.append(f"({_rel(scale.minimum)} // 1)")
    for i, m in enumerate(scale.multipliers):
        if m.outer:
            out.append(f"$outer{i}")
        elif scale.completions is not None and m.job_parallelism:
            p, c = _rel(m.path), _rel(scale.completions)
            out.append(f"([({p} // 1), ({c} // ({p} // 1))] | min)")
        else:
            out.append(_count(m))
    if scale.membership is not None:
        g = scale.membership
        default = g.default if g.default is not None else 1
        member = f"select(any(.{g.names}[]?; . == $id))"
        out.append(f"([$groups[] | {member} | (.{g.replicas} // {default})] | first // 1)")
    return out


def _bindings(scale: Scale) -> str:
    """Variables read before iterating the instances: outer counts and the groups list."""
    out = ""
    for i, m in enumerate(scale.multipliers):
        if m.outer:
            default = m.default if m.default is not None else 1
            out += f"({_rel(m.path)} // {default}) as $outer{i} | "
    if scale.membership is not None:
        out += f"({_rel(scale.membership.groups)} // []) as $groups | "
    return out


def _rel(path: Sequence[Step]) -> str:
    return jq_path(tuple(path), optional=False)


def _component(
    src: PodSource,
    owner: str | None,
    comments: dict[tuple[Any, ...], str],
    where: tuple[Any, ...],
    suspend: Suspend | None,
    group_hint: str = "",
) -> dict[str, Any]:
    spec_key = "podTemplateSpecPath" if src.shape == "template" else "podSpecPath"
    comp: dict[str, Any] = {"name": src.name}
    if owner is not None:
        comp["kind"] = {"group": "", "version": "v1", "kind": "Pod"}
        comp["ownerRef"] = owner
        comments[(*where, "kind")] = (
            "guess: the operator creates these pods (perhaps through objects of its own)"
        )
    comp["specDefinition"] = {spec_key: jq_path(src.path)}
    comments[(*where, "specDefinition", spec_key)] = src.why
    if src.fallback is not None:
        comp["specDefinition"][spec_key] = f"{jq_path(src.path)} // {jq_path(src.fallback)}"
        comments[(*where, "specDefinition", spec_key)] += (
            f"; optional: each group has a leader pod, made from {_rel(src.fallback)} without it"
        )
    scale = src.scale
    terms = _terms(scale)
    why = scale.why
    if src.prefix is None:
        replicas = " * ".join(terms) if terms else "1"
        if not terms and suspend is not None and suspend.mode:
            switch = f"({_rel(suspend.path)} // {json.dumps(suspend.default)}) == {json.dumps(suspend.on)}"
            replicas = f"if {switch} then 0 else 1 end"
            why += f"; 0 while {_rel(suspend.path)} is {json.dumps(suspend.on)}"
        if scale.present is not None:
            replicas = f"if {_rel(scale.present)} then {replicas} else 0 end"
        minimum = _rel(scale.minimum) if scale.minimum else None
        maximum = _rel(scale.maximum) if scale.maximum else None
    else:
        each = jq_path(src.prefix)
        named = f"{_rel(src.instance_id)} as $id | " if scale.membership and src.instance_id else ""
        replicas = f"{_bindings(scale)}{each} | {named}{' * '.join(terms) if terms else '1'}"
        minimum = f"{each} | ({_rel(scale.minimum)} // 0)" if scale.minimum else None
        maximum = f"{each} | ({_rel(scale.maximum)} // 2147483647)" if scale.maximum else None
    comp["scaleDefinition"] = {"replicasPath": replicas}
    comments[(*where, "scaleDefinition", "replicasPath")] = why
    if minimum:
        comp["scaleDefinition"]["minReplicasPath"] = minimum
    if maximum:
        comp["scaleDefinition"]["maxReplicasPath"] = maximum
    if src.prefix is not None:
        iterations = sum(1 for s in src.prefix if s.kind != "field")
        container = jq_path(src.prefix[:-1], optional=False)
        if src.prefix[-1].kind == "values" and iterations == 1:
            comp["instanceIdPath"] = f"({container} // {{}}) | keys_unsorted[]"
        elif src.instance_id is not None and iterations == 1:
            comp["instanceIdPath"] = jq_path(src.prefix) + _rel(src.instance_id)
        else:
            comp["instanceIdPath"] = f"[{jq_path(src.prefix)}] | keys[] | tostring"
        comments[(*where, "instanceIdPath")] = "one instance per element: " + (src.instance_why or "numbered")
        label = f"{group_hint}/{comp['name']}" if group_hint else comp["name"]
        comp["podSelector"] = {"componentInstanceSelector": {"idPath": f'.metadata.labels["{label}"]'}}
        comments[(*where, "podSelector")] = (
            "guess: the CRD does not say which pod label carries the instance id; replace the label "
            "with the one the operator sets (kubectl get pods --show-labels)"
        )
    if owner is not None:
        comments[(*where, "ownerRef")] = (
            "add podSelector.componentTypeSelector (a pod label the operator sets) so pods of "
            "different components can be told apart"
        )
    return comp


def _phase_rules(values: Sequence[str]) -> tuple[dict[str, list[str]], list[str]]:
    rules: dict[str, list[str]] = {}
    unmapped: list[str] = []
    for value in values:
        word = value.lower().replace("_", "").replace("-", "")
        for status, words in _PHASE_WORDS:
            if word in words:
                rules.setdefault(status, []).append(value)
                break
        else:
            unmapped.append(value)
    return rules, unmapped


def _suspend_why(suspend: Suspend) -> str:
    if suspend.mode:
        return f"the mode {_rel(suspend.path)} (enum with {json.dumps(suspend.on)})"
    return f"the boolean {_rel(suspend.path)}"


def _status(
    status: StatusGuess,
    suspend: Suspend | None,
    comments: dict[tuple[Any, ...], str],
    where: tuple[Any, ...],
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    mappings: dict[str, list[dict[str, Any]]] = {}
    if status.conditions is not None:
        cd = {"path": ".status.conditions", "typeFieldName": "type", "statusFieldName": "status"}
        if "reason" in status.conditions:
            cd["reasonFieldName"] = "reason"
        if "message" in status.conditions:
            cd["messageFieldName"] = "message"
        out["conditionsDefinition"] = cd
        comments[(*where, "conditionsDefinition")] = status.conditions_why
    if status.phase is not None:
        out["phaseDefinition"] = {"path": status.phase}
        comments[(*where, "phaseDefinition")] = status.phase_why
        if status.phase_values:
            rules, unmapped = _phase_rules(status.phase_values)
            for key, phases in rules.items():
                mappings[key] = [{"byPhase": p} for p in phases]
                comments[(*where, "statusMappings", key)] = (
                    f"enum value{'s' if len(phases) > 1 else ''} named so"
                )
            if unmapped:
                comments[(*where, "phaseDefinition")] += "; not mapped (review): " + ", ".join(unmapped)
        else:
            for key, phase in (
                ("running", "Running"),
                ("completed", "Succeeded"),
                ("failed", "Failed"),
                ("initializing", "Pending"),
            ):
                mappings[key] = [{"byPhase": phase}]
                comments[(*where, "statusMappings", key)] = (
                    "guess: the phase field has no enum; the usual word"
                )
    elif status.conditions is not None and status.condition_types:
        rules, unmapped = _phase_rules(status.condition_types)
        for key, types in rules.items():
            mappings[key] = [{"byConditions": [{"type": t, "status": "True"}]} for t in types]
            comments[(*where, "statusMappings", key)] = "condition types of the schema's enum, named so"
        if unmapped:
            comments[(*where, "conditionsDefinition")] += (
                "; condition types not mapped (review): " + ", ".join(unmapped)
            )
    elif status.conditions is not None:
        conventions = (
            ("running", [("Ready", "True")]),
            ("completed", [("Succeeded", "True"), ("Complete", "True")]),
            ("failed", [("Failed", "True")]),
            ("suspended", [("Suspended", "True")]),
        )
        for key, conds in conventions:
            mappings[key] = [{"byConditions": [{"type": t, "status": s}]} for t, s in conds]
            comments[(*where, "statusMappings", key)] = (
                "guess: condition types are not in the schema; the Kubernetes conventions"
            )
    if suspend is not None and "suspended" not in mappings:
        switch = f"({_rel(suspend.path)} // {json.dumps(suspend.default)}) == {json.dumps(suspend.on)}"
        mappings["suspended"] = [{"byExpression": {"expression": switch, "expectedResult": "true"}}]
        comments[(*where, "statusMappings", "suspended")] = f"from {_suspend_why(suspend)}"
    if not mappings:
        mappings["running"] = [{"byExpression": {"expression": "true", "expectedResult": "true"}}]
        comments[(*where, "statusMappings", "running")] = (
            "the CRD declares no status fields: every object reads Running until rules are written"
        )
    order = ("initializing", "running", "completed", "failed", "degraded", "suspended")
    out["statusMappings"] = {k: mappings[k] for k in order if k in mappings}
    return out


def draft_definition(group: str, version: str, kind: str, schema: Schema, *, source: str) -> Draft:
    """The draft for ``group/version kind`` whose openAPIV3Schema is ``schema``."""
    comments: dict[tuple[Any, ...], str] = {}
    name = _name(group, kind, version)
    root_name = re.sub(r"[^a-z0-9-]", "", kind.lower()) or "workload"
    sources = find_pod_sources(schema)
    suspend = find_suspend(schema)
    rw: tuple[Any, ...] = ("spec", "structureDefinition", "rootComponent")
    root: dict[str, Any] = {"name": root_name, "kind": {"group": group, "version": version, "kind": kind}}
    root["statusDefinition"] = _status(find_status(schema), suspend, comments, (*rw, "statusDefinition"))
    if suspend is not None:
        root["suspendDefinition"] = {
            "suspendActions": [{"path": _rel(suspend.path), "value": json.dumps(suspend.on)}],
            "resumeActions": [{"path": _rel(suspend.path), "value": json.dumps(suspend.off)}],
        }
        comments[(*rw, "suspendDefinition")] = f"{_suspend_why(suspend)} in the schema"
    children: list[dict[str, Any]] = []
    own = len(sources) == 1 and sources[0].prefix is None and len(sources[0].path) <= 2
    if own:  # one template right under .spec: the root itself holds the pods (Deployment-like)
        comp = _component(sources[0], None, comments, rw, suspend)
        root["specDefinition"] = comp["specDefinition"]
        root["scaleDefinition"] = comp["scaleDefinition"]
    else:
        used: set[str] = {root_name}
        for i, src in enumerate(sources):
            comp = _component(
                src,
                root_name,
                comments,
                ("spec", "structureDefinition", "childComponents", i),
                suspend,
                group,
            )
            base, n = comp["name"], 2
            while comp["name"] in used:
                comp["name"] = f"{base}-{n}"
                n += 1
            used.add(comp["name"])
            children.append(comp)
    if not sources:
        comments[(*rw, "name")] = "no pod template or pod spec in the schema: components left to you"
    structure: dict[str, Any] = {"rootComponent": root}
    if children:
        structure["childComponents"] = children
    karta = {
        "apiVersion": "run.ai/v1alpha1",
        "kind": "Karta",
        "metadata": {"name": name},
        "spec": {"structureDefinition": structure},
    }
    header = [
        f"Draft Karta definition for {group or 'core'}/{version} {kind}, from {source} (wmap generate).",
        "Each comment says what a guess was inferred from: review them, add pod selectors, then",
        "check with `wmap validate`, `wmap lint --crd` and `wmap test`.",
    ]
    return Draft(name, karta, to_commented_yaml(karta, comments, header), comments, tuple(header))


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_./-]*", text) and text.lower() not in (
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "null",
        "y",
        "n",
        "~",
    ):
        return text
    return json.dumps(text)  # a JSON string is a valid double-quoted YAML scalar


def to_commented_yaml(data: Any, comments: Mapping[tuple[Any, ...], str], header: Sequence[str] = ()) -> str:
    """Block YAML of ``data`` with ``comments`` (by key path) on the line above each key. Comments
    quote CRD field names and descriptions: their control characters (line breaks included) are
    escaped, so a comment stays one comment line and the draft is safe to print. Scalars are
    JSON-quoted (ASCII) where they are not plain words."""
    lines = [f"# {escape_controls(h)}" for h in header]

    def emit(value: Any, path: tuple[Any, ...], indent: str) -> None:
        if isinstance(value, Mapping):
            for key, child in value.items():
                note = comments.get((*path, key))
                if note:
                    lines.append(f"{indent}# {escape_controls(note)}")
                head = f"{indent}{_scalar(key)}:"
                if isinstance(child, Mapping) and child:
                    lines.append(head)
                    emit(child, (*path, key), indent + "  ")
                elif isinstance(child, list) and child:
                    lines.append(head)
                    emit(child, (*path, key), indent)
                elif isinstance(child, Mapping):
                    lines.append(f"{head} {{}}")
                elif isinstance(child, list):
                    lines.append(f"{head} []")
                else:
                    lines.append(f"{head} {_scalar(child)}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, Mapping) and item:
                    sub: list[str] = []
                    saved = lines[:]
                    lines.clear()
                    emit(item, (*path, i), indent + "  ")
                    sub = lines[:]
                    lines[:] = saved
                    first = next(n for n, ln in enumerate(sub) if not ln.lstrip().startswith("#"))
                    for n, ln in enumerate(sub):
                        if n == first:
                            lines.append(f"{indent}- {ln[len(indent) + 2 :]}")
                        else:
                            lines.append(ln)
                else:
                    lines.append(f"{indent}- {_scalar(item)}")

    emit(data, (), "")
    return "\n".join(lines) + "\n"
