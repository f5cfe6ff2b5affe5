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
  second stream. :func:`gzip_body` frames the two as one gzip member: the CRC-32 of the cached
  part is combined from its segments' (see :mod:`.crc32`) and continues over the tail.
- The stream is made of segments, each compressed on its own and ended by a sync flush (so they
  concatenate into one valid deflate stream): in each family, the lines of a run of consecutive
  workloads, a run ending after a workload whose key hashes to 0 modulo :data:`SEGMENT_SPREAD`.
  The cuts depend only on the keys, so a workload that changes, arrives or leaves changes only
  its run; :class:`DeflateCache` keeps the other runs' segments from one generation to the next,
  without looking at their lines again. In a cluster whose pods change every second the
  generation changes before every scrape: without the cache each scrape recompressed the whole
  body (~270 ms for the 74 MB of 100,000 pods), and walking every workload's lines of every
  family again took ~60 ms of Python per generation, holding the GIL the server threads need.

:func:`accepts_gzip` reads ``Accept-Encoding`` as RFC 9110 12.5.3 says (q-values, ``*``,
``gzip;q=0`` refused).
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from workload_map.exporter import crc32
from workload_map.exporter.exposition import Family

__all__ = ["Admitted", "DeflateCache", "Segment", "WorkloadBody", "accepts_gzip", "admit", "gzip_body"]

K = TypeVar("K")

#: zlib level of the cached body: level 1 is ~3x faster than 6 for a ~20% larger body.
GZIP_LEVEL = 1
#: Bytes handed to the compressor per call (parts are joined up to this size first), and the most
#: a segment of the cached stream holds.
COMPRESS_BATCH = 1 << 20
#: A segment ends after a workload whose key hashes to 0 modulo this: about this many workloads'
#: lines of one family per segment (~30 KB to ~300 KB at 10 pods per workload; deflate's window is
#: 32 KB, so a larger segment would not compress better).
SEGMENT_SPREAD = 128
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


class Segment:
    """Consecutive chunks of one family compressed as one piece of the stream: a raw deflate
    stream from a fresh compressor, ended by a sync flush (so pieces concatenate into one valid
    stream), with the CRC-32 and :func:`.crc32.shift` of the plain bytes. Packed once, on the
    first stream that needs it (see :meth:`DeflateCache.stream`)."""

    __slots__ = ("chunks", "length", "packed")

    def __init__(self, chunks: tuple[bytes, ...]) -> None:
        self.chunks = chunks
        self.length = sum(map(len, chunks))
        #: ``(deflated, CRC-32, shift)`` once packed
        self.packed: tuple[bytes, int, int] | None = None


@dataclass
class _Run:
    """The segments of a run of consecutive workloads (the last one's key cuts), family by family."""

    #: the workloads' line mappings, kept alive: their ids are the run's key in the cache
    lines: tuple[Mapping[str, bytes], ...]
    by_family: list[list[Segment]]


def _run_segments(families: Sequence[Family], lines: Sequence[Mapping[str, bytes]]) -> list[list[Segment]]:
    """Each family's lines of a run's workloads, as segments of at most about
    :data:`COMPRESS_BATCH` bytes."""
    out: list[list[Segment]] = []
    for fam in families:
        name = fam.name
        segments: list[Segment] = []
        current: list[bytes] = []
        size = 0
        for by_family in lines:
            chunk = by_family.get(name)
            if chunk:
                current.append(chunk)
                size += len(chunk)
                if size >= COMPRESS_BATCH:
                    segments.append(Segment(tuple(current)))
                    current, size = [], 0
        if current:
            segments.append(Segment(tuple(current)))
        out.append(segments)
    return out


