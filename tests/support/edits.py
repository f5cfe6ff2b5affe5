"""The write-back verbs as the catalog tests apply them, what a resolved instance shows of them,
and which paths of an object a definition names (the only paths a change may touch).

Shared by tests/resolve/test_edit_catalog.py (offline, every catalog fixture) and the live tests
(tests/cli/test_set_live.py): the same edits, the same checks, on the API server's objects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workload_map.expr import read_paths
from workload_map.model.definition import Karta
from workload_map.resolve import compile_definition
from workload_map.resolve.types import ExtractedSpec
from workload_map.resolve.writeback import (
    PodEdit,
    SetEnv,
    SetImage,
    SetNodeSelector,
    SetPodAnnotations,
    SetPodLabels,
    SetPriorityClassName,
    SetResources,
    SetSchedulerName,
    SetTolerations,
    Toleration,
)

IMAGE = "registry.example.com/ml/train:2.0"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


@dataclass
class PodSeen:
    """What the resolver shows of one instance's pods (whatever the spec shape)."""

    scheduler: Any = None
    priority: Any = None
    labels: dict[str, Any] = field(default_factory=dict)
    annotations: dict[str, Any] = field(default_factory=dict)
    images: list[Any] = field(default_factory=list)
    env: list[list[Any]] = field(default_factory=list)
    resources: list[Any] = field(default_factory=list)
    node_selector: dict[str, Any] = field(default_factory=dict)
    node_affinity: Any = None
    tolerations: list[Any] = field(default_factory=list)


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def pod_seen(spec: ExtractedSpec) -> PodSeen | None:
    """The pod fields an instance's extracted spec shows; ``None`` when it shows none (the object
    does not hold that instance)."""
    if spec.fragmented is not None:
        f = spec.fragmented
        if not f.to_dict():
            return None
        containers = [c for c in [*_list(f.containers), f.container] if isinstance(c, Mapping)]
        images = [c.get("image") for c in containers]
        if f.image is not None:
            images.append(f.image)
        resources = [c.get("resources") for c in containers]
        if f.resources is not None:
            resources.append(f.resources)
        return PodSeen(
            scheduler=f.scheduler_name,
            priority=f.priority_class_name,
            labels=_dict(f.labels),
            annotations=_dict(f.annotations),
            images=images,
            env=[_list(c.get("env")) for c in containers],
            resources=resources,
            node_affinity=f.node_affinity,
        )
    pod = spec.effective_pod_spec
    if pod is None:
        return None
    meta = spec.pod_template.get("metadata") if spec.pod_template is not None else spec.metadata
    containers = [
        c for c in _list(pod.get("initContainers")) + _list(pod.get("containers")) if isinstance(c, Mapping)
    ]
    return PodSeen(
        scheduler=pod.get("schedulerName"),
        priority=pod.get("priorityClassName"),
        labels=_dict(_dict(meta).get("labels")),
        annotations=_dict(_dict(meta).get("annotations")),
        images=[c.get("image") for c in containers],
        env=[_list(c.get("env")) for c in containers],
        resources=[c.get("resources") for c in containers],
        node_selector=_dict(pod.get("nodeSelector")),
        tolerations=_list(pod.get("tolerations")),
    )


def _requires_pool(affinity: Any) -> bool:
    terms = _list(
        _dict(_dict(affinity).get("requiredDuringSchedulingIgnoredDuringExecution")).get("nodeSelectorTerms")
    )
    wanted = {"key": "pool", "operator": "In", "values": ["a100"]}
    return bool(terms) and all(wanted in _list(_dict(t).get("matchExpressions")) for t in terms)


def _gpu_limits(resources: list[Any]) -> bool:
    return bool(resources) and all(
        _dict(_dict(r).get("limits")).get("nvidia.com/gpu") == "1" for r in resources
    )


