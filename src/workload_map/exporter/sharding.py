"""Horizontal sharding of the exporter, the way kube-state-metrics shards (``--shard N
--total-shards M``): an object belongs to shard ``jump(fnv64a(uid), M)``, the 64-bit FNV-1a hash
of its UID put into one of M buckets by the jump consistent hash (Lamping and Veach, 2014), so
growing from M to M+1 shards moves only about 1/(M+1) of the workloads.

Here a top-level workload is hashed by its own UID and its pods follow it: a shard renders the
workloads it owns with all their pods, and keeps full objects only for those (identity stubs for
the rest, which the owner walk still needs).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Shard", "fnv1a_64", "jump_hash"]

_FNV64_OFFSET = 0xCBF29CE484222325
_FNV64_PRIME = 0x100000001B3
_MASK64 = 0xFFFFFFFFFFFFFFFF
_JUMP_MULTIPLIER = 2862933555777941757


def fnv1a_64(data: bytes) -> int:
    h = _FNV64_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV64_PRIME) & _MASK64
    return h


def jump_hash(key: int, buckets: int) -> int:
    """The bucket in ``range(buckets)`` of the 64-bit ``key`` (jump consistent hash)."""
    if buckets < 1:
        raise ValueError("buckets must be at least 1")
    b, j = -1, 0
    while j < buckets:  # bounded: j grows geometrically, about ln(buckets) rounds
        b = j
        key = (key * _JUMP_MULTIPLIER + 1) & _MASK64
        j = int((b + 1) * ((1 << 31) / ((key >> 33) + 1)))
    return b


@dataclass(frozen=True)
class Shard:
    """This exporter's shard ``index`` of ``total``."""

    index: int = 0
    total: int = 1

    def __post_init__(self) -> None:
        if self.total < 1:
            raise ValueError(f"--total-shards must be at least 1, got {self.total}")
        if not 0 <= self.index < self.total:
            raise ValueError(f"--shard must be in 0..{self.total - 1}, got {self.index}")

    @property
    def sharded(self) -> bool:
        return self.total > 1

    def owns(self, uid: str) -> bool:
        """Whether the object with this UID belongs here (every object, unsharded)."""
        if self.total == 1:
            return True
        return jump_hash(fnv1a_64(uid.encode()), self.total) == self.index
