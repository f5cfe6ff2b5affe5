"""What a CRD's schema says about its workload: where pod templates and pod specs live (maps and
arrays of them give instances), the integer fields beside them that count replicas, the status
fields (conditions, a phase enum) and a suspend flag. Each finding keeps the reason it was made,
which the draft prints as a comment.

The walk is bounded (:data:`MAX_DEPTH` levels, :data:`MAX_NODES` schema nodes) so a hostile or
huge CRD costs a fixed amount.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "PodSource",
    "Scale",
    "Schema",
    "StatusGuess",
    "Step",
    "find_pod_sources",
    "find_status",
    "find_suspend",
    "jq_path",
]

MAX_DEPTH = 24
MAX_NODES = 50_000

#: A JSON Schema node (openAPIV3Schema), as decoded YAML.
Schema: TypeAlias = Mapping[str, Any]


@dataclass(frozen=True)
class Step:
    """``field`` (a property), ``items`` (each element of an array) or ``values`` (each value of
    a map, ``additionalProperties``)."""

    kind: Literal["field", "items", "values"]
    name: str = ""


Path: TypeAlias = tuple[Step, ...]

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def jq_path(path: Path, *, optional: bool = True) -> str:
    """``.spec.workerGroupSpecs[]?.template``: a jq path; ``[]?`` so a missing list gives no
    instances instead of an error."""
    out = ""
    for step in path:
        if step.kind == "field":
            out += f".{step.name}" if _PLAIN.match(step.name) else f'["{step.name}"]'
        else:
            out += "[]?" if optional else "[]"
    return out or "."


@dataclass(frozen=True)
class Scale:
    """Integer fields that count the pods of one pod source: ``base`` (replicas or size) and
    multipliers, each a path relative to the instance (or absolute for a single one)."""

    base: Path | None
    multipliers: tuple[Path, ...] = ()
    minimum: Path | None = None
    maximum: Path | None = None
    why: str = ""
    #: a Job's completions beside its parallelism: the pods are the smaller of the two
    completions: Path | None = None


@dataclass(frozen=True)
class PodSource:
    """A pod template (``template``) or a bare pod spec (``spec``) at ``path``; ``prefix`` is
    the path up to and including the last ``items``/``values`` step (the instance), ``None``
    for a single instance."""

    path: Path
    shape: Literal["template", "spec"]
    why: str
    prefix: Path | None = None
    instance_id: Path | None = None
    instance_why: str = ""
    scale: Scale = field(default_factory=lambda: Scale(None))

    @property
    def name(self) -> str:
        """The component name: the nearest field naming the role (``workerGroupSpecs`` ->
        ``workergroup``, ``leaderTemplate`` -> ``leader``), lowercase."""
        for step in reversed(self.path):
            if step.kind == "field" and step.name.lower() not in (
                "template",
                "spec",
                "podtemplate",
                "podspec",
            ):
                word = re.sub(r"(Template|Specs?|PodSpec|PodTemplate)$", "", step.name) or step.name
                word = word[:-1] if self.prefix and word.endswith("s") and len(word) > 3 else word
                return re.sub(r"[^a-z0-9-]", "", word.lower()) or "pods"
        return "pods"


def _props(node: Schema) -> Mapping[str, Schema]:
    p = node.get("properties")
    return p if isinstance(p, Mapping) else {}


def _type(node: Schema) -> str:
    t = node.get("type")
    return t if isinstance(t, str) else ""


def _is_containers(node: Any) -> bool:
    if not isinstance(node, Mapping) or _type(node) != "array":
        return False
    items = node.get("items")
    return isinstance(items, Mapping) and ("image" in _props(items) or "name" in _props(items))


def _is_pod_spec(node: Schema) -> bool:
    return _is_containers(_props(node).get("containers"))


def _is_pod_template(node: Schema) -> bool:
    spec = _props(node).get("spec")
    return isinstance(spec, Mapping) and _is_pod_spec(spec)


class _Budget:
    def __init__(self) -> None:
        self.nodes = 0

    def spend(self) -> bool:
        self.nodes += 1
        return self.nodes <= MAX_NODES


def _walk(node: Schema, path: Path, budget: _Budget) -> Iterator[tuple[Path, Schema, str]]:
    """Pod templates and pod specs under ``node``, not descending into one found."""
    if len(path) > MAX_DEPTH or not budget.spend():
        return
    if _is_pod_template(node):
        yield path, node, "template"
        return
    if _is_pod_spec(node):
        yield path, node, "spec"
        return
    for key, child in _props(node).items():
        if isinstance(child, Mapping) and not (
            not path and key in ("status", "metadata", "apiVersion", "kind")
        ):
            yield from _walk(child, (*path, Step("field", str(key))), budget)
    items = node.get("items")
    if isinstance(items, Mapping):
        yield from _walk(items, (*path, Step("items")), budget)
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        yield from _walk(extra, (*path, Step("values")), budget)


def _node_at(root: Schema, path: Path) -> Schema | None:
    node: Any = root
    for step in path:
        if not isinstance(node, Mapping):
            return None
        if step.kind == "field":
            node = _props(node).get(step.name)
        elif step.kind == "items":
            node = node.get("items")
        else:
            node = node.get("additionalProperties")
    return node if isinstance(node, Mapping) else None


#: Integer fields that count pods, by role (names used by the frameworks in the corpus).
_BASE = ("replicas", "size")
_MULTIPLIERS = ("numOfHosts", "parallelism")
#: Objects beside a pod source that hold autoscaling bounds.
_SCALING = ("scaling", "autoscaling", "scale", "autoscaler")


def _scale(root: Schema, source: Path, prefix: Path | None) -> Scale:
    """Look for pod-counting integers on the objects from the pod source up to its instance (or
    the root's ``spec`` for a single instance)."""
    stop = len(prefix) if prefix is not None else 1  # a single instance: look up to .spec
    base: Path | None = None
    multipliers: list[Path] = []
    minimum: Path | None = None
    maximum: Path | None = None
    completions: Path | None = None
    found: list[str] = []
    for depth in range(len(source), stop - 1, -1):
        holder = source[:depth]
        node = _node_at(root, holder)
        if node is None:
            continue
        props = _props(node)
        for name, child in props.items():
            if not isinstance(child, Mapping) or _type(child) != "integer":
                continue
            rel = holder[len(prefix) :] if prefix is not None else holder
            where = (*rel, Step("field", name))
            if name in _BASE and base is None:
                base = where
                found.append(jq_path(where, optional=False))
            elif name in _BASE and base is not None and len(where) != len(base):
                # replicas of groups at an outer level times the group size (LWS): both count
                multipliers.append(where)
                found.append(jq_path(where, optional=False))
            elif name in _MULTIPLIERS and name not in [m[-1].name for m in multipliers]:
                multipliers.append(where)
                found.append(jq_path(where, optional=False))
            elif name == "minReplicas" and minimum is None:
                minimum = where
            elif name == "maxReplicas" and maximum is None:
                maximum = where
            elif name == "completions" and completions is None:
                completions = where
        for name, child in props.items():  # an autoscaling block beside it: {minReplicas, maxReplicas}
            if name not in _SCALING or not isinstance(child, Mapping):
                continue
            rel = holder[len(prefix) :] if prefix is not None else holder
            for bound in ("minReplicas", "maxReplicas"):
                leaf = _props(child).get(bound)
                if isinstance(leaf, Mapping) and _type(leaf) == "integer":
                    where = (*rel, Step("field", name), Step("field", bound))
                    if bound == "minReplicas" and minimum is None:
                        minimum = where
                    elif bound == "maxReplicas" and maximum is None:
                        maximum = where
    if completions is not None and any(m[-1].name == "parallelism" for m in multipliers):
        found.append(jq_path(completions, optional=False))
    why = (
        "integer fields beside it: " + ", ".join(found)
        if found
        else "no replicas-like integer (replicas, size, parallelism, numOfHosts) beside it: 1 assumed"
    )
    if not any(m[-1].name == "parallelism" for m in multipliers):
        completions = None
    return Scale(base, tuple(multipliers), minimum, maximum, why, completions)


def _instance(root: Schema, prefix: Path) -> tuple[Path | None, str]:
    item = _node_at(root, prefix)
    if prefix[-1].kind == "values":
        return None, "the map's keys"
    for key in ("name", "groupName", "componentName"):
        child = _props(item or {}).get(key)
        if isinstance(child, Mapping) and _type(child) == "string":
            return (Step("field", key),), f"the items' {key} field"
    return None, "the items have no name field: instances are numbered"


def find_pod_sources(root: Schema) -> list[PodSource]:
    """Every pod template and pod spec in the schema, with its instances and scale."""
    out: list[PodSource] = []
    for path, _node, shape in _walk(root, (), _Budget()):
        last = max((i for i, s in enumerate(path) if s.kind != "field"), default=-1)
        prefix = path[: last + 1] if last >= 0 else None
        why = (
            "a PodTemplateSpec in the schema (an object whose spec has containers)"
            if shape == "template"
            else "a pod spec in the schema (an object with containers)"
        )
        instance_id: Path | None = None
        instance_why = ""
        if prefix is not None:
            instance_id, instance_why = _instance(root, prefix)
        scale_from = path if shape == "template" else path[:-1] if path else path
        out.append(
            PodSource(
                path=path,
                shape=shape,  # type: ignore[arg-type]
                why=why,
                prefix=prefix,
                instance_id=instance_id,
                instance_why=instance_why,
                scale=_scale(root, scale_from, prefix),
            )
        )
    return out


@dataclass(frozen=True)
class StatusGuess:
    """Status fields: ``conditions`` (their field names) and ``phase`` (a string field with or
    without an enum), each with why."""

    conditions: dict[str, str] | None = None
    conditions_why: str = ""
    phase: str | None = None
    phase_values: tuple[str, ...] = ()
    phase_why: str = ""
    #: the ``type`` enum of the conditions' items, when the schema gives one
    condition_types: tuple[str, ...] = ()


def find_status(root: Schema) -> StatusGuess:
    status = _props(root).get("status")
    if not isinstance(status, Mapping):
        return StatusGuess()
    props = _props(status)
    conditions = None
    conditions_why = ""
    condition_types: tuple[str, ...] = ()
    cond = props.get("conditions")
    if isinstance(cond, Mapping) and _type(cond) == "array" and isinstance(cond.get("items"), Mapping):
        fields = _props(cond["items"])
        if "type" in fields and "status" in fields:
            enum = fields["type"].get("enum") if isinstance(fields["type"], Mapping) else None
            condition_types = tuple(str(v) for v in enum) if isinstance(enum, list) else ()
            conditions = {"type": "type", "status": "status"}
            for extra in ("reason", "message"):
                if extra in fields:
                    conditions[extra] = extra
            conditions_why = ".status.conditions: items with " + ", ".join(sorted(fields)[:6])
    phase = None
    values: tuple[str, ...] = ()
    phase_why = ""
    for name in ("phase", "state", "status", "jobStatus", "applicationState"):
        child = props.get(name)
        if not isinstance(child, Mapping):
            continue
        target = child
        if _type(child) == "object":  # {state: ...} (SparkApplication), {phase: ...} (Volcano)
            inner_name = next(
                (k for k in ("phase", "state") if isinstance(_props(child).get(k), Mapping)), None
            )
            if inner_name is None:
                continue
            target, name = _props(child)[inner_name], f"{name}.{inner_name}"
        if _type(target) != "string":
            continue
        enum = target.get("enum")
        values = tuple(str(v) for v in enum) if isinstance(enum, list) else ()
        phase = f".status.{name}"
        phase_why = f"{phase}: a string" + (f" with enum {', '.join(values)}" if values else " (no enum)")
        break
    return StatusGuess(conditions, conditions_why, phase, values, phase_why, condition_types)


def find_suspend(root: Schema) -> Path | None:
    """A boolean ``suspend`` field under ``.spec``, at most three levels down, outside lists."""
    spec = _props(root).get("spec")
    if not isinstance(spec, Mapping):
        return None
    queue: list[tuple[Path, Schema]] = [((Step("field", "spec"),), spec)]
    while queue:
        path, node = queue.pop(0)
        for name, child in _props(node).items():
            if not isinstance(child, Mapping):
                continue
            if name == "suspend" and _type(child) == "boolean":
                return (*path, Step("field", name))
            if _type(child) == "object" and len(path) < 3:
                queue.append(((*path, Step("field", name)), child))
    return None
