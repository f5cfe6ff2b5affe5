"""The fit check's node filters and packing (workload_map.resolve.fit): pure, no cluster.

Every rule is table-driven against kube-scheduler's behaviour (Toleration.ToleratesTaint,
TaintToleration, NodeUnschedulable, NodeAffinity with component-helpers' nodeaffinity and
apimachinery's labels.Requirement, NodeResourcesFit)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.resolve.builders import jobset_definition
from workload_map.resolve.fit import (
    NodeCapacity,
    PodShape,
    check_fit,
    cluster_capacity,
    first_fit_decreasing,
    label_requirement_error,
    label_requirement_matches,
    node_exclusion,
    node_selector_matches,
    node_selector_term_matches,
    place,
    required_node_affinity_matches,
    taint_text,
    tolerates,
    untolerated_taint,
)
from workload_map.resolve.placement import placement_needs

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}

# --- Toleration.ToleratesTaint ----------------------------------------------------------------------

TOLERATION_CASES: list[tuple[str, dict[str, Any], dict[str, Any], bool]] = [
    # id, toleration, taint, tolerated
    (
        "equal-all-match",
        {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
        {"key": "k", "value": "v", "effect": "NoSchedule"},
        True,
    ),
    (
        "empty-operator-means-equal",
        {"key": "k", "value": "v", "effect": "NoSchedule"},
        {"key": "k", "value": "v", "effect": "NoSchedule"},
        True,
    ),
    (
        "equal-value-differs",
        {"key": "k", "operator": "Equal", "value": "x", "effect": "NoSchedule"},
        {"key": "k", "value": "v", "effect": "NoSchedule"},
        False,
    ),
    (
        "equal-no-value-vs-valued-taint",
        {"key": "k", "operator": "Equal"},
        {"key": "k", "value": "v", "effect": "NoSchedule"},
        False,
    ),
    (
        "equal-empty-value-vs-unvalued-taint",
        {"key": "k", "operator": "Equal", "value": ""},
        {"key": "k", "effect": "NoSchedule"},
        True,
    ),
    (
        "exists-ignores-value",
        {"key": "k", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "k", "value": "anything", "effect": "NoSchedule"},
        True,
    ),
    (
        "exists-key-differs",
        {"key": "other", "operator": "Exists"},
        {"key": "k", "value": "v", "effect": "NoSchedule"},
        False,
    ),
    (
        "empty-key-exists-tolerates-everything",
        {"operator": "Exists"},
        {"key": "k", "value": "v", "effect": "NoExecute"},
        True,
    ),
    (
        "empty-key-exists-effect-restricted",
        {"operator": "Exists", "effect": "NoExecute"},
        {"key": "k", "value": "v", "effect": "NoSchedule"},
        False,
    ),
    (
        "empty-effect-matches-all-effects",
        {"key": "k", "operator": "Exists"},
        {"key": "k", "effect": "NoExecute"},
        True,
    ),
    (
        "effect-differs",
        {"key": "k", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "k", "effect": "NoExecute"},
        False,
    ),
    (
        "prefer-toleration-does-not-cover-noschedule",
        {"key": "k", "operator": "Exists", "effect": "PreferNoSchedule"},
        {"key": "k", "effect": "NoSchedule"},
        False,
    ),
    # an empty key with Equal (rejected by API validation) matches any key with the same value,
    # exactly as ToleratesTaint does
    (
        "empty-key-equal-matches-value",
        {"operator": "Equal", "value": "v"},
        {"key": "any", "value": "v", "effect": "NoSchedule"},
        True,
    ),
    (
        "empty-key-equal-value-differs",
        {"operator": "Equal", "value": "x"},
        {"key": "any", "value": "v", "effect": "NoSchedule"},
        False,
    ),
    (
        "key-is-case-sensitive",
        {"key": "K", "operator": "Exists"},
        {"key": "k", "effect": "NoSchedule"},
        False,
    ),
    ("unknown-operator", {"key": "k", "operator": "exists"}, {"key": "k", "effect": "NoSchedule"}, False),
    (
        "gt-operator-not-supported",
        {"key": "k", "operator": "Gt", "value": "1"},
        {"key": "k", "value": "5", "effect": "NoSchedule"},
        False,
    ),
    (
        "null-fields",
        {"key": "k", "operator": "Equal", "value": None, "effect": None},
        {"key": "k", "effect": "NoSchedule"},
        True,
    ),
    ("toleration-not-an-object", "k", {"key": "k", "effect": "NoSchedule"}, False),  # type: ignore[list-item]
]


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [c[1:] for c in TOLERATION_CASES],
    ids=[c[0] for c in TOLERATION_CASES],
)
def test_tolerates(toleration: dict[str, Any], taint: dict[str, Any], expected: bool) -> None:
    assert tolerates(toleration, taint) is expected


UNTOLERATED_CASES: list[tuple[str, list[Any], list[Any] | None, str | None]] = [
    # id, node taints, pod tolerations, key of the first untolerated taint
    ("no-taints", [], None, None),
    ("noschedule-untolerated", [GPU_TAINT], None, "nvidia.com/gpu"),
    ("noexecute-untolerated", [{"key": "a", "effect": "NoExecute"}], [], "a"),
    ("prefer-noschedule-ignored", [{"key": "a", "effect": "PreferNoSchedule"}], None, None),
    ("unknown-effect-ignored", [{"key": "a", "effect": "Sometimes"}], None, None),
    ("tolerated", [GPU_TAINT], [{"key": "nvidia.com/gpu", "operator": "Exists"}], None),
    (
        "first-of-several",
        [GPU_TAINT, {"key": "b", "effect": "NoExecute"}],
        [{"key": "nvidia.com/gpu", "operator": "Exists"}],
        "b",
    ),
    (
        "each-taint-needs-a-toleration",
        [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"}],
        [{"key": "a", "operator": "Exists"}],
        "b",
    ),
    ("wildcard", [GPU_TAINT, {"key": "b", "effect": "NoExecute"}], [{"operator": "Exists"}], None),
    ("not-a-list", "junk", None, None),  # type: ignore[list-item]
]


@pytest.mark.parametrize(
    ("taints", "tolerations", "key"),
    [c[1:] for c in UNTOLERATED_CASES],
    ids=[c[0] for c in UNTOLERATED_CASES],
)
def test_untolerated_taint(taints: list[Any], tolerations: list[Any] | None, key: str | None) -> None:
    taint = untolerated_taint(taints, tolerations)
    assert (taint["key"] if taint else None) == key


def test_taint_text() -> None:
    assert taint_text(GPU_TAINT) == "nvidia.com/gpu=present:NoSchedule"
    assert taint_text({"key": "dedicated", "effect": "NoExecute"}) == "dedicated:NoExecute"


# --- label requirements (matchExpressions) ---------------------------------------------------------

LABELS = {
    "zone": "a",
    "gpu-count": "8",
    "neg": "-3",
    "spaced": " 8",
    "big": "99999999999999999999",
    "empty": "",
}

REQUIREMENT_CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("in-match", {"key": "zone", "operator": "In", "values": ["a", "b"]}, True),
    ("in-no-match", {"key": "zone", "operator": "In", "values": ["b"]}, False),
    ("in-missing-label", {"key": "rack", "operator": "In", "values": ["a"]}, False),
    ("in-empty-label-value", {"key": "empty", "operator": "In", "values": [""]}, True),
    ("notin-match", {"key": "zone", "operator": "NotIn", "values": ["b"]}, True),
    ("notin-no-match", {"key": "zone", "operator": "NotIn", "values": ["a"]}, False),
    ("notin-missing-label-matches", {"key": "rack", "operator": "NotIn", "values": ["a"]}, True),
    ("exists", {"key": "zone", "operator": "Exists"}, True),
    ("exists-empty-value", {"key": "empty", "operator": "Exists"}, True),
    ("exists-missing", {"key": "rack", "operator": "Exists"}, False),
    ("doesnotexist", {"key": "rack", "operator": "DoesNotExist"}, True),
    ("doesnotexist-present", {"key": "zone", "operator": "DoesNotExist"}, False),
    ("gt-true", {"key": "gpu-count", "operator": "Gt", "values": ["7"]}, True),
    ("gt-equal-is-false", {"key": "gpu-count", "operator": "Gt", "values": ["8"]}, False),
    ("lt-true", {"key": "gpu-count", "operator": "Lt", "values": ["9"]}, True),
    ("lt-equal-is-false", {"key": "gpu-count", "operator": "Lt", "values": ["8"]}, False),
    ("gt-numeric-not-lexical", {"key": "gpu-count", "operator": "Gt", "values": ["10"]}, False),
    ("gt-missing-label", {"key": "rack", "operator": "Gt", "values": ["1"]}, False),
    ("gt-non-integer-label", {"key": "zone", "operator": "Gt", "values": ["1"]}, False),
    ("lt-negative-label", {"key": "neg", "operator": "Lt", "values": ["0"]}, True),
    ("gt-label-with-space-is-not-int", {"key": "spaced", "operator": "Gt", "values": ["1"]}, False),
    ("gt-label-beyond-int64", {"key": "big", "operator": "Gt", "values": ["1"]}, False),
]


@pytest.mark.parametrize(
    ("req", "expected"), [c[1:] for c in REQUIREMENT_CASES], ids=[c[0] for c in REQUIREMENT_CASES]
)
def test_label_requirement(req: dict[str, Any], expected: bool) -> None:
    assert label_requirement_error(req) is None
    assert label_requirement_matches(req, LABELS) is expected


INVALID_REQUIREMENTS: list[tuple[str, Any]] = [
    ("unknown-operator", {"key": "zone", "operator": "Equals", "values": ["a"]}),
    ("lowercase-operator", {"key": "zone", "operator": "in", "values": ["a"]}),
    ("in-without-values", {"key": "zone", "operator": "In", "values": []}),
    ("notin-without-values", {"key": "zone", "operator": "NotIn"}),
    ("exists-with-values", {"key": "zone", "operator": "Exists", "values": ["a"]}),
    ("doesnotexist-with-values", {"key": "zone", "operator": "DoesNotExist", "values": ["a"]}),
    ("gt-two-values", {"key": "n", "operator": "Gt", "values": ["1", "2"]}),
    ("gt-no-value", {"key": "n", "operator": "Gt"}),
    ("gt-not-integer", {"key": "n", "operator": "Gt", "values": ["1.5"]}),
    ("gt-underscore", {"key": "n", "operator": "Gt", "values": ["1_0"]}),
    # a valid int64 but not a valid label value: labels.NewRequirement rejects it
    ("lt-negative-value", {"key": "n", "operator": "Lt", "values": ["-1"]}),
    ("bad-key", {"key": "a b", "operator": "Exists"}),
    ("empty-key", {"key": "", "operator": "Exists"}),
    ("key-two-slashes", {"key": "a/b/c", "operator": "Exists"}),
    ("key-uppercase-prefix", {"key": "Example.com/x", "operator": "Exists"}),
    ("value-too-long", {"key": "zone", "operator": "In", "values": ["a" * 64]}),
    ("value-bad-char", {"key": "zone", "operator": "In", "values": ["a b"]}),
    ("not-an-object", "zone"),
]


@pytest.mark.parametrize(
    "req", [c[1] for c in INVALID_REQUIREMENTS], ids=[c[0] for c in INVALID_REQUIREMENTS]
)
def test_invalid_label_requirement(req: Any) -> None:
    assert label_requirement_error(req) is not None


def test_valid_keys() -> None:
    for key in ("zone", "topology.kubernetes.io/zone", "a-b_c.d", "x" * 63, "example.com/" + "y" * 63):
        assert label_requirement_error({"key": key, "operator": "Exists"}) is None, key
    assert label_requirement_error({"key": "x" * 64, "operator": "Exists"}) is not None


# --- node selector terms, required node affinity ---------------------------------------------------


def node(
    name: str = "n1",
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    unschedulable: bool = False,
    ready: bool = True,
    **alloc: str,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    allocatable = {"cpu": "96", "memory": "1024Gi", "pods": "110", "nvidia.com/gpu": "8"}
    allocatable.update({k.replace("_", "/"): v for k, v in alloc.items()})
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": spec,
        "status": {
            "allocatable": allocatable,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


N = node("gpu-1", {"zone": "a", "pool": "gpu", "gpus": "8"})


def expr(key: str, op: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": op}
    if values:
        out["values"] = list(values)
    return out


TERM_CASES: list[tuple[str, Any, bool]] = [
    (
        "expressions-anded-all-true",
        {"matchExpressions": [expr("zone", "In", "a"), expr("pool", "Exists")]},
        True,
    ),
    (
        "expressions-anded-one-false",
        {"matchExpressions": [expr("zone", "In", "a"), expr("pool", "In", "cpu")]},
        False,
    ),
    ("empty-term", {}, False),
    ("empty-lists", {"matchExpressions": [], "matchFields": []}, False),
    ("fields-name-in", {"matchFields": [expr("metadata.name", "In", "gpu-1")]}, True),
    ("fields-name-in-other", {"matchFields": [expr("metadata.name", "In", "gpu-2")]}, False),
    ("fields-name-notin", {"matchFields": [expr("metadata.name", "NotIn", "gpu-2")]}, True),
    ("fields-name-notin-self", {"matchFields": [expr("metadata.name", "NotIn", "gpu-1")]}, False),
    ("fields-two-values-invalid", {"matchFields": [expr("metadata.name", "In", "gpu-1", "gpu-2")]}, False),
    ("fields-exists-invalid", {"matchFields": [expr("metadata.name", "Exists")]}, False),
    (
        "fields-and-labels-anded",
        {
            "matchExpressions": [expr("zone", "In", "b")],
            "matchFields": [expr("metadata.name", "In", "gpu-1")],
        },
        False,
    ),
    (
        "fields-and-labels-both-true",
        {
            "matchExpressions": [expr("gpus", "Gt", "4")],
            "matchFields": [expr("metadata.name", "In", "gpu-1")],
        },
        True,
    ),
    (
        "invalid-expression-fails-term",
        {"matchExpressions": [expr("zone", "In", "a"), expr("pool", "Bogus")]},
        False,
    ),
    ("not-an-object", ["zone"], False),
]


@pytest.mark.parametrize(("term", "expected"), [c[1:] for c in TERM_CASES], ids=[c[0] for c in TERM_CASES])
def test_node_selector_term(term: Any, expected: bool) -> None:
    assert node_selector_term_matches(term, N) is expected


SELECTOR_CASES: list[tuple[str, Any, bool]] = [
    (
        "terms-ored-second-matches",
        {
            "nodeSelectorTerms": [
                {"matchExpressions": [expr("zone", "In", "b")]},
                {"matchExpressions": [expr("zone", "In", "a")]},
            ]
        },
        True,
    ),
    (
        "terms-ored-none-matches",
        {
            "nodeSelectorTerms": [
                {"matchExpressions": [expr("zone", "In", "b")]},
                {"matchExpressions": [expr("pool", "DoesNotExist")]},
            ]
        },
        False,
    ),
    (
        "invalid-term-skipped-other-matches",
        {
            "nodeSelectorTerms": [
                {"matchExpressions": [expr("zone", "Bad")]},
                {"matchExpressions": [expr("zone", "In", "a")]},
            ]
        },
        True,
    ),
    (
        "empty-term-skipped",
        {"nodeSelectorTerms": [{}, {"matchExpressions": [expr("pool", "In", "gpu")]}]},
        True,
    ),
    ("only-empty-term", {"nodeSelectorTerms": [{}]}, False),
    ("no-terms", {"nodeSelectorTerms": []}, False),
    ("missing-terms", {}, False),
]


@pytest.mark.parametrize(
    ("selector", "expected"), [c[1:] for c in SELECTOR_CASES], ids=[c[0] for c in SELECTOR_CASES]
)
def test_node_selector(selector: Any, expected: bool) -> None:
    assert node_selector_matches(selector, N) is expected


def test_required_node_affinity() -> None:
    required = {"nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "b")]}]}
    assert required_node_affinity_matches(None, N)
    assert required_node_affinity_matches({}, N)
    assert required_node_affinity_matches({"podAffinity": {"x": 1}}, N)
    assert required_node_affinity_matches({"nodeAffinity": {}}, N)
    # preferred terms never exclude a node
    preferred = [{"weight": 1, "preference": {"matchExpressions": [expr("zone", "In", "b")]}}]
    assert required_node_affinity_matches(
        {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}}, N
    )
    assert not required_node_affinity_matches(
        {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}}, N
    )


# --- node_exclusion: the filters in the scheduler's order -------------------------------------------

TOL_GPU = ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},)
TOL_CORDON = ({"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},)
AFF_ZONE_B = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [expr("zone", "In", "b")]}]
        }
    }
}

EXCLUSION_CASES: list[tuple[str, dict[str, Any], PodShape, str | None]] = [
    ("plain", N, PodShape({}), None),
    ("cordoned", node(unschedulable=True), PodShape({}), "cordoned"),
    ("cordoned-tolerated", node(unschedulable=True), PodShape({}, tolerations=TOL_CORDON), None),
    (
        "cordoned-wildcard-toleration",
        node(unschedulable=True),
        PodShape({}, tolerations=({"operator": "Exists"},)),
        None,
    ),
    ("cordon-before-taint", node(unschedulable=True, taints=[GPU_TAINT]), PodShape({}), "cordoned"),
    ("taint", node(taints=[GPU_TAINT]), PodShape({}), "taint nvidia.com/gpu=present:NoSchedule"),
    ("taint-tolerated", node(taints=[GPU_TAINT]), PodShape({}, tolerations=TOL_GPU), None),
    ("prefer-no-schedule", node(taints=[{"key": "x", "effect": "PreferNoSchedule"}]), PodShape({}), None),
    (
        "taint-before-selector",
        node(taints=[GPU_TAINT]),
        PodShape({}, node_selector={"pool": "gpu"}),
        "taint nvidia.com/gpu=present:NoSchedule",
    ),
    ("selector-match", N, PodShape({}, node_selector={"pool": "gpu", "zone": "a"}), None),
    ("selector-value-differs", N, PodShape({}, node_selector={"pool": "cpu"}), "nodeSelector"),
    ("selector-label-missing", N, PodShape({}, node_selector={"rack": "1"}), "nodeSelector"),
    (
        "selector-before-affinity",
        N,
        PodShape({}, node_selector={"rack": "1"}, affinity=AFF_ZONE_B),
        "nodeSelector",
    ),
    ("affinity", N, PodShape({}, affinity=AFF_ZONE_B), "node affinity"),
    (
        "selector-and-affinity-both-required",
        N,
        PodShape({}, node_selector={"pool": "gpu"}, affinity=AFF_ZONE_B),
        "node affinity",
    ),
]


@pytest.mark.parametrize(
    ("n", "pod", "expected"), [c[1:] for c in EXCLUSION_CASES], ids=[c[0] for c in EXCLUSION_CASES]
)
def test_node_exclusion(n: dict[str, Any], pod: PodShape, expected: str | None) -> None:
    assert node_exclusion(pod, n) == expected


# --- capacity and placement -------------------------------------------------------------------------


def running(node_name: str, gpus: int = 0, cpu: str = "1", phase: str = "Running") -> dict[str, Any]:
    res: dict[str, Any] = {"requests": {"cpu": cpu}}
    if gpus:
        res["limits"] = {"nvidia.com/gpu": str(gpus)}
    return {
        "spec": {"nodeName": node_name, "containers": [{"name": "c", "resources": res}]},
        "status": {"phase": phase},
    }


def gpu_pod(gpus: int = 4, **kw: Any) -> PodShape:
    return PodShape({"cpu": 4000, "memory": 16 * 2**30, "pods": 1, "nvidia.com/gpu": gpus}, owner="w", **kw)


def test_capacity_subtracts_non_terminated_pods_and_counts_pods() -> None:
    caps = cluster_capacity(
        [node("b", pods="3"), node("a", ready=False)],
        [
            running("b", gpus=2),
            running("b", phase="Pending"),
            running("b", gpus=8, phase="Succeeded"),
            running("elsewhere", gpus=8),
        ],
    )
    assert [c.name for c in caps] == ["a", "b"]
    assert caps[0].excluded == "not Ready"
    assert caps[1].free["nvidia.com/gpu"] == 6 and caps[1].free["pods"] == 1 and caps[1].free["cpu"] == 94000


def test_pod_count_is_a_capacity() -> None:
    caps = cluster_capacity([node("a", pods="2")], [running("a")])
    fit = place(caps, [PodShape({"pods": 1}, owner="w")] * 2, "g")
    assert fit.placed == 1 and fit.unplaced[0].reasons == {"insufficient pods": 1}


def test_extended_resource_missing_from_node_is_zero() -> None:
    caps = cluster_capacity([node("a")], [])
    fit = place(caps, [PodShape({"amd.com/gpu": 1}, owner="w")], "g")
    assert (
        not fit.fits
        and fit.reason() == "0 of 1 pods placed; 1 of w: 1 node excluded by insufficient amd.com/gpu"
    )


def test_reasons_counted_per_node() -> None:
    nodes = [
        node("t1", {"pool": "gpu"}, taints=[GPU_TAINT]),
        node("t2", {"pool": "gpu"}, taints=[GPU_TAINT]),
        node("t3", {"pool": "gpu"}, taints=[GPU_TAINT]),
        node("u1", {"pool": "cpu"}),
        node("x1", {"pool": "gpu"}, nvidia_com_gpu="4"),
        node("x2", {"pool": "gpu"}, nvidia_com_gpu="4"),
    ]
    caps = cluster_capacity(nodes, [])
    pods = [gpu_pod(8, node_selector={"pool": "gpu"})] * 2 + [gpu_pod(4, node_selector={"pool": "gpu"})] * 2
    fit = place(caps, pods, "job")
    assert fit.placed == 2 and not fit.fits
    assert fit.unplaced[0].pods == 2
    assert fit.unplaced[0].reasons == {
        "taint nvidia.com/gpu=present:NoSchedule": 3,
        "insufficient nvidia.com/gpu": 2,
        "nodeSelector": 1,
    }
    assert fit.reason() == (
        "2 of 4 pods placed; 2 of w: 3 nodes excluded by taint nvidia.com/gpu=present:NoSchedule, "
        "2 by insufficient nvidia.com/gpu, 1 by nodeSelector"
    )
    tolerant = [gpu_pod(8, node_selector={"pool": "gpu"}, tolerations=TOL_GPU)] * 2
    again = place(cluster_capacity(nodes, []), [*tolerant, *pods[2:]], "job")
    assert again.fits and again.reason() == "" and "unplaced" not in again.to_dict()


def test_no_nodes() -> None:
    fit = place([], [gpu_pod()], "g")
    assert fit.reason() == "0 of 1 pods placed; 1 of w: no nodes"


def test_first_fit_decreasing_accepts_plain_vectors() -> None:
    caps = [NodeCapacity("a", {"cpu": 4000, "pods": 10}), NodeCapacity("b", {"cpu": 2000, "pods": 10})]
    assert first_fit_decreasing(caps, [{"cpu": 1000, "pods": 1}, {"cpu": 3000, "pods": 1}]) == 2
    assert caps[0].free["cpu"] == 0 and caps[1].free["cpu"] == 2000


def test_check_fit_uses_manifest_constraints() -> None:
    tol = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]

    def rj(name: str, replicas: int, **spec: Any) -> dict[str, Any]:
        res = {"requests": {"cpu": "4", "memory": "16Gi"}, "limits": {"nvidia.com/gpu": 8}}
        pod = {"containers": [{"name": "c", "resources": res}], **spec}
        return {
            "name": name,
            "replicas": replicas,
            "template": {"spec": {"parallelism": 1, "template": {"spec": pod}}},
        }

    obj: dict[str, Any] = {
        "metadata": {"name": "js", "namespace": "ml", "uid": "u"},
        "spec": {"replicatedJobs": [rj("workers", 2, nodeSelector={"pool": "gpu"}, tolerations=tol)]},
    }
    d = jobset_definition()
    needs = placement_needs(d, obj)
    nodes = [
        node("g1", {"pool": "gpu"}, taints=[GPU_TAINT]),
        node("g2", {"pool": "gpu"}, taints=[GPU_TAINT]),
        node("c1", {"pool": "cpu"}),
    ]
    out = check_fit(d, needs, nodes, [])
    assert out["fits"] is True and out["nodes"] == 3
    obj["spec"]["replicatedJobs"] = [rj("workers", 2, nodeSelector={"pool": "gpu"})]
    out = check_fit(d, placement_needs(d, obj), nodes, [])
    assert out["fits"] is False
    (gang,) = out["gangs"]
    assert gang["placed"] == 0 and gang["unplaced"][0]["owner"] == "replicatedjob/workers"
    assert gang["unplaced"][0]["reasons"] == {"taint nvidia.com/gpu=present:NoSchedule": 2, "nodeSelector": 1}
