"""The edits of a pod, in pod terms: what ``wmap set``, ``wmap label``, the REST API and the
admission policy ask :func:`workload_map.resolve.podedit.apply_edits` to do.

Each edit checks its values with Kubernetes' own rules when it is built (label syntax, names,
quantities, toleration effects...) and raises :class:`InvalidEditError` naming the field, so a
template never receives a value its controller would fail to create pods from.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from workload_map.errors import WriteBackError
from workload_map.kube.validation import (
    ANNOTATIONS_MAX_BYTES,
    TAINT_EFFECTS,
    TOLERATION_OPERATORS,
    dns_subdomain_problem,
    env_name_problem,
    is_extended_resource,
    label_value_problem,
    qualified_name_problem,
)
from workload_map.resolve.quantity import NANO, QuantityError, parse_quantity

#: What to do when a value is already set to something else: replace it, leave it (and say so in
#: :attr:`Change.warnings`), or refuse (``kubectl label`` without ``--overwrite``).
Existing = Literal["overwrite", "keep", "error"]

#: Longest image reference and quantity text accepted (Kubernetes has no smaller limit that
#: matters; these only bound the work).
MAX_IMAGE = 4096
MAX_QUANTITY = 64
#: Longest environment value, and most entries one edit may name.
MAX_ENV_VALUE = 256 * 1024
MAX_ENTRIES = 1000


class InvalidEditError(WriteBackError):
    """An edit's value breaks Kubernetes' rules (``field`` names it, e.g. ``limits[nvidia.com/gpu]``)."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


# --- checks -------------------------------------------------------------------------------------


def _check(problem: str | None, what: str, value: str, fld: str) -> None:
    if problem is not None:
        raise InvalidEditError(f'invalid {what} "{_short(value)}": {problem}', field=fld)


def _short(value: str, limit: int = 80) -> str:
    return value if len(value) <= limit else value[: limit - 3] + "..."


def _strings(values: Mapping[str, Any], what: str) -> dict[str, str]:
    if len(values) > MAX_ENTRIES:
        raise InvalidEditError(f"too many {what} entries ({len(values)}, at most {MAX_ENTRIES})", field=what)
    out: dict[str, str] = {}
    for k, v in values.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise InvalidEditError(f"{what} {k!r}: keys and values must be strings, got {v!r}", field=what)
        out[k] = v
    return out


def _keys(keys: Iterable[str], what: str) -> tuple[str, ...]:
    out = tuple(keys)
    if len(out) > MAX_ENTRIES:
        raise InvalidEditError(f"too many {what} entries ({len(out)}, at most {MAX_ENTRIES})", field=what)
    for k in out:
        if not isinstance(k, str) or not k:
            raise InvalidEditError(f"{what}: {k!r} is not a key", field=what)
    return out


def _labels(
    values: Mapping[str, Any], unset: Iterable[str], what: str
) -> tuple[dict[str, str], tuple[str, ...]]:
    checked = _strings(values, what)
    for k, v in checked.items():
        _check(qualified_name_problem(k), f"{what} key", k, f"{what}[{k}]")
        if what != "annotation":
            _check(label_value_problem(v), f'{what} "{k}" value', v, f"{what}[{k}]")
    if what == "annotation" and sum(len(k) + len(v) for k, v in checked.items()) > ANNOTATIONS_MAX_BYTES:
        raise InvalidEditError(
            f"annotations are larger than {ANNOTATIONS_MAX_BYTES} bytes in all", field=what
        )
    gone = _keys(unset, what)
    both = set(checked) & set(gone)
    if both:
        raise InvalidEditError(f"{what} {sorted(both)[0]!r} is both set and removed", field=what)
    return checked, gone


def check_quantity(name: str, value: str, where: str) -> int:
    """A resource quantity as ``kubectl set resources`` checks it, also bounded; nano-units."""
    if not isinstance(value, str) or not value or len(value) > MAX_QUANTITY:
        raise InvalidEditError(f"{where}[{name}]: {value!r} is not a quantity", field=f"{where}[{name}]")
    try:
        nanos = parse_quantity(value)
    except (QuantityError, ValueError):
        raise InvalidEditError(
            f"{where}[{name}]: quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            field=f"{where}[{name}]",
        ) from None
    if nanos < 0:
        raise InvalidEditError(
            f"{where}[{name}]: must be greater than or equal to 0", field=f"{where}[{name}]"
        )
    if is_extended_resource(name) and nanos % NANO:
        raise InvalidEditError(
            f"{where}[{name}]: must be an integer (extended resources are whole units)",
            field=f"{where}[{name}]",
        )
    return nanos


