"""Which builtin names exist (name/arity) and which ones the Karta rules forbid.

Kept apart from the compiler so the static checks and the compiler agree on one table.
"""

from __future__ import annotations

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

# Every builtin the compiler implements, as (name, arity). A test checks each one compiles.
_ARITY0 = (
    "empty error not length utf8bytelength keys keys_unsorted values to_entries from_entries add any all "
    "flatten floor ceil round trunc sqrt log exp log10 log2 exp10 exp2 fabs abs tostring tonumber type "
    "infinite nan isinfinite isnan isnormal sort unique min max reverse explode implode ascii ascii_downcase "
    "ascii_upcase tojson fromjson todate fromdate fromdateiso8601 todateiso8601 now first last objects "
    "arrays strings numbers booleans nulls iterables scalars finites normals toarray trim ltrim rtrim env "
    "debug stderr input_filename have_literal_numbers builtins tostream significand frexp gamma lgamma "
    "tgamma "
    "transpose gmtime mktime"
)
_ARITY1 = (
    "error getpath splits ltrimstr rtrimstr startswith endswith has in inside contains map map_values path "
    "select with_entries add any all flatten sort_by group_by unique_by min_by max_by split join test match "
    "capture scan indices index rindex first last nth isempty IN INDEX pick debug strftime strptime todate "
    "bsearch fromstream truncate_stream trimstr"
)
_ARITY2 = "any all split splits test match capture scan sub gsub nth limit until IN INDEX setpath pow ldexp"
BUILTINS: frozenset[tuple[str, int]] = frozenset(
    [(n, 0) for n in _ARITY0.split()]
    + [(n, 1) for n in _ARITY1.split()]
    + [(n, 2) for n in _ARITY2.split()]
    + [("sub", 3), ("gsub", 3)]
)

FORMATS = frozenset({"text", "json", "base64", "base64d", "uri", "csv", "tsv", "html", "sh"})
