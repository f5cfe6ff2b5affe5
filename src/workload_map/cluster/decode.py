"""Bounded decoding of what the API server sends: bodies inflated piece by piece, JSON values counted
before orjson builds any of them.

orjson decodes a whole document at once, and what it builds is not bounded by the body's bytes: an
empty object ``{}`` is three bytes on the wire and about seventy in Python, so a list of tiny objects
under the byte cap (:data:`~workload_map.cluster.client.MAX_RESPONSE_BYTES`), sent gzipped in a few
hundred kilobytes, decodes to gigabytes. So every body is counted as it arrives: a JSON value other
than the first starts after a ``,`` or opens a ``{`` or ``[``, hence their number plus one bounds
the values a document holds (the same characters inside strings only raise the count: objects
recorded from real operators count within 10 % of their true number, CRDs with long schema
descriptions within 1.5 times), and a body past :data:`MAX_DECODED_VALUES` is refused before it is
parsed; reading stops there. A Python value costs 50 to 110 bytes, so the ceiling
bounds what one decoded document can take at about 110 MB whatever its shape.

Compressed bodies are inflated here, never by httpx: only gzip is asked for (as client-go does) and
accepted, and it is inflated :data:`INFLATE_PIECE` bytes at a time, so a compression bomb costs one
piece of memory before the byte cap or the value ceiling stops it.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

import httpx
import orjson

from workload_map.errors import ApiError

__all__ = [
    "ACCEPT_ENCODING",
    "INFLATE_PIECE",
    "MAX_DECODED_VALUES",
    "RawResponse",
    "decoded_chunks",
    "loads_bounded",
    "value_count",
]

#: JSON values one document (a response body, a watch event) may hold: 4 to 8 times a 500-pod page,
#: 20 times the largest CRD in the test data (40,000), at most about 110 MB once decoded. Past it
#: the body is refused unread; a list page is then asked for again in halves (client.py), so real
#: lists of large objects still list.
MAX_DECODED_VALUES = 1_000_000
#: The only content coding asked for and accepted (besides none).
ACCEPT_ENCODING = "gzip"
#: A compressed body is inflated at most this many bytes at a time.
INFLATE_PIECE = 1 << 20


class RawResponse(Protocol):
    """What decoding needs of a streamed response (an ``httpx.Response`` sent with ``stream=True``)."""

    @property
    def headers(self) -> Mapping[str, str]: ...

    def iter_raw(self) -> Iterator[bytes]: ...


def value_count(data: bytes) -> int:
    """An upper bound on the JSON values that ``data`` adds to a document (see the module doc)."""
    return data.count(b"{") + data.count(b"[") + data.count(b",")


def too_many_values(
    status: int, where: str, limit: int = MAX_DECODED_VALUES, name: str = "MAX_DECODED_VALUES"
) -> ApiError:
    return ApiError(
        status,
        "ResponseTooLarge",
        f"{where}: the API server's response holds more than {limit} JSON values ({name}); "
        "it was not decoded",
    )


def loads_bounded(data: bytes, where: str, *, status: int = 200, limit: int = MAX_DECODED_VALUES) -> Any:
    """``orjson.loads(data)`` once ``data`` is known to hold at most ``limit`` values; errors name
    ``where`` (for example ``GET /api/v1/pods on https://host``)."""
    if value_count(data) > limit:
        raise too_many_values(status, where, limit)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise not_json(status, where, data, exc) from None


def not_json(status: int, where: str, data: bytes, exc: Exception | None = None) -> ApiError:
    if not data.strip():
        text = "the API server sent an empty body where a JSON object was expected"
    else:
        text = f"the API server sent a body that is not JSON ({exc}): {data[:120]!r}"
    return ApiError(status, "InvalidResponse", f"{where}: {text}")


def decoded_chunks(response: RawResponse, where: str) -> Iterator[bytes]:
    """The body of ``response`` as it arrives, inflated when it is gzipped; another content coding is
    an :class:`~workload_map.errors.ApiError` (it was not asked for)."""
    if isinstance(response, httpx.Response) and response.is_stream_consumed:
        yield response.content  # read (and inflated by httpx) before it got here: an in-memory response
        return
    coding = (response.headers.get("content-encoding") or "").strip().lower()
    if coding in ("", "identity"):
        yield from response.iter_raw()
        return
    if coding not in ("gzip", "x-gzip"):
        raise ApiError(
            200,
            "InvalidResponse",
            f'{where}: the API server sent the body in content coding "{coding[:40]}", which was not '
            f"asked for (only {ACCEPT_ENCODING})",
        )
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        for raw in response.iter_raw():
            data = raw
            while data:
                piece = inflater.decompress(data, INFLATE_PIECE)
                if piece:
                    yield piece
                data = inflater.unconsumed_tail
                if inflater.eof and inflater.unused_data:
                    # RFC 1952: a gzip body may hold several members, one after another.
                    data = inflater.unused_data + data
                    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while not inflater.eof:
            piece = inflater.decompress(b"", INFLATE_PIECE)
            if not piece:
                break
            yield piece
    except zlib.error as exc:
        raise ApiError(
            200, "InvalidResponse", f"{where}: the gzipped body is not valid gzip ({exc})"
        ) from None
