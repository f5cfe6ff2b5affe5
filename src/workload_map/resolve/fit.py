"""Can a cluster's nodes hold a workload's gangs? Pure functions over Node and Pod dicts, no I/O.

The node filters follow kube-scheduler's, in its order, first failing filter wins:

1. ``NotReady`` (not a scheduler filter: the node lifecycle controller taints such nodes; here a
   node without ``Ready=True`` is simply excluded).
2. ``NodeUnschedulable``: ``spec.unschedulable`` (cordoned) excludes the node unless the pod
   tolerates the taint ``node.kubernetes.io/unschedulable:NoSchedule``.
3. ``TaintToleration``: every taint with effect ``NoSchedule`` or ``NoExecute`` must be tolerated
   by one of the pod's tolerations (``PreferNoSchedule`` is ignored). A toleration tolerates a
   taint when its effect is empty or equal, its key is empty or equal, and its operator is
   ``Exists``, or ``Equal``/empty with an equal value (an empty key with ``Exists`` tolerates
   everything). Any other operator tolerates nothing.
4. ``NodeAffinity``: every ``nodeSelector`` label must equal the node's; then
   ``requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms``: terms ORed (an empty term
   matches nothing, a term that does not parse is skipped, no terms match nothing), within a term
   ``matchExpressions`` over labels and ``matchFields`` over ``metadata.name`` ANDed. Label
   operators ``In``, ``NotIn`` (true without the label), ``Exists``, ``DoesNotExist``, ``Gt`` and
   ``Lt`` (one value, a base-10 int64; a node value that is not one fails), with the apimachinery
   validation of keys and values (an invalid requirement makes its term not match). Field
   operators ``In``/``NotIn`` with exactly one value. Preferred affinity is ignored.
5. ``NodeResourcesFit``: every requested resource (cpu, memory, extended resources such as
   ``nvidia.com/gpu``, ``pods``) must fit the node's free capacity = ``allocatable`` minus the
   requests of the non-terminated pods bound to it; a resource the node does not list has 0.

Placement is first-fit-decreasing: the minimum pods of every gang (largest first by GPU, CPU,
memory) each go to the first node (by name) that passes the filters and has room; all gangs share
the nodes. For a pod that finds no node the reasons are counted per node, as the scheduler's
``0/N nodes are available`` message does. Not modelled: inter-pod affinity, topology spread,
ports, volumes, DRA devices on nodes (ResourceSlices: a pod's DRA GPUs are in its ``gpus`` but not
matched against nodes here), and pods placed meanwhile by others.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workload_map.resolve.compiled import Definition
    from workload_map.resolve.placement import GangNeeds, InstanceNeeds, PlacementNeeds
    from workload_map.resolve.resources import ResourceTotals

TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")
NOT_READY = "not Ready"
CORDONED = "cordoned"
NODE_SELECTOR = "nodeSelector"
NODE_AFFINITY = "node affinity"

__all__ = [
    "GangFit",
    "NodeCapacity",
    "PodShape",
    "check_fit",
    "cluster_capacity",
    "first_fit_decreasing",
    "gang_pods",
    "label_requirement_error",
    "label_requirement_matches",
    "node_exclusion",
    "node_selector_matches",
    "node_selector_term_matches",
    "place",
    "pod_vector",
    "required_node_affinity_matches",
    "taint_text",
    "tolerates",
    "untolerated_taint",
]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _labels(node: Mapping[str, Any]) -> Mapping[str, Any]:
    labels = (node.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, Mapping) else {}


# --------------------------------------------------------------------------- taints and tolerations


def tolerates(toleration: Any, taint: Any) -> bool:
    """Kubernetes' ``Toleration.ToleratesTaint``."""
    if not isinstance(toleration, Mapping) or not isinstance(taint, Mapping):
        return False
    effect = _str(toleration.get("effect"))
    if effect and effect != _str(taint.get("effect")):
        return False
    key = _str(toleration.get("key"))
    if key and key != _str(taint.get("key")):
        return False
    op = _str(toleration.get("operator"))
    if op in ("", "Equal"):
        return _str(toleration.get("value")) == _str(taint.get("value"))
    return op == "Exists"


