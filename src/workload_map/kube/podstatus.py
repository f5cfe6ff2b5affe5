"""A pod's state as ``kubectl get pods`` prints it, and why it is stuck (no I/O).

:func:`display_status` gives kubectl's STATUS column: the phase, replaced by the pod's own reason
(``Evicted``), by the first init container that has not finished (``Init:0/2``,
``Init:CrashLoopBackOff``, ``Init:Error``), else by the last container reporting a waiting or
terminated reason (``CrashLoopBackOff``, ``ImagePullBackOff``, ``CreateContainerConfigError``,
``OOMKilled``, ``Completed``, ``ExitCode:1``), ``SchedulingGated`` for a gated pod, and
``Terminating`` once deletion started. :func:`restarts` is the RESTARTS count (init containers
count while they run). :func:`containers` lists each container's state, restart count and last
termination; :func:`scheduling_message` the scheduler's word on a pod it could not place.
tests/cli/test_pod_states.py compares all of it with a real kubectl on the test API server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ContainerState",
    "containers",
    "display_status",
    "restarts",
    "scheduling_message",
    "status_and_restarts",
]

#: The pod reason the node controller sets when the node is unreachable (kubectl shows Unknown).
NODE_LOST = "NodeLost"


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, (dict, Mapping)) else {}


def _list(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, (dict, Mapping))] if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _terminated_word(term: Mapping[str, Any], prefix: str = "") -> str:
    if _str(term.get("reason")):
        return prefix + str(term["reason"])
    if _int(term.get("signal")):
        return f"{prefix}Signal:{term['signal']}"
    return f"{prefix}ExitCode:{_int(term.get('exitCode'))}"


def _conditions(status: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {_str(c.get("type")): c for c in _list(status.get("conditions"))}


def display_status(pod: Mapping[str, Any]) -> str:
    """kubectl's STATUS column for ``pod`` (module doc)."""
    status = _map(pod.get("status"))
    spec = _map(pod.get("spec"))
    reason = _str(status.get("phase")) or "Unknown"
    if _str(status.get("reason")):
        reason = status["reason"]
    conditions = _conditions(status)
    if _str(conditions.get("PodScheduled", {}).get("reason")) == "SchedulingGated":
        reason = "SchedulingGated"
    initializing = False
    init_specs = _list(spec.get("initContainers"))
    for i, c in enumerate(_list(status.get("initContainerStatuses"))):
        state = _map(c.get("state"))
        term, waiting = _map(state.get("terminated")), _map(state.get("waiting"))
        if term and _int(term.get("exitCode")) == 0:
            continue
        if _map(state.get("running")) and _restartable(init_specs, c):
            continue  # a sidecar (restartPolicy: Always) that runs has done its init part
        if term:
            reason = _terminated_word(term, "Init:")
        elif waiting and _str(waiting.get("reason")) and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{i}/{len(init_specs)}"
        initializing = True
        break
    if not initializing:
        has_running = False
        for c in reversed(_list(status.get("containerStatuses"))):
            state = _map(c.get("state"))
            term, waiting = _map(state.get("terminated")), _map(state.get("waiting"))
            if waiting and _str(waiting.get("reason")):
                reason = waiting["reason"]
            elif term:
                reason = _terminated_word(term)
            elif c.get("ready") is True and _map(state.get("running")):
                has_running = True
        if reason == "Completed" and has_running:
            ready = _str(conditions.get("Ready", {}).get("status")) == "True"
            reason = "Running" if ready else "NotReady"
    if _map(pod.get("metadata")).get("deletionTimestamp"):
        reason = "Unknown" if _str(status.get("reason")) == NODE_LOST else "Terminating"
    return reason


def _restartable(init_specs: list[Mapping[str, Any]], c: Mapping[str, Any]) -> bool:
    name = c.get("name")
    return any(s.get("name") == name and s.get("restartPolicy") == "Always" for s in init_specs)


def restarts(pod: Mapping[str, Any]) -> int:
    """kubectl's RESTARTS count: the init containers' while one is still initializing, else the
    containers' (sidecar init containers included)."""
    return status_and_restarts(pod)[1]


