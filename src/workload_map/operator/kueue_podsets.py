"""Kueue's GenericJob contract for any workload a definition can suspend: what the Kueue admission
controller (:mod:`.kueue`) writes into the workload when its ``kueue.x-k8s.io`` Workload is
admitted or evicted. Pure functions over JSON objects; every write goes through the definition
(:func:`~workload_map.resolve.podedit.apply_edits` on the podSet's own pod template, the
definition's suspend and resume actions).

Kueue's rules, read from kubernetes-sigs/kueue (facts only):

* **Admitted** (``pkg/workload``): ``status.admission`` is set and the ``QuotaReserved`` and
  ``Admitted`` conditions are true; an ``Evicted`` condition that is true wins over both.
* **Flavors -> pod set info** (``pkg/podset`` ``FromAssignment``): for each podSetAssignment, the
  ResourceFlavors it names (each once) give their ``spec.nodeLabels`` (the first flavor's value
  of a key is kept) and their ``spec.tolerations`` (appended); a flavor that does not exist is an
  error.
* **Run** (``podset.Merge``, then unsuspend): a node selector key the template already holds with
  another value is a conflict (an error: nothing is written); the others are added; tolerations
  already in the template (an empty operator counts as ``Equal``) are not added again.
* **Stop** (jobframework ``stopJob``: suspend, then ``RestorePodSetsInfo`` with the infos of the
  Workload's own ``spec.podSets``): the Workload's pod templates are the originals, copied from
  the workload before admission; ``podset.RestorePodSpec`` puts back their labels, annotations,
  node selector, tolerations and scheduling gates.
* **Partial admission** (KEP-420; ``podset.FromAssignment`` takes ``Count`` from the assignment,
  else the podSet's count; the batch Job integration runs with ``parallelism`` = that count and
  ``RestorePodSetsInfo`` puts the podSet's own count back): an assigned count below the
  Workload's podSet count, and not below its ``minCount``, is written through the definition's
  scale write-back (:func:`~workload_map.resolve.scaling.scale`, what ``wmap scale`` does), in
  the same write as the flavors; stop scales back to the Workload's ``spec.podSets`` count (a
  count it cannot write back is logged, and the workload is suspended all the same).
  A count above the podSet's, below its ``minCount`` (or below the count of a podSet without
  one), or for a component the definition cannot scale is refused: nothing is written.

A podSet name the workload's plan does not have, or a plan podSet the admission does not assign
(Kueue: "expecting N podset"), is a :class:`KueueAdmissionError`; nothing is written.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from workload_map.errors import WorkloadMapError, WriteBackError
from workload_map.kube.schedulers import KUEUE_MAX_POD_SETS
from workload_map.kube.validation import label_value_problem, qualified_name_problem
from workload_map.resolve import writeback
from workload_map.resolve.compiled import Definition
from workload_map.resolve.edits import (
    InvalidEditError,
    PodEdit,
    SetPodAnnotations,
    SetPodField,
    SetPodLabels,
    Toleration,
)
from workload_map.resolve.gang_plan import GangPlan, plan_gangs
from workload_map.resolve.podedit import apply_edits
from workload_map.resolve.scaling import scale

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Phase = Literal["pending", "admitted", "evicted"]

QUOTA_RESERVED = "QuotaReserved"
ADMITTED = "Admitted"
EVICTED = "Evicted"
#: Resources one podSetAssignment may map to flavors (bounds the work on a hostile status).
MAX_FLAVOR_ENTRIES = 256


class KueueAdmissionError(WriteBackError):
    """The Workload's admission cannot be applied to the workload (nothing is written)."""


class FlavorNotFoundError(KueueAdmissionError):
    """An admission names a ResourceFlavor the cluster does not have (yet)."""


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))


def _condition(wl: Mapping[str, Any], kind: str) -> bool:
    status = wl.get("status")
    conds = status.get("conditions") if isinstance(status, Mapping) else None
    for c in conds if isinstance(conds, list) else ():
        if isinstance(c, Mapping) and c.get("type") == kind:
            return c.get("status") == "True"
    return False


