"""jq's date builtins (``gmtime``, ``mktime``, ``strftime``, ``strptime``, ``todate``,
``fromdate``, ``now``) on our own linear implementation of the C library's conversions.

libjq hands these to glibc (C locale, UTC); so do we, in effect: the formats are glibc's
(``strftime``'s flags ``_ - 0 ^ #``, field widths, the ``E``/``O`` modifiers; ``strptime``'s
directives and its whitespace, century and week rules), reproduced here without Python's
``time.strptime`` (a backtracking regex built from the format: a megabyte format took minutes) or
``datetime`` (years 1-9999 only, OverflowError texts). Both formats and inputs are read once,
left to right; each directive is charged before it is handled, and ``strftime``'s output cannot
pass libjq's own cap (the format's length plus 100 bytes; beyond it libjq reports
``strftime/1: unknown system failure``), so a huge format costs its length and nothing more.

Numbers follow libjq and glibc exactly, quirks included (checked against libjq by
``tests/expr/test_dates.py``): seconds are truncated toward zero (C casts), broken-down fields
are clamped to C ``int``, years print as ``tm_year + 1900`` in 32-bit arithmetic, ``mktime``
rejects a result of -1, calendar arithmetic is proleptic Gregorian on Python integers. Non-finite
and out-of-range numbers give libjq's errors.
"""

from __future__ import annotations

import math
import re
import time
from typing import Any

from .runtime import STRING_UNIT, JqError, Meter, charge, charge_text

INT_MIN = -(2**31)
INT_MAX = 2**31 - 1
# Units for handling one directive (a Python loop step and a few small strings).
DIRECTIVE_UNITS = 12
ISO8601 = "%Y-%m-%dT%H:%M:%SZ"

# A broken-down time as glibc's struct tm holds it:
# [tm_year (year - 1900), tm_mon, tm_mday, tm_hour, tm_min, tm_sec, tm_wday, tm_yday]
Tm = list[int]

_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
# glibc's __mon_yday: days before each month, normal then leap year, as one flat table (glibc
# indexes past the first row for out-of-range months; so do we).
_MON_YDAY = (
    *(0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365),
    *(0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366),
)
_SPACE = " \t\n\v\f\r"
# Runs scanned in C, not character by character in Python (a format or input may be megabytes).
_FLAGS = re.compile(r"[_\-0^#]*")
_DIGITS = re.compile(r"[0-9]*")
_SPACES = re.compile(r"[ \t\n\v\f\r]*")
_NON_SPACES = re.compile(r"[^ \t\n\v\f\r]*")
_LITERAL = re.compile(r"[^% \t\n\v\f\r]*")


def _run_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where the run of ``pattern`` starting at ``pos`` ends (the patterns match empty runs)."""
    m = pattern.match(text, pos)
    return pos if m is None else m.end()


# --- calendar arithmetic (proleptic Gregorian, Python integers) ----------------------------


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of year ``y``, month ``m`` (1-12), day ``d``."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (m <= 2), m, d


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _tm_of(t: int) -> Tm:
    """gmtime_r: the broken-down UTC time of ``t`` seconds (no range check)."""
    days, secs = divmod(t, 86400)
    y, m, d = _civil_from_days(days)
    yday = days - _days_from_civil(y, 1, 1)
    return [y - 1900, m - 1, d, secs // 3600, secs % 3600 // 60, secs % 60, (days + 4) % 7, yday]


def _timegm(tm: Tm) -> int:
    """timegm's arithmetic: any field may be out of range (it carries over)."""
    months = tm[1]
    year = tm[0] + 1900 + months // 12
    days = _days_from_civil(year, months % 12 + 1, 1) + tm[2] - 1
    return days * 86400 + tm[3] * 3600 + tm[4] * 60 + tm[5]


def _normalized(tm: Tm) -> tuple[int, Tm] | None:
    """(seconds, normalized fields) as glibc's timegm computes them, or None when the result's
    year does not fit in an int (glibc fails with -1 and leaves the fields as they were)."""
    t = _timegm(tm)
    out = _tm_of(t)
    if not INT_MIN <= out[0] <= INT_MAX:
        return None
    return t, out


