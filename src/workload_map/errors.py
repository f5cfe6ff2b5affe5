"""Every error the library raises, in one place.

Each class maps to one failure family; the CLI turns families into exit codes
(see ``workload_map.cli.exit_codes``). Messages that must match upstream text
verbatim are built by the helpers in ``workload_map.messages``.
"""

from __future__ import annotations

from collections.abc import Iterator


class WorkloadMapError(Exception):
    """Base class: anything the library raises on purpose."""


def causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the exceptions it was raised from or during (``__cause__``/``__context__``), each once."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def caused_by(exc: BaseException, kind: type[BaseException] | tuple[type[BaseException], ...]) -> bool:
    """Whether ``exc`` is, or was caused by, an exception of ``kind``."""
    return any(isinstance(e, kind) for e in causes(exc))


# --- expressions (jq) -------------------------------------------------------


class ExpressionError(WorkloadMapError):
    """A jq expression could not be compiled or run."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(message)
        self.source = source
        self.message = message


class ExpressionSyntaxError(ExpressionError):
    """The text is not valid jq. ``offset`` is the 0-based character position, if known."""

    def __init__(self, source: str, message: str, offset: int | None = None) -> None:
        super().__init__(source, message)
        self.offset = offset


class ExpressionSafetyError(ExpressionError):
    """Valid jq that the Karta rules forbid (assignment, del, .., range, paths, recurse, walk,
    repeat), or that names an undefined function or variable."""


class ExpressionRuntimeError(ExpressionError):
    """jq raised an error while evaluating (e.g. ``Cannot iterate over string``)."""


class ExpressionLimitError(ExpressionRuntimeError):
    """Evaluation exceeded a safety bound: result count, step budget, depth or size."""


class PathError(ExpressionRuntimeError):
    """The expression does not denote assignable paths (e.g. ``//``, object construction)."""


class ExpressionNotTranslatableError(ExpressionError):
    """Valid jq that a back end other than Python (the Lua one) cannot express; ``construct``
    names what was refused (``test/2``, ``label``, ``@base64``...) and the message says why."""

    def __init__(self, source: str, message: str, construct: str) -> None:
        super().__init__(source, message)
        self.construct = construct


# --- definitions ------------------------------------------------------------


class DefinitionError(WorkloadMapError):
    """A definition file could not be read or parsed into the Karta model."""


class InputError(DefinitionError):
    """A local input (file, directory, stdin) was refused before or while reading it: missing, a
    special file (FIFO, device, socket), larger than its byte limit, a directory with too many
    files, or not UTF-8. A usage error (exit 2) like every unreadable file."""


# --- resolution and write-back ---------------------------------------------


class ResolveError(WorkloadMapError):
    """A workload object could not be resolved through its definition."""


class DefinitionQuarantinedError(ResolveError):
    """The definition kept exceeding the expression limits and is not evaluated for now."""

    def __init__(self, message: str, *, definition: str) -> None:
        super().__init__(message)
        self.definition = definition


class WriteBackError(WorkloadMapError):
    """A requested change could not be written into the workload object."""


# --- Karmada resource interpreter ------------------------------------------


class InterpretError(WorkloadMapError):
    """A Karmada interpreter operation cannot be answered for this object (the webhook refuses
    the request with this message)."""


class ExportError(WorkloadMapError):
    """A definition cannot be exported to another engine's format (Lua for Karmada, Argo CD):
    the message names the definition, the field and the construct."""


# --- cluster ---------------------------------------------------------------


class ClusterError(WorkloadMapError):
    """Talking to the Kubernetes API failed."""


class ConfigurationError(ClusterError):
    """The kubeconfig (or in-cluster configuration) is missing, unreadable or inconsistent."""


class NoConfigurationError(ConfigurationError):
    """No kubeconfig file exists and the process does not run inside a cluster."""


class ExecPluginError(ClusterError):
    """An exec credential plugin could not be run or returned an unusable ExecCredential."""


class ConnectionFailedError(ClusterError):
    """The API server could not be reached (refused, DNS, TLS, timeout) after the allowed retries."""

    def __init__(self, message: str, server: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.server = server


class ApiError(ClusterError):
    """The API server answered with an error status. ``message`` is the API's Status message."""

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        *,
        details: dict[str, object] | None = None,
        method: str | None = None,
        path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason
        self.message = message
        self.details = details or {}
        self.method = method
        self.path = path

    def __str__(self) -> str:
        return self.message


class UnauthorizedError(ApiError):
    """HTTP 401: the credentials were not accepted."""


class ForbiddenError(ApiError):
    """HTTP 403: authenticated, but RBAC denies the request."""


class NotFoundError(ApiError):
    """HTTP 404: the object (or the resource type) does not exist."""


class ConflictError(ApiError):
    """HTTP 409: a resourceVersion conflict, or the object already exists (reason ``AlreadyExists``)."""


class GoneError(ApiError):
    """HTTP 410 (or a watch ERROR event with code 410): the resourceVersion or continue token expired."""


class UnknownResourceTypeError(ClusterError):
    """Discovery does not know the requested resource type."""

    def __init__(self, token: str, message: str | None = None) -> None:
        super().__init__(message or f'the server doesn\'t have a resource type "{token}"')
        self.token = token


class AmbiguousResourceTypeError(ClusterError):
    """A resource type token matches resources in more than one API group."""

    def __init__(self, token: str, candidates: list[str]) -> None:
        super().__init__(
            f'"{token}" matches more than one resource type, retry with one of: {", ".join(candidates)}'
        )
        self.token = token
        self.candidates = candidates


# --- Prometheus (cost per workload) -------------------------------------------


class PrometheusError(WorkloadMapError):
    """A Prometheus HTTP API query failed: unreachable, too slow, refused, or an answer out of
    bounds. Callers show it as a warning: cost is extra information, never a reason to fail."""
