"""What one scrape serves: Accept-Encoding negotiation, the gzip body built from a cached stream
and a per-scrape tail, the series ceiling and the cut of long label values."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import threading
import zlib

import pytest

from tests.exporter.promparse import parse
from workload_map.exporter import metrics as m
from workload_map.exporter.exposition import MAX_LABEL_VALUE_LENGTH, Family, cut_label_value, encode
from workload_map.exporter.scrape import (
    COMPRESS_BATCH,
    Admitted,
    DeflateCache,
    WorkloadBody,
    accepts_gzip,
    admit,
    gzip_body,
)


# Cases from RFC 9110 section 12.5.3 (Accept-Encoding): codings with q-values, "*" for any coding
# not listed, q=0 for "not acceptable"; names are case-insensitive. "x-gzip" is gzip (section 8.4.1.3).
@pytest.mark.parametrize(
    ("header", "gzip_ok"),
    [
        ("gzip", True),
        ("GZip", True),
        ("x-gzip", True),
        ("deflate, gzip;q=1.0, *;q=0.5", True),  # RFC 9110 example
        ("compress, gzip", True),  # RFC 9110 example
        ("*", True),  # RFC 9110 example: any coding
        ("compress;q=0.5, gzip;q=1.0", True),  # RFC 9110 example
        ("gzip;q=1.0, identity; q=0.5, *;q=0", True),  # RFC 9110 example
        ("gzip;q=0", False),
        ("gzip;q=0.000", False),
        ("*;q=0", False),
        ("gzip;q=0, *", False),  # listed explicitly as not acceptable: * does not override it
        ("br, *;q=0.1", True),
        ("identity", False),
        ("", False),  # RFC 9110 example: an empty value means no coding is wanted
        (None, False),
        ("deflate", False),
        ("gzip;q=abc", False),  # a malformed q-value counts as 0
        ("gzip;q=2", False),  # out of range
        ("gzip ; q=0.5", True),
        ("gzip-not, gzipx", False),
        ("identity," * 100 + "gzip", False),  # only the first 64 codings are read
    ],
)
def test_accepts_gzip(header: str | None, gzip_ok: bool) -> None:
    assert accepts_gzip(header) is gzip_ok


def _body(lines: list[dict[str, bytes]], generation: int = 1) -> WorkloadBody:
    admitted: Admitted[int] = Admitted(list(range(len(lines))), 0, 0, 0)
    return WorkloadBody.build(generation, m.WORKLOAD_FAMILIES, lines, admitted)


def _workload_lines(i: int, pods: int = 3) -> dict[str, bytes]:
    base = [("namespace", "ns"), ("group", "g"), ("kind", "K"), ("name", f"w{i}")]
    out = {
        m.WORKLOAD_INFO.name: encode(m.WORKLOAD_INFO.line(base, 1)),
        m.PRIMARY_PHASE.name: encode(m.PRIMARY_PHASE.line([*base, ("phase", "Running")], 1)),
        m.POD_INFO.name: encode(
            "".join(m.POD_INFO.line([("namespace", "ns"), ("pod", f"w{i}-{p}")], 1) for p in range(pods))
        ),
    }
    return out


def _gunzip_tool(data: bytes) -> bytes:
    """The gzip command-line tool: an implementation independent of Python's zlib module."""
    tool = shutil.which("gzip")
    if tool is None:
        pytest.skip("no gzip tool")
    return subprocess.run([tool, "-dc"], input=data, capture_output=True, check=True).stdout


def test_gzip_body_is_the_plain_body() -> None:
    body = _body([_workload_lines(i) for i in range(50)])
    tail = m.READY.render([([], 1)])
    plain = b"".join([*body.parts, tail])
    data = b"".join(gzip_body(body, tail))
    assert gzip.decompress(data) == plain
    assert zlib.decompress(data, 16 + zlib.MAX_WBITS) == plain
    assert _gunzip_tool(data) == plain
    exp = parse(plain.decode())  # every family once, its samples together
    assert len(exp.find("wmap_pod_workload_info")) == 150
    assert exp.value("wmap_exporter_ready") == 1