def _tolerated(tolerations: Iterable[Any] | None, taint: Mapping[str, Any]) -> bool:
    return any(tolerates(t, taint) for t in tolerations or ())


def untolerated_taint(taints: Any, tolerations: Iterable[Any] | None) -> Mapping[str, Any] | None:
    """The first ``NoSchedule``/``NoExecute`` taint that none of ``tolerations`` tolerates."""
    for taint in taints if isinstance(taints, list) else ():
        if not isinstance(taint, Mapping) or taint.get("effect") not in DO_NOT_SCHEDULE:
            continue
        if not _tolerated(tolerations, taint):
            return taint
    return None


def taint_text(taint: Mapping[str, Any]) -> str:
    """``key=value:Effect`` (``key:Effect`` without a value), as ``kubectl`` prints taints."""
    text = _str(taint.get("key"))
    if _str(taint.get("value")):
        text += "=" + _str(taint.get("value"))
    if _str(taint.get("effect")):
        text += ":" + _str(taint.get("effect"))
    return text


# --------------------------------------------------------------------------- node selectors

_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_INT = re.compile(r"^[+-]?[0-9]+$")
_INT64 = (-(2**63), 2**63 - 1)
_LABEL_OPS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _valid_key(key: str) -> bool:
    parts = key.split("/")
    if len(parts) > 2:
        return False
    if len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix):
            return False
    else:
        name = parts[0]
    return 0 < len(name) <= 63 and _NAME.match(name) is not None


def _valid_value(value: str) -> bool:
    return value == "" or (len(value) <= 63 and _NAME.match(value) is not None)


