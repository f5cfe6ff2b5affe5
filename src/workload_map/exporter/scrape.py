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
- The stream is made of segments, each compressed on its own and ended by a sync flush (so they
  concatenate into one valid deflate stream): in each family, the lines of consecutive workloads,
  cut after a workload whose key hashes to 0 modulo :data:`SEGMENT_SPREAD`. The cuts depend only
  on the keys, so a workload that changes, arrives or leaves changes only the segments it is in;
  :class:`DeflateCache` keeps the compressed segments from one generation to the next. In a
  cluster whose pods change every second the generation changes before every scrape: without
  the cache each scrape recompressed the whole body (~270 ms for the 74 MB of 100,000 pods).

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

__all__ = ["Admitted", "DeflateCache", "WorkloadBody", "accepts_gzip", "admit", "gzip_body"]

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


@dataclass
class _Segment:
    #: the plain chunks, kept alive: their ids are the segment's key in the cache
    chunks: tuple[bytes, ...]
    #: their raw deflate stream from a fresh compressor, ended by a sync flush
    deflated: bytes


class DeflateCache:
    """Compressed segments kept from one generation's stream to the next: a segment whose chunks
    are the same bytes objects as before (the workers store new objects for what they re-render)
    is not compressed again. Only the segments of the latest stream are kept."""

    def __init__(self) -> None:
        self._segments: dict[tuple[int, ...], _Segment] = {}
        self._lock = threading.Lock()
        #: plain bytes compressed so far (tests and the benchmark read it)
        self.compressed_bytes = 0

    def stream(self, segments: Sequence[tuple[bytes, ...]]) -> tuple[bytes, int, int]:
        """``(raw deflate stream ending in a sync flush, CRC-32, length)`` of ``segments``' chunks."""
        with self._lock:
            kept: dict[tuple[int, ...], _Segment] = {}
            out: list[bytes] = []
            crc = length = 0
            for chunks in segments:
                key = tuple(map(id, chunks))
                seg = kept.get(key) or self._segments.get(key)
                if seg is None:
                    data = b"".join(chunks)
                    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
                    seg = _Segment(chunks, packer.compress(data) + packer.flush(zlib.Z_SYNC_FLUSH))
                    self.compressed_bytes += len(data)
                kept[key] = seg
                out.append(seg.deflated)
                for chunk in chunks:
                    crc = zlib.crc32(chunk, crc)
                    length += len(chunk)
            self._segments = kept
            return b"".join(out), crc, length


def _segments(
    families: Sequence[Family], lines: Sequence[Mapping[str, bytes]], cuts: Sequence[bool]
) -> tuple[list[bytes], list[tuple[bytes, ...]]]:
    """The body's parts in output order, and the same parts grouped into segments: each family's
    header alone, then its lines cut where ``cuts`` says (or at :data:`COMPRESS_BATCH` bytes)."""
    parts: list[bytes] = []
    segments: list[tuple[bytes, ...]] = []
    for fam in families:
        header = fam.header
        parts.append(header)
        segments.append((header,))
        name = fam.name
        current: list[bytes] = []
        size = 0
        for by_family, cut in zip(lines, cuts, strict=True):
            chunk = by_family.get(name)
            if chunk:
                parts.append(chunk)
                current.append(chunk)
                size += len(chunk)
            if current and (cut or size >= COMPRESS_BATCH):
                segments.append(tuple(current))
                current, size = [], 0
        if current:
            segments.append(tuple(current))
    return parts, segments


@dataclass
class WorkloadBody:
    """One generation's workload families: ``parts`` (headers and lines, in output order) and,
    built once on demand, their raw deflate stream ended by a sync flush (from ``cache``'s
    segments where they are unchanged)."""

    generation: int
    parts: list[bytes]
    series: int = 0
    dropped_series: int = 0
    dropped_workloads: int = 0
    #: ``parts`` grouped into the segments of the stream (default: all of them as one)
    segments: list[tuple[bytes, ...]] | None = field(default=None, repr=False)
    cache: DeflateCache = field(default_factory=DeflateCache, repr=False)
    _deflated: tuple[bytes, int, int] | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

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
        order of ``admitted.keys``, whose hashes cut the segments)."""
        cuts = [hash(key) % SEGMENT_SPREAD == 0 for key in admitted.keys]
        parts, segments = _segments(families, lines, cuts)
        return cls(
            generation,
            parts,
            admitted.series,
            admitted.dropped_series,
            admitted.dropped_workloads,
            segments,
            cache or DeflateCache(),
        )

    @property
    def size(self) -> int:
        return sum(len(p) for p in self.parts)

    def deflated(self) -> tuple[bytes, int, int]:
        """``(raw deflate stream ending in a sync flush, CRC-32, length)`` of :attr:`parts`,
        computed by the first caller; concurrent scrapes wait for it instead of repeating it."""
        with self._lock:
            if self._deflated is None:
                segments = self.segments if self.segments is not None else [tuple(self.parts)]
                self._deflated = self.cache.stream(segments)
            return self._deflated


def gzip_body(body: WorkloadBody, tail: bytes) -> list[bytes]:
    """One gzip member holding ``body``'s parts then ``tail``: the cached deflate stream, ``tail``
    as a second stream that ends the data, and the trailer (CRC-32 and length of both)."""
    stream, crc, length = body.deflated()
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    last = packer.compress(tail) + packer.flush(zlib.Z_FINISH)
    trailer = struct.pack("<II", zlib.crc32(tail, crc) & 0xFFFFFFFF, (length + len(tail)) & 0xFFFFFFFF)
    return [_GZIP_HEADER, stream, last, trailer]
