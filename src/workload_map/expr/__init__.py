"""workload_map.expr: the project's own jq engine.

Pipeline: lexer -> parser -> AST -> static checks -> Python code generation -> callables.

Dialect: jq 1.7/1.8 semantics (libjq is the conformance reference), with these deliberate
differences, all for safety:

* Forbidden statically (``ExpressionSafetyError``): assignment operators, ``del``, ``..``,
  ``range``, ``paths``, ``recurse``, ``walk``, ``repeat`` (upstream's rules) and also ``while``,
  ``combinations``, ``leaf_paths``, ``input(s)``, ``input_line_number``, ``halt``,
  ``halt_error``, ``delpaths``. Undefined functions/variables are rejected at compile time.
* ``$ENV`` and ``env`` are empty objects: definitions never see the process environment.
* ``debug``/``stderr`` are identity and print nothing. ``now`` works but is impure.
* Regexes run on Python ``re``: nested quantifiers and backreferences are refused and subjects
  longer than 100,000 characters are refused (no timeout exists in ``re``).
* Every evaluation is bounded: ``MAX_RESULTS`` outputs, a step budget (iterations, function
  calls, ``until`` rounds), 10M-character strings, 1M-element arrays, Python's recursion limit
  for recursion and nesting. Exceeding any raises ``ExpressionLimitError``.
* Path expressions (``paths``/``assign``) follow jq: ``//``, ``select``, ``if``, ``first``,
  ``getpath``, ``. as $x | path`` are paths; user-defined functions are not followed in path
  mode.
"""

from __future__ import annotations

from .api import Expression, Finding, analyze, compile_expression, output_paths, read_paths
from .paths import getpath, setpath
from .runtime import MAX_RESULTS

__all__ = [
    "MAX_RESULTS",
    "Expression",
    "Finding",
    "analyze",
    "compile_expression",
    "getpath",
    "output_paths",
    "read_paths",
    "setpath",
]
