"""What one scrape serves: the workload series within the series ceiling, compressed once per
change generation.

The workload families are most of the exposition (about 7 KB per 10-pod workload) and change only
when a worker stores new lines, which bumps the exporter's generation. So per generation:

- :func:`admit` picks the workloads within ``--max-series`` (whole workloads, in order of
  namespace, kind and name, so every replica and every restart drops the same ones; one huge
  workload is left out without costing the ones after it);
- :class:`WorkloadBody` holds their lines family by family (references to the workers' bytes, no
  copy) and, on the first scrape that asks for gzip, the raw deflate stream of them, ended by a
  sync flush so that the exporter's own small families (computed on every scrape) follow as a
  second stream. :func:`gzip_body` frames the two as one gzip member: the CRC-32 runs over the
  cached part once and continues over the tail.

:func:`accepts_gzip` reads ``Accept-Encoding`` as RFC 9110 12.5.3 says (q-values, ``*``,
``gzip;q=0`` refused).
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from workload_map.exporter.exposition import Family

__all__ = ["Admitted", "WorkloadBody", "accepts_gzip", "admit", "gzip_body"]

K = TypeVar("K")

#: zlib level of the cached body: level 1 is ~3x faster than 6 for a ~20% larger body.
GZIP_LEVEL = 1
#: Bytes handed to the compressor per call (parts are joined up to this size first).
COMPRESS_BATCH = 1 << 20
#: gzip member header: magic, deflate, no flags, no mtime, no extra flags, OS unknown.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"


def accepts_gzip(header: str | None) -> bool:
    """Whether an ``Accept-Encoding`` value accepts gzip: ``gzip`` (or ``x-gzip``) listed with a
    q-value above 0, or ``*`` above 0 without gzip listed. Malformed q-values count as 0."""
    if not header:
        return False
    explicit: float | None = None
    wildcard: float | None = None
    for item in header.split(",")[:64]:  # bounded: a hostile header cannot make this loop long
        coding, _, params = item.partition(";")
        name = coding.strip().lower()
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
                if not 0.0 <= q <= 1.0:
                    q = 0.0
        if name in ("gzip", "x-gzip"):
            explicit = q if explicit is None else max(explicit, q)
        elif name == "*":
            wildcard = q
    if explicit is not None:
        return explicit > 0
    return wildcard is not None and wildcard > 0


@dataclass(frozen=True)
class Admitted(Generic[K]):
    """The workloads one generation exports, and what the ceiling left out."""

    keys: list[K]
    series: int
    dropped_series: int
    dropped_workloads: int


def admit(series_by_key: Mapping[K, int], limit: int, sort_key: Callable[[K], Any]) -> Admitted[K]:
    """The workloads whose series fit in ``limit`` (0: no ceiling). Under the ceiling every
    workload is admitted in ``series_by_key``'s order; over it they are taken in ``sort_key``
    order, and a workload that does not fit is left out while the next ones are still tried."""
    total = sum(series_by_key.values())
    if limit <= 0 or total <= limit:
        return Admitted(list(series_by_key), total, 0, 0)
    keys: list[K] = []
    used = dropped_series = dropped_workloads = 0
    for key in sorted(series_by_key, key=sort_key):
        n = series_by_key[key]
        if used + n <= limit:
            keys.append(key)
            used += n
        else:
            dropped_series += n
            dropped_workloads += 1
    return Admitted(keys, used, dropped_series, dropped_workloads)


@dataclass
class WorkloadBody:
    """One generation's workload families: ``parts`` (headers and lines, in output order) and,
    built once on demand, their raw deflate stream ended by a sync flush."""

    generation: int
    parts: list[bytes]
    series: int = 0
    dropped_series: int = 0
    dropped_workloads: int = 0
    _deflated: tuple[bytes, int, int] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def build(
        cls,
        generation: int,
        families: Sequence[Family],
        lines: Sequence[Mapping[str, bytes]],
        admitted: Admitted[K],
    ) -> WorkloadBody:
        """``lines``: family name -> sample lines, per admitted workload (in output order)."""
        parts: list[bytes] = []
        for fam in families:
            parts.append(fam.header)
            name = fam.name
            for by_family in lines:
                chunk = by_family.get(name)
                if chunk:
                    parts.append(chunk)
        return cls(generation, parts, admitted.series, admitted.dropped_series, admitted.dropped_workloads)

    @property
    def size(self) -> int:
        return sum(len(p) for p in self.parts)

    def deflated(self) -> tuple[bytes, int, int]:
        """``(raw deflate stream ending in a sync flush, CRC-32, length)`` of :attr:`parts`,
        computed by the first caller; concurrent scrapes wait for it instead of repeating it."""
        with self._lock:
            if self._deflated is None:
                packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
                out: list[bytes] = []
                crc = length = size = 0
                batch: list[bytes] = []

                def pack() -> None:
                    nonlocal crc, length
                    data = b"".join(batch)
                    crc = zlib.crc32(data, crc)
                    length += len(data)
                    out.append(packer.compress(data))
                    batch.clear()

                for part in self.parts:  # about COMPRESS_BATCH bytes per call: few calls, small copies
                    batch.append(part)
                    size += len(part)
                    if size >= COMPRESS_BATCH:
                        pack()
                        size = 0
                pack()
                out.append(packer.flush(zlib.Z_SYNC_FLUSH))
                self._deflated = (b"".join(out), crc, length)
            return self._deflated


def gzip_body(body: WorkloadBody, tail: bytes) -> list[bytes]:
    """One gzip member holding ``body``'s parts then ``tail``: the cached deflate stream, ``tail``
    as a second stream that ends the data, and the trailer (CRC-32 and length of both)."""
    stream, crc, length = body.deflated()
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    last = packer.compress(tail) + packer.flush(zlib.Z_FINISH)
    trailer = struct.pack("<II", zlib.crc32(tail, crc) & 0xFFFFFFFF, (length + len(tail)) & 0xFFFFFFFF)
    return [_GZIP_HEADER, stream, last, trailer]
