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

# Every builtin the compiler implements, as (name, arity).
BUILTINS: frozenset[tuple[str, int]] = frozenset(
    [
        (n, 0)
        for n in (
            "empty error not length utf8bytelength keys keys_unsorted values to_entries from_entries "
            "add any all flatten floor ceil round sqrt log exp log10 log2 exp10 exp2 fabs tostring "
            "tonumber type infinite nan isinfinite isnan isnormal isvalid sort unique min max reverse "
            "explode implode ascii_downcase ascii_upcase tojson fromjson todate fromdate "
            "fromdateiso8601 todateiso8601 dateadd now first last objects arrays strings numbers "
            "booleans nulls iterables scalars finites normals abs toarray trim ltrim rtrim env debug "
            "stderr transpose gmtime mktime not false true null ascii trunc getpath tostream"
        ).split()
        if n not in ("false", "true", "null", "dateadd", "getpath", "tostream", "isvalid")
    ]
    + [
        (n, 1)
        for n in (
            "error getpath splits ltrimstr rtrimstr startswith endswith has in inside contains map "
            "map_values path select with_entries add any all flatten sort_by group_by unique_by "
            "min_by max_by split join test match capture scan indices index rindex first last nth "
            "isempty IN INDEX pick debug strftime strptime todate bsearch limit_helper tojson"
        ).split()
        if n not in ("limit_helper", "tojson")
    ]
    + [
        (n, 2)
        for n in (
            "any all split splits test match capture scan sub gsub nth limit until IN INDEX setpath pow "
            "getpath_helper"
        ).split()
        if n != "getpath_helper"
    ]
    + [("sub", 3), ("gsub", 3)]
)

# Names callable with some arity: used to word "not defined" messages like jq (name/arity).
FORBIDDEN_ARITIES: frozenset[tuple[str, int]] = frozenset(
    {
        ("range", 1),
        ("range", 2),
        ("range", 3),
        ("paths", 0),
        ("paths", 1),
        ("recurse", 0),
        ("recurse", 1),
        ("recurse", 2),
        ("walk", 1),
        ("repeat", 1),
        ("while", 2),
        ("combinations", 0),
        ("combinations", 1),
        ("leaf_paths", 0),
        ("recurse_down", 0),
        ("input", 0),
        ("inputs", 0),
        ("input_line_number", 0),
        ("halt", 0),
        ("halt_error", 0),
        ("halt_error", 1),
        ("delpaths", 1),
        ("del", 1),
    }
)

FORMATS = frozenset({"text", "json", "base64", "base64d", "uri", "csv", "tsv", "html", "sh"})