# --- the edits ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SetImage:
    """``kubectl set image``: the image of the containers (and init containers) named
    ``container`` (``*``: every one). A fragmented spec's main container has no name of its own
    when the definition only locates its image or resources: it answers to ``*`` and to its
    component's name."""

    container: str
    image: str
    component: str | None = None

    def __post_init__(self) -> None:
        if not self.container:
            raise InvalidEditError("a container name is required (or *)", field="container")
        if not isinstance(self.image, str) or not self.image or len(self.image) > MAX_IMAGE:
            raise InvalidEditError(f"invalid image {self.image!r}", field="image")
        if any(ch.isspace() or ord(ch) < 32 for ch in self.image):
            raise InvalidEditError(
                f'invalid image "{_short(self.image)}": it contains white space', field="image"
            )


@dataclass(frozen=True)
class SetResources:
    """``kubectl set resources``: requests and limits of the selected containers (glob, ``*``
    default); the named keys are set, the others kept. Extended resources (``nvidia.com/gpu``)
    must end with the request equal to the limit, as Kubernetes requires."""

    requests: Mapping[str, str] = field(default_factory=dict)
    limits: Mapping[str, str] = field(default_factory=dict)
    container: str = "*"
    component: str | None = None

    def __post_init__(self) -> None:
        if not self.requests and not self.limits:
            raise InvalidEditError("give requests or limits", field="resources")
        for where, values in (("requests", self.requests), ("limits", self.limits)):
            for name, value in _strings(values, where).items():
                _check(qualified_name_problem(name), "resource name", name, f"{where}[{name}]")
                check_quantity(name, value, where)


@dataclass(frozen=True)
class EnvFrom:
    """An ``envFrom`` source: every key of a ConfigMap or Secret, optionally prefixed."""

    kind: Literal["configMap", "secret"]
    name: str
    prefix: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("configMap", "secret"):
            raise InvalidEditError(
                f"envFrom: unknown kind {self.kind!r} (configMap or secret)", field="envFrom"
            )
        _check(dns_subdomain_problem(self.name), f"{self.kind} name", self.name, "envFrom")
        if self.prefix:
            _check(env_name_problem(self.prefix), "envFrom prefix", self.prefix, "envFrom")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {f"{self.kind}Ref": {"name": self.name}}
        if self.prefix:
            out["prefix"] = self.prefix
        return out


