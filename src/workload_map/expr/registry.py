"""The builtin registry: one entry per builtin (name/arity), its implementation and its cost rule.

Everything that knows builtins reads this table: the static checks (which names exist), the
Python code generator (how to call a value builtin, what it returns), ``builtins`` (the list jq
users see), the docs and the tests (``tests/expr/test_builtin_registry.py`` walks it and runs
every entry on megabyte-scale adversarial inputs; an entry whose cost rule is missing or does
not match its implementation fails there). Operators (``+``, ``==``, ``.[k]``, ``.[a:b]``...) and
formats (``@csv``...) have entries too, under the internal names libjq gives them, so the same
walk covers them; they are not callable by name.

Kinds:

* ``value``: a Python function of the input and the arguments' values (jq runs it once per
  combination of argument outputs). Its cost rule says whether it receives the evaluation's
  meter (``Cost.metered``): a builtin whose work grows with its input takes the meter as its
  first argument and charges it before the work, as the rule states; a constant-work builtin
  takes none.
* ``form``: code the back end generates (arguments are filters: ``map(f)``, ``select(f)``,
  ``limit(n; f)``...). Generated loops charge one unit per step and the containers their bodies
  build (``compiler.charge_loops``); runtime helpers they call take the meter.
* ``format``: ``@name``, a function of the meter, the format's name and the input.
* ``operator``: the value functions behind jq's operators.

Other back ends attach their own translation per entry (``attach``), keyed by back end and
name/arity, and list what they still lack with ``untranslated``: the registry stays the one
list of builtins whatever runs them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from . import dates as D
from . import matches as M
from . import paths as P
from . import runtime as R
from . import values as V

Kind = Literal["value", "form", "format", "operator"]

# What a builtin's input or argument is, for the adversarial walk (tests/expr/adversarial.py
# has values of every kind): "any" value, a "string", "number", "array", "object", a "path"
# array, a "regex" or regex "flags" string, a date "format" string, a "time" (seconds or
# broken-down), an "entries" array, "codepoints", or, for forms, a "filter", a "cond" (a
# filter used for its truth), a "count" and a "replacement" (sub's string filter).
ArgKind = str


@dataclass(frozen=True)
class Cost:
    """How a builtin pays for its work: ``rule`` states what is charged, per unit of which work,
    before the work is done; ``metered`` says whether a value builtin receives the meter
    (``None`` for code the back end generates, which charges its own loops)."""

    rule: str
    metered: bool | None

    def __post_init__(self) -> None:
        if not self.rule.strip():
            raise ValueError("a cost rule must say what is charged")


CONSTANT = Cost(
    "constant: O(1) work on its input and arguments; builds a scalar or a fixed-size value", False
)


def metered(rule: str) -> Cost:
    """A value builtin that receives the meter and charges ``rule`` before its work."""
    return Cost(rule, True)


def generated(rule: str) -> Cost:
    """A form: the generated code charges ``rule`` (loop steps, containers built, helpers)."""
    return Cost(rule, None)


TEXT = "1 unit per 32 characters"  # the cost model's text rate (runtime.STRING_UNIT)


@dataclass(frozen=True)
class Builtin:
    name: str
    arity: int
    kind: Kind
    cost: Cost
    input: ArgKind = "any"
    args: tuple[ArgKind, ...] = ()
    python: Callable[..., Any] | None = None
    returns_bool: bool = False
    # Translations other back ends attach, by back end name (see ``attach``).
    translations: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def key(self) -> tuple[str, int]:
        return (self.name, self.arity)

    @property
    def label(self) -> str:
        return f"{self.name}/{self.arity}"


_ENTRIES: list[Builtin] = []


def _add(
    name: str,
    arity: int,
    kind: Kind,
    cost: Cost,
    python: Callable[..., Any] | None = None,
    *,
    input: ArgKind = "any",
    args: Iterable[ArgKind] = (),
    returns_bool: bool = False,
) -> None:
    _ENTRIES.append(Builtin(name, arity, kind, cost, input, tuple(args), python, returns_bool))


def _value(name: str, arity: int, cost: Cost, python: Callable[..., Any], **kw: Any) -> None:
    _add(name, arity, "value", cost, python, **kw)


def _form(name: str, arity: int, cost: Cost, **kw: Any) -> None:
    _add(name, arity, "form", cost, None, **kw)


# --- values and types --------------------------------------------------------------------------
_value("length", 0, CONSTANT, V.length)
_value(
    "utf8bytelength",
    0,
    metered(f"{TEXT} (4 per character when not ASCII: the encoded copy)"),
    V.utf8bytelength,
    input="string",
)
_value("type", 0, CONSTANT, V.jtype)
_value("tostring", 0, metered("as tojson for non-strings; strings are returned as they are"), V.tostring)
_value(
    "tojson",
    0,
    metered(f"the value measured (1 per node, {TEXT}), strings twice (escapes); refused above 1.25M units"),
    V.tojson,
)
_value(
    "fromjson",
    0,
    metered(f"6 x {TEXT} of the text, 24 x when not ASCII (the parser works in ~12 bytes per UTF-8 byte)"),
    V.fromjson,
    input="string",
)
_value("tonumber", 0, CONSTANT, V.tonumber)  # (strings over 1,000 characters are refused unread)
_value("toarray", 0, CONSTANT, V.toarray)
_value("has", 1, CONSTANT, V.has, args=("any",), returns_bool=True)
_value(
    "contains",
    1,
    metered(
        "containers: measure(a) * measure(b) / 64 (every part compared with every "
        f"part); strings: {TEXT} of both (a linear search)"
    ),
    V.contains,
    args=("any",),
    returns_bool=True,
)
_value("keys", 0, metered("as sort on the keys"), V.keys)
_value("keys_unsorted", 0, metered("1 per key"), V.keys_unsorted)
_value("to_entries", 0, metered("5 per entry (an object each)"), V.to_entries)
_value("from_entries", 0, metered("6 per entry"), V.from_entries, input="entries")
_value(
    "add",
    0,
    metered(
        "2 per element, then runs of strings/arrays/objects joined once at their total "
        "length (no quadratic accumulation), other values added pairwise"
    ),
    V.add_all,
)
_value("any", 0, metered("1 per 4 elements read"), V.jany, returns_bool=True)
_value("all", 0, metered("1 per 4 elements read"), V.jall, returns_bool=True)
_value(
    "flatten",
    0,
    metered("the value measured (the flat list has at most as many elements)"),
    V.flatten,
    input="array",
)
_value(
    "flatten",
    1,
    metered("the value measured (the flat list has at most as many elements)"),
    V.flatten,
    input="array",
    args=("count",),
)
_value(
    "sort",
    0,
    metered("n log n / 4 times the value measured (comparisons as deep as the values)"),
    V.jsort,
    input="array",
)
_value("unique", 0, metered("as sort"), V.unique, input="array")
_value(
    "min", 0, metered("1 per element plus the elements measured (each compared once)"), V.jmin, input="array"
)
_value(
    "max", 0, metered("1 per element plus the elements measured (each compared once)"), V.jmax, input="array"
)
_value("reverse", 0, metered(f"1 per element or {TEXT} (the copy)"), V.reverse)
_value(
    "transpose",
    0,
    metered("1 per row, then rows x width (refused above 1M cells)"),
    V.transpose,
    input="array",
)
_value("bsearch", 1, metered("log2(n) times the target measured"), V.bsearch, input="array", args=("any",))
_value("getpath", 1, metered("1 per path step, slices by their length"), P.getpath_metered, args=("path",))
_value(
    "setpath",
    2,
    metered("1 per path step and, per step, the length of the container copied"),
    P.setpath_metered,
    args=("path", "any"),
)

# --- strings ---------------------------------------------------------------------------------------
_value(
    "startswith",
    1,
    metered(f"{TEXT} of the prefix compared"),
    V.startswith,
    input="string",
    args=("string",),
    returns_bool=True,
)
_value(
    "endswith",
    1,
    metered(f"{TEXT} of the suffix compared"),
    V.endswith,
    input="string",
    args=("string",),
    returns_bool=True,
)
_value(
    "ltrimstr",
    1,
    metered(f"{TEXT} of the prefix compared and of the copy"),
    V.ltrimstr,
    input="string",
    args=("string",),
)
_value(
    "rtrimstr",
    1,
    metered(f"{TEXT} of the suffix compared and of the copy"),
    V.rtrimstr,
    input="string",
    args=("string",),
)
_value("trimstr", 1, metered("ltrimstr then rtrimstr"), V.trimstr, input="string", args=("string",))
_value("trim", 0, metered(f"{TEXT} (scan and copy)"), V.trim, input="string")
_value("ltrim", 0, metered(f"{TEXT} (scan and copy)"), V.ltrim, input="string")
_value("rtrim", 0, metered(f"{TEXT} (scan and copy)"), V.rtrim, input="string")
_value(
    "ascii_downcase",
    0,
    metered(f"{TEXT} (12 x when not ASCII: encoded, translated, decoded)"),
    V.ascii_downcase,
    input="string",
)
_value(
    "ascii_upcase",
    0,
    metered(f"{TEXT} (12 x when not ASCII: encoded, translated, decoded)"),
    V.ascii_upcase,
    input="string",
)
_value("explode", 0, metered("1 per character (a number each; refused above 1M)"), V.explode, input="string")
_value("implode", 0, metered("4 per code point"), V.implode, input="codepoints")
_value("ascii", 0, CONSTANT, V.ascii, input="number")
_value(
    "split",
    1,
    metered(f"{TEXT}, twice (scan and pieces), plus 2 per piece (refused above 1M)"),
    V.split1,
    input="string",
    args=("string",),
)
_value(
    "join", 1, metered(f"1 per element plus {TEXT} of the result"), V.join, input="array", args=("string",)
)
_value(
    "indices",
    1,
    metered(
        f"strings: {TEXT} of subject and needle (one linear pass) plus, per occurrence, "
        f"1 and {TEXT} of the needle (the comparison that confirmed it: overlapping needles are n*m work); "
        "arrays: subject length times the needle measured"
    ),
    R.indices_of,
    input="string",
    args=("string",),
)
_value(
    "index",
    1,
    metered(f"strings: {TEXT} of subject and needle (one search); arrays: as indices"),
    V.index_of,
    input="string",
    args=("string",),
)
_value(
    "rindex",
    1,
    metered(f"strings: {TEXT} of subject and needle (one search); arrays: as indices"),
    V.rindex_of,
    input="string",
    args=("string",),
)

# --- regular expressions (RE2): the search rule, regex.searches, applies to each ------------------
_SEARCH = (
    "per search: afforded at (rest of the subject) x (program size / 64) units before it runs, then "
    "charged what it read at that rate or, for a long one, its CPU time (0.25 us a unit); "
    f"{TEXT} of the subject once (its UTF-8 copy), 4 x {TEXT} of the pattern (compiling)"
)
_value(
    "test",
    1,
    metered(f"{_SEARCH}; one search, nothing built"),
    M.test,
    input="string",
    args=("regex",),
    returns_bool=True,
)
_value(
    "test",
    2,
    metered(f"{_SEARCH}; one search, nothing built"),
    M.test,
    input="string",
    args=("regex", "flags"),
    returns_bool=True,
)
_value(
    "split",
    2,
    metered(f"{_SEARCH}; per piece 1 and {TEXT}"),
    M.split_array,
    input="string",
    args=("regex", "flags"),
)
_MATCH = f"{_SEARCH}; per match 6 units, 5 per group and {TEXT} of the match and group texts"
_form("match", 1, generated(_MATCH), input="string", args=("regex",))
_form("match", 2, generated(_MATCH), input="string", args=("regex", "flags"))
_form(
    "capture",
    1,
    generated(f"{_SEARCH}; per match 6 units, 1 per group, {TEXT} of named captures"),
    input="string",
    args=("regex",),
)
_form(
    "capture",
    2,
    generated(f"{_SEARCH}; per match 6 units, 1 per group, {TEXT} of named captures"),
    input="string",
    args=("regex", "flags"),
)
_form(
    "scan",
    1,
    generated(f"{_SEARCH}; per match 1 + 1 per group and {TEXT} of the texts"),
    input="string",
    args=("regex",),
)
_form(
    "scan",
    2,
    generated(f"{_SEARCH}; per match 1 + 1 per group and {TEXT} of the texts"),
    input="string",
    args=("regex", "flags"),
)
_form("splits", 1, generated(f"{_SEARCH}; per piece 1 and {TEXT}"), input="string", args=("regex",))
_form("splits", 2, generated(f"{_SEARCH}; per piece 1 and {TEXT}"), input="string", args=("regex", "flags"))
_SUB = (
    f"{_SEARCH}; per match the capture object (as capture) and the replacement filter's own costs; per "
    f"replacement kept 2 and {TEXT} of it and the text before it; the results joined once at their length "
    "(at most 1,000 results)"
)
_form("sub", 2, generated(_SUB), input="string", args=("regex", "replacement"))
_form("sub", 3, generated(_SUB), input="string", args=("regex", "replacement", "flags"))
_form("gsub", 2, generated(_SUB), input="string", args=("regex", "replacement"))
_form("gsub", 3, generated(_SUB), input="string", args=("regex", "replacement", "flags"))

# --- numbers -----------------------------------------------------------------------------------------
for _name, _fn in (
    ("floor", V.floor),
    ("ceil", V.ceil),
    ("round", V.jround),
    ("trunc", V.trunc),
    ("sqrt", V.sqrt),
    ("log", V.log),
    ("exp", V.exp),
    ("log10", V.log10),
    ("log2", V.log2),
    ("exp10", V.exp10),
    ("exp2", V.exp2),
    ("fabs", V.fabs),
    ("abs", V.jabs),
    ("significand", V.significand),
    ("frexp", V.frexp),
    ("gamma", V.lgamma),
    ("lgamma", V.lgamma),
    ("tgamma", V.tgamma),
):
    _value(_name, 0, CONSTANT, _fn, input="number")
for _name, _fn in (("isinfinite", V.isinfinite), ("isnan", V.isnan), ("isnormal", V.isnormal)):
    _value(_name, 0, CONSTANT, _fn, input="number", returns_bool=True)
_value("pow", 2, CONSTANT, V.pow_, args=("number", "number"))
_value("ldexp", 2, CONSTANT, V.ldexp, args=("number", "number"))
_form("infinite", 0, generated("constant"))
_form("nan", 0, generated("constant"))

# --- dates (dates.py: glibc's conversions, linear) ----------------------------------------------
_DIRECTIVES = (
    f"{TEXT} of the format, 12 per directive; the output is capped at the format's length + 100 bytes"
)
_value("gmtime", 0, CONSTANT, D.gmtime, input="time")
_value("mktime", 0, CONSTANT, D.mktime, input="time")
_value("strftime", 1, metered(_DIRECTIVES), D.strftime, input="time", args=("format",))
_value("todate", 1, metered(_DIRECTIVES), D.strftime, input="time", args=("format",))
_value(
    "strptime",
    1,
    metered(f"{TEXT} of input and format, 12 per directive"),
    D.strptime,
    input="string",
    args=("format",),
)
_value("todate", 0, metered(_DIRECTIVES), D.todate, input="time")
_value("todateiso8601", 0, metered(_DIRECTIVES), D.todate, input="time")
_value("fromdate", 0, metered(f"{TEXT} of the input, 12 per directive"), D.fromdate, input="string")
_value("fromdateiso8601", 0, metered(f"{TEXT} of the input, 12 per directive"), D.fromdate, input="string")
_form("now", 0, generated("constant"))

# --- streams and filters (code generated per back end) ---------------------------------------------
_STEP = "1 unit per step of the loop it generates, plus the containers its body builds"
_form("empty", 0, generated("constant"))
_form("error", 0, generated("constant (the message shows at most 4,096 characters of the value)"))
_form(
    "error", 1, generated("constant (the message shows at most 4,096 characters of the value)"), args=("any",)
)
_form("not", 0, generated("constant"))
#: The type tests: each outputs its input when the input is of the type (a subset of its input,
#: so paths flow through them, expr.readpaths). Each back end generates its own condition per name
#: (expr.compiler.TYPE_FILTERS, expr.lua.builtins.TYPE_FILTERS).
TYPE_TESTS: tuple[str, ...] = (
    "values",
    "nulls",
    "booleans",
    "numbers",
    "strings",
    "arrays",
    "objects",
    "iterables",
    "scalars",
)
#: Type tests on numbers' values (finite, normal): no path is read through them.
NUMBER_TESTS: tuple[str, ...] = ("finites", "normals")
for _name in (*TYPE_TESTS, *NUMBER_TESTS):
    _form(_name, 0, generated("constant (a type test)"))
_form("select", 1, generated("the condition's own cost"), args=("cond",))
_form("map", 1, generated(f"{_STEP} (one per element)"), input="array", args=("filter",))
_form(
    "map_values",
    1,
    generated("4 per element (a call and a result slot), charged before the loop"),
    args=("filter",),
)
_form("with_entries", 1, generated(f"to_entries, {_STEP}, from_entries"), input="object", args=("filter",))
_form(
    "path", 1, generated("the path expression's own steps; each path is a tuple built once"), args=("filter",)
)
_form("pick", 1, generated("per path: getpath and setpath (their rules)"), args=("filter",))
_form("add", 1, generated("the stream collected (1 per output), then as add/0"), args=("filter",))
_form("any", 1, generated(f"{_STEP}; stops at the first true"), args=("cond",))
_form("all", 1, generated(f"{_STEP}; stops at the first false"), args=("cond",))
_form("any", 2, generated(f"{_STEP}; stops at the first true"), args=("filter", "cond"))
_form("all", 2, generated(f"{_STEP}; stops at the first false"), args=("filter", "cond"))
for _name in ("sort_by", "group_by", "unique_by"):
    _form(
        _name,
        1,
        generated(f"{_STEP} (the keys), then 3 per element and as sort on [key, index] pairs"),
        input="array",
        args=("filter",),
    )
for _name in ("min_by", "max_by"):
    _form(
        _name,
        1,
        generated(f"{_STEP} (the keys), then 1 per element plus the keys measured"),
        input="array",
        args=("filter",),
    )
_form("first", 0, generated("constant (.[0])"))
_form("last", 0, generated("constant (.[-1])"))
_form("nth", 1, generated("constant (.[n])"), args=("number",))
_form("first", 1, generated("the filter until its first output"), args=("filter",))
_form("last", 1, generated("the whole filter"), args=("filter",))
_form("nth", 2, generated("the filter until its n-th output"), args=("count", "filter"))
_form("limit", 2, generated("the filter until n outputs"), args=("count", "filter"))
_form("isempty", 1, generated("the filter until its first output"), args=("filter",), returns_bool=True)
_form(
    "until",
    2,
    generated(f"{_STEP} (one per iteration; nested levels pay for their depth)"),
    args=("cond", "filter"),
)
_form("IN", 1, generated("per output of the set: ==, its rule"), args=("filter",), returns_bool=True)
_form("IN", 2, generated("per pair of outputs: ==, its rule"), args=("filter", "filter"), returns_bool=True)
_form("INDEX", 1, generated(f"{_STEP}; per row tostring of its key"), input="array", args=("filter",))
_form("INDEX", 2, generated(f"{_STEP}; per row tostring of its key"), args=("filter", "filter"))
_form("in", 1, generated("as has"), args=("any",), returns_bool=True)
_form("inside", 1, generated("as contains"), args=("any",), returns_bool=True)
_form("debug", 0, generated("constant (identity: prints nothing)"))
_form("debug", 1, generated("the message filter's own cost (identity: prints nothing)"), args=("filter",))
_form("stderr", 0, generated("constant (identity: prints nothing)"))
_form(
    "tostream",
    0,
    generated("the value measured, then per event 3 plus its path's length, 1 per event emitted"),
)
_form("fromstream", 1, generated("per event: setpath on the partial value (its rule)"), args=("filter",))
_form(
    "truncate_stream",
    1,
    generated("per event: a slice of its path (its length)"),
    input="number",
    args=("filter",),
)
_form("env", 0, generated("constant (an empty object)"))
_form("input_filename", 0, generated("constant"))
_form("have_literal_numbers", 0, generated("constant"))
_form("builtins", 0, generated("2 per name (a fresh list of this table's names each time)"))

# --- formats -----------------------------------------------------------------------------------------
for _fmt, _rule in (
    ("text", "as tostring"),
    ("json", "as tojson"),
    ("csv", f"arrays: 4 x the value measured (quotes doubled), strings 2 x {TEXT}; then {TEXT} of the row"),
    ("tsv", f"arrays: 4 x the value measured (escapes), strings 2 x {TEXT}; then {TEXT} of the row"),
    ("html", f"as tostring, then 6 x {TEXT} (a character may become six)"),
    ("uri", f"as tostring, then 9 x {TEXT} (12 x when not ASCII: a character may become twelve)"),
    ("sh", f"arrays: 8 x the value measured, strings 4 x {TEXT} (' becomes four); then {TEXT} of the words"),
    ("base64", f"as tostring, then 2 x {TEXT} (6 x when not ASCII)"),
    ("base64d", f"as tostring, then 2 x {TEXT}"),
):
    _add(f"@{_fmt}", 0, "format", metered(_rule), V.format_value)

# --- operators (libjq's internal names; not callable by name) ------------------------------------------
_add(
    "_plus",
    2,
    "operator",
    metered(
        f"strings: {TEXT} of the result; arrays: 1 per element (refused above "
        "1M); objects: 1 per key of both; numbers: constant"
    ),
    R.add,
    args=("any", "any"),
)
_add(
    "_minus",
    2,
    "operator",
    metered("arrays: the left's length times the right measured; numbers: constant"),
    R.sub,
    args=("any", "any"),
)
_add(
    "_multiply",
    2,
    "operator",
    metered(
        f"string repetition: {TEXT} of the result (refused above 10M "
        "characters); objects: 1 per key at every level merged; numbers: constant"
    ),
    R.mul,
    args=("any", "any"),
)
_add("_divide", 2, "operator", metered("strings: as split/1; numbers: constant"), R.div, args=("any", "any"))
_add("_mod", 2, "operator", CONSTANT, R.mod, args=("number", "number"))
_add("_negate", 0, "operator", CONSTANT, R.neg, input="number")
_EQ = f"containers: the left measured (the comparison walks at most that); equal-length strings: {TEXT}"
_add("_equal", 2, "operator", metered(_EQ), R.jeq, args=("any", "any"), returns_bool=True)
_add("_notequal", 2, "operator", metered(_EQ), R.jne, args=("any", "any"), returns_bool=True)
_ORD = f"containers: the left measured; strings: {TEXT} of the left"
for _name, _cmp in (("_less", R.lt), ("_lesseq", R.le), ("_greater", R.gt), ("_greatereq", R.ge)):
    _add(_name, 2, "operator", metered(_ORD), _cmp, args=("any", "any"), returns_bool=True)
_add(
    "_index",
    1,
    "operator",
    metered("keys: constant; slices: as _slice; array keys: as indices"),
    R.index,
    args=("any",),
)
_add(
    "_slice",
    2,
    "operator",
    metered(f"the slice's length: 1 per element or {TEXT} (it is a copy)"),
    R.slice_value,
    args=("number", "number"),
)
_add("_iterate", 0, "operator", generated("1 per element iterated (charged before the loop starts)"))

REGISTRY: dict[tuple[str, int], Builtin] = {}
for _entry in _ENTRIES:
    if _entry.key in REGISTRY:
        raise AssertionError(f"two registry entries for {_entry.label}")
    REGISTRY[_entry.key] = _entry

# Names jq users call: value builtins and forms (not formats or operators).
BUILTINS: frozenset[tuple[str, int]] = frozenset(
    k for k, e in REGISTRY.items() if e.kind in ("value", "form")
)
FORMATS: frozenset[str] = frozenset(e.name[1:] for e in REGISTRY.values() if e.kind == "format")


def entry(name: str, arity: int) -> Builtin:
    return REGISTRY[(name, arity)]


def problems() -> list[str]:
    """What is wrong with the table: a value builtin without an implementation, an
    implementation whose signature disagrees with its cost rule (a metered builtin must take
    the meter first, a constant one must not), a form with a value builtin's rule."""
    out = []
    for e in REGISTRY.values():
        if e.kind in ("value", "format", "operator") and e.python is None and e.cost.metered is not None:
            out.append(f"{e.label}: a {e.kind} entry needs its Python implementation")
        if e.python is not None:
            first = next(iter(inspect.signature(e.python).parameters), "")
            if e.cost.metered and first != "meter":
                out.append(f"{e.label}: the cost rule says metered, but {e.python.__name__} takes no meter")
            if e.cost.metered is False and first == "meter":
                out.append(f"{e.label}: the cost rule says constant, but {e.python.__name__} takes the meter")
        if e.kind == "form" and e.cost.metered is not None:
            out.append(f"{e.label}: a form's cost is charged by generated code (use generated())")
        if e.kind in ("value", "form") and len(e.args) != e.arity:
            out.append(f"{e.label}: {len(e.args)} argument kinds for arity {e.arity}")
    return out


def attach(backend: str, name: str, arity: int, translation: Any) -> None:
    """Register ``backend``'s translation of builtin ``name/arity`` (one per back end)."""
    e = REGISTRY.get((name, arity))
    if e is None:
        raise KeyError(f"{name}/{arity} is not a builtin")
    if backend in e.translations:
        raise ValueError(f"{name}/{arity} already has a {backend} translation")
    e.translations[backend] = translation


def translation(backend: str, name: str, arity: int) -> Any:
    """``backend``'s translation of ``name/arity``, or None when it has none."""
    e = REGISTRY.get((name, arity))
    return None if e is None else e.translations.get(backend)


def untranslated(backend: str, kinds: Iterable[Kind] = ("value", "form", "format", "operator")) -> list[str]:
    """Labels of the entries ``backend`` has no translation for, in table order."""
    wanted = set(kinds)
    return [e.label for e in REGISTRY.values() if e.kind in wanted and backend not in e.translations]


__all__ = [
    "BUILTINS",
    "CONSTANT",
    "FORMATS",
    "REGISTRY",
    "Builtin",
    "Cost",
    "attach",
    "entry",
    "generated",
    "metered",
    "problems",
    "translation",
    "untranslated",
]