def _int32(x: int) -> int:
    """``x`` as a C int after 32-bit wrap-around (glibc and libjq add 1900 to tm_year in int)."""
    return (x + 2**31) % 2**32 - 2**31


def _jq_number(t: int) -> int | float:
    """An integer as jq holds it: a double beyond 2**53."""
    return t if -(2**53) <= t <= 2**53 else float(t)


def _tm2jv(tm: Tm, sec: Any = None) -> list[Any]:
    return [
        _int32(tm[0] + 1900),
        tm[1],
        tm[2],
        tm[3],
        tm[4],
        tm[5] if sec is None else sec,
        tm[6],
        tm[7],
    ]


def _jv2tm(v: list[Any]) -> Tm | None:
    """libjq's jv2tm: the first eight elements (fewer when the array is shorter; missing ones are
    0), each a number that is not nan, clamped to a C int (the year after subtracting 1900)."""
    tm = [0] * 8
    for i, x in enumerate(v[:8]):
        if (type(x) is not int and type(x) is not float) or x != x:
            return None
        d = _double(x)
        if i == 0:
            d -= 1900.0
        tm[i] = INT_MIN if d < INT_MIN else INT_MAX if d > INT_MAX else int(d)
    return tm


def _double(x: int | float) -> float:
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


# --- gmtime, mktime, now -----------------------------------------------------------------


def _seconds_to_tm(v: Any) -> tuple[Tm, float]:
    """libjq's gmtime: (fields, fraction of a second); jq's errors for non-numbers and for
    numbers glibc cannot convert (nan, infinities, years beyond a C int)."""
    if type(v) is not int and type(v) is not float:
        raise JqError("gmtime() requires numeric inputs")
    f = _double(v)
    if not math.isfinite(f) or abs(f) >= 2.0**63:
        raise JqError("error converting number of seconds since epoch to datetime")
    tm = _tm_of(int(f))  # C's cast: toward zero
    if not INT_MIN <= tm[0] <= INT_MAX:
        raise JqError("error converting number of seconds since epoch to datetime")
    return tm, f - math.floor(f)


def gmtime(v: Any) -> list[Any]:
    tm, frac = _seconds_to_tm(v)
    sec: Any = tm[5]
    if frac:
        sec = tm[5] + frac
    return _tm2jv(tm, sec)


def mktime(v: Any) -> int | float:
    if type(v) is not list:
        raise JqError("mktime requires array inputs")
    tm = _jv2tm(v)
    if tm is None:
        raise JqError("mktime requires parsed datetime inputs")
    done = _normalized(tm)
    if done is None or done[0] == -1:  # glibc's timegm reports failure as -1
        raise JqError("invalid gmtime representation")
    return _jq_number(done[0])


def now() -> float:
    return time.time()


# --- strftime ------------------------------------------------------------------------------


class _Full(Exception):
    """The output reached libjq's buffer size: libjq reports ``unknown system failure``."""


def _c_str(s: str) -> str:
    """What C sees of a jq string: up to the first NUL."""
    nul = s.find("\x00")
    return s if nul < 0 else s[:nul]


def strftime(meter: Meter, v: Any, fmt: Any, name: str = "strftime/1") -> str:
    if type(v) is int or type(v) is float:
        v = gmtime(v)
    elif type(v) is not list:
        raise JqError(f"{name} requires parsed datetime inputs")
    if type(fmt) is not str:
        raise JqError(f"{name} requires a string format")
    tm = _jv2tm(v)
    if tm is None:
        raise JqError(f"{name} requires parsed datetime inputs")
    done = _normalized(tm)
    if done is not None:
        tm = done[1]
    fmt = _c_str(fmt)
    size = len(fmt.encode("utf-8", "surrogatepass")) if not fmt.isascii() else len(fmt)
    charge_text(meter, size)
    out = _Writer(meter, size + 100)
    try:
        _format(out, fmt, tm)
    except _Full:
        raise JqError(f"{name}: unknown system failure") from None
    text = "".join(out.parts)
    if not text and fmt:
        raise JqError(f"{name}: unknown system failure")
    return text


