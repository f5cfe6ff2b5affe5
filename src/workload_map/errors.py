"""Every error the library raises, in one place.

Each class maps to one failure family; the CLI turns families into exit codes
(see ``workload_map.cli.exit_codes``). Messages that must match upstream text
verbatim are built by the helpers in ``workload_map.messages``.
"""

from __future__ import annotations


class WorkloadMapError(Exception):
    """Base class: anything the library raises on purpose."""


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


# --- definitions ------------------------------------------------------------


class DefinitionError(WorkloadMapError):
    """A definition file could not be read or parsed into the Karta model."""


# --- resolution and write-back ---------------------------------------------


class ResolveError(WorkloadMapError):
    """A workload object could not be resolved through its definition."""


class WriteBackError(WorkloadMapError):
    """A requested change could not be written into the workload object."""


# --- cluster ---------------------------------------------------------------


class ClusterError(WorkloadMapError):
    """Talking to the Kubernetes API failed."""
