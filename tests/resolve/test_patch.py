"""RFC 6902 / RFC 7386 patches: minimal diffs, escaping, and patch(old) == new on random pairs."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workload_map.errors import WorkloadMapError
from workload_map.resolve.patch import (
    PatchError,
    apply_json_patch,
    apply_merge_patch,
    json_equal,
    json_patch,
    merge_patch,
    parse_pointer,
    pointer,
)

# Keys deliberately include the characters JSON pointers must escape.
_keys = st.sampled_from(["a", "b", "c", "x/y", "m~n", "~1", "", "0", "-", "labels", "a/b~c"])
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.text(max_size=3),
)
json_values = st.recursive(
    _scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(_keys, children, max_size=4),
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(json_values, json_values)
def test_json_patch_takes_old_to_new(old: Any, new: Any) -> None:
    before = copy.deepcopy(old)
    ops = json_patch(old, new)
    assert json_equal(apply_json_patch(old, ops), new)
    assert json_equal(old, before)  # input untouched


@settings(max_examples=400, deadline=None)
@given(json_values, json_values)
def test_merge_patch_takes_old_to_new_or_says_it_cannot(old: Any, new: Any) -> None:
    before = copy.deepcopy(old)
    try:
        patch = merge_patch(old, new)
    except PatchError:
        return
    assert json_equal(apply_merge_patch(old, patch), new)
    assert json_equal(old, before)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_identical_documents_give_empty_patches(doc: Any) -> None:
    assert json_patch(doc, copy.deepcopy(doc)) == []


_ops = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
        "path": st.sampled_from(["", "/a", "/0", "/a/b", "/-", "/x~1y", "bad", "/~2"]),
        "from": st.sampled_from(["/a", "/0", "", "/b"]),
        "value": json_values,
    }
)


@settings(max_examples=200, deadline=None)
@given(json_values, st.lists(_ops, max_size=3))
def test_applying_arbitrary_patches_only_raises_patch_error(doc: Any, ops: list[dict[str, Any]]) -> None:
    try:
        apply_json_patch(doc, ops)
    except WorkloadMapError as exc:
        assert isinstance(exc, PatchError)


def test_minimal_ops_at_deepest_node() -> None:
    old = {"spec": {"template": {"spec": {"schedulerName": "default", "containers": [{"name": "a"}]}}}}
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["schedulerName"] = "kai-scheduler"
    new["spec"]["template"]["metadata"] = {"labels": {"q": "1"}}
    assert json_patch(old, new) == [
        {"op": "replace", "path": "/spec/template/spec/schedulerName", "value": "kai-scheduler"},
        {"op": "add", "path": "/spec/template/metadata", "value": {"labels": {"q": "1"}}},
    ]


def test_escaping() -> None:
    old = {"metadata": {"labels": {}}}
    new = {"metadata": {"labels": {"kai.scheduler/queue": "q", "a~b": "c"}}}
    ops = json_patch(old, new)
    assert ops == [
        {"op": "add", "path": "/metadata/labels/kai.scheduler~1queue", "value": "q"},
        {"op": "add", "path": "/metadata/labels/a~0b", "value": "c"},
    ]
    assert apply_json_patch(old, ops) == new
    assert pointer(["a/b", "c~d", 0]) == "/a~1b/c~0d/0"
    assert parse_pointer("/a~1b/c~0d/0") == ["a/b", "c~d", "0"]
    assert parse_pointer("/~01") == ["~1"]


def test_arrays_compared_index_wise_with_tail_ops() -> None:
    assert json_patch([1, 2, 3], [1, 5]) == [
        {"op": "replace", "path": "/1", "value": 5},
        {"op": "remove", "path": "/2"},
    ]
    assert json_patch([1], [1, 2, 3]) == [
        {"op": "add", "path": "/1", "value": 2},
        {"op": "add", "path": "/2", "value": 3},
    ]
    assert json_patch([1, 2, 3, 4], [1]) == [
        {"op": "remove", "path": "/3"},
        {"op": "remove", "path": "/2"},
        {"op": "remove", "path": "/1"},
    ]


def test_booleans_are_not_numbers() -> None:
    assert json_patch({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "value": True}]
    assert json_patch({"a": 0}, {"a": False}) != []


def test_root_replace() -> None:
    assert json_patch({"a": 1}, [1]) == [{"op": "replace", "path": "", "value": [1]}]
    assert apply_json_patch({"a": 1}, [{"op": "replace", "path": "", "value": [1]}]) == [1]


def test_merge_patch_basics() -> None:
    old = {"a": 1, "b": {"c": 2, "d": 3}, "e": [1, 2]}
    new = {"a": 1, "b": {"c": 5}, "e": [1], "f": {"g": 1}}
    patch = merge_patch(old, new)
    assert patch == {"b": {"c": 5, "d": None}, "e": [1], "f": {"g": 1}}
    assert apply_merge_patch(old, patch) == new


def test_merge_patch_cannot_set_null_member() -> None:
    with pytest.raises(PatchError, match="merge patch"):
        merge_patch({"a": 1}, {"a": None})
    # null inside arrays is fine: arrays are replaced whole
    assert merge_patch({"a": [1]}, {"a": [None]}) == {"a": [None]}


def test_rfc6902_operations() -> None:
    doc = {"foo": ["bar", "baz"], "x": {"y": 1}}
    out = apply_json_patch(
        doc,
        [
            {"op": "add", "path": "/foo/1", "value": "qux"},
            {"op": "add", "path": "/foo/-", "value": "end"},
            {"op": "move", "from": "/x/y", "path": "/z"},
            {"op": "copy", "from": "/foo/0", "path": "/w"},
            {"op": "test", "path": "/w", "value": "bar"},
        ],
    )
    assert out == {"foo": ["bar", "qux", "baz", "end"], "x": {}, "z": 1, "w": "bar"}
    assert doc == {"foo": ["bar", "baz"], "x": {"y": 1}}
    with pytest.raises(PatchError, match="test failed"):
        apply_json_patch(doc, [{"op": "test", "path": "/foo/0", "value": "nope"}])
    with pytest.raises(PatchError, match="not found"):
        apply_json_patch(doc, [{"op": "remove", "path": "/missing"}])
    with pytest.raises(PatchError, match="children"):
        apply_json_patch(doc, [{"op": "move", "from": "/x", "path": "/x/y"}])
    with pytest.raises(PatchError, match="array index"):
        apply_json_patch(doc, [{"op": "add", "path": "/foo/01", "value": 1}])