class _Writer:
    """Output bounded like libjq's buffer (``maxsize`` bytes including the NUL)."""

    __slots__ = ("meter", "parts", "room")

    def __init__(self, meter: Meter, maxsize: int) -> None:
        self.meter = meter
        self.parts: list[str] = []
        self.room = maxsize - 1

    def add(self, text: str, width: int, pad: str) -> None:
        """glibc's ``add``: ``text`` right-aligned in ``width`` (zeros when pad is '0')."""
        n = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        fill = width - n if width > n else 0
        if n + fill > self.room:
            raise _Full
        self.room -= n + fill
        if fill:
            self.parts.append(("0" if pad == "0" else " ") * fill)
        self.parts.append(text)


def _format(out: _Writer, fmt: str, tm: Tm) -> None:
    i = 0
    n = len(fmt)
    while i < n:
        j = fmt.find("%", i)
        if j < 0:
            j = n
        if j > i:  # a run of literal text, copied in one step
            out.add(fmt[i:j], -1, "")
            i = j
            continue
        charge(out.meter, DIRECTIVE_UNITS)
        i = _directive(out, fmt, j, tm)


def _directive(out: _Writer, fmt: str, start: int, tm: Tm) -> int:
    """Format the directive at ``fmt[start] == '%'``; return the index after it."""
    n = len(fmt)
    f = _run_end(_FLAGS, fmt, start + 1)
    flags = fmt[start + 1 : f]
    upper = "^" in flags
    change_case = "#" in flags
    last = max(flags.rfind("_"), flags.rfind("-"), flags.rfind("0"))
    pad = flags[last] if last >= 0 else ""
    width = -1
    w = f
    f = _run_end(_DIGITS, fmt, f)
    if f > w:
        # glibc saturates at INT_MAX; anything past the buffer fails the same way
        width = min(int(fmt[w:f]), INT_MAX) if f - w <= 12 else INT_MAX
    modifier = ""
    if f < n and fmt[f] in "EO":
        modifier = fmt[f]
        f += 1
    if f >= n:  # '%' (with flags) at the end: copied as written
        out.add(fmt[start:n], width, pad)
        return n
    c = fmt[f]
    nxt = f + 1
    state = _Spec(out, tm, pad, width, upper, change_case)
    if not _conversion(state, c, modifier):
        state.text(fmt[start:nxt])  # unknown: copied as written (case flags apply), like glibc
    return nxt


class _Spec:
    __slots__ = ("change_case", "lower", "out", "pad", "tm", "upper", "width")

    def __init__(self, out: _Writer, tm: Tm, pad: str, width: int, upper: bool, change_case: bool) -> None:
        self.out = out
        self.tm = tm
        self.pad = pad
        self.width = width
        self.upper = upper
        self.lower = False
        self.change_case = change_case

    def text(self, s: str) -> None:
        if self.lower:
            s = s.lower()
        elif self.upper:
            s = s.upper()
        self.out.add(s, self.width, self.pad)

    def number(self, digits: int, value: int, spacepad: bool = False) -> None:
        """glibc's do_number (with do_number_spacepad when ``spacepad``)."""
        if spacepad and self.pad not in ("0", "-"):
            self.pad = "_"
        self.signed(str(abs(value)), value < 0, max(digits, self.width))

    def signed(self, body: str, negative: bool, digits: int) -> None:
        """glibc's do_number_sign_and_padding."""
        text = ("-" if negative else "") + body
        width = self.width
        if self.pad != "-":
            padding = digits - len(text)
            if padding > 0:
                if self.pad == "_":
                    self.out.add(" " * padding, -1, "")
                    width = width - padding if width > padding else 0
                else:
                    if padding + len(text) > self.out.room:
                        raise _Full
                    text = ("-" if negative else "") + "0" * padding + body
                    width = 0
        self.out.add(text, width, self.pad)

    def sub(self, fmt: str) -> None:
        """A composite conversion (%c, %D, %F...): formatted whole, then padded as one piece."""
        inner = _Writer(self.out.meter, self.out.room + 1)
        _format(inner, fmt, self.tm)
        self.text("".join(inner.parts))