def _parse_int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``: optional sign, ASCII digits, in int64 range."""
    if not _INT.match(text):
        return None
    value = int(text)
    return value if _INT64[0] <= value <= _INT64[1] else None


def _values(req: Mapping[str, Any]) -> list[Any]:
    values = req.get("values")
    return list(values) if isinstance(values, list) else []


def label_requirement_error(req: Any) -> str | None:
    """Why a ``matchExpressions`` entry does not parse (``labels.NewRequirement``), or None."""
    if not isinstance(req, Mapping):
        return "not an object"
    key, op, values = _str(req.get("key")), req.get("operator"), _values(req)
    if op not in _LABEL_OPS:
        return f"{op!r} is not a valid node selector operator"
    if not _valid_key(key):
        return f"invalid label key {key!r}"
    if op in ("In", "NotIn") and not values:
        return f"for '{op}' operator, values set can't be empty"
    if op in ("Exists", "DoesNotExist") and values:
        return f"values set must be empty for '{op}'"
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            return f"for '{op}' operator, exactly one value is required"
        if not isinstance(values[0], str) or _parse_int64(values[0]) is None:
            return f"for '{op}' operator, the value must be an integer"
    if not all(isinstance(v, str) and _valid_value(v) for v in values):
        return "invalid label value"
    return None


def label_requirement_matches(req: Mapping[str, Any], labels: Mapping[str, Any]) -> bool:
    """``labels.Requirement.Matches`` for a requirement that parses (see
    :func:`label_requirement_error`)."""
    key, op, values = _str(req.get("key")), req.get("operator"), _values(req)
    present = key in labels
    value = labels.get(key)
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or not isinstance(value, str):
            return False
        have, want = _parse_int64(value), _parse_int64(str(values[0]))
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def _field_requirement_ok(req: Any) -> bool:
    return (
        isinstance(req, Mapping)
        and req.get("operator") in ("In", "NotIn")
        and len(_values(req)) == 1
        and isinstance(_values(req)[0], str)
    )


def node_selector_term_matches(term: Any, node: Mapping[str, Any]) -> bool:
    """One ``NodeSelectorTerm``: its ``matchExpressions`` (labels) and ``matchFields``
    (``metadata.name``) ANDed. An empty term, or one that does not parse, matches nothing."""
    if not isinstance(term, Mapping):
        return False
    exprs = term.get("matchExpressions") or []
    fields_ = term.get("matchFields") or []
    if not isinstance(exprs, list) or not isinstance(fields_, list) or not (exprs or fields_):
        return False
    if any(label_requirement_error(r) is not None for r in exprs):
        return False
    if not all(_field_requirement_ok(r) for r in fields_):
        return False
    labels = _labels(node)
    if exprs and not all(label_requirement_matches(r, labels) for r in exprs):
        return False
    name = _str((node.get("metadata") or {}).get("name"))
    if fields_ and name:  # the scheduler skips matchFields for a node without fields
        node_fields = {"metadata.name": name}
        for r in fields_:
            equal = node_fields.get(_str(r.get("key")), "") == r["values"][0]
            if equal != (r["operator"] == "In"):
                return False
    return True


def node_selector_matches(selector: Any, node: Mapping[str, Any]) -> bool:
    """A ``NodeSelector`` (``{"nodeSelectorTerms": [...]}``): its terms ORed; none matches nothing."""
    if not isinstance(selector, Mapping):
        return False
    terms = selector.get("nodeSelectorTerms")
    return isinstance(terms, list) and any(node_selector_term_matches(t, node) for t in terms)


def required_node_affinity_matches(affinity: Any, node: Mapping[str, Any]) -> bool:
    """``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`` (true when unset)."""
    if not isinstance(affinity, Mapping):
        return True
    node_affinity = affinity.get("nodeAffinity")
    if not isinstance(node_affinity, Mapping):
        return True
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return True
    return node_selector_matches(required, node)


def _node_selector_labels_match(node_selector: Any, node: Mapping[str, Any]) -> bool:
    if not isinstance(node_selector, Mapping):
        return True
    labels = _labels(node)
    return all(k in labels and labels[k] == v for k, v in node_selector.items())


# --------------------------------------------------------------------------- pods and nodes


@dataclass(frozen=True)
class PodShape:
    """One pod to place: its requests (cpu millis, memory bytes, ``pods`` 1, extended resources)
    and scheduling constraints; ``owner`` names its component instance in reasons."""

    requests: Mapping[str, int]
    node_selector: Mapping[str, Any] | None = None
    affinity: Mapping[str, Any] | None = None
    tolerations: tuple[Any, ...] | None = None
    owner: str = ""

    @classmethod
    def of(cls, inst: InstanceNeeds) -> PodShape:
        owner = inst.component + (f"/{inst.instance_id}" if inst.instance_id else "")
        return cls(pod_vector(inst.pod_requests), inst.node_selector, inst.affinity, inst.tolerations, owner)


def node_exclusion(pod: PodShape, node: Mapping[str, Any]) -> str | None:
    """Why the scheduler's node filters reject ``node`` for ``pod`` (first failing filter:
    ``cordoned``, ``taint KEY[=VALUE]:EFFECT``, ``nodeSelector``, ``node affinity``), else None."""
    spec = node.get("spec") or {}
    if spec.get("unschedulable") and not _tolerated(
        pod.tolerations, {"key": TAINT_UNSCHEDULABLE, "effect": "NoSchedule"}
    ):
        return CORDONED
    taint = untolerated_taint(spec.get("taints"), pod.tolerations)
    if taint is not None:
        return f"taint {taint_text(taint)}"
    if not _node_selector_labels_match(pod.node_selector, node):
        return NODE_SELECTOR
    if not required_node_affinity_matches(pod.affinity, node):
        return NODE_AFFINITY
    return None


def pod_vector(t: ResourceTotals) -> dict[str, int]:
    """One pod's needs as a resource vector (cpu millis, memory bytes, pods, extended)."""
    vec = {"cpu": t.cpu_millis, "memory": t.memory_bytes, "pods": 1}
    for name, value in t.extended.items():
        vec[name] = vec.get(name, 0) + value
    return {k: v for k, v in vec.items() if v}


_ORDER = {"cpu": 0, "memory": 1, "pods": 2}


