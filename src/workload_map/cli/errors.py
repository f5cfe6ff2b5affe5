"""Errors a command raises to end with a given message and exit code."""

from __future__ import annotations

from collections.abc import Sequence

from workload_map.cli import exit_codes
from workload_map.errors import WorkloadMapError


class CommandError(WorkloadMapError):
    """End the command: print each message as ``error: <message>`` and exit with ``exit_code``."""

    def __init__(self, message: str | Sequence[str], exit_code: int = exit_codes.ERROR) -> None:
        self.messages: tuple[str, ...] = (message,) if isinstance(message, str) else tuple(message)
        super().__init__("; ".join(self.messages))
        self.exit_code = exit_code


class WorkloadNotFoundError(CommandError):
    def __init__(self, message: str) -> None:
        super().__init__(message, exit_codes.NOT_FOUND)


class NoDefinitionError(CommandError):
    """No definition covers a type; ``word`` is the type word asked for, when there was one."""

    def __init__(self, message: str, *, word: str | None = None) -> None:
        super().__init__(message, exit_codes.NO_DEFINITION)
        self.word = word


class AmbiguousError(CommandError):
    def __init__(self, message: str) -> None:
        super().__init__(message, exit_codes.AMBIGUOUS)