def _hour12(h: int) -> int:
    if h > 12:
        return h - 12
    return 12 if h == 0 else h


def _cdiv(a: int, b: int) -> int:
    """C's integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _cmod(a: int, b: int) -> int:
    return a - b * _cdiv(a, b)


def _iso_week_days(yday: int, wday: int) -> int:
    big = (366 // 7 + 2) * 7
    return yday - (yday - wday + 4 + big) % 7 + 3


def _conversion(s: _Spec, c: str, modifier: str) -> bool:
    """One conversion of glibc's strftime in the C locale; False for an unknown or ill-modified
    one (copied as written by the caller)."""
    tm = s.tm
    year = _int32(tm[0] + 1900)
    if c == "%":  # (glibc 2.36 ignores a modifier here)
        s.text("%")
    elif c in "aA":
        if modifier:
            return False
        if s.change_case:
            s.upper = True
        wday = tm[6]
        name = "?" if not 0 <= wday <= 6 else _DAYS[wday]
        s.text(name[:3] if c == "a" and name != "?" else name)
    elif c in "bhB":
        if s.change_case:  # (glibc sets this before refusing %Eb, so the copy is upper case)
            s.upper = True
        if modifier == "E":
            return False
        mon = tm[1]
        name = "?" if not 0 <= mon <= 11 else _MONTHS[mon]
        s.text(name if c == "B" or name == "?" else name[:3])
    elif c == "c":
        if modifier == "O":
            return False
        s.sub("%a %b %e %H:%M:%S %Y")
    elif c == "C":
        s.number(1, _cdiv(year, 100) - (_cmod(year, 100) < 0))
    elif c in "xD":
        if modifier == "O" or (c == "D" and modifier):
            return False
        s.sub("%m/%d/%y")
    elif c in "de":
        if modifier == "E":
            return False
        s.number(2, tm[2], spacepad=c == "e")
    elif c == "F":
        if modifier:
            return False
        s.sub("%Y-%m-%d")
    elif c in "Hk":
        if modifier == "E":
            return False
        s.number(2, tm[3], spacepad=c == "k")
    elif c in "Il":
        if modifier == "E":
            return False
        s.number(2, _hour12(tm[3]), spacepad=c == "l")
    elif c == "j":
        if modifier == "E":
            return False
        s.number(3, 1 + tm[7])
    elif c == "M":
        if modifier == "E":
            return False
        s.number(2, tm[4])
    elif c == "m":
        if modifier == "E":
            return False
        s.number(2, tm[1] + 1)
    elif c == "n":
        s.text("\n")
    elif c == "t":
        s.text("\t")
    elif c in "pP":
        if c == "P" or s.change_case:
            s.lower = True
        s.text("PM" if tm[3] > 11 else "AM")
    elif c == "R":
        s.sub("%H:%M")
    elif c == "r":
        s.sub("%I:%M:%S %p")
    elif c == "S":
        if modifier == "E":
            return False
        s.number(2, tm[5])
    elif c == "s":
        t = _timegm(tm)
        s.signed(str(abs(t)), t < 0, 1)
    elif c in "XT":
        if c == "X" and modifier == "O":
            return False
        s.sub("%H:%M:%S")
    elif c == "u":
        s.number(1, _cmod(tm[6] - 1 + 7, 7) + 1)
    elif c == "U":
        if modifier == "E":
            return False
        s.number(2, _cdiv(tm[7] - tm[6] + 7, 7))
    elif c in "VgG":
        if modifier == "E":
            return False
        iso_year = year
        days = _iso_week_days(tm[7], tm[6])
        if days < 0:
            iso_year -= 1
            days = _iso_week_days(tm[7] + 365 + _leap(iso_year), tm[6])
        else:
            d = _iso_week_days(tm[7] - (365 + _leap(iso_year)), tm[6])
            if d >= 0:
                iso_year += 1
                days = d
        if c == "g":
            s.number(2, (_cmod(iso_year, 100) + 100) % 100)
        elif c == "G":
            s.number(1, iso_year)
        else:
            s.number(2, _cdiv(days, 7) + 1)
    elif c == "W":
        if modifier == "E":
            return False
        s.number(2, _cdiv(tm[7] - _cmod(tm[6] - 1 + 7, 7) + 7, 7))
    elif c == "w":
        if modifier == "E":
            return False
        s.number(1, tm[6])
    elif c == "Y":
        if modifier == "O":
            return False
        s.number(1, year)
    elif c == "y":
        s.number(2, (_cmod(tm[0], 100) + 100) % 100)
    elif c == "Z":
        if s.change_case:
            s.lower = True
            s.upper = False
        s.text("GMT")  # libjq's struct tm has no zone: glibc prints tzname[0], GMT for UTC
    elif c == "z":
        s.text("+")
        s.number(4, 0)
    else:
        return False
    return True


# --- strptime ------------------------------------------------------------------------------


class _NoMatch(Exception):
    pass


class _Parse:
    """glibc's __strptime_internal state: the input, the position, the fields and flags."""

    __slots__ = (
        "century",
        "decided",
        "have_I",
        "have_mday",
        "have_mon",
        "have_uweek",
        "have_wday",
        "have_wweek",
        "have_yday",
        "is_pm",
        "meter",
        "pos",
        "text",
        "tm",
        "want_century",
        "want_era",
        "want_xday",
        "week_no",
    )

    def __init__(self, meter: Meter, text: str) -> None:
        self.meter = meter
        self.text = text
        self.pos = 0
        # libjq zeroes the struct and marks wday/yday with sentinels (8, 367)
        self.tm: Tm = [0, 0, 0, 0, 0, 0, 8, 367]
        self.have_I = self.have_wday = self.have_yday = self.have_mon = self.have_mday = False
        self.have_uweek = self.have_wweek = self.is_pm = False
        self.want_century = self.want_era = self.want_xday = False
        # glibc's "decided" (not, loc, raw): the C locale has no alternative digits or eras, so
        # the first %O number decides "loc", after which %O numbers and %EC/%Ey/%EY fail.
        self.decided = "not"
        self.week_no = 0
        self.century = -1

    def skip_space(self) -> None:
        self.pos = _run_end(_SPACES, self.text, self.pos)

    def number(self, lo: int, hi: int, digits: int) -> int:
        """glibc's get_number: spaces, then up to ``digits`` digits (stopping early once another
        digit would pass ``hi``), in [lo, hi]."""
        self.skip_space()
        text = self.text
        p = self.pos
        if p >= len(text) or not ("0" <= text[p] <= "9"):
            raise _NoMatch
        val = 0
        while True:
            val = val * 10 + ord(text[p]) - 48
            p += 1
            digits -= 1
            if not (digits > 0 and val * 10 <= hi and p < len(text) and "0" <= text[p] <= "9"):
                break
        self.pos = p
        if not lo <= val <= hi:
            raise _NoMatch
        return val

    def _at(self, name: str, p: int) -> int | None:
        """strncasecmp in the C locale: where ``name`` ends when it is at ``p`` (ASCII case)."""
        end = p + len(name)
        piece = self.text[p:end]
        return end if piece.isascii() and piece.lower() == name.lower() else None

    def month(self) -> int:
        """The longest full or three-letter month name at the position."""
        best = -1
        best_end = -1
        for i, name in enumerate(_MONTHS):
            for cand in (name, name[:3]):
                end = self._at(cand, self.pos)
                if end is not None and end > best_end:
                    best, best_end = i, end
        if best < 0:
            raise _NoMatch
        self.pos = best_end
        return best

    def weekday(self) -> int:
        """glibc's day-name loop, literally: its fallback to the built-in names advances the
        position for an abbreviation while keeping the old one as the match, so ``%a`` on
        ``SunMon`` reads Monday, and once a modifier made glibc "raw" an abbreviation is
        matched without being consumed (libjq then reports trailing text)."""
        start = self.pos
        rp = start
        best = -1
        best_end: int | None = None
        for cnt, name in enumerate(_DAYS):
            if self.decided != "raw":
                for cand in (name, name[:3]):
                    end = self._at(cand, rp)
                    if end is not None and (best_end is None or end > best_end):
                        best, best_end = cnt, end
            if self.decided != "loc":
                end = self._at(name, rp)
                if end is not None and (best_end is None or end > best_end):
                    best, best_end = cnt, end
                    continue
                trp = rp
                end = self._at(name[:3], rp)
                if end is not None:
                    rp = end
                    if best_end is None or trp > best_end:
                        best, best_end = cnt, trp
        if best_end is None:
            raise _NoMatch
        self.pos = best_end
        return best