@dataclass(frozen=True)
class Verb:
    """A ``wmap set``-family verb: the edits, the CLI arguments that ask for them (``TARGET``
    stands for the resource or ``-f FILE``), and the check that an instance's pods show it."""

    edits: tuple[PodEdit, ...]
    cli: tuple[str, ...]
    shows: Callable[[PodSeen], bool]

    def argv(self, *target: str) -> list[str]:
        """The command line with ``target`` (``TYPE/NAME``, or ``-f FILE --local``) in its place."""
        out: list[str] = []
        for arg in self.cli:
            out.extend(target if arg == "TARGET" else (arg,))
        return out


VERBS: dict[str, Verb] = {
    "image": Verb(
        (SetImage("*", IMAGE),), ("set", "image", "TARGET", f"*={IMAGE}"), lambda p: set(p.images) == {IMAGE}
    ),
    "resources": Verb(
        (SetResources(requests={"nvidia.com/gpu": "1"}, limits={"nvidia.com/gpu": "1", "memory": "1Ti"}),),
        ("set", "resources", "TARGET", "--requests=nvidia.com/gpu=1", "--limits=nvidia.com/gpu=1,memory=1Ti"),
        lambda p: _gpu_limits(p.resources),
    ),
    "env": Verb(
        (SetEnv(values={"WMAP_STAGE": "canary"}),),
        ("set", "env", "TARGET", "WMAP_STAGE=canary"),
        lambda p: bool(p.env) and all({"name": "WMAP_STAGE", "value": "canary"} in e for e in p.env),
    ),
    "scheduler": Verb(
        (SetSchedulerName("kai-scheduler"),),
        ("set", "scheduler", "TARGET", "kai-scheduler"),
        lambda p: p.scheduler == "kai-scheduler",
    ),
    "node-selector": Verb(
        (SetNodeSelector({"pool": "a100"}),),
        ("set", "node-selector", "TARGET", "pool=a100"),
        lambda p: p.node_selector.get("pool") == "a100" or _requires_pool(p.node_affinity),
    ),
    "tolerations": Verb(
        (SetTolerations(add=(Toleration("nvidia.com/gpu", "NoSchedule"),)),),
        ("set", "tolerations", "TARGET", "--add", "nvidia.com/gpu:NoSchedule"),
        lambda p: GPU_TOLERATION in p.tolerations,
    ),
    "priority-class": Verb(
        (SetPriorityClassName("train-high"),),
        ("set", "priority-class", "TARGET", "train-high"),
        lambda p: p.priority == "train-high",
    ),
    "label": Verb(
        (SetPodLabels({"kai.scheduler/queue": "team-a"}),),
        ("label", "TARGET", "--pod-templates", "kai.scheduler/queue=team-a"),
        lambda p: p.labels.get("kai.scheduler/queue") == "team-a",
    ),
    "annotate": Verb(
        (SetPodAnnotations({"workload-map.dev/note": "set"}),),
        ("annotate", "TARGET", "--pod-templates", "workload-map.dev/note=set"),
        lambda p: p.annotations.get("workload-map.dev/note") == "set",
    ),
}


# --- paths a definition names -------------------------------------------------------------------


def named_paths(karta: Karta, obj: Mapping[str, Any]) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """(concrete paths the definition's pod and suspend expressions denote in ``obj``, static
    read paths of its count expressions with ``[]`` for any index). Paths are string tuples."""
    cd = compile_definition(karta)
    concrete: list[tuple[str, ...]] = []
    counted: list[tuple[str, ...]] = []
    for comp in cd.components.values():
        exprs = [
            comp.pod_template_spec,
            comp.pod_spec,
            comp.metadata,
            *(ce for _, ce in comp.fragmented or ()),
        ]
        exprs += [a.path for a in (*comp.suspend_actions, *comp.resume_actions)]
        for ce in exprs:
            if ce is not None and ce.expr.is_assignable:
                concrete += [tuple(str(k) for k in p) for p in ce.expr.paths(obj)]
        for ce in (comp.replicas, comp.min_replicas):
            if ce is not None:
                counted += read_paths(ce.source)
    concrete.append(("metadata", "labels"))
    concrete.append(("metadata", "annotations"))
    return concrete, counted