def phase(wl: Mapping[str, Any]) -> Phase:
    """``evicted`` (Evicted true), ``admitted`` (admission set, QuotaReserved and Admitted true)
    or ``pending``."""
    if _condition(wl, EVICTED):
        return "evicted"
    status = wl.get("status")
    admission = status.get("admission") if isinstance(status, Mapping) else None
    if isinstance(admission, Mapping) and _condition(wl, QUOTA_RESERVED) and _condition(wl, ADMITTED):
        return "admitted"
    return "pending"


def assigned_flavors(wl: Mapping[str, Any]) -> dict[str, list[str]]:
    """PodSet name -> the ResourceFlavors its assignment names (each once, in order)."""
    status = wl.get("status")
    admission = status.get("admission") if isinstance(status, Mapping) else None
    rows = admission.get("podSetAssignments") if isinstance(admission, Mapping) else None
    if not isinstance(rows, list) or len(rows) > KUEUE_MAX_POD_SETS:
        raise KueueAdmissionError(
            f"Workload {_name(wl)}: status.admission.podSetAssignments must be a list of at most "
            f"{KUEUE_MAX_POD_SETS} entries"
        )
    out: dict[str, list[str]] = {}
    for i, row in enumerate(rows):
        where = f"Workload {_name(wl)}: status.admission.podSetAssignments[{i}]"
        if not isinstance(row, Mapping) or not isinstance(row.get("name"), str):
            raise KueueAdmissionError(f"{where} has no name")
        flavors = row.get("flavors") or {}
        if not isinstance(flavors, Mapping) or len(flavors) > MAX_FLAVOR_ENTRIES:
            raise KueueAdmissionError(
                f"{where}.flavors must map at most {MAX_FLAVOR_ENTRIES} resources to flavors"
            )
        names: list[str] = []
        for resource, flavor in flavors.items():
            if not isinstance(flavor, str) or not flavor:
                raise KueueAdmissionError(f"{where}.flavors[{resource}] is not a ResourceFlavor name")
            if flavor not in names:
                names.append(flavor)
        out[row["name"]] = names
    return out