def _parse(st: _Parse, fmt: str) -> None:
    text = st.text
    tm = st.tm
    i = 0
    n = len(fmt)
    while i < n:
        ch = fmt[i]
        if ch in _SPACE:  # any run of white space matches any (or no) white space
            st.skip_space()
            i = _run_end(_SPACES, fmt, i)
            continue
        if ch != "%":  # a run of literal text, compared in one step
            end = _run_end(_LITERAL, fmt, i)
            if not text.startswith(fmt[i:end], st.pos):
                raise _NoMatch
            st.pos += end - i
            i = end
            continue
        charge(st.meter, DIRECTIVE_UNITS)
        # strftime's flags and widths are skipped
        i = _run_end(_DIGITS, fmt, _run_end(_FLAGS, fmt, i + 1))
        modifier = ""
        if i < n and fmt[i] in "EO":
            modifier = fmt[i]
            i += 1
        if i >= n:
            raise _NoMatch
        c = fmt[i]
        i += 1
        if modifier == "E":
            if c == "y":
                if st.decided != "raw":  # no eras in the C locale: glibc reads a year twice
                    tm[0] = st.number(0, 9999, 4)
                    st.want_era = st.want_xday = st.want_century = True
                    if st.decided == "loc":
                        raise _NoMatch
                    st.decided = "raw"
                val = st.number(0, 99, 2)
                tm[0] = val if val >= 69 else val + 100
                st.want_century = st.want_xday = True
                continue
            if c not in "cCxXY":
                raise _NoMatch
            if c in "CY" and st.decided != "raw":
                if st.decided == "loc":
                    raise _NoMatch
                st.decided = "raw"
        elif modifier == "O" and c not in "bBh":  # (%Ob and friends are plain %b)
            if c not in "deHImMSUVWwy" or st.decided == "loc":
                raise _NoMatch
            if st.decided == "not":
                st.decided = "loc"
        if c == "%":
            if st.pos >= len(text) or text[st.pos] != "%":
                raise _NoMatch
            st.pos += 1
        elif c in "aA":
            tm[6] = st.weekday()
            st.have_wday = True
        elif c in "bBh":
            tm[1] = st.month()
            st.have_mon = st.want_xday = True
        elif c == "c":
            _parse(st, "%a %b %e %H:%M:%S %Y")
            st.want_xday = True
        elif c == "C":
            st.century = st.number(0, 99, 2)
            st.want_xday = True
        elif c in "de":
            tm[2] = st.number(1, 31, 2)
            st.have_mday = st.want_xday = True
        elif c == "F":
            _parse(st, "%Y-%m-%d")
            st.want_xday = True
        elif c in "xD":
            _parse(st, "%m/%d/%y")
            st.want_xday = True
        elif c in "kH":
            tm[3] = st.number(0, 23, 2)
            st.have_I = False
        elif c in "lI":
            tm[3] = st.number(1, 12, 2) % 12
            st.have_I = True
        elif c == "j":
            tm[7] = st.number(1, 366, 3) - 1
            st.have_yday = True
        elif c == "m":
            tm[1] = st.number(1, 12, 2) - 1
            st.have_mon = st.want_xday = True
        elif c == "M":
            tm[4] = st.number(0, 59, 2)
        elif c in "nt":
            st.skip_space()
        elif c == "p":
            rest = text[st.pos : st.pos + 2].upper()
            if rest == "AM":
                st.is_pm = False
            elif rest == "PM":
                st.is_pm = True
            else:
                raise _NoMatch
            st.pos += 2
        elif c == "r":
            _parse(st, "%I:%M:%S %p")
        elif c == "R":
            _parse(st, "%H:%M")
        elif c == "s":
            _epoch_seconds(st)
        elif c == "S":
            tm[5] = st.number(0, 61, 2)
        elif c in "XT":
            _parse(st, "%H:%M:%S")
        elif c == "u":
            tm[6] = st.number(1, 7, 1) % 7
            st.have_wday = True
        elif c == "g":
            st.number(0, 99, 2)
        elif c == "G":
            p = _run_end(_DIGITS, text, st.pos)
            if p == st.pos:
                raise _NoMatch
            st.pos = p
        elif c in "UW":
            st.week_no = st.number(0, 53, 2)
            if c == "U":
                st.have_uweek = True
            else:
                st.have_wweek = True
        elif c == "V":
            st.number(0, 53, 2)
        elif c == "w":
            tm[6] = st.number(0, 6, 1)
            st.have_wday = True
        elif c == "y":
            val = st.number(0, 99, 2)
            tm[0] = val if val >= 69 else val + 100
            st.want_xday = True
            if modifier != "O":  # glibc's %Oy leaves the century flag alone
                st.want_century = True
        elif c == "Y":
            tm[0] = st.number(0, 9999, 4) - 1900
            st.want_century = False
            st.want_xday = True
        elif c == "Z":
            st.skip_space()
            st.pos = _run_end(_NON_SPACES, text, st.pos)
        elif c == "z":
            _zone(st)
        else:
            raise _NoMatch


