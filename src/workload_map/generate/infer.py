"""What a CRD's schema says about its workload: where pod templates and pod specs live (maps and
arrays of them give instances), the integer fields beside them that count replicas, the status
fields (conditions, a phase enum) and a suspend flag. Each finding keeps the reason it was made,
which the draft prints as a comment.

The work is bounded before it grows: :data:`MAX_DEPTH` levels, :data:`MAX_NODES` schema nodes
visited, :data:`MAX_READS` properties read by the scale searches, :data:`MAX_SOURCES` pod
sources; a schema past a bound is a :class:`GenerateError` naming it, never a partial draft (the
corpus's largest CRD visits under 5,000 nodes and reads under 10,000 properties).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from workload_map.errors import WorkloadMapError

__all__ = [
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_READS",
    "MAX_SOURCES",
    "Count",
    "GenerateError",
    "Membership",
    "PodSource",
    "Scale",
    "Schema",
    "StatusGuess",
    "Step",
    "Suspend",
    "find_pod_sources",
    "find_status",
    "find_suspend",
    "jq_path",
]

MAX_DEPTH = 24
MAX_NODES = 50_000
#: Properties the scale searches read in all (each pod source reads the objects above it).
MAX_READS = 500_000
MAX_SOURCES = 200


class GenerateError(WorkloadMapError):
    """The CRD has no such kind or version, or its schema is past a bound of the inference."""


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
class Count:
    """One integer factor of a pod count: the field at ``path`` (relative to the instance, or
    absolute for a single instance and for ``outer`` counts), its schema ``default``, which
    applies only while the optional object ``guard`` exists (1 when it does not), and
    ``less_one`` for the workers of a group the count sizes leader included."""

    path: Path
    default: int | None = None
    guard: Path | None = None
    outer: bool = False
    less_one: bool = False
    #: ``path`` is a parallelism object (data, dataLocal, pipeline, tensor): its node count
    nodes: bool = False

    @property
    def job_parallelism(self) -> bool:
        """A Job-style ``parallelism`` integer (capped by ``completions`` beside it)."""
        return self.path[-1].name == "parallelism" and not self.nodes


@dataclass(frozen=True)
class Membership:
    """Groups elsewhere that list instances by name and replicate them: the array at
    ``groups`` (absolute), whose items name their members in ``names`` and count in
    ``replicas`` (Grove's podCliqueScalingGroups over its cliques)."""

    groups: Path
    names: str
    replicas: str
    default: int | None = None


@dataclass(frozen=True)
class Scale:
    """The integer fields that count the pods of one pod source: ``base`` (replicas or size)
    and multipliers, autoscaling bounds, a Job's completions, groups replicating instances by
    name, and ``present``: the absolute path of an optional source (0 pods while absent)."""

    base: Count | None
    multipliers: tuple[Count, ...] = ()
    minimum: Path | None = None
    maximum: Path | None = None
    why: str = ""
    #: a Job's completions beside its parallelism: the pods are the smaller of the two
    completions: Path | None = None
    membership: Membership | None = None
    present: Path | None = None
    #: the role in a group a ``size`` counts leader included (LeaderWorkerSet)
    role: Literal["leader", "workers", ""] = ""


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
    #: the template to read when this optional one is absent (a group's leader: the workers')
    fallback: Path | None = None

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
    """A ``containers`` field by its shape: an array of objects that are containers, declared
    (``name`` or ``image`` among their properties) or opaque (no declared properties, kept by
    ``x-kubernetes-preserve-unknown-fields``: CRDs that trim the PodSpec schema)."""
    if not isinstance(node, Mapping) or _type(node) != "array":
        return False
    items = node.get("items")
    if not isinstance(items, Mapping):
        return False
    declared = _props(items)
    if declared:
        return "image" in declared or "name" in declared
    return items.get("x-kubernetes-preserve-unknown-fields") is True and _type(items) in ("object", "")


def _is_pod_spec(node: Schema) -> bool:
    return _is_containers(_props(node).get("containers"))


def _is_pod_template(node: Schema) -> bool:
    spec = _props(node).get("spec")
    return isinstance(spec, Mapping) and _is_pod_spec(spec)


class _Budget:
    """A count of work (schema nodes visited, or properties read by the scale search) that
    raises :class:`GenerateError` past ``limit``."""

    def __init__(self, limit: int, what: str) -> None:
        self.nodes = 0
        self.limit = limit
        self.what = what

    def spend(self, n: int = 1) -> None:
        self.nodes += n
        if self.nodes > self.limit:
            raise GenerateError(f"the schema is too large to draft: more than {self.limit:,} {self.what}")


def _walk(node: Schema, path: Path, budget: _Budget) -> Iterator[tuple[Path, Schema, str]]:
    """Pod templates and pod specs under ``node``, not descending into one found."""
    if len(path) > MAX_DEPTH:
        return
    budget.spend()
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
_MULTIPLIERS = ("numOfHosts", "parallelism", "nodeCount")
#: Integers, one object below the pod source's holder, saying how many nodes each replica spans
#: (Dynamo's ``multinode.nodeCount``).
_NESTED = ("nodeCount", "numOfHosts")
#: Objects beside a pod source that hold autoscaling bounds.
_SCALING = ("scaling", "autoscaling", "scale", "autoscaler")
_LEADER = re.compile(r"^leader", re.IGNORECASE)


def _int_default(node: Schema) -> int | None:
    value = node.get("default")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _required(node: Schema) -> frozenset[str]:
    value = node.get("required")
    return frozenset(str(v) for v in value) if isinstance(value, list) else frozenset()


def _through_template(steps: Path) -> bool:
    """Whether ``steps`` (from a count's object down to the pod source, the source's own field
    left out) pass through a field named ``...template``: a count beside a template replicates
    all it holds (PodCliqueSet ``replicas`` over its ``template``, LWS ``replicas`` over its
    ``leaderWorkerTemplate``). A count beside other fields counts only its own pods."""
    return any(s.kind == "field" and s.name.lower().endswith("template") for s in steps[:-1])


def _has_pods(node: Any) -> bool:
    return isinstance(node, Mapping) and (_is_pod_template(node) or _is_pod_spec(node))


def _leader_split(node: Schema, size: Schema, own: Step) -> Literal["leader", "workers", ""]:
    """A ``size`` shared by a leader template and a worker template, whose description counts the
    leader in it (LeaderWorkerSet): the leader is one pod of each group, the workers the rest."""
    holders = [k for k, child in _props(node).items() if _has_pods(child)]
    leaders = [k for k in holders if _LEADER.match(k)]
    described = "leader" in str(size.get("description", "")).lower()
    if len(holders) < 2 or not leaders or not described or own.kind != "field" or own.name not in holders:
        return ""
    return "leader" if own.name in leaders else "workers"


_WORKER = re.compile(r"^worker", re.IGNORECASE)
#: The integer degrees of a parallelism object (vLLM, SGLang, Megatron vocabulary) that say how
#: many nodes a replica spans: data-parallel ranks over the ranks per node, or pipeline stages.
_DEGREES = ("data", "dataLocal", "pipeline")


def _has_parallelism(node: Schema, own: Step) -> bool:
    """A ``parallelism`` object beside a worker pod source and another pod source (the main pod
    of each replica, LLMInferenceService's ``template`` and ``worker``)."""
    props = _props(node)
    others = [k for k, child in props.items() if k != own.name and _has_pods(child)]
    block = props.get("parallelism")
    if not others or not isinstance(block, Mapping):
        return False
    degrees = _props(block)
    return all(isinstance(degrees.get(d), Mapping) and _type(degrees[d]) == "integer" for d in _DEGREES)


def _optional_object(root: Schema, path: Path) -> Path | None:
    """The first object on ``path`` below ``.spec`` that its parent does not require (the
    whole path when only the last field is optional), or None when all are required."""
    node: Any = root
    for i, step in enumerate(path):
        if not isinstance(node, Mapping):
            return None
        if step.kind != "field":
            return None  # inside a list or map: the instances say what exists
        if i >= 1 and step.name not in _required(node):
            return path[: i + 1]
        node = _props(node).get(step.name)
    return None


def _presence(root: Schema, source: Path, own_holder: Path | None) -> Path | None:
    """What must exist for an optional component to have pods. An object that is the pod spec
    itself (KServe's ``explainer``, LLMIS ``worker``) is the component: none while absent. A
    field named ``...template`` is a template the operator may default: the component is the
    optional object holding its count (LLMIS ``prefill``, ``router.scheduler``), and a bare
    optional template with no count of its own (RayJob's ``submitterPodTemplate``) is always
    there."""
    optional = _optional_object(root, source)
    if optional is None or not source:
        return None
    if not source[-1].name.lower().endswith("template"):
        return source
    if own_holder is not None and own_holder[: len(optional)] == optional:
        return own_holder
    return None


def _scale(root: Schema, source: Path, prefix: Path | None, budget: _Budget) -> Scale:
    """Look for pod-counting integers on the objects from the pod source up to its instance (or
    the root's ``spec`` for a single instance), then above the instance for counts that
    replicate the whole template holding it."""
    stop = len(prefix) if prefix is not None else 1  # a single instance: look up to .spec

    def shown(where: Path) -> str:  # a path inside the instance, written from the root
        return jq_path((*(prefix or ()), *where), optional=False)

    base: Count | None = None
    base_depth = len(source) + 1
    multipliers: list[Count] = []
    minimum: Path | None = None
    maximum: Path | None = None
    completions: Path | None = None
    found: list[str] = []
    split: Literal["leader", "workers", ""] = ""
    own_holder: Path | None = None  # the object holding the component's own count
    for depth in range(len(source), stop - 1, -1):
        holder = source[:depth]
        node = _node_at(root, holder)
        if node is None:
            continue
        props = _props(node)
        budget.spend(3 * len(props) + 1)  # three passes over them, and the lookups below
        rel = holder[len(prefix) :] if prefix is not None else holder
        below = source[depth:]
        for name, child in props.items():
            if not isinstance(child, Mapping) or _type(child) != "integer":
                continue
            where = (*rel, Step("field", name))
            count = Count(where, _int_default(child))
            if name in _BASE and base is None and not (split == "leader" and name == "size"):
                kind = _leader_split(node, child, below[0]) if name == "size" and below else ""
                if kind == "leader":  # one pod per group: the groups' count is the base
                    split = "leader"
                    found.append(f"{shown(where)} counts the leader in (1 per group)")
                    continue
                if kind == "workers":
                    split = "workers"
                    count = Count(where, count.default, less_one=True)
                    found.append(f"{shown(where)} - 1 (the leader is one of them)")
                else:
                    found.append(shown(where))
                base, base_depth, own_holder = count, depth, holder
            elif (name in _BASE and base is not None and depth < base_depth and _through_template(below)) or (
                name in _MULTIPLIERS and name not in [m.path[-1].name for m in multipliers]
            ):  # groups of the template at an outer level (LWS replicas x size), or hosts per replica
                multipliers.append(count)
                found.append(shown(where))
            elif name == "completions" and completions is None:
                completions = where
        ours = base is None or depth >= base_depth  # bounds above the base are another component's
        for name, child in props.items():
            if ours and isinstance(child, Mapping) and _type(child) == "integer":
                if name == "minReplicas" and minimum is None:
                    minimum = (*rel, Step("field", name))
                    own_holder = own_holder or holder
                elif name == "maxReplicas" and maximum is None:
                    maximum = (*rel, Step("field", name))
        for name, child in props.items():
            if not isinstance(child, Mapping) or _type(child) != "object" or _has_pods(child):
                continue
            if below and below[0] == Step("field", name):
                continue  # the way down to the pod source itself
            if name in _SCALING:  # an autoscaling block beside it: {minReplicas, maxReplicas}
                if not ours:
                    continue
                for bound in ("minReplicas", "maxReplicas"):
                    leaf = _props(child).get(bound)
                    if isinstance(leaf, Mapping) and _type(leaf) == "integer":
                        where = (*rel, Step("field", name), Step("field", bound))
                        if bound == "minReplicas" and minimum is None:
                            minimum = where
                            own_holder = own_holder or holder
                        elif bound == "maxReplicas" and maximum is None:
                            maximum = where
                continue
            for leaf_name in _NESTED:  # {multinode: {nodeCount}}: nodes per replica
                leaf = _props(child).get(leaf_name)
                taken = [m.path[-1].name for m in multipliers]
                if isinstance(leaf, Mapping) and _type(leaf) == "integer" and leaf_name not in taken:
                    guard = (*rel, Step("field", name))
                    where = (*guard, Step("field", leaf_name))
                    multipliers.append(Count(where, _int_default(leaf), guard=guard))
                    found.append(f"{shown(where)} (while {shown(guard)} is set)")
        if len(below) == 1 and _WORKER.match(below[0].name) and _has_parallelism(node, below[0]):
            where = (*rel, Step("field", "parallelism"))
            multipliers.append(Count(where, nodes=True, less_one=True))
            found.append(
                f"{shown(where)}: the nodes of each replica (data / dataLocal, "
                "else pipeline stages; tensor parallelism stays in a node) less the main pod"
            )
    membership: Membership | None = None
    if prefix is not None:
        for depth in range(len(prefix) - 1, 0, -1):  # above the instance: counts over the template
            holder = source[:depth]
            node = _node_at(root, holder)
            if node is None:
                continue
            budget.spend(len(_props(node)) + 1)
            for name, child in _props(node).items():
                counts = name in _BASE and isinstance(child, Mapping) and _type(child) == "integer"
                if counts and _through_template(source[depth:]):
                    where = (*holder, Step("field", name))
                    multipliers.append(Count(where, _int_default(child), outer=True))
                    found.append(f"{jq_path(where, optional=False)} (replicas of the template)")
        membership = _membership(root, prefix, budget)
        if membership is not None:
            found.append(
                f"{jq_path(membership.groups, optional=False)}[].{membership.replicas} for the "
                f"instances its {membership.names} list"
            )
    if completions is not None and any(m.job_parallelism for m in multipliers):
        found.append(shown(completions))
    why = (
        "integer fields beside it: " + ", ".join(found)
        if found
        else "no replicas-like integer (replicas, size, parallelism, numOfHosts) beside it: 1 assumed"
    )
    if not any(m.job_parallelism for m in multipliers):
        completions = None
    present = _presence(root, source, own_holder) if prefix is None and split != "leader" else None
    if present is not None:
        why += f"; 0 while {jq_path(present, optional=False)} is absent (optional in the schema)"
    return Scale(base, tuple(multipliers), minimum, maximum, why, completions, membership, present, split)


def _membership(root: Schema, prefix: Path, budget: _Budget) -> Membership | None:
    """An array beside the instance list whose items name instances (``<singular>Names``) and
    replicate them (``replicas``): ``cliques`` and ``podCliqueScalingGroups[].cliqueNames``."""
    if len(prefix) < 2 or prefix[-1].kind != "items" or prefix[-2].kind != "field":
        return None
    item = _node_at(root, prefix)
    if not isinstance(_props(item or {}).get("name"), Mapping):
        return None
    listed = prefix[-2].name
    singular = listed[:-1] if listed.endswith("s") else listed
    parent = _node_at(root, prefix[:-2])
    budget.spend(len(_props(parent or {})) + 1)
    for name, child in _props(parent or {}).items():
        if name == listed or not isinstance(child, Mapping) or _type(child) != "array":
            continue
        fields = _props(child.get("items") or {})
        names, replicas = fields.get(f"{singular}Names"), fields.get("replicas")
        if (
            isinstance(names, Mapping)
            and _type(names) == "array"
            and isinstance(replicas, Mapping)
            and _type(replicas) == "integer"
        ):
            groups = (*prefix[:-2], Step("field", name))
            return Membership(groups, f"{singular}Names", "replicas", _int_default(replicas))
    return None


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
    budget = _Budget(MAX_READS, "properties to read")
    for path, _node, shape in _walk(root, (), _Budget(MAX_NODES, "schema nodes to visit")):
        if len(out) == MAX_SOURCES:
            raise GenerateError(f"the schema has more than {MAX_SOURCES} pod templates and pod specs")
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
        out.append(
            PodSource(
                path=path,
                shape=shape,  # type: ignore[arg-type]
                why=why,
                prefix=prefix,
                instance_id=instance_id,
                instance_why=instance_why,
                scale=_scale(root, path, prefix, budget),
            )
        )
    return [_with_fallback(root, src, out) for src in out]


def _with_fallback(root: Schema, src: PodSource, sources: list[PodSource]) -> PodSource:
    """A group's leader whose template is optional: every group has a leader pod (its size
    counts it), so without a template of its own it is made from the workers' template."""
    if src.scale.role != "leader" or _optional_object(root, src.path) != src.path:
        return src
    workers = [s.path for s in sources if s.scale.role == "workers" and s.path[:-1] == src.path[:-1]]
    return replace(src, fallback=workers[0]) if len(workers) == 1 else src


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


@dataclass(frozen=True)
class Suspend:
    """How the spec suspends the workload: ``path`` set to ``on`` (``true``, or a mode such as
    ``"Suspended"``), back to ``off``; ``default`` when the field is absent. A ``mode`` (a string
    enum) is also the pods' on/off switch: a source with no count has none while suspended."""

    path: Path
    on: bool | str
    off: bool | str
    default: bool | str
    mode: bool = False


_SUSPENDED_WORDS = ("suspended", "paused", "stopped")


def _suspend_field(name: str, node: Schema) -> tuple[bool | str, bool | str, bool | str, bool] | None:
    if name == "suspend" and _type(node) == "boolean":
        return True, False, False, False
    enum = node.get("enum")
    if _type(node) != "string" or not isinstance(enum, list) or not name.lower().endswith("mode"):
        return None
    values = [str(v) for v in enum]
    on = next((v for v in values if v.lower() in _SUSPENDED_WORDS), None)
    others = [v for v in values if v != on]
    if on is None or not others:
        return None
    default = node.get("default")
    off = str(default) if isinstance(default, str) and default != on else others[0]
    return on, off, off, True


def find_suspend(root: Schema) -> Suspend | None:
    """A boolean ``suspend`` field, or a ``...Mode`` string enum with a suspended value
    (``operatingMode: Running | Suspended``), under ``.spec``, at most three levels down,
    outside lists."""
    spec = _props(root).get("spec")
    if not isinstance(spec, Mapping):
        return None
    queue: list[tuple[Path, Schema]] = [((Step("field", "spec"),), spec)]
    while queue:
        path, node = queue.pop(0)
        for name, child in _props(node).items():
            if not isinstance(child, Mapping):
                continue
            found = _suspend_field(name, child)
            if found is not None:
                on, off, default, mode = found
                return Suspend((*path, Step("field", name)), on, off, default, mode)
            if _type(child) == "object" and len(path) < 3:
                queue.append(((*path, Step("field", name)), child))
    return None
