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
* Regexes run on RE2 (linear time in the subject, whatever the pattern): backreferences,
  lookaround, atomic groups and possessive quantifiers are refused with a message naming them;
  subjects over 1,000,000 characters are refused. ``test``, ``match``, ``capture``, ``scan``,
  ``splits``, ``split/2``, ``sub`` and ``gsub`` follow libjq 1.8's definitions (``splits``
  yields the pieces between every global match, empty ones included; ``sub`` builds one result
  per output of the replacement filter).
* Every evaluation is bounded by a cost model (``runtime``): one unit per loop step, 64 per
  function call, one per container node that a builtin reads or builds and one per 32
  characters of text, charged *before* the work or allocation happens; 1,000,000 units by
  default (about 0.25 s of work), so one evaluation reads and builds at most a few tens of MB.
  A wall-clock deadline (0.25 s by default) is the second guard. ``set_limits(budget=,
  deadline=)`` changes both for the process. Values built by jq may share children (``[.,.]``
  repeated); every builtin that walks a whole value (``tojson``, ``flatten``, ``==``,
  ``tostream``, formats...) measures it on the budget first, and so does
  ``Expression.all/first`` for results that are not parts of the input. Also ``MAX_RESULTS``
  outputs, 10M-character strings, 1M-element arrays, expressions of at most 100,000 characters
  and 200 levels of nesting, and generated code of at most 10,000 names. Exceeding any raises
  ``ExpressionLimitError`` (or a syntax/safety error at compile time, with the offset).
* Builtins pay for their work as they do it: each has one entry in the builtin registry
  (``registry``) stating its cost rule, and one whose work grows with its input receives the
  evaluation's meter and charges per unit of that work before doing it: per match, group and
  character built for the regex builtins, per occurrence (times the needle's length) for string
  ``indices``, per directive for dates, per element copied for slices, ``setpath`` and the
  like. Every RE2 search is afforded at its worst case (the rest of the subject times the
  program's size) before it runs and charged what it read, or its CPU time for a long one, after:
  a pattern RE2 runs slowly, or a global match that rescans the subject (``a*b|a``), ends in
  the budget. The deadline is checked before every search and at every chunk of 4,096 units.
  ``Expression.all/first(..., meter=runtime.start())`` lets a caller read what an evaluation
  used (``runtime.used``).
* Dates follow libjq on glibc in the C locale and UTC, on our own linear implementation of
  ``strftime`` (flags ``_ - 0 ^ #``, widths, ``E``/``O``, every conversion; ``%Z`` is ``GMT``)
  and ``strptime`` (glibc's directives, white space, century and week rules, quirks included);
  the output of ``strftime`` is capped like libjq's buffer (the format's length plus 100
  bytes: ``strftime/1: unknown system failure`` beyond). Non-finite and out-of-range numbers
  give libjq's errors (``error converting number of seconds since epoch to datetime``,
  ``mktime requires parsed datetime inputs``, ``invalid gmtime representation``); years print
  as glibc prints them (32-bit). ``dateadd``/``datesub``/``date`` are not defined (libjq 1.8
  removed them).
* Error messages show at most 4,096 characters of a value (jq prints all of it; a value built by
  jq can stand for an exponential tree).
* Numbers follow libjq's doubles: integer arithmetic stays exact up to 2**53 and becomes a double
  beyond (so ``.*.`` repeated reaches infinity, never a million-digit integer).
* Path expressions (``paths``/``assign``/``path(f)``/``pick``) follow jq: ``//``, ``select``,
  ``if``, ``first(f)``, ``limit``, ``nth``, ``getpath``, ``try``/``?``, ``label``, ``debug``,
  ``. as $x | path``, ``?//`` and user-defined functions (closure arguments included; recursion
  is bounded by the step budget and the recursion limit) are paths. ``last(f)`` is not (jq 1.7+
  defines it with ``reduce``; libjq fails with the last value, and so do we). Non-path results
  fail with libjq's text, truncated like its 30-byte ``jv_dump_string_trunc``.
  ``Expression.denotes_paths`` is a conservative static view of the same rules;
  ``Expression.is_assignable`` additionally refuses ``//``, whose written path depends on the
  data (upstream's authoring rule: alternatives read fine but are not write-back paths).

Known differences from libjq 1.8 (the reference):

* ``reduce``/``foreach`` in path mode thread the accumulator's path through every update (gojq's
  answer: ``path(reduce ("a","b") as $k (.; .[$k]))`` is ``["a","b"]``); libjq loses the path
  after the first update and fails. Where libjq succeeds (no or one update, identity updates),
  the answers agree.
* libjq tracks paths by value *identity*, so on null inputs or values it accepts some non-paths
  (``null | path(. as $x | $x)``, destructuring, ``ltrimstr``/``indices`` on strings); we
  raise. The list for the test corpus is ``NOT_ASSIGNABLE_BUT_LIBJQ_PATH_OK`` in
  ``tests/expr/test_writeback.py``.
* ``?//`` retries the next pattern on errors from the body and from downstream, as libjq does,
  but not on ``break``: libjq implements ``first``/``limit`` with label/break and so re-runs
  later patterns after ``first(... ?// ...)``; we stop.
* Numbers: Python ints and floats, no decNumber literal preservation: ``1e17`` prints as
  ``1e+17`` (libjq keeps the literal as ``1E+17``), ``1e1000`` is infinity
  (``1.7976931348623157e+308``), ``have_literal_numbers`` is true only in that 1.0 stays 1.0.
  Math builtins (``lgamma``...) may differ from glibc in the last digit.
* ``%s`` in ``strptime`` reads the seconds as UTC (glibc uses the local time zone; the
  reference runs in UTC); ``%z`` is read and dropped, as libjq does.
* Not implemented: ``@base32``/``@base32d`` (the libjq build we test against rejects them too),
  ``truncate_stream/2``-style extensions libjq lacks, ``$__prog_args``. ``ascii`` exists here
  but not in libjq 1.8; ``builtins`` lists this engine's builtins (forbidden ones excluded).
"""

from __future__ import annotations

from .api import Expression, Finding, analyze, compile_expression, output_paths, parse_tree, read_paths
from .paths import getpath, setpath
from .runtime import MAX_RESULTS, set_limits
from .unparse import to_source

__all__ = [
    "MAX_RESULTS",
    "Expression",
    "Finding",
    "analyze",
    "compile_expression",
    "getpath",
    "output_paths",
    "parse_tree",
    "read_paths",
    "set_limits",
    "setpath",
    "to_source",
]