def _epoch_seconds(st: _Parse) -> None:
    """%s: digits read into a 64-bit time_t (wrapping like glibc's loop), then gmtime."""
    start = st.pos
    p = _run_end(_DIGITS, st.text, start)
    if p == start:
        raise _NoMatch
    st.pos = p
    digits = st.text[start:p]
    value = 0
    for k in range(0, len(digits), 18):  # 18 digits at a time: linear in their number
        chunk = digits[k : k + 18]
        value = (value * 10 ** len(chunk) + int(chunk)) % 2**64
    if value >= 2**63:
        value -= 2**64
    tm = _tm_of(value)
    if not INT_MIN <= tm[0] <= INT_MAX:
        raise _NoMatch
    st.tm[:] = tm


def _zone(st: _Parse) -> None:
    """%z: Z, or +hh, +hhmm, +hh:mm (the offset is read and dropped: jq's dates are UTC)."""
    st.skip_space()
    text = st.text
    p = st.pos
    if p < len(text) and text[p] == "Z":
        st.pos = p + 1
        return
    if p >= len(text) or text[p] not in "+-":
        raise _NoMatch
    p += 1
    count = 0
    val = 0
    while count < 4 and p < len(text) and "0" <= text[p] <= "9":
        val = val * 10 + ord(text[p]) - 48
        p += 1
        count += 1
        if count == 2 and p + 1 < len(text) and text[p] == ":" and "0" <= text[p + 1] <= "9":
            p += 1
    if count == 2:
        val *= 100
    elif count != 4 or val % 100 >= 60:
        raise _NoMatch
    st.pos = p


