"""Definition builders shared by the pod, gang and placement tests: a definition from component
dicts, and the JobSet and LeaderWorkerSet component shapes (upstream-spec 4.2) they all use."""

from __future__ import annotations

from typing import Any

from workload_map.model.definition import Karta


def kind(group: str, version: str, k: str) -> dict[str, str]:
    return {"group": group, "version": version, "kind": k}


def definition(
    name: str, root: dict[str, Any], *children: dict[str, Any], gang: dict[str, Any] | None = None
) -> Karta:
    """A definition named ``name``: ``root`` and ``children`` as component dicts, ``gang`` as
    ``optimizationInstructions.gangScheduling`` (left out when ``None``)."""
    spec: dict[str, Any] = {"structureDefinition": {"rootComponent": root, "childComponents": list(children)}}
    if gang is not None:
        spec["optimizationInstructions"] = {"gangScheduling": gang}
    return Karta.model_validate({"metadata": {"name": name}, "spec": spec})


# --- JobSet: one ``replicatedjob`` component per replicated job ----------------------------------

RJ_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"


def jobset_definition(
    name: str = "jobset", *, job_kind: bool = False, gang: dict[str, Any] | None = None
) -> Karta:
    """The JobSet shape with upstream's (not null-safe) replicas; ``job_kind`` gives the child its
    ``batch/v1 Job`` kind as in the catalog."""
    rj: dict[str, Any] = {
        "name": "replicatedjob",
        "ownerRef": "jobset",
        "instanceIdPath": ".spec.replicatedJobs[].name",
        "specDefinition": {"podTemplateSpecPath": ".spec.replicatedJobs[].template.spec.template"},
        "scaleDefinition": {
            "replicasPath": ".spec.replicatedJobs[] | .replicas * .template.spec.parallelism"
        },
        "podSelector": {"componentInstanceSelector": {"idPath": f'.metadata.labels["{RJ_LABEL}"]'}},
    }
    if job_kind:
        rj["kind"] = kind("batch", "v1", "Job")
    return definition(
        name, {"name": "jobset", "kind": kind("jobset.x-k8s.io", "v1alpha2", "JobSet")}, rj, gang=gang
    )


# --- LeaderWorkerSet: virtual ``group`` with ``leader`` and ``worker`` children --------------------

LWS_GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index"
LWS_WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
LWS_LEADER_NAME = "leaderworkerset.sigs.k8s.io/leader-name"


def lws_definition(
    name: str,
    *,
    per_group: bool = False,
    group_scale: bool = True,
    selectors: bool = True,
    gang: dict[str, Any] | None = None,
) -> Karta:
    """``per_group``: counts are per LWS group (leader 1, workers size-1), KAI's native size;
    otherwise the catalog's workload-wide counts (leader = replicas, workers = replicas x
    (size-1)) and, with ``group_scale``, group scale = replicas (never for ``per_group``).
    ``selectors``: leader by worker-index "0", worker by the leader-name annotation's existence."""
    lws = ".spec.leaderWorkerTemplate"
    leader_scale = "1" if per_group else ".spec.replicas // 1"
    worker_scale = (
        f"({lws}.size // 1) - 1" if per_group else f"(.spec.replicas // 1) * (({lws}.size // 1) - 1)"
    )
    group: dict[str, Any] = {
        "name": "group",
        "ownerRef": "leaderworkerset",
        "podSelector": {"replicaSelector": {"keyPath": f'.metadata.labels["{LWS_GROUP_INDEX}"]'}},
    }
    if group_scale and not per_group:
        group["scaleDefinition"] = {"replicasPath": ".spec.replicas // 1"}
    leader: dict[str, Any] = {
        "name": "leader",
        "ownerRef": "group",
        "specDefinition": {"podTemplateSpecPath": f"{lws}.leaderTemplate"},
        "scaleDefinition": {"replicasPath": leader_scale},
    }
    worker: dict[str, Any] = {
        "name": "worker",
        "ownerRef": "group",
        "specDefinition": {"podTemplateSpecPath": f"{lws}.workerTemplate"},
        "scaleDefinition": {"replicasPath": worker_scale},
    }
    if selectors:
        leader["podSelector"] = {
            "componentTypeSelector": {"keyPath": f'.metadata.labels["{LWS_WORKER_INDEX}"]', "value": "0"}
        }
        worker["podSelector"] = {
            "componentTypeSelector": {"keyPath": f'.metadata.annotations["{LWS_LEADER_NAME}"]'}
        }
    return definition(
        name,
        {"name": "leaderworkerset", "kind": kind("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet")},
        group,
        leader,
        worker,
        gang=gang,
    )