def test_gzip_body_edges() -> None:
    """No workloads; a body of several compressor batches; a tail that changes per scrape over
    one cached stream; non-ASCII text."""
    empty = _body([])
    assert gzip.decompress(b"".join(gzip_body(empty, b""))) == b"".join(empty.parts)
    big = _body([_workload_lines(i, pods=40) for i in range(3000)])
    assert big.size > 3 * COMPRESS_BATCH
    stream = big.deflated()
    for n in range(3):
        tail = encode(f'# TYPE x gauge\nx{{v="ünï {n}"}} {n}\n')
        data = b"".join(gzip_body(big, tail))
        assert gzip.decompress(data) == b"".join([*big.parts, tail])
    assert big.deflated() is stream  # compressed once per generation
    assert sum(map(len, stream[0])) < big.size / 10


def test_deflated_is_built_once_by_concurrent_scrapes() -> None:
    body = _body([_workload_lines(i) for i in range(200)])
    results: list[tuple[list[bytes], int, int]] = []
    threads = [threading.Thread(target=lambda: results.append(body.deflated())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(r) for r in results}) == 1
    assert body.cache.compressed_bytes == body.size  # every byte compressed once


def _changed(lines: dict[str, bytes]) -> dict[str, bytes]:
    """The lines of a workload as a worker stores them after re-rendering it: new bytes objects."""
    return {k: bytes(bytearray(v)) for k, v in lines.items()}


#: Workload keys whose hashes (an int's is itself) cut a run every SEGMENT_SPREAD workloads: str
#: hashes are salted per process, and a run that happened to be long broke a bound below in about
#: 3 processes of 10.
_KEYS = list(range(4000))


def test_a_new_generation_compresses_only_the_segments_that_changed() -> None:
    """Pods change all the time in a large cluster, so the generation changes before nearly every
    scrape: the stream is rebuilt from the previous generation's segments, compressing only those
    holding a workload that changed, arrived or left, and still decodes to the whole body."""
    cache = DeflateCache()
    keys = _KEYS
    lines = {key: _workload_lines(i, pods=10) for i, key in enumerate(keys)}

    def build(generation: int, admitted_keys: list[int]) -> WorkloadBody:
        admitted: Admitted[int] = Admitted(admitted_keys, 0, 0, 0)
        return WorkloadBody.build(
            generation, m.WORKLOAD_FAMILIES, [lines[k] for k in admitted_keys], admitted, cache
        )

    def check(body: WorkloadBody) -> int:
        before = cache.compressed_bytes
        tail = m.READY.render([([], 1)])
        assert gzip.decompress(b"".join(gzip_body(body, tail))) == b"".join([*body.parts, tail])
        return cache.compressed_bytes - before

    first = build(1, keys)
    assert check(first) == first.size
    assert len(first.segments) > 3 * len(m.WORKLOAD_FAMILIES)  # several segments per family

    lines[keys[1234]] = _changed(lines[keys[1234]])  # one workload re-rendered
    changed = check(build(2, keys))
    assert 0 < changed < first.size / 10

    assert check(build(3, keys)) < 2000  # nothing changed: only the family headers
    removed = [k for k in keys if k != keys[77]]  # a workload leaves: its segments only
    assert 0 < check(build(4, removed)) < first.size / 10
    assert 0 < check(build(5, keys)) < first.size / 10  # and comes back


class _Counting(dict[str, bytes]):
    """A workload's lines that count how often they are read."""

    reads = 0

    def get(self, key: str, default: bytes | None = None) -> bytes | None:  # type: ignore[override]
        _Counting.reads += 1
        return super().get(key, default)


def test_a_new_generation_reads_only_the_runs_that_changed() -> None:
    """The per-generation Python work holds the GIL the server threads need: a new generation
    looks at the lines of the runs of workloads that changed only, not at every workload's lines
    of every family again (~60 ms at 100,000 pods)."""
    cache = DeflateCache()
    keys = _KEYS
    lines = {key: _Counting(_workload_lines(i)) for i, key in enumerate(keys)}
    admitted: Admitted[int] = Admitted(keys, 0, 0, 0)

    def reads(generation: int) -> int:
        before = _Counting.reads
        body = WorkloadBody.build(generation, m.WORKLOAD_FAMILIES, [lines[k] for k in keys], admitted, cache)
        assert gzip.decompress(b"".join(gzip_body(body, b""))) == b"".join(body.parts)
        return _Counting.reads - before

    first = reads(1)
    assert first == len(keys) * len(m.WORKLOAD_FAMILIES)
    assert reads(2) == 0  # nothing changed
    lines[keys[1234]] = _Counting(_changed(lines[keys[1234]]))
    assert 0 < reads(3) < first / 10  # the changed workload's run only