class DeflateCache:
    """Segments kept from one generation to the next. The workloads are cut into runs (a run ends
    after a workload whose key hashes to 0 modulo :data:`SEGMENT_SPREAD`); a run whose workloads
    are the same line mappings as before (the workers store a new mapping for what they re-render,
    and never change a stored one) keeps its segments, compressed or not, without its chunks being
    looked at again. Only the runs of the latest generation are kept."""

    def __init__(self) -> None:
        self._families: tuple[Family, ...] = ()
        self._headers: list[Segment] = []
        self._runs: dict[tuple[int, ...], _Run] = {}
        self._lock = threading.Lock()
        #: plain bytes compressed so far (tests and the benchmark read it)
        self.compressed_bytes = 0

    def segments(
        self, families: Sequence[Family], lines: Sequence[Mapping[str, bytes]], ends: Sequence[int]
    ) -> list[Segment]:
        """The body's segments in output order: each family's header, then its lines run by run.
        ``ends``: where each run but the last ends in ``lines`` (ascending)."""
        with self._lock:
            if tuple(families) != self._families:
                self._families = tuple(families)
                self._headers = [Segment((fam.header,)) for fam in families]
                self._runs = {}
            kept: dict[tuple[int, ...], _Run] = {}
            runs: list[_Run] = []
            start = 0
            for end in [*ends, len(lines)]:
                if end <= start:
                    continue
                members = tuple(lines[start:end])
                key = tuple(map(id, members))
                run = kept.get(key) or self._runs.get(key)
                if run is None:
                    run = _Run(members, _run_segments(families, members))
                kept[key] = run
                runs.append(run)
                start = end
            self._runs = kept
            headers = self._headers
        out: list[Segment] = []
        for i, header in enumerate(headers):
            out.append(header)
            for run in runs:
                out.extend(run.by_family[i])
        return out

    def stream(self, segments: Sequence[Segment]) -> tuple[list[bytes], int, int]:
        """``(raw deflate stream ending in a sync flush, in pieces; CRC-32; length)`` of
        ``segments``' chunks. Only segments not packed before are compressed (zlib releases the
        GIL while it compresses and while it checksums more than 5 KB); the CRC is combined from
        the segments' own."""
        with self._lock:
            out: list[bytes] = []
            crc = length = 0
            for seg in segments:
                packed = seg.packed
                if packed is None:
                    data = b"".join(seg.chunks)
                    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
                    deflated = packer.compress(data) + packer.flush(zlib.Z_SYNC_FLUSH)
                    packed = seg.packed = (deflated, zlib.crc32(data), crc32.shift(len(data)))
                    self.compressed_bytes += len(data)
                out.append(packed[0])
                crc = crc32.concat(crc, packed[1], packed[2])
                length += seg.length
            return out, crc, length


class WorkloadBody:
    """One generation's workload families: their :attr:`segments` (headers and lines, in output
    order, references to the workers' bytes) and, built once on demand, their raw deflate stream
    ended by a sync flush (from ``cache``'s segments where they are unchanged)."""

    def __init__(
        self,
        generation: int,
        segments: Sequence[Segment],
        series: int = 0,
        dropped_series: int = 0,
        dropped_workloads: int = 0,
        cache: DeflateCache | None = None,
    ) -> None:
        self.generation = generation
        self.segments = list(segments)
        self.series = series
        self.dropped_series = dropped_series
        self.dropped_workloads = dropped_workloads
        self.cache = cache or DeflateCache()
        #: plain bytes of the body
        self.size = sum(seg.length for seg in self.segments)
        self._parts: list[bytes] | None = None
        self._deflated: tuple[list[bytes], int, int] | None = None
        self._lock = threading.Lock()

    @classmethod
    def of_parts(cls, generation: int, parts: Sequence[bytes]) -> WorkloadBody:
        """A body of ``parts`` as one segment."""
        return cls(generation, [Segment(tuple(parts))])

    @classmethod
    def build(
        cls,
        generation: int,
        families: Sequence[Family],
        lines: Sequence[Mapping[str, bytes]],
        admitted: Admitted[K],
        cache: DeflateCache | None = None,
    ) -> WorkloadBody:
        """``lines``: family name -> sample lines, per admitted workload (in output order, the
        order of ``admitted.keys``, whose hashes cut the runs); a mapping given is never changed
        afterwards (the cache knows it by its id)."""
        cache = cache or DeflateCache()
        ends = [i + 1 for i, key in enumerate(admitted.keys) if hash(key) % SEGMENT_SPREAD == 0]
        return cls(
            generation,
            cache.segments(families, lines, ends),
            admitted.series,
            admitted.dropped_series,
            admitted.dropped_workloads,
            cache,
        )

    @property
    def parts(self) -> list[bytes]:
        """The body's chunks in output order (joined once per generation, for plain scrapes)."""
        parts = self._parts
        if parts is None:
            parts = self._parts = [chunk for seg in self.segments for chunk in seg.chunks]
        return parts

    def deflated(self) -> tuple[list[bytes], int, int]:
        """``(raw deflate stream ending in a sync flush, in pieces; CRC-32; length)`` of
        :attr:`parts`, computed by the first caller; concurrent scrapes wait for it instead of
        repeating it."""
        with self._lock:
            if self._deflated is None:
                self._deflated = self.cache.stream(self.segments)
            return self._deflated


def gzip_body(body: WorkloadBody, tail: bytes) -> list[bytes]:
    """One gzip member holding ``body``'s parts then ``tail``: the cached deflate stream, ``tail``
    as a second stream that ends the data, and the trailer (CRC-32 and length of both)."""
    stream, crc, length = body.deflated()
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    last = packer.compress(tail) + packer.flush(zlib.Z_FINISH)
    trailer = struct.pack("<II", zlib.crc32(tail, crc) & 0xFFFFFFFF, (length + len(tail)) & 0xFFFFFFFF)
    return [_GZIP_HEADER, *stream, last, trailer]