def status_and_restarts(pod: Mapping[str, Any]) -> tuple[str, int]:
    """:func:`display_status` and :func:`restarts` with the status worked out once."""
    shown = display_status(pod)
    status = _map(pod.get("status"))
    init = _list(status.get("initContainerStatuses"))
    if shown.startswith("Init:"):
        return shown, sum(_int(c.get("restartCount")) for c in init)
    init_specs = _list(_map(pod.get("spec")).get("initContainers"))
    sidecars = sum(_int(c.get("restartCount")) for c in init if _restartable(init_specs, c))
    main = sum(_int(c.get("restartCount")) for c in _list(status.get("containerStatuses")))
    return shown, sidecars + main


@dataclass(frozen=True)
class ContainerState:
    """One container: ``state`` is ``waiting``, ``running`` or ``terminated`` (``""`` before the
    kubelet reports); ``reason``/``message`` of that state; the last termination's reason and
    exit code (an ``OOMKilled`` behind a ``CrashLoopBackOff``)."""

    name: str
    init: bool
    state: str
    reason: str | None
    message: str | None
    ready: bool
    restart_count: int
    last_termination_reason: str | None
    last_exit_code: int | None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "state": self.state,
            "ready": self.ready,
            "restartCount": self.restart_count,
        }
        if self.init:
            out["init"] = True
        for key, value in (
            ("reason", self.reason),
            ("message", self.message),
            ("lastTerminationReason", self.last_termination_reason),
            ("lastExitCode", self.last_exit_code),
        ):
            if value is not None:
                out[key] = value
        return out


def _container(c: Mapping[str, Any], init: bool) -> ContainerState:
    state = _map(c.get("state"))
    kind = next((k for k in ("waiting", "running", "terminated") if _map(state.get(k)) or k in state), "")
    detail = _map(state.get(kind)) if kind else {}
    last = _map(_map(c.get("lastState")).get("terminated"))
    return ContainerState(
        name=_str(c.get("name")),
        init=init,
        state=kind,
        reason=_str(detail.get("reason")) or None,
        message=_str(detail.get("message")) or None,
        ready=c.get("ready") is True,
        restart_count=_int(c.get("restartCount")),
        last_termination_reason=(_str(last.get("reason")) or None) if last else None,
        last_exit_code=_int(last.get("exitCode")) if last else None,
    )


def containers(pod: Mapping[str, Any]) -> tuple[ContainerState, ...]:
    status = _map(pod.get("status"))
    return tuple(_container(c, True) for c in _list(status.get("initContainerStatuses"))) + tuple(
        _container(c, False) for c in _list(status.get("containerStatuses"))
    )


def scheduling_message(pod: Mapping[str, Any]) -> str | None:
    """The scheduler's message for a pod it could not place (``0/8 nodes are available: 8
    Insufficient nvidia.com/gpu.``), from the ``PodScheduled=False`` condition."""
    cond = _conditions(_map(pod.get("status"))).get("PodScheduled", {})
    if _str(cond.get("status")) == "False" and _str(cond.get("message")):
        return str(cond["message"])
    return None


def readiness_gates(pod: Mapping[str, Any]) -> tuple[int, int, tuple[str, ...]]:
    """``(satisfied, total, unsatisfied condition types)`` of the pod's ``spec.readinessGates``:
    kubectl's READINESS GATES column (``1/2``) counts a gate satisfied when the pod has a
    condition of that type with status ``True``."""
    gates = [_str(g.get("conditionType")) for g in _list(_map(pod.get("spec")).get("readinessGates"))]
    gates = [g for g in gates if g]
    conds = _conditions(_map(pod.get("status")))
    unsatisfied = tuple(g for g in gates if _str(conds.get(g, {}).get("status")) != "True")
    return len(gates) - len(unsatisfied), len(gates), unsatisfied


def not_ready_message(pod: Mapping[str, Any]) -> str | None:
    """Why a pod is not ready in one line: the scheduler's message, else the readiness gates that
    hold a pod whose containers are ready (``readiness gate target-health... is not True``)."""
    message = scheduling_message(pod)
    if message:
        return message
    _, _, unsatisfied = readiness_gates(pod)
    if unsatisfied and all(c.ready for c in containers(pod) if not c.init):
        words = ", ".join(unsatisfied)
        return f"readiness gate{'s' if len(unsatisfied) > 1 else ''} {words} not True"
    return None