@dataclass(frozen=True)
class SetEnv:
    """``kubectl set env``: set (``values``), remove (``unset``) variables and add ``envFrom``
    sources on the selected containers. ``envFrom`` references the ConfigMap or Secret instead of
    copying its keys, as ``kubectl set env --from`` does: nothing secret passes through the client,
    and the pods follow later changes of the object."""

    values: Mapping[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()
    env_from: tuple[EnvFrom, ...] = ()
    container: str = "*"
    component: str | None = None

    def __post_init__(self) -> None:
        if not self.values and not self.unset and not self.env_from:
            raise InvalidEditError("give variables to set or remove, or an envFrom source", field="env")
        for name, value in _strings(self.values, "env").items():
            _check(env_name_problem(name), "environment variable name", name, f"env[{name}]")
            if len(value) > MAX_ENV_VALUE:
                raise InvalidEditError(
                    f"env[{name}]: the value is longer than {MAX_ENV_VALUE}", field=f"env[{name}]"
                )
        for name in _keys(self.unset, "env"):
            _check(env_name_problem(name), "environment variable name", name, f"env[{name}]")
        if set(self.values) & set(self.unset):
            raise InvalidEditError(
                f"env {sorted(set(self.values) & set(self.unset))[0]!r} is both set and removed"
            )


@dataclass(frozen=True)
class SetSchedulerName:
    """``spec.schedulerName`` (``schedulerNamePath`` on a fragmented spec)."""

    name: str
    existing: Existing = "overwrite"

    def __post_init__(self) -> None:
        _check(dns_subdomain_problem(self.name), "scheduler name", self.name, "schedulerName")


@dataclass(frozen=True)
class SetPriorityClassName:
    """``spec.priorityClassName`` (``priorityClassNamePath`` on a fragmented spec)."""

    name: str
    existing: Existing = "overwrite"

    def __post_init__(self) -> None:
        _check(dns_subdomain_problem(self.name), "priority class name", self.name, "priorityClassName")


@dataclass(frozen=True)
class SetNodeSelector:
    """``spec.nodeSelector`` keys set and removed. On a fragmented spec, which has no node
    selector of its own, the same constraint goes into its ``nodeAffinityPath`` as a required
    ``In`` expression in every node selector term (Kubernetes ANDs a node selector with the
    required terms, so the meaning is the same)."""

    values: Mapping[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()
    existing: Existing = "overwrite"

    def __post_init__(self) -> None:
        _labels(self.values, self.unset, "node selector")


@dataclass(frozen=True)
class Toleration:
    """One ``spec.tolerations`` entry (``operator`` Exists when there is no value)."""

    key: str
    effect: str = ""
    value: str = ""
    operator: str = ""
    toleration_seconds: int | None = None

    def __post_init__(self) -> None:
        op = self.operator or ("Equal" if self.value else "Exists")
        object.__setattr__(self, "operator", op)
        if op not in TOLERATION_OPERATORS:
            raise InvalidEditError(
                f"toleration {self.key!r}: operator must be Exists or Equal", field="operator"
            )
        if self.key:
            _check(qualified_name_problem(self.key), "toleration key", self.key, "key")
        elif op != "Exists":
            raise InvalidEditError("a toleration without a key must use operator Exists", field="key")
        if op == "Exists" and self.value:
            raise InvalidEditError(f"toleration {self.key!r}: operator Exists takes no value", field="value")
        if self.value:
            _check(label_value_problem(self.value), "toleration value", self.value, "value")
        if self.effect and self.effect not in TAINT_EFFECTS:
            raise InvalidEditError(
                f"toleration {self.key!r}: effect {self.effect!r} is not one of {', '.join(TAINT_EFFECTS)}",
                field="effect",
            )
        secs = self.toleration_seconds
        if secs is not None and (
            isinstance(secs, bool) or not isinstance(secs, int) or abs(secs) > 2**63 - 1
        ):
            raise InvalidEditError(
                f"toleration {self.key!r}: tolerationSeconds must be an integer", field="tolerationSeconds"
            )
        if secs is not None and self.effect != "NoExecute":
            raise InvalidEditError(
                f"toleration {self.key!r}: tolerationSeconds needs effect NoExecute",
                field="tolerationSeconds",
            )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.key:
            out["key"] = self.key
        out["operator"] = self.operator
        if self.value:
            out["value"] = self.value
        if self.effect:
            out["effect"] = self.effect
        if self.toleration_seconds is not None:
            out["tolerationSeconds"] = self.toleration_seconds
        return out

    def same_slot(self, other: Mapping[str, Any]) -> bool:
        """``other`` tolerates the same taint key and effect (so this one replaces it)."""
        return other.get("key", "") == self.key and (other.get("effect") or "") == self.effect


@dataclass(frozen=True)
class SetTolerations:
    """Add tolerations (an entry for the same key and effect is replaced) and remove them by
    ``KEY`` or ``KEY:EFFECT``."""

    add: tuple[Toleration, ...] = ()
    remove: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.add and not self.remove:
            raise InvalidEditError("give tolerations to add or remove", field="tolerations")
        if len(self.add) + len(self.remove) > MAX_ENTRIES:
            raise InvalidEditError(f"too many tolerations (at most {MAX_ENTRIES})", field="tolerations")
        for spec in self.remove:
            key, _, effect = spec.partition(":")
            if effect and effect not in TAINT_EFFECTS:
                raise InvalidEditError(
                    f"toleration {spec!r}: effect {effect!r} is not one of {', '.join(TAINT_EFFECTS)}"
                )
            if key:
                _check(qualified_name_problem(key), "toleration key", key, "remove")


@dataclass(frozen=True)
class _MapEdit:
    """Keys of a string map set (``values``) and removed (``unset``): labels or annotations."""

    values: Mapping[str, str] = field(default_factory=dict)
    unset: tuple[str, ...] = ()
    existing: Existing = "overwrite"
    #: ``label`` or ``annotation``: which of Kubernetes' rules the keys and values follow.
    kind: ClassVar[str] = "label"

    def __post_init__(self) -> None:
        _labels(self.values, self.unset, self.kind)


@dataclass(frozen=True)
class SetPodLabels(_MapEdit):
    """Labels of the pod templates (``metadata.labels``, ``metadataPath``, ``labelsPath``)."""


@dataclass(frozen=True)
class SetPodAnnotations(_MapEdit):
    """Annotations of the pod templates (``metadata.annotations``, ``annotationsPath``)."""

    kind: ClassVar[str] = "annotation"


@dataclass(frozen=True)
class SetLabels(_MapEdit):
    """Labels of the workload object itself (``kubectl label``)."""


@dataclass(frozen=True)
class SetAnnotations(_MapEdit):
    """Annotations of the workload object itself (``kubectl annotate``)."""

    kind: ClassVar[str] = "annotation"


#: Pod spec fields a fragmented spec can carry, by the fragment that holds them (path prefix
#: under ``spec`` -> fragment wire name).
FRAGMENT_CARRIERS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("schedulerName",), "schedulerName"),
    (("priorityClassName",), "priorityClassName"),
    (("affinity", "nodeAffinity"), "nodeAffinity"),
    (("affinity", "podAffinity"), "podAffinity"),
    (("resourceClaims",), "resourceClaims"),
    (("containers",), "containers"),
)


