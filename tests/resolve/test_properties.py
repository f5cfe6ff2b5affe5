"""Property tests: whatever the object, resolve raises nothing but WorkloadMapError subclasses."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.resolve.defs import (
    DYNAMO_KARTA,
    JOBSET_KARTA,
    KSERVE_KARTA,
    LWS_KARTA,
    PYTORCH_KARTA,
    RAYCLUSTER_KARTA,
    dynamo,
    isvc,
    jobset,
    karta,
    lws,
    pytorchjob,
    raycluster,
)
from workload_map import compile_definition, resolve
from workload_map.errors import WorkloadMapError
from workload_map.resolve import Workload

CASES = [
    (
        compile_definition(karta(JOBSET_KARTA)),
        jobset({"replicatedJobsStatus": [{"name": "leader", "active": 1}]}),
    ),
    (compile_definition(karta(PYTORCH_KARTA)), pytorchjob([{"type": "Running", "status": "True"}])),
    (compile_definition(karta(RAYCLUSTER_KARTA)), raycluster()),
    (compile_definition(karta(LWS_KARTA)), lws()),
    (compile_definition(karta(DYNAMO_KARTA)), dynamo()),
    (compile_definition(karta(KSERVE_KARTA)), isvc()),
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.sampled_from(["1", "2Gi", "100m", "1e3", "", "leader", "True", "False", "nvidia.com/gpu"])
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "spec",
                    "status",
                    "name",
                    "replicas",
                    "template",
                    "containers",
                    "resources",
                    "requests",
                    "limits",
                    "conditions",
                    "type",
                    "cpu",
                    "x",
                ]
            )
            | st.text(max_size=5),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


def check(definition: Any, obj: Any) -> None:
    try:
        w = resolve(definition, obj)
    except WorkloadMapError:
        return
    assert isinstance(w, Workload)
    w.to_dict()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), obj=st.dictionaries(st.text(max_size=6), json_values, max_size=5))
def test_arbitrary_objects(case: tuple[Any, Any], obj: dict[str, Any]) -> None:
    check(case[0], obj)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), obj=json_values)
def test_arbitrary_json_values(case: tuple[Any, Any], obj: Any) -> None:
    check(case[0], obj)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(_paths(v, (*prefix, i)))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> tuple[Any, Any]:
    definition, base = draw(st.sampled_from(CASES))
    obj = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(obj) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        if draw(st.booleans()):
            del parent[path[-1]]  # drop a key / an element
        else:
            parent[path[-1]] = draw(json_values)  # replace a subtree
    return definition, obj


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=mutated())
def test_truncated_realistic_objects(case: tuple[Any, Any]) -> None:
    check(*case)
