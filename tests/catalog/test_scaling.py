"""Scaling is not degradation (issue 24; the rule: docs/catalog.md "Scaling is not degradation").

Every object here is one of the lifecycle fixtures (tests/catalog/lifecycles, statuses as the
controllers write them) moved through a scale the way the controller moves it:

- Deployment (kube-controller-manager's deployment controller): a scale bumps
  ``metadata.generation``; until the controller syncs, ``observedGeneration`` is behind and the
  status is the previous one. Then the ReplicaSet is scaled, ``status.replicas`` counts the new
  pods at once, ``Progressing`` stays ``NewReplicaSetAvailable`` (a completed rollout is not
  re-checked for progress) and ``Available`` turns False with ``MinimumReplicasUnavailable``
  while ``availableReplicas < replicas - maxUnavailable`` (0 for 3 replicas at 25%). The flow is
  upstream's ``flows/deployment`` (1 -> 3 -> 1 replicas; its comment: Karta reads Running at each
  settled count).
- StatefulSet, Grove PodCliqueSet: the states of upstream's recordings
  ``statefulset/.../scaled.yaml`` and ``grove/.../scaled.yaml`` (replayed with their recorded
  states in test_recordings.py), checked here for the moments where the generation is behind.
- RayCluster (KubeRay ``calculateStatus``): ``desiredWorkerReplicas`` follows the spec at once,
  ``readyWorkerReplicas`` as the new workers start, ``state`` stays ``ready``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.catalog.lifecycle import LC, load_fixture
from tests.catalog.lifecycle import catalog_definition as ours
from workload_map.resolve import resolve

Obj = dict[str, Any]
DEPLOYMENT = "apps-deployment-v1"


def _fixture(slug: str, stage: str) -> Obj:
    obj: Obj = load_fixture(LC / slug / f"{stage}.yaml")["object"]
    return copy.deepcopy(obj)


def _phases(slug: str, obj: Obj) -> list[str]:
    return [p.value for p in resolve(ours(slug), obj).status.phases]


def _condition(obj: Obj, type_: str) -> Obj:
    return next(c for c in obj["status"]["conditions"] if c["type"] == type_)


def _deployment(generation: int, observed: int, desired: int, replicas: int, available: int) -> Obj:
    """The running fixture (3/3, rollout complete) as the deployment controller writes it after a
    scale to ``desired``: Available from the 25% maxUnavailable rule, Progressing untouched."""
    obj = _fixture(DEPLOYMENT, "running")
    obj["metadata"]["generation"] = generation
    obj["spec"]["replicas"] = desired
    status = obj["status"]
    status.update(
        observedGeneration=observed,
        replicas=replicas,
        updatedReplicas=replicas,
        readyReplicas=available,
        availableReplicas=available,
    )
    status.pop("unavailableReplicas", None)
    if replicas > available:
        status["unavailableReplicas"] = replicas - available
    spec_at_status = desired if observed >= generation else available  # a stale status: the old spec
    available_ok = available >= spec_at_status - (spec_at_status * 25 // 100)
    cond = _condition(obj, "Available")
    cond.update(
        status="True" if available_ok else "False",
        reason="MinimumReplicasAvailable" if available_ok else "MinimumReplicasUnavailable",
        message="Deployment has minimum availability."
        if available_ok
        else "Deployment does not have minimum availability.",
    )
    assert _condition(obj, "Progressing")["reason"] == "NewReplicaSetAvailable"
    return obj


@pytest.mark.parametrize(
    ("moment", "generation", "observed", "desired", "replicas", "available", "phases"),
    [
        ("created at 1, rolled out", 1, 1, 1, 1, 1, ["Running"]),
        ("scaled to 3, not yet observed", 2, 1, 3, 1, 1, ["Running"]),
        ("scaled to 3, new pods starting", 2, 2, 3, 3, 1, ["Running"]),
        ("scaled to 3, one new pod available", 2, 2, 3, 3, 2, ["Running"]),
        ("scaled to 3, settled", 2, 2, 3, 3, 3, ["Running"]),
        ("scaled back to 1, not yet observed", 3, 2, 1, 3, 3, ["Running"]),
        ("scaled back to 1, settled", 3, 3, 1, 1, 1, ["Running"]),
        ("scaled from 0 to 3, nothing available yet", 2, 2, 3, 3, 0, ["Initializing"]),
        ("scaled from 0 to 3, not yet observed", 2, 1, 3, 0, 0, ["Initializing"]),
    ],
)
def test_a_deployment_scaling_up_is_not_degraded(
    moment: str, generation: int, observed: int, desired: int, replicas: int, available: int,
    phases: list[str],
) -> None:  # fmt: skip
    obj = _deployment(generation, observed, desired, replicas, available)
    assert _phases(DEPLOYMENT, obj) == phases, moment


def test_the_scale_up_status_is_the_issue_s() -> None:
    """The status of issue 24's report, as the controller writes it: Progressing stays
    NewReplicaSetAvailable, Available False/MinimumReplicasUnavailable, available below the new
    replica count."""
    obj = _deployment(2, 2, 3, 3, 1)
    assert _condition(obj, "Progressing")["reason"] == "NewReplicaSetAvailable"
    assert (_condition(obj, "Available")["status"], _condition(obj, "Available")["reason"]) == (
        "False",
        "MinimumReplicasUnavailable",
    )
    workload = resolve(ours(DEPLOYMENT), obj)
    assert workload.status.primary_phase.value == "Running"
    assert workload.components["deployment"].instances[0].desired_replicas == 3


def test_a_deployment_that_never_changed_and_lost_pods_is_degraded() -> None:
    """Generation 1, rollout complete: fewer available pods cannot be a scale-up (the lifecycle
    fixture degraded.yaml: 1 of 3 available after a node failure)."""
    assert _phases(DEPLOYMENT, _fixture(DEPLOYMENT, "degraded")) == ["Degraded"]
    total_loss = _deployment(1, 1, 3, 3, 0)
    assert _phases(DEPLOYMENT, total_loss) == ["Degraded"]
    # within maxUnavailable (10 replicas, 25%: 2): Available stays True, the loss still shows
    within = _deployment(1, 1, 10, 10, 9)
    assert _condition(within, "Available")["status"] == "True"
    assert _phases(DEPLOYMENT, within) == ["Running", "Degraded"]
    assert resolve(ours(DEPLOYMENT), within).status.primary_phase.value == "Degraded"


def test_a_stale_status_is_never_degraded() -> None:
    """observedGeneration behind: the status describes the previous spec (generation 1's
    Deployment whose status has not caught up with its creation is not Degraded either)."""
    obj = _deployment(2, 1, 3, 3, 1)
    assert "Degraded" not in _phases(DEPLOYMENT, obj)
    fresh = _deployment(1, 1, 3, 3, 1)
    fresh["status"]["observedGeneration"] = 0
    assert "Degraded" not in _phases(DEPLOYMENT, fresh)


# ---------------------------------------------------------------------- StatefulSet, Grove, Ray


STATEFULSET = "apps-statefulset-v1"


def _statefulset(generation: int, observed: int, desired: int, replicas: int, ready: int) -> Obj:
    """The running fixture with the counters of statefulset scaled.yaml's events."""
    obj = _fixture(STATEFULSET, "running")
    obj["metadata"]["generation"] = generation
    obj["spec"]["replicas"] = desired
    obj["status"].update(
        observedGeneration=observed,
        replicas=replicas,
        currentReplicas=replicas,
        updatedReplicas=replicas,
        readyReplicas=ready,
        availableReplicas=ready,
    )
    return obj


