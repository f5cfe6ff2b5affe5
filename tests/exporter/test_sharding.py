"""Sharding (exporter/sharding.py) and what the informers keep (exporter/trim.py)."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from workload_map.exporter.sharding import Shard, fnv1a_64, jump_hash
from workload_map.exporter.trim import LAST_APPLIED, STUB_KEY, stub, trim_owner, trim_pod, trim_workload


def test_fnv1a_64_reference_values() -> None:
    # The published FNV-1a 64-bit test vectors (Fowler/Noll/Vo): "", "a", "foobar".
    assert fnv1a_64(b"") == 0xCBF29CE484222325
    assert fnv1a_64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a_64(b"foobar") == 0x85944171F73967E8


def test_jump_hash_is_consistent_and_even() -> None:
    keys = [fnv1a_64(str(uuid.uuid5(uuid.NAMESPACE_DNS, str(i))).encode()) for i in range(20000)]
    for n in (1, 2, 3, 5, 8):
        buckets = Counter(jump_hash(k, n) for k in keys)
        assert set(buckets) == set(range(n))
        assert max(buckets.values()) - min(buckets.values()) < 0.1 * len(keys) / n  # within 10%
        moved = [(jump_hash(k, n), jump_hash(k, n + 1)) for k in keys]
        changed = [(a, b) for a, b in moved if a != b]
        assert all(b == n for _, b in changed)  # keys only move to the new bucket
        assert abs(len(changed) - len(keys) / (n + 1)) < 0.1 * len(keys) / (n + 1)


def test_shard_owns_exactly_one() -> None:
    uids = [str(uuid.uuid4()) for _ in range(500)]
    shards = [Shard(i, 3) for i in range(3)]
    for uid in uids:
        assert sum(s.owns(uid) for s in shards) == 1
    assert all(Shard().owns(u) for u in uids)


@pytest.mark.parametrize(
    ("index", "total", "message"),
    [
        (0, 0, "--total-shards must be at least 1"),
        (2, 2, "--shard must be in 0..1, got 2"),
        (-1, 2, "--shard must be in 0..1, got -1"),
    ],
)
def test_shard_bounds(index: int, total: int, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        Shard(index, total)


def _pod() -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "namespace": "ns",
            "uid": "u",
            "labels": {"a": "b"},
            "annotations": {LAST_APPLIED: "{...}", "keep": "me"},
            "managedFields": [{"manager": "kubectl"}],
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "j1", "controller": True}
            ],
        },
        "spec": {
            "nodeName": "n1",
            "containers": [
                {
                    "name": "c",
                    "image": "i",
                    "env": [{"name": "X", "value": "1" * 1000}],
                    "resources": {"limits": {"nvidia.com/gpu": "1"}},
                }
            ],
            "initContainers": [
                {"name": "init", "restartPolicy": "Always", "resources": {}, "command": ["x"]}
            ],
            "volumes": [{"name": "v", "emptyDir": {}}],
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "podIP": "10.0.0.1",
        },
    }


def test_trim_pod_keeps_what_the_exporter_reads() -> None:
    pod = trim_pod(_pod())
    assert pod["metadata"]["annotations"] == {"keep": "me"} and "managedFields" not in pod["metadata"]
    assert pod["metadata"]["ownerReferences"][0]["uid"] == "j1" and pod["metadata"]["labels"] == {"a": "b"}
    assert pod["spec"] == {
        "nodeName": "n1",
        "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
        "initContainers": [{"name": "init", "resources": {}, "restartPolicy": "Always"}],
    }
    assert pod["status"] == {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}


def test_trim_owner_and_workload() -> None:
    owner = trim_owner(_pod())
    assert set(owner) == {"apiVersion", "kind", "metadata"}
    assert set(owner["metadata"]) == {"name", "namespace", "uid", "labels", "ownerReferences"}
    workload = trim_workload(_pod())
    assert workload["spec"]["volumes"] and LAST_APPLIED not in workload["metadata"]["annotations"]
    marked = stub(_pod())
    assert marked[STUB_KEY] is True and "spec" not in marked


def test_equal_parts_of_pods_are_kept_once() -> None:
    """Pods of one template share their containers, labels, annotations and owner references;
    what differs (name, node, status) stays their own, and different values are not merged."""
    a, b = trim_pod(_pod()), trim_pod(_pod())
    assert a == b and a is not b
    assert a["spec"]["containers"] is b["spec"]["containers"]
    for key in ("labels", "annotations", "ownerReferences"):
        assert a["metadata"][key] is b["metadata"][key]
    assert a["metadata"] is not b["metadata"] and a["status"] is not b["status"]
    other = _pod()
    other["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "2"}}
    c = trim_pod(other)
    assert c["spec"]["containers"] is not a["spec"]["containers"]
    assert c["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "2"}}
    assert a["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "1"}}


def test_sharing_is_bounded() -> None:
    from workload_map.exporter import trim

    for i in range(trim.SHARED_MAX + 10):
        trim.shared({"app": f"v{i}"})
    assert len(trim._SHARED) <= trim.SHARED_MAX
    long = {"x": "y" * (trim.SHARED_KEY_MAX + 1)}
    assert trim.shared(dict(long)) is not trim.shared(dict(long))  # too long to remember
