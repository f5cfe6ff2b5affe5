"""Test cases of a definition: objects with the results the definition must give, checked into a
list of readable differences. ``wmap test`` runs them; the catalog's own lifecycle fixtures use
the same format and the same check.

Two file formats are read:

- a **case**: ``object`` (the workload) and ``expect`` with any of ``phases`` (every matched
  phase, in the library's order), ``primaryPhase``, ``components`` (``{component: {instance id
  ("" for a single instance): desired replicas}}``), ``pods`` (``{component: pods it claims}`` of
  the case's own ``pods`` list), ``gpus`` (total requested ``nvidia.com/gpu``) and ``gangs``
  (``[{pod, name_suffix, min_member}]``: the PodGroup KAI Scheduler's Karta plugin builds for
  that pod from the gang rules);
- an upstream **recording** (``events`` with ``kind: STATE`` items): the phases the definition
  matches for each recorded object must agree with the recorded state (:data:`RULES`).

Checks never raise for a bad expectation or a definition that fails on an object: each becomes a
:class:`Difference`, so one broken case never hides the others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from workload_map.errors import WorkloadMapError
from workload_map.model.definition import Karta

__all__ = ["CaseError", "CaseResult", "Difference", "check_case", "check_file", "check_recording"]

#: A decoded YAML document of a case file.
CaseDocument: TypeAlias = Mapping[str, Any]

#: Cases (or recorded states) checked from one file at most.
MAX_EVENTS = 10_000


class CaseError(WorkloadMapError):
    """A case file that is neither a case nor a recording."""


@dataclass(frozen=True)
class Difference:
    """``what`` (``phases``, ``components.worker.0``...) should be ``expected`` but is ``got``."""

    what: str
    expected: Any
    got: Any

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.what, "expected": self.expected, "got": self.got}

    def text(self) -> str:
        return f"{self.what}: expected {_show(self.expected)}, got {_show(self.got)}"


@dataclass(frozen=True)
class CaseResult:
    """One case, or one recorded state (``name`` says which), with its differences."""

    name: str
    checks: int
    differences: tuple[Difference, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return not self.differences

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "checks": self.checks,
            "differences": [d.to_dict() for d in self.differences],
        }


def _show(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return repr(value) if isinstance(value, str) else str(value)


def _resolve(karta: Karta, obj: Mapping[str, Any]) -> Any:
    from workload_map.resolve import compile_definition, resolve

    return resolve(compile_definition(karta), dict(obj))


def check_case(karta: Karta, name: str, doc: CaseDocument) -> CaseResult:
    """One ``object`` + ``expect`` case."""
    obj = doc.get("object")
    expect = doc.get("expect")
    if not isinstance(obj, Mapping) or not isinstance(expect, Mapping):
        raise CaseError(f"{name}: a case needs an object and an expect mapping")
    diffs: list[Difference] = []
    checks = 0
    try:
        workload = _resolve(karta, obj)
    except WorkloadMapError as exc:
        return CaseResult(name, 1, (Difference("resolve", "the object resolves", str(exc)),))
    if "phases" in expect:
        checks += 1
        got = [p.value for p in workload.status.phases]
        if got != list(expect["phases"] or []):
            diffs.append(Difference("phases", list(expect["phases"] or []), got))
    if "primaryPhase" in expect:
        checks += 1
        got_primary = workload.status.primary_phase.value
        if got_primary != expect["primaryPhase"]:
            diffs.append(Difference("primaryPhase", expect["primaryPhase"], got_primary))
    for comp, instances in (expect.get("components") or {}).items():
        checks += 1
        component = workload.components.get(str(comp))
        if component is None:
            diffs.append(Difference(f"components.{comp}", "a component", "no such component"))
            continue
        got_instances = {i.id: i.desired_replicas for i in component.instances}
        want = {str(k): v for k, v in (instances or {}).items()}
        for key in sorted(set(want) | set(got_instances)):
            if want.get(key) != got_instances.get(key):
                diffs.append(
                    Difference(
                        f"components.{comp}.{key or '<single>'}", want.get(key), got_instances.get(key)
                    )
                )
    if expect.get("pods"):
        pods = doc.get("pods")
        if not isinstance(pods, list):
            raise CaseError(f"{name}: expect.pods needs the case's pods (a list of Pod objects)")
        counts = _attributed(karta, obj, pods)
        for comp, want_pods in expect["pods"].items():
            checks += 1
            if counts.get(str(comp), 0) != want_pods:
                diffs.append(Difference(f"pods.{comp}", want_pods, counts.get(str(comp), 0)))
    if "gpus" in expect:
        checks += 1
        if workload.resources.gpus != expect["gpus"]:
            diffs.append(Difference("gpus", expect["gpus"], workload.resources.gpus))
    for i, gang in enumerate(expect.get("gangs") or ()):
        checks += 1
        diffs += _gang(karta, obj, i, gang)
    return CaseResult(name, checks, tuple(diffs))


def _attributed(karta: Karta, obj: Mapping[str, Any], pods: Sequence[Any]) -> dict[str, int]:
    """Pods the definition attributes to each component (owner references not required: a
    case holds the pods, not their owner chain)."""
    from workload_map.resolve import compile_definition
    from workload_map.resolve.pods import attribute_pods

    attribution = attribute_pods(
        compile_definition(karta),
        dict(obj),
        [p for p in pods if isinstance(p, Mapping)],
        check_ownership=False,
    )
    return {c.name: sum(len(i.pods) for i in c.instances) for c in attribution.components}


def _karta_format_gangs(karta: Karta) -> Karta:
    """``karta`` without its native gang expressions: a case's PodGroup is the one KAI's Karta
    plugin builds from the gang rules (the native plugins' values are KAI's own business)."""
    gs = karta.spec.optimization_instructions.gang_scheduling
    if gs is None or gs.expressions is None:
        return karta
    oi = karta.spec.optimization_instructions.model_copy(
        update={"gang_scheduling": gs.model_copy(update={"expressions": None})}
    )
    return karta.model_copy(update={"spec": karta.spec.model_copy(update={"optimization_instructions": oi})})


def _gang(karta: Karta, obj: Mapping[str, Any], index: int, gang: Any) -> list[Difference]:
    from workload_map.resolve.gangs import group_pod

    where = f"gangs[{index}]"
    if not isinstance(gang, Mapping) or not isinstance(gang.get("pod"), Mapping):
        return [Difference(where, "{pod, name_suffix, min_member}", gang)]
    try:
        plan = group_pod(_karta_format_gangs(karta), dict(obj), dict(gang["pod"]))
    except WorkloadMapError as exc:
        return [Difference(where, "a PodGroup", str(exc))]
    out = []
    uid = (obj.get("metadata") or {}).get("uid")
    if "name_suffix" in gang and plan.name != f"pg-{uid}-{gang['name_suffix']}":
        out.append(Difference(f"{where}.name", f"pg-{uid}-{gang['name_suffix']}", plan.name))
    if "min_member" in gang and plan.min_available != gang["min_member"]:
        out.append(Difference(f"{where}.min_member", gang["min_member"], plan.min_available))
    return out


#: Recording rules. A recorded ``state`` is one judgement (upstream's recorder, or ``wmap record``
#: writing our primary phase), so ``agree`` (the default) compares it with our one judgement:
#: the primary phase is the recorded state or an accepted stand-in for it
#: (:data:`ACCEPTED_DEVIATIONS`); other phases matched beside it (Running with Degraded) are
#: not a disagreement. ``exact``: the matched phases are exactly the recorded state and nothing
#: else. ``contains`` (upstream's replay rule): the recorded state is among them. The catalog is
#: held to more than ``agree`` (tests/catalog/test_recordings.py: every matched phase is the state
#: or a stand-in, :func:`deviation`).
RULES = ("agree", "exact", "contains")

#: Recorded state -> phases that may stand for it: a recorder that judged ``Undefined`` while
#: the definition already says Initializing/Resuming/Suspending (it has no word for that moment),
#: and ``Suspended`` just after a resume, before the controller clears its condition (then both
#: Suspended and Resuming match).
ACCEPTED_DEVIATIONS: dict[str, frozenset[str]] = {
    "Undefined": frozenset({"Initializing", "Resuming", "Suspending"}),
    "Suspended": frozenset({"Resuming"}),
}


def deviation(recorded: str, phases: set[str]) -> str | None:
    """``None`` when ``phases`` are exactly ``{recorded}``; the accepted deviation's name when
    they stand for it (:data:`ACCEPTED_DEVIATIONS`); else ``"wrong"``."""
    if phases == {recorded}:
        return None
    allowed = ACCEPTED_DEVIATIONS.get(recorded, frozenset())
    if recorded == "Undefined" and phases and phases <= allowed:
        return "Undefined"
    if recorded == "Suspended" and phases <= {"Suspended"} | allowed and phases & allowed:
        return "Suspended"
    return "wrong"


def _agrees(recorded: str, phases: list[str], primary: str, rule: str) -> bool:
    if rule == "contains":
        return recorded in phases
    if rule == "exact":
        return set(phases) == {recorded}
    return primary == recorded or primary in ACCEPTED_DEVIATIONS.get(recorded, frozenset())


def check_recording(karta: Karta, name: str, doc: CaseDocument, *, rule: str = "agree") -> list[CaseResult]:
    """Every STATE event of an upstream recording: do the matched phases agree with the recorded
    ``state`` under ``rule`` (:data:`RULES`)?"""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}")
    events = doc.get("events")
    if not isinstance(events, list):
        raise CaseError(f"{name}: a recording needs an events list")
    out: list[CaseResult] = []
    for index, event in enumerate(events[:MAX_EVENTS]):
        if not isinstance(event, Mapping) or event.get("kind") != "STATE":
            continue
        label = f"{name}#{index}"
        obj, state = event.get("object"), event.get("state")
        if not isinstance(obj, Mapping) or not isinstance(state, str):
            out.append(CaseResult(label, 1, (Difference("event", "object and state", "missing"),)))
            continue
        try:
            status = _resolve(karta, obj).status
        except WorkloadMapError as exc:
            out.append(CaseResult(label, 1, (Difference("resolve", "the object resolves", str(exc)),)))
            continue
        phases, primary = [p.value for p in status.phases], status.primary_phase.value
        if _agrees(state, phases, primary, rule):
            out.append(CaseResult(label, 1, ()))
        elif rule == "agree":
            out.append(CaseResult(label, 1, (Difference("primaryPhase", state, primary),)))
        else:
            wanted: Any = f"phases containing {state}" if rule == "contains" else [state]
            out.append(CaseResult(label, 1, (Difference("phases", wanted, phases),)))
    return out


def check_file(karta: Karta, name: str, docs: Sequence[Any], *, rule: str = "agree") -> list[CaseResult]:
    """Every case or recording document of one file (YAML streams may hold several)."""
    out: list[CaseResult] = []
    for n, doc in enumerate(docs):
        label = name if len(docs) == 1 else f"{name}[{n}]"
        if not isinstance(doc, Mapping):
            raise CaseError(f"{label}: not a mapping")
        if "events" in doc:
            out += check_recording(karta, label, doc, rule=rule)
        elif "object" in doc:
            out.append(check_case(karta, label, doc))
        else:
            raise CaseError(f"{label}: neither a case (object + expect) nor a recording (events)")
    return out