def test_the_stream_crc_is_combined_from_the_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    """zlib.crc32 holds the GIL for pieces under 5 KB: it runs once per newly compressed segment
    (over its joined bytes) and once over the tail, not over each workload's lines."""
    cache = DeflateCache()
    keys = _KEYS
    lines = {key: _workload_lines(i) for i, key in enumerate(keys)}
    admitted: Admitted[int] = Admitted(keys, 0, 0, 0)
    calls: list[int] = []
    crc = zlib.crc32

    def counting(data: bytes, value: int = 0) -> int:
        calls.append(len(data))
        return crc(data, value)

    monkeypatch.setattr(zlib, "crc32", counting)
    for generation in range(4):
        if generation:
            lines[keys[generation * 1000]] = _changed(lines[keys[generation * 1000]])
        body = WorkloadBody.build(generation, m.WORKLOAD_FAMILIES, [lines[k] for k in keys], admitted, cache)
        calls.clear()
        data = b"".join(gzip_body(body, b"tail\n"))
        if generation:  # the first compresses every segment
            assert len(calls) <= 1 + len(m.WORKLOAD_FAMILIES) < len(body.segments) / 4
        assert _gunzip_tool(data) == b"".join(body.parts) + b"tail\n"  # its own CRC check
        assert gzip.decompress(data) == b"".join(body.parts) + b"tail\n"


def test_a_cache_given_other_families_starts_over() -> None:
    keys = list(range(600))
    lines = [_workload_lines(i) for i in keys]
    admitted: Admitted[int] = Admitted(keys, 0, 0, 0)
    cache = DeflateCache()
    for families in (m.WORKLOAD_FAMILIES, m.WORKLOAD_FAMILIES[::2], m.WORKLOAD_FAMILIES):
        body = WorkloadBody.build(1, families, lines, admitted, cache)
        plain = b"".join(body.parts)
        assert plain.count(b"# TYPE") == len(families)
        assert gzip.decompress(b"".join(gzip_body(body, b""))) == plain


def test_segment_cuts_are_bounded_when_no_key_cuts() -> None:
    """Keys whose hashes never cut (a tenant cannot aim at them: str hashes are salted per process,
    but the bound holds anyway) still end a segment at COMPRESS_BATCH bytes."""

    class NeverCuts(str):
        def __hash__(self) -> int:
            return 1

    keys = [NeverCuts(f"w{i}") for i in range(3000)]
    admitted: Admitted[str] = Admitted(list(keys), 0, 0, 0)
    body = WorkloadBody.build(
        1, m.WORKLOAD_FAMILIES, [_workload_lines(i, pods=40) for i in range(3000)], admitted
    )
    assert max(seg.length for seg in body.segments) < COMPRESS_BATCH + 10_000
    assert gzip.decompress(b"".join(gzip_body(body, b""))) == b"".join(body.parts)


def test_admit_under_and_over_the_ceiling() -> None:
    series = {("K", "b", "w2"): 10, ("K", "a", "w9"): 30, ("K", "a", "w1"): 15}
    order = lambda key: (key[1], key[0], key[2])  # noqa: E731 - namespace, kind, name
    every = admit(series, 55, order)
    assert every == Admitted(list(series), 55, 0, 0)  # fits: all, in their own order
    assert admit(series, 0, order) == Admitted(list(series), 55, 0, 0)  # 0: no ceiling
    # over it: sorted (a/w1, a/w9, b/w2); a/w9 does not fit after a/w1 and is left out, b/w2 still fits
    assert admit(series, 30, order) == Admitted([("K", "a", "w1"), ("K", "b", "w2")], 25, 30, 1)
    # one workload larger than the ceiling costs only itself
    huge = {("K", "a", "huge"): 1_000, **{("K", "b", f"w{i}"): 10 for i in range(5)}}
    got = admit(huge, 50, order)
    assert got.keys == [("K", "b", f"w{i}") for i in range(5)]
    assert (got.series, got.dropped_series, got.dropped_workloads) == (50, 1_000, 1)
    assert admit({}, 10, order) == Admitted([], 0, 0, 0)


