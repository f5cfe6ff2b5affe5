"""The CRC-32 of a concatenation combined from its pieces' CRCs, checked against zlib's CRC of the
bytes themselves."""

from __future__ import annotations

import random
import zlib

import pytest

from workload_map.exporter import crc32


@pytest.mark.parametrize(
    ("len_a", "len_b"),
    [(0, 0), (0, 1), (1, 0), (1, 1), (3, 4096), (5000, 5121), (65_536, 7), (1, 3_000_000)],
)
def test_concat_is_the_crc_of_the_joined_bytes(len_a: int, len_b: int) -> None:
    rng = random.Random(len_a * 31 + len_b)
    a, b = rng.randbytes(len_a), rng.randbytes(len_b)
    assert crc32.concat(zlib.crc32(a), zlib.crc32(b), crc32.shift(len(b))) == zlib.crc32(a + b)


def test_a_fold_over_random_pieces() -> None:
    rng = random.Random(7)
    for _ in range(20):
        pieces = [
            rng.randbytes(rng.choice((0, 1, rng.randrange(200), rng.randrange(70_000)))) for _ in range(12)
        ]
        crc = 0
        for piece in pieces:
            crc = crc32.concat(crc, zlib.crc32(piece), crc32.shift(len(piece)))
        assert crc == zlib.crc32(b"".join(pieces))


def test_long_runs_of_zero_bytes() -> None:
    """Lengths whose bits reach far into the table of powers (up to 2^24 bytes, 2^27 bits)."""
    crc = zlib.crc32(b"some bytes")
    for n in (255, 256, 65_537, (1 << 24) + 3):
        zeros = bytes(n)
        assert crc32.concat(crc, zlib.crc32(zeros), crc32.shift(n)) == zlib.crc32(zeros, crc)
