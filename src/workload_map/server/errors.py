"""The one error object of the API: ``{error, message, hint, status}`` (+ ``findings``, ``type``,
``gvk`` where they apply), the fields of ``schemas/error.v1.json`` plus the HTTP status."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from workload_map.errors import (
    ApiError,
    ConflictError,
    ConnectionFailedError,
    ForbiddenError,
    NotFoundError,
    UnauthorizedError,
    WorkloadMapError,
)

__all__ = ["HttpError", "error_body", "from_cluster_error"]


class HttpError(Exception):
    """Raised by handlers; rendered as the JSON error object with ``status``."""

    def __init__(self, status: int, error: str, message: str, hint: str = "", **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.hint = hint
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return error_body(self.status, self.error, self.message, self.hint, **self.extra)


def error_body(status: int, error: str, message: str, hint: str = "", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"error": error, "message": message, "hint": hint, "status": status}
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


def from_cluster_error(exc: WorkloadMapError, what: str) -> HttpError:
    """A Kubernetes API failure met while doing ``what`` with the server's own credentials."""
    if isinstance(exc, NotFoundError):
        return HttpError(404, "not_found", f"{what}: not found")
    if isinstance(exc, ConflictError):
        return HttpError(409, "conflict", f"{what}: {exc}", "The object changed meanwhile; retry.")
    if isinstance(exc, (ForbiddenError, UnauthorizedError)):
        return HttpError(
            502,
            "cluster_error",
            f"{what}: the server's own Kubernetes identity was refused: {exc}",
            "Grant the wmap serve service account the permissions listed in docs/server.md.",
        )
    if isinstance(exc, ApiError) and exc.status == 422:
        return HttpError(422, "unprocessable", f"{what}: {exc}")
    if isinstance(exc, ConnectionFailedError):
        return HttpError(502, "cluster_error", f"{what}: cannot reach the Kubernetes API: {exc}")
    return HttpError(502, "cluster_error", f"{what}: {exc}")


async def send_error(
    send: Callable[[dict[str, Any]], Awaitable[None]], error: HttpError, *, close: bool = False
) -> None:
    """Answer with ``error`` from ASGI middleware (before any route runs); ``close``: and end the
    connection after it."""
    import orjson

    body = orjson.dumps(error.body())
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