def _day_of_the_week(tm: Tm) -> None:
    corr_year = 1900 + tm[0] - (tm[1] < 2)
    q = _cdiv(corr_year, 4)
    wday = (
        -473
        + 365 * (tm[0] - 70)
        + q
        - _cdiv(q, 25)
        + (_cmod(q, 25) < 0)
        + _cdiv(_cdiv(q, 25), 4)
        + _mon_yday(False, tm[1])
        + tm[2]
        - 1
    )
    tm[6] = (_cmod(wday, 7) + 7) % 7


def _mon_yday(leap: bool, mon: int) -> int:
    """glibc's ``__mon_yday[leap][mon]``, out-of-range months included: its week and year-day
    arithmetic reads past the table (libjq shows 0 before it; past the end, our loops stop)."""
    i = 13 * leap + mon
    if i < 0:
        return 0
    return _MON_YDAY[i] if i < len(_MON_YDAY) else 1 << 40


def _month_and_day(st: _Parse) -> None:
    """glibc: the month and day of the year day, for the fields the input did not give."""
    tm = st.tm
    leap = _leap(1900 + tm[0])
    t_mon = 0
    while _mon_yday(leap, t_mon) <= tm[7]:
        t_mon += 1
    if not st.have_mon:
        tm[1] = t_mon - 1
    if not st.have_mday:
        tm[2] = tm[7] - _mon_yday(leap, t_mon - 1) + 1


