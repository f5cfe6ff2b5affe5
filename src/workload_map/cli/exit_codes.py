"""Process exit codes of ``wmap`` (spec 5.1). The numbers follow upstream; only the fact that the
conditions differ is a contract."""

from __future__ import annotations

from workload_map.errors import DefinitionError, WorkloadMapError

OK = 0
ERROR = 1  # generic failure; also "invalid definition" in ``wmap validate``
USAGE = 2  # bad flag or argument, unreadable or unparseable file
NOT_FOUND = 3  # workload not found (including "type not installed" when a NAME was given)
NO_DEFINITION = 4  # no Karta definition covers the requested type (or none at all)
AMBIGUOUS = 5  # reserved: a bare NAME matching several kinds


def for_exception(exc: BaseException) -> int:
    """The exit code for an error raised by a command. An ``exit_code`` attribute wins; otherwise
    the error family decides."""
    code = getattr(exc, "exit_code", None)
    if isinstance(code, int):
        return code
    if isinstance(exc, DefinitionError):
        return USAGE
    if isinstance(exc, WorkloadMapError):
        return ERROR
    return ERROR