@dataclass
class NodeCapacity:
    """A node's free resources; ``node`` is the Node dict the filters read (empty: no
    constraints); ``excluded`` a pod-independent reason (``not Ready``)."""

    name: str
    free: dict[str, int] = field(default_factory=dict)
    node: Mapping[str, Any] = field(default_factory=dict)
    excluded: str | None = None

    def fits(self, need: Mapping[str, int]) -> bool:
        return all(self.free.get(k, 0) >= v for k, v in need.items())

    def short(self, need: Mapping[str, int]) -> list[str]:
        """The resources of ``need`` this node has too little of."""
        out = [k for k, v in need.items() if self.free.get(k, 0) < v]
        return sorted(out, key=lambda k: (_ORDER.get(k, 3), k))

    def take(self, need: Mapping[str, int]) -> None:
        for k, v in need.items():
            self.free[k] = self.free.get(k, 0) - v


def _quantities(section: Any) -> dict[str, int]:
    from workload_map.resolve.quantity import parse_quantity, to_millis, to_units

    out: dict[str, int] = {}
    if not isinstance(section, Mapping):
        return out
    for name, value in section.items():
        try:
            nanos = parse_quantity(value)
        except Exception:
            continue
        out[str(name)] = to_millis(nanos) if name == "cpu" else to_units(nanos)
    return out


def _ready(node: Mapping[str, Any]) -> bool:
    conds = (node.get("status") or {}).get("conditions") or []
    return any(
        isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True" for c in conds
    )


def cluster_capacity(
    nodes: Sequence[Mapping[str, Any]], pods: Sequence[Mapping[str, Any]]
) -> list[NodeCapacity]:
    """Every node (by name) with its free capacity: ``status.allocatable`` minus the requests of
    the pods bound to it that are not ``Succeeded``/``Failed`` (each also takes one ``pods``)."""
    from workload_map.resolve.resources import pod_spec_totals

    caps: dict[str, NodeCapacity] = {}
    for n in nodes:
        name = str((n.get("metadata") or {}).get("name"))
        free = _quantities((n.get("status") or {}).get("allocatable"))
        caps[name] = NodeCapacity(name, free, n, None if _ready(n) else NOT_READY)
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        phase = (p.get("status") or {}).get("phase")
        if not node or node not in caps or phase in ("Succeeded", "Failed"):
            continue
        caps[node].take(pod_vector(pod_spec_totals(p.get("spec"))))
    return sorted(caps.values(), key=lambda c: c.name)


# --------------------------------------------------------------------------- placement


def _size(pod: PodShape) -> tuple[int, int, int]:
    vec = pod.requests
    gpus = sum(v for k, v in vec.items() if k.endswith("/gpu"))
    return gpus, vec.get("cpu", 0), vec.get("memory", 0)


@dataclass
class Unplaced:
    """Pods of one component instance that found no node, and for the first of them how many
    nodes each reason excluded (a node short of several resources counts once per resource)."""

    owner: str
    pods: int
    reasons: Counter[str]

    def text(self) -> str:
        if not self.reasons:
            return f"{self.pods} of {self.owner or 'the pods'}: no nodes"
        ranked = sorted(self.reasons.items(), key=lambda kv: (-kv[1], kv[0]))
        (first, n), rest = ranked[0], ranked[1:]
        parts = [f"{n} node{'s' if n != 1 else ''} excluded by {first}"]
        parts += [f"{m} by {why}" for why, m in rest]
        return f"{self.pods} of {self.owner or 'the pods'}: " + ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"owner": self.owner, "pods": self.pods, "reasons": dict(self.reasons)}