def _finish(st: _Parse) -> None:
    """What glibc does after the whole format matched."""
    tm = st.tm
    if st.have_I and st.is_pm:
        tm[3] += 12
    if st.century != -1:
        if st.want_century:
            tm[0] = _cmod(tm[0], 100) + (st.century - 19) * 100
        else:
            tm[0] = (st.century - 19) * 100
    if st.want_era and st.want_century and st.century == -1 and tm[0] < 69:
        tm[0] += 100
    if st.want_xday and not st.have_wday:
        if not (st.have_mon and st.have_mday) and st.have_yday:
            _month_and_day(st)
            st.have_mon = st.have_mday = True
        if st.have_mon or 0 <= tm[1] <= 11:
            _day_of_the_week(tm)
    if st.want_xday and not st.have_yday and (st.have_mon or 0 <= tm[1] <= 11):
        tm[7] = _mon_yday(_leap(1900 + tm[0]), tm[1]) + tm[2] - 1
    if (st.have_uweek or st.have_wweek) and st.have_wday:
        save_wday, save_mday, save_mon = tm[6], tm[2], tm[1]
        w_offset = 0 if st.have_uweek else 1
        tm[2] = 1
        tm[1] = 0
        _day_of_the_week(tm)
        if st.have_mday:
            tm[2] = save_mday
        if st.have_mon:
            tm[1] = save_mon
        if not st.have_yday:
            tm[7] = (
                _cmod(7 - (tm[6] - w_offset), 7) + (st.week_no - 1) * 7 + _cmod(save_wday - w_offset + 7, 7)
            )
        if not st.have_mday or not st.have_mon:
            _month_and_day(st)
        tm[6] = save_wday


def strptime(meter: Meter, v: Any, fmt: Any) -> list[Any]:
    if type(v) is not str or type(fmt) is not str:
        raise JqError("strptime/1 requires string inputs and arguments")
    text = _c_str(v)
    form = _c_str(fmt)
    charge_text(meter, len(text) + len(form))
    st = _Parse(meter, text)
    try:
        _parse(st, form)
        if st.pos < len(text) and text[st.pos] not in _SPACE:
            raise _NoMatch
    except (_NoMatch, IndexError):
        # jq quotes both in full (the charge above paid for reading them)
        charge(meter, 2 + (len(text) + len(form)) // STRING_UNIT)
        raise JqError(f'date "{text}" does not match format "{form}"') from None
    _finish(st)
    out = _tm2jv(st.tm)
    if st.pos < len(text):
        out.append(text[st.pos :])
    return out


# --- jq's definitions on top -----------------------------------------------------------------


def todate(meter: Meter, v: Any) -> str:
    return strftime(meter, v, ISO8601)


def fromdate(meter: Meter, v: Any) -> int | float:
    return mktime(strptime(meter, v, ISO8601))


__all__ = ["fromdate", "gmtime", "mktime", "now", "strftime", "strptime", "todate"]