def assigned_counts(wl: Mapping[str, Any]) -> dict[str, int]:
    """PodSet name -> the count its assignment admits, for the assignments that give one."""
    status = wl.get("status")
    admission = status.get("admission") if isinstance(status, Mapping) else None
    rows = admission.get("podSetAssignments") if isinstance(admission, Mapping) else None
    out: dict[str, int] = {}
    for i, row in enumerate(rows[:KUEUE_MAX_POD_SETS] if isinstance(rows, list) else ()):
        if not isinstance(row, Mapping) or "count" not in row or row.get("count") is None:
            continue
        count = row["count"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise KueueAdmissionError(
                f"Workload {_name(wl)}: status.admission.podSetAssignments[{i}].count is not a "
                f"whole number >= 0: {count!r}"
            )
        out[str(row.get("name"))] = count
    return out


def _spec_pod_sets(wl: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """PodSet name -> the Workload's own ``spec.podSets`` entry (the originals)."""
    spec = wl.get("spec")
    rows = spec.get("podSets") if isinstance(spec, Mapping) else None
    return {
        row["name"]: row
        for row in (rows[:KUEUE_MAX_POD_SETS] if isinstance(rows, list) else ())
        if isinstance(row, Mapping) and isinstance(row.get("name"), str)
    }


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _partial_counts(wl: Mapping[str, Any], what: str) -> dict[str, int]:
    """PodSet name -> the admitted count where it is below the podSet's own count (checked
    against the podSet's count and ``minCount``)."""
    originals = _spec_pod_sets(wl)
    out: dict[str, int] = {}
    for name, count in assigned_counts(wl).items():
        row = originals.get(name)
        full = _int(row.get("count")) if row is not None else None
        if full is None or count == full:
            continue
        low = _int(row.get("minCount")) if row is not None else None
        if count > full:
            raise KueueAdmissionError(
                f'Workload {_name(wl)}: podSet "{name}" is admitted with count {count}, above its '
                f"count {full}; {what} is left suspended, nothing written"
            )
        if low is None or count < low:
            bound = f"its minCount {low}" if low is not None else f"its count {full} (it has no minCount)"
            raise KueueAdmissionError(
                f'Workload {_name(wl)}: podSet "{name}" is admitted with count {count}, below {bound}; '
                f"{what} is left suspended, nothing written"
            )
        out[name] = count
    return out


@dataclass(frozen=True)
class PodSetInfo:
    """What an admission adds to one podSet's pod template (Kueue's ``PodSetInfo``)."""

    name: str
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Obj, ...] = ()


def _flavor_toleration(flavor: str, raw: Any) -> Obj:
    """A flavor's toleration, checked with Kubernetes' rules (the error names the flavor)."""
    if not isinstance(raw, Mapping):
        raise KueueAdmissionError(f"ResourceFlavor {flavor}: a toleration is not an object: {raw!r}")
    try:
        t = Toleration(
            key=str(raw.get("key") or ""),
            effect=str(raw.get("effect") or ""),
            value=str(raw.get("value") or ""),
            operator=str(raw.get("operator") or ""),
            toleration_seconds=raw.get("tolerationSeconds"),
        )
    except InvalidEditError as exc:
        raise KueueAdmissionError(f"ResourceFlavor {flavor}: {exc}") from exc
    del t  # checked only: the toleration is written as the flavor gives it
    return dict(raw)


def pod_set_infos(wl: Mapping[str, Any], flavors: Mapping[str, Mapping[str, Any]]) -> dict[str, PodSetInfo]:
    """Each assigned podSet's info from its flavors (``flavors``: name -> ResourceFlavor object;
    a name missing there is an error naming it)."""
    out: dict[str, PodSetInfo] = {}
    for ps, names in assigned_flavors(wl).items():
        selector: dict[str, str] = {}
        tolerations: list[Obj] = []
        for name in names:
            rf = flavors.get(name)
            if rf is None:
                raise FlavorNotFoundError(
                    f'Workload {_name(wl)}: podSet "{ps}" is assigned ResourceFlavor "{name}", which does '
                    "not exist"
                )
            spec = rf.get("spec")
            spec = spec if isinstance(spec, Mapping) else {}
            labels = spec.get("nodeLabels") or {}
            if not isinstance(labels, Mapping):
                raise KueueAdmissionError(f"ResourceFlavor {name}: spec.nodeLabels is not a map")
            for k, v in labels.items():
                problem = qualified_name_problem(k) if isinstance(k, str) else "not a string"
                problem = problem or (label_value_problem(v) if isinstance(v, str) else "not a string")
                if problem:
                    raise KueueAdmissionError(f"ResourceFlavor {name}: node label {k!r}={v!r}: {problem}")
                selector.setdefault(k, v)
            raw_tols = spec.get("tolerations") or []
            if not isinstance(raw_tols, list):
                raise KueueAdmissionError(f"ResourceFlavor {name}: spec.tolerations is not a list")
            tolerations.extend(_flavor_toleration(name, t) for t in raw_tols)
        out[ps] = PodSetInfo(ps, selector, tuple(tolerations))
    return out


def _same_toleration(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    def norm(t: Mapping[str, Any]) -> tuple[Any, ...]:
        return (
            t.get("key") or "",
            t.get("operator") or "Equal",
            t.get("value") or "",
            t.get("effect") or "",
            t.get("tolerationSeconds"),
        )

    return norm(a) == norm(b)


def _spec(template: Mapping[str, Any] | None) -> Mapping[str, Any]:
    spec = template.get("spec") if isinstance(template, Mapping) else None
    return spec if isinstance(spec, Mapping) else {}


def _meta_map(template: Mapping[str, Any] | None, key: str) -> dict[str, str]:
    meta = template.get("metadata") if isinstance(template, Mapping) else None
    value = meta.get(key) if isinstance(meta, Mapping) else None
    return dict(value) if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class _PodSet:
    component: str
    instance: str
    template: Mapping[str, Any]


def _scale_pod_sets(
    definition: Definition, obj: Obj, plan: GangPlan, counts: Mapping[str, int], what: str
) -> Obj:
    """``obj`` with each podSet named in ``counts`` at that many pods, through the definition's
    scale write-back (one write per component; its other instances keep their counts). Refused,
    naming the podSet, when the definition cannot write it or the podSet would not read it."""
    if not counts:
        return obj
    new = obj
    members = [m for m in plan.pod_sets if m.pod_template is not None]
    for component in dict.fromkeys(m.component for m in members if m.task in counts):
        wanted = {
            m.instance_id: counts.get(m.task, m.desired_pods) for m in members if m.component == component
        }
        try:
            new = scale(definition, new, component, wanted).new_object
        except WorkloadMapError as exc:
            names = ", ".join(f'podSet "{m.task}" to {counts[m.task]}' for m in members if m.task in counts)
            raise KueueAdmissionError(f"{what}: cannot scale {names}: {exc}; nothing written") from exc
    try:
        after = {m.task: m.desired_pods for m in plan_gangs(definition, new).pod_sets}
    except WorkloadMapError as exc:
        raise KueueAdmissionError(
            f"{what}: the scaled workload has no gang plan: {exc}; nothing written"
        ) from exc
    for name, count in counts.items():
        if after.get(name) != count:
            raise KueueAdmissionError(
                f'{what}: podSet "{name}" reads {after.get(name)} pods after scaling to {count} (the '
                "definition's count is not the podSet's); nothing written"
            )
    return new


def _pod_sets(plan: GangPlan) -> dict[str, _PodSet]:
    """PodSet name -> where its template is, as the Kueue renderer names podSets."""
    return {
        m.task: _PodSet(m.component, m.instance_id, m.pod_template)
        for m in plan.pod_sets
        if m.pod_template is not None
    }


def _edit(definition: Definition, obj: Obj, ps: _PodSet, edits: Sequence[PodEdit]) -> Obj:
    if not edits:
        return obj
    return apply_edits(definition, obj, edits, instances=[(ps.component, ps.instance)]).new_object


def admit(
    definition: Definition,
    obj: Mapping[str, Any],
    plan: GangPlan,
    wl: Mapping[str, Any],
    flavors: Mapping[str, Mapping[str, Any]],
) -> writeback.Change:
    """Write the admitted counts (partial admission) and the admitted flavors' node labels and
    tolerations into every podSet's pod template and resume the workload, in one change (``plan``
    is ``obj``'s gang plan)."""
    infos = pod_set_infos(wl, flavors)
    sets = _pod_sets(plan)
    what = f"{plan.kind} {plan.namespace}/{plan.name}"
    unknown = [n for n in infos if n not in sets]
    if unknown:
        raise KueueAdmissionError(
            f'Workload {_name(wl)} assigns podSet "{unknown[0]}", which {what} does not have '
            f"(podSets: {', '.join(sets) or 'none'}); nothing written"
        )
    missing = [n for n in sets if n not in infos]
    if missing:
        raise KueueAdmissionError(
            f"Workload {_name(wl)}: the admission assigns {len(infos)} podSets, {what} has {len(sets)} "
            f"(not assigned: {', '.join(missing)}); nothing written"
        )
    new: Obj = dict(obj)
    new = _scale_pod_sets(definition, new, plan, _partial_counts(wl, what), what)
    for name, info in infos.items():
        ps = sets[name]
        spec = _spec(ps.template)
        raw = spec.get("nodeSelector")
        current: dict[str, Any] = dict(raw) if isinstance(raw, Mapping) else {}
        for k, v in info.node_selector.items():
            if k in current and current[k] != v:
                raise KueueAdmissionError(
                    f'{what}: podSet "{name}": conflict for nodeSelector key "{k}": the template has '
                    f'"{current[k]}", the admitted flavor "{v}"; nothing written'
                )
        selector = {**current, **{k: v for k, v in info.node_selector.items() if k not in current}}
        have = [dict(t) for t in spec.get("tolerations") or () if isinstance(t, Mapping)]
        tolerations = list(have)
        for t in info.tolerations:
            if not any(_same_toleration(t, o) for o in tolerations):
                tolerations.append(dict(t))
        edits: list[PodEdit] = []
        if selector != current:
            edits.append(SetPodField(("nodeSelector",), selector))
        if tolerations != have:
            edits.append(SetPodField(("tolerations",), tolerations))
        new = _edit(definition, new, ps, edits)
    new = writeback.resume(definition, new).new_object
    return writeback.make_change(obj, new)


def _restore_field(current: Any, original: Any, path: str) -> SetPodField | None:
    empty = original is None or original == {} or original == []
    if current == original or (empty and (current is None or current == {} or current == [])):
        return None
    return SetPodField((path,), remove=True) if empty else SetPodField((path,), original)


def _restore_map(
    current: dict[str, str], original: dict[str, str], edit: type[SetPodLabels] | type[SetPodAnnotations]
) -> PodEdit | None:
    if current == original:
        return None
    return edit(values=original, unset=tuple(k for k in current if k not in original))


def stop(
    definition: Definition, obj: Mapping[str, Any], plan: GangPlan, wl: Mapping[str, Any]
) -> writeback.Change:
    """Suspend the workload and put back each podSet's count and its template's labels,
    annotations, node selector, tolerations and scheduling gates as the Workload's
    ``spec.podSets`` hold them."""
    new: Obj = writeback.suspend(definition, obj).new_object
    spec_rows = _spec_pod_sets(wl)
    restore: dict[str, int] = {}
    for m in plan.pod_sets:
        row = spec_rows.get(m.task)
        full = _int(row.get("count")) if row is not None else None
        if full is not None and m.pod_template is not None and m.desired_pods != full:
            restore[m.task] = full
    try:
        new = _scale_pod_sets(definition, new, plan, restore, f"{plan.kind} {plan.namespace}/{plan.name}")
    except KueueAdmissionError as exc:
        # Stopping must not wait on the count: the workload is suspended and its templates
        # restored; a count left changed makes the pending Workload be replaced (step 6 of the
        # controller), as when the workload is scaled while queued.
        log.warning("%s; suspended without restoring the count", exc)
    spec = wl.get("spec")
    rows = spec.get("podSets") if isinstance(spec, Mapping) else None
    originals: dict[str, Mapping[str, Any]] = {}
    for row in rows if isinstance(rows, list) else ():
        if isinstance(row, Mapping) and isinstance(row.get("name"), str):
            tpl = row.get("template")
            originals[row["name"]] = tpl if isinstance(tpl, Mapping) else {}
    for name, ps in _pod_sets(plan).items():
        original = originals.get(name)
        if original is None:
            continue  # no original to restore from (the Workload lost the podSet): left as it is
        cur, orig = _spec(ps.template), _spec(original)
        edits: list[PodEdit] = [
            e
            for e in (
                _restore_field(cur.get(f), orig.get(f), f)
                for f in ("nodeSelector", "tolerations", "schedulingGates")
            )
            if e is not None
        ]
        for key, kind in (("labels", SetPodLabels), ("annotations", SetPodAnnotations)):
            e = _restore_map(_meta_map(ps.template, key), _meta_map(original, key), kind)
            if e is not None:
                edits.append(e)
        new = _edit(definition, new, ps, edits)
    return writeback.make_change(obj, new)


def pod_set_shape(pod_sets: Iterable[Any]) -> list[tuple[str, int]]:
    """``[(name, count)]`` of a Workload's ``spec.podSets``: what must match for the Workload to
    still stand for the workload."""
    out: list[tuple[str, int]] = []
    for row in pod_sets:
        if isinstance(row, Mapping):
            count = row.get("count")
            out.append((str(row.get("name")), count if isinstance(count, int) else -1))
    return out


__all__ = [
    "ADMITTED",
    "EVICTED",
    "QUOTA_RESERVED",
    "FlavorNotFoundError",
    "KueueAdmissionError",
    "Phase",
    "PodSetInfo",
    "admit",
    "assigned_counts",
    "assigned_flavors",
    "phase",
    "pod_set_infos",
    "pod_set_shape",
    "stop",
]