@dataclass
class GangFit:
    name: str
    min_pods: int
    placed: int
    unplaced: list[Unplaced]

    @property
    def fits(self) -> bool:
        return self.placed == self.min_pods

    def reason(self) -> str:
        """Empty when it fits, else e.g. ``2 of 4 pods placed; 2 of workers: 3 nodes excluded by
        taint nvidia.com/gpu=present:NoSchedule, 1 by nodeSelector``."""
        if self.fits:
            return ""
        head = f"{self.placed} of {self.min_pods} pods placed"
        return "; ".join([head, *(u.text() for u in self.unplaced)])

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "minPods": self.min_pods,
            "placed": self.placed,
            "fits": self.fits,
        }
        if not self.fits:
            out["unplaced"] = [u.to_dict() for u in self.unplaced]
            out["reason"] = self.reason()
        return out


def _as_shape(pod: PodShape | Mapping[str, int]) -> PodShape:
    return pod if isinstance(pod, PodShape) else PodShape(dict(pod))


def place(
    nodes: Sequence[NodeCapacity], pods: Sequence[PodShape | Mapping[str, int]], name: str = ""
) -> GangFit:
    """First-fit-decreasing of ``pods`` over ``nodes`` (updated in place), with the node filters."""
    placed = 0
    unplaced: dict[str, Unplaced] = {}
    for pod in sorted((_as_shape(p) for p in pods), key=_size, reverse=True):
        reasons: Counter[str] = Counter()
        for node in nodes:
            why = node.excluded or node_exclusion(pod, node.node)
            if why is not None:
                reasons[why] += 1
                continue
            short = node.short(pod.requests)
            if not short:
                node.take(pod.requests)
                placed += 1
                break
            for resource in short:
                reasons[f"insufficient {resource}"] += 1
        else:
            entry = unplaced.get(pod.owner)
            if entry is None:
                unplaced[pod.owner] = Unplaced(pod.owner, 1, reasons)
            else:
                entry.pods += 1
    return GangFit(name, len(pods), placed, list(unplaced.values()))


def first_fit_decreasing(nodes: list[NodeCapacity], pods: Sequence[PodShape | Mapping[str, int]]) -> int:
    """Place ``pods`` (largest first) on the first node that accepts them; returns how many were
    placed. ``nodes`` are updated in place."""
    return place(nodes, pods).placed


def _members(definition: Definition, roots: Iterable[str]) -> set[str]:
    from workload_map.resolve.compiled import as_compiled

    cd = as_compiled(definition)
    out: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.add(name)
        todo += [c.name for c in cd.children_of(name)]
    return out


def gang_pods(definition: Definition, needs: PlacementNeeds, gang: GangNeeds) -> list[PodShape]:
    """The minimum pods of one gang: the minimum replicas of every instance in its subtree(s)."""
    roots = [c for c, _ in gang.sub_groups] if gang.sub_groups else [gang.component]
    members = _members(definition, roots)
    pods: list[PodShape] = []
    for inst in needs.instances:
        if inst.component not in members:
            continue
        if (
            gang.instance_id is not None
            and inst.component == gang.component
            and inst.instance_id != gang.instance_id
        ):
            continue
        pods += [PodShape.of(inst)] * inst.min_replicas
    return pods


def _all_gangs_pods(definition: Definition, needs: PlacementNeeds) -> list[tuple[str, list[PodShape]]]:
    if needs.gangs:
        return [(g.name, gang_pods(definition, needs, g)) for g in needs.gangs]
    # no gang rules: every pod is its own gang of one; check the minimum pods as one set
    pods: list[PodShape] = []
    for inst in needs.instances:
        pods += [PodShape.of(inst)] * inst.min_replicas
    return [("(all pods)", pods)]


def check_fit(
    definition: Definition,
    needs: PlacementNeeds,
    nodes: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """Whether ``nodes`` (Node dicts) with ``pods`` (the cluster's Pod dicts) hold every gang of
    ``needs``: ``{"nodes": ready nodes, "fits": bool, "gangs": [GangFit.to_dict()...]}``."""
    caps = cluster_capacity(nodes, pods)
    gangs = [place(caps, gpods, name) for name, gpods in _all_gangs_pods(definition, needs)]
    return {
        "nodes": sum(1 for c in caps if c.excluded is None),
        "fits": all(g.fits for g in gangs),
        "gangs": [g.to_dict() for g in gangs],
    }
