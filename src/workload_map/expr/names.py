"""Which builtin names exist (name/arity, from ``registry``) and which ones the Karta rules
forbid.

Kept apart from the compiler so the static checks and the compiler agree on one table.
"""

from __future__ import annotations

from . import registry as _registry

# Upstream (spec 2.9): functions that may produce excessive output.
EXCESSIVE_OUTPUT = frozenset({"range", "paths", "recurse", "walk", "repeat"})

# Beyond upstream: functions rejected for other reasons, with the reason used in the message.
FORBIDDEN_REASONS: dict[str, str] = {
    "while": "may loop forever",
    "combinations": "may produce excessive output",
    "leaf_paths": "may produce excessive output",
    "recurse_down": "may produce excessive output",
    "input": "reads further inputs, which definitions do not have",
    "inputs": "reads further inputs, which definitions do not have",
    "input_line_number": "reads further inputs, which definitions do not have",
    "halt": "would stop the process",
    "halt_error": "would stop the process",
    "delpaths": "deletes paths",
}

# Every builtin name/arity and every format, from the one builtin table.
BUILTINS = _registry.BUILTINS
FORMATS = _registry.FORMATS