@dataclass(frozen=True)
class SetPodField:
    """Any pod spec field by its path under ``spec`` (``("schedulingGroup", "podGroupName")``):
    set to ``value`` (a JSON value, copied), or removed with ``remove=True``. On a fragmented spec
    only the fields of :data:`FRAGMENT_CARRIERS` can be written."""

    path: tuple[str, ...]
    value: Any = None
    remove: bool = False
    existing: Existing = "overwrite"

    def __post_init__(self) -> None:
        path = tuple(self.path)
        object.__setattr__(self, "path", path)
        if not path or not all(isinstance(p, str) and p for p in path) or len(path) > 32:
            raise InvalidEditError(f"pod field path {self.path!r}: give 1 to 32 field names", field="path")
        if not self.remove and self.value is None:
            raise InvalidEditError(
                f"pod field spec.{'.'.join(path)}: give a value, or remove=True to delete it", field="value"
            )


PodEdit = (
    SetImage
    | SetResources
    | SetEnv
    | SetSchedulerName
    | SetPriorityClassName
    | SetNodeSelector
    | SetTolerations
    | SetPodLabels
    | SetPodAnnotations
    | SetPodField
    | SetLabels
    | SetAnnotations
)
"""Every edit :func:`apply_edits` takes."""

EDIT_TYPES = (
    SetImage,
    SetResources,
    SetEnv,
    SetSchedulerName,
    SetPriorityClassName,
    SetNodeSelector,
    SetTolerations,
    SetPodLabels,
    SetPodAnnotations,
    SetPodField,
    SetLabels,
    SetAnnotations,
)


def edit_field(edit: PodEdit) -> str:
    """The pod field an edit writes, in Kubernetes' words (for messages)."""
    names: dict[type, str] = {
        SetImage: "image",
        SetResources: "resources",
        SetEnv: "env",
        SetSchedulerName: "schedulerName",
        SetPriorityClassName: "priorityClassName",
        SetNodeSelector: "nodeSelector",
        SetTolerations: "tolerations",
        SetPodLabels: "labels",
        SetPodAnnotations: "annotations",
        SetLabels: "labels",
        SetAnnotations: "annotations",
    }
    if isinstance(edit, SetPodField):
        return "spec." + ".".join(edit.path)
    return names[type(edit)]


__all__ = [
    "EDIT_TYPES",
    "FRAGMENT_CARRIERS",
    "EnvFrom",
    "Existing",
    "InvalidEditError",
    "PodEdit",
    "SetAnnotations",
    "SetEnv",
    "SetImage",
    "SetLabels",
    "SetNodeSelector",
    "SetPodAnnotations",
    "SetPodField",
    "SetPodLabels",
    "SetPriorityClassName",
    "SetResources",
    "SetSchedulerName",
    "SetTolerations",
    "Toleration",
    "check_quantity",
    "edit_field",
]