def test_cli_default_is_the_exporters() -> None:
    from workload_map.cli.commands.exporter import MAX_SERIES
    from workload_map.exporter.collector import DEFAULT_MAX_SERIES

    assert MAX_SERIES == DEFAULT_MAX_SERIES


# --- label values -----------------------------------------------------------------------------


def test_kubernetes_names_are_never_cut() -> None:
    name = "a" * 253  # the longest DNS subdomain name (pods, nodes, custom resources)
    assert cut_label_value(name) == name
    assert cut_label_value("x" * MAX_LABEL_VALUE_LENGTH) == "x" * MAX_LABEL_VALUE_LENGTH


def test_long_values_are_cut_and_stay_distinct() -> None:
    a, b = "r" * 5000 + "a", "r" * 5000 + "b"
    ca, cb = cut_label_value(a), cut_label_value(b)
    assert len(ca) == len(cb) == MAX_LABEL_VALUE_LENGTH
    assert ca != cb and ca.startswith("r" * 200) and "~" in ca[-13:]
    assert cut_label_value(a) == ca  # the same value, the same cut
    fam = Family("wmap_test_info", "info", "h")
    exp = parse(fam.render([([("v", a)], 1), ([("v", b)], 1)]).decode())
    assert {s.labels["v"] for s in exp.samples} == {ca, cb}


def test_cut_counts_characters_before_escaping() -> None:
    value = '"' * 1000  # each becomes \" on the wire
    fam = Family("wmap_test_info", "info", "h")
    (s,) = parse(fam.render([([("v", value)], 1)]).decode()).samples
    assert len(s.labels["v"]) == MAX_LABEL_VALUE_LENGTH and s.labels["v"].startswith('"' * 200)


def test_text_that_is_not_utf8_is_written_not_raised() -> None:
    """A lone surrogate (a JSON "\\ud800" escape from a hostile API server) cannot be UTF-8."""
    fam = Family("wmap_test_info", "info", "h")
    text = fam.render([([("v", "a\ud800b")], 1)]).decode()
    assert parse(text).samples[0].labels["v"] == "a?b"
    lines = m.render_workload(
        [("namespace", "ns"), ("group", "g"), ("kind", "K"), ("name", "bad\udfff")],
        [],
        None,
        None,
        {"p\ud800": {"metadata": {"namespace": "ns", "uid": "u"}}},
        [("workload_name", "bad\udfff")],
    )
    text = b"".join(lines.values()).decode()
    assert "bad?" in text and 'pod="p?"' in text


def test_a_large_plain_body_is_served_whole_in_heap_sized_writes() -> None:
    """The uncompressed exposition goes out in joined batches under glibc's mmap threshold (which
    the exporter fixes at 128 KiB): 1 MiB batches were mapped and unmapped on every write. A body
    of many batches arrives byte for byte."""
    import httpx

    from workload_map.exporter import server as srv
    from workload_map.runtime.allocator import MMAP_THRESHOLD

    assert srv.WRITE_CHUNK < MMAP_THRESHOLD
    parts = [f'wmap_x{{pod="p-{i}"}} {i}\n'.encode() * 40 for i in range(3000)]  # ~3 MB
    body = WorkloadBody.of_parts(1, parts)
    tail = b"wmap_exporter_ready 1\n"

    class Fake:
        def exposition(self) -> tuple[WorkloadBody, bytes]:
            return body, tail

        def ready(self) -> bool:
            return True

        def unsynced(self) -> list[str]:
            return []

    server = srv.MetricsServer(Fake(), "127.0.0.1", 0)  # type: ignore[arg-type]
    server.start()
    try:
        url = f"http://127.0.0.1:{server.port}/metrics"
        with httpx.Client(timeout=60) as http:
            plain = http.get(url, headers={"Accept-Encoding": "identity"})
            zipped = http.get(url, headers={"Accept-Encoding": "gzip"})
    finally:
        server.stop()
    want = b"".join(parts) + tail
    assert len(want) > 20 * srv.WRITE_CHUNK
    assert plain.headers.get("content-encoding") is None and plain.content == want
    assert zipped.headers["content-encoding"] == "gzip" and zipped.content == want