def _pointer_tokens(pointer: str) -> tuple[str, ...]:
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:])


def _only_along(value: Any, rest: tuple[str, ...]) -> bool:
    for key in rest[:-1]:
        if not isinstance(value, Mapping) or list(value) != [key]:
            return False
        value = value[key]
    return isinstance(value, Mapping) and list(value) == [rest[-1]] if rest else True


def _matches(static: tuple[str, ...], tokens: tuple[str, ...]) -> bool:
    """A static read path (``[]``: any index or key) is a prefix of ``tokens``."""
    return len(tokens) >= len(static) and all(s in ("[]", t) for s, t in zip(static, tokens, strict=False))


def outside_named_paths(
    karta: Karta, old: Mapping[str, Any], new: Mapping[str, Any], ops: list[Any]
) -> list[str]:
    """The JSON-patch paths of ``ops`` that lie under no path the definition names (in the old or
    the new object): a change may touch nothing else."""
    concrete_old, counted = named_paths(karta, old)
    concrete_new, _ = named_paths(karta, new)
    concrete = concrete_old + concrete_new
    bad: list[str] = []
    for op in ops:
        tokens = _pointer_tokens(op["path"])
        if any(tokens[: len(p)] == p for p in concrete):
            continue
        # An added parent that holds nothing but the way down to a named path (a missing
        # `affinity` object around the named `affinity.nodeAffinity`).
        if op["op"] == "add" and any(
            p[: len(tokens)] == tokens and _only_along(op["value"], p[len(tokens) :]) for p in concrete
        ):
            continue
        if any(_matches(p, tokens) for p in counted):
            continue
        bad.append(op["path"])
    return bad


# --- suspend and resume ---------------------------------------------------------------------------


def has_actions(karta: Karta, which: str) -> bool:
    """Does the definition declare ``which`` (``suspend`` or ``resume``) actions?"""
    return any(getattr(c, f"{which}_actions") for c in compile_definition(karta).components.values())


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        in_map = isinstance(value, Mapping) and key in value
        in_list = isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value)
        if not (in_map or in_list):
            return _MISSING
        value = value[key]
    return value


_MISSING = object()


def actions_unmet(karta: Karta, obj: Mapping[str, Any], which: str) -> list[str]:
    """The ``which`` actions whose value ``obj`` does not hold at every path the action's path
    expression denotes in it (empty: the object shows the whole suspend or resume)."""
    unmet: list[str] = []
    for comp in compile_definition(karta).components.values():
        for action in getattr(comp, f"{which}_actions"):
            paths = list(action.path.expr.paths(obj))
            if not paths:
                unmet.append(f"{comp.name}: {action.path.source} denotes no path")
            for path in paths:
                found = _at(obj, tuple(path))
                if found is _MISSING or found != action.value:
                    shown = "missing" if found is _MISSING else repr(found)
                    unmet.append(f"{comp.name}: {action.path.source} is {shown}, not {action.value!r}")
    return unmet


# --- scale targets ----------------------------------------------------------------------------------


def scale_targets(desired: Mapping[str, int]) -> list[dict[str, int]]:
    """Targets to try on a component (instance id -> pods), in order: every instance doubled,
    each one doubled alone, every one halved, each one halved alone. A definition's bounds (a Ray
    group's maxReplicas, a Job's completions, a multi-host unit) refuse some; a component that
    scales at all takes one of these on the recordings' objects."""
    up = {i: max(2, n * 2) for i, n in desired.items()}
    down = {i: max(1, n // 2) for i, n in desired.items()}
    out: list[dict[str, int]] = []
    for changed in (up, down):
        candidates = [changed, *({**desired, i: changed[i]} for i in desired)]
        out += [c for c in candidates if c != dict(desired) and c not in out]
    return out