@pytest.mark.parametrize(
    ("moment", "generation", "observed", "desired", "replicas", "ready", "phases"),
    [
        # scaled.yaml #4-#9: the states the recorder judged for a scale 1 -> 3
        ("scaled to 3, not yet observed", 2, 1, 3, 1, 1, ["Initializing"]),
        ("second pod created", 2, 2, 3, 2, 1, ["Initializing"]),
        ("second pod ready", 2, 2, 3, 2, 2, ["Initializing"]),
        ("every pod exists, the last one starting (recorded Degraded)", 2, 2, 3, 3, 2, ["Degraded"]),
        ("settled", 2, 2, 3, 3, 3, ["Running"]),
        # a status behind the spec that would otherwise read Degraded
        ("template changed, not yet observed", 2, 1, 3, 3, 2, ["Initializing"]),
    ],
)
def test_a_statefulset_scaling_up_is_initializing_until_every_pod_exists(
    moment: str, generation: int, observed: int, desired: int, replicas: int, ready: int,
    phases: list[str],
) -> None:  # fmt: skip
    obj = _statefulset(generation, observed, desired, replicas, ready)
    assert _phases(STATEFULSET, obj) == phases, moment


GROVE = "grove-io-podcliqueset-v1alpha1"


def test_a_grove_status_behind_the_spec_is_not_degraded() -> None:
    """The degraded fixture's counters (2 replicas updated, 1 available) under a generation the
    controller has not observed yet are the previous spec's: not Degraded."""
    obj = _fixture(GROVE, "degraded")
    assert "Degraded" in _phases(GROVE, obj)
    obj["metadata"]["generation"] = 2
    assert "Degraded" not in _phases(GROVE, obj)


RAY = "ray-io-raycluster-v1"


def test_a_raycluster_scaling_up_is_running() -> None:
    obj = _fixture(RAY, "running")
    assert _phases(RAY, obj) == ["Running"]
    group = obj["spec"]["workerGroupSpecs"][0]
    group["replicas"] = group["replicas"] + 2  # KubeRay: desired follows the spec, ready lags
    group["maxReplicas"] = max(group.get("maxReplicas", 0), group["replicas"])
    obj["metadata"]["generation"] = 2
    obj["status"]["observedGeneration"] = 2
    obj["status"]["desiredWorkerReplicas"] += 2
    assert obj["status"]["readyWorkerReplicas"] < obj["status"]["desiredWorkerReplicas"]
    assert _phases(RAY, obj) == ["Running"]
    # the same shortfall on a cluster whose spec never changed is a lost worker
    assert _phases(RAY, _fixture(RAY, "degraded")) == ["Running", "Degraded"]


def test_a_raycluster_whose_head_is_not_ready_is_degraded_after_a_scale_too() -> None:
    obj = _fixture(RAY, "degraded")
    obj["metadata"]["generation"] = 5
    head = next(c for c in obj["status"]["conditions"] if c["type"] == "HeadPodReady")
    head.update(status="False", reason="HeadPodNotReady")
    assert _phases(RAY, obj) == ["Running", "Degraded"]
