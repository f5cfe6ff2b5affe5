"""Kubernetes resource quantities (``resource.Quantity``), parsed exactly.

A quantity is held as an integer number of *nano-units* (1e-9 of the base unit). That is the
precision Kubernetes keeps: a value with more precision than nano is rounded up on parse. Every
quantity that can appear in a valid object is therefore an exact integer here, and sums,
maxima and multiplications stay exact; conversion to millicores or bytes rounds up at the end,
as ``Quantity.MilliValue()`` / ``Quantity.Value()`` do.

Grammar (from the Kubernetes API reference)::

    <quantity>        ::= <signedNumber><suffix>
    <signedNumber>    ::= <number> | +<number> | -<number>
    <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
    <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>       ::= m | "" | k | M | G | T | P | E
    <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>

Kubernetes' parser also accepts ``n`` (nano) and ``u`` (micro), and so does this one.
So ``1E`` is one exa, ``1E3`` is one thousand, ``12e6`` is twelve million. JSON numbers are
accepted too (Kubernetes accepts an unquoted number for a quantity).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from workload_map.errors import ResolveError

NANO = 1_000_000_000

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

_QUANTITY_RE = re.compile(
    r"""^(?P<sign>[+-]?)
        (?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?
        (?:(?P<bin>[KMGTPE]i)|[eE](?P<exp>[+-]?[0-9]+)|(?P<dec>[numkMGTPE]?))$""",
    re.VERBOSE,
)
# Kubernetes caps the exponent; anything larger is outside what a Quantity can hold.
_MAX_EXPONENT = 1000
#: Digits a quantity's number may have (integer and fraction together). Kubernetes keeps at most
#: int64 nano-units (19 digits) and the largest text it accepts has a few dozen; this also keeps
#: Python's own limit on int() of long digit strings (4,300) from ever being reached.
MAX_DIGITS = 100
#: Characters of a bad value quoted in an error message.
_QUOTED = 40


class QuantityError(ResolveError):
    """A value is not a valid Kubernetes quantity."""


def _ceil_div(a: int, b: int) -> int:
    """Divide, rounding the magnitude up (away from zero), as Kubernetes scales quantities."""
    q = -((-abs(a)) // b)
    return -q if a < 0 else q


def _quoted(text: str) -> str:
    """``text`` for a message: repr, cut to a few dozen characters with its length."""
    if len(text) <= _QUOTED:
        return repr(text)
    return f"{text[:_QUOTED]!r}... ({len(text):,} characters)"


def _invalid(value: Any) -> QuantityError:
    shown = _quoted(value) if isinstance(value, str) else repr(value)[:_QUOTED]
    return QuantityError(f"quantity {shown} is not a valid Kubernetes quantity")


@lru_cache(maxsize=4096)
def _parse_text(text: str) -> int:
    if len(text) > MAX_DIGITS + 16:  # sign, point, suffix or exponent besides the digits
        raise QuantityError(
            f"quantity {_quoted(text)} is too long: a quantity has at most {MAX_DIGITS} digits"
        )
    m = _QUANTITY_RE.match(text)
    if m is None:
        raise _invalid(text)
    int_part = m.group("int") or ""
    frac_part = m.group("frac") or ""
    if not int_part and not frac_part:
        raise _invalid(text)
    if len(int_part) + len(frac_part) > MAX_DIGITS:
        raise QuantityError(
            f"quantity {_quoted(text)} is too long: a quantity has at most {MAX_DIGITS} digits"
        )
    digits = int((int_part + frac_part) or "0")
    # value = digits * 10**(-len(frac)) * multiplier
    scale10 = -len(frac_part)
    mult2 = 1
    if m.group("bin"):
        mult2 = _BINARY[m.group("bin")]
    elif m.group("exp") is not None:
        exp = int(m.group("exp"))
        if abs(exp) > _MAX_EXPONENT:
            raise QuantityError(f"quantity {_quoted(text)} is out of range")
        scale10 += exp
    else:
        scale10 += _DECIMAL[m.group("dec") or ""]
    # Convert to nano-units, rounding the magnitude up (away from zero) like Kubernetes does.
    scale10 += 9
    numerator = digits * mult2
    value = numerator * 10**scale10 if scale10 >= 0 else _ceil_div(numerator, 10 ** (-scale10))
    return -value if m.group("sign") == "-" else value


def parse_quantity(value: Any) -> int:
    """Parse a quantity (string or JSON number) into integer nano-units.

    Raises :class:`QuantityError` (a :class:`~workload_map.errors.ResolveError`) when the value
    is not a quantity.
    """
    if isinstance(value, str):
        return _parse_text(value.strip())
    if isinstance(value, bool) or value is None:
        raise _invalid(value)
    if isinstance(value, int):
        return value * NANO
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise _invalid(value)
        return _parse_text(repr(value))
    raise _invalid(value)


# A Quantity's int64 value (``Quantity.Value()``) cannot exceed this; the API server still accepts
# larger texts (``999999999999999999999999Ei``). Sums here stay exact; machine output saturates.
INT64_MAX = 2**63 - 1


def saturate(n: int) -> int:
    """``n`` clamped to int64, for JSON and other fixed-width outputs."""
    return INT64_MAX if n > INT64_MAX else (-INT64_MAX - 1 if n < -INT64_MAX - 1 else n)


def to_millis(nanos: int) -> int:
    """Nano-units to milli-units, rounded up (``Quantity.MilliValue``)."""
    return _ceil_div(nanos, 1_000_000)


def to_units(nanos: int) -> int:
    """Nano-units to whole units, rounded up (``Quantity.Value``)."""
    return _ceil_div(nanos, NANO)


# --- canonical text (Quantity.String) of integral quantities ---------------------------------

_DECIMAL_SUFFIXES = ("", "k", "M", "G", "T", "P", "E")
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def format_decimal(n: int) -> str:
    """An integer as Kubernetes prints a ``DecimalSI`` quantity: the largest power-of-1000 suffix
    that keeps the mantissa an integer (``1500`` -> ``1500``, ``2000`` -> ``2k``)."""
    if n == 0:
        return "0"
    exponent = 0
    while n % 1000 == 0 and exponent < len(_DECIMAL_SUFFIXES) - 1:
        n //= 1000
        exponent += 1
    return f"{n}{_DECIMAL_SUFFIXES[exponent]}"


def format_binary(n: int) -> str:
    """An integer as Kubernetes prints a ``BinarySI`` quantity: below 1024 in magnitude as
    ``DecimalSI``, else the largest power-of-1024 suffix with an integer mantissa
    (``1073741824`` -> ``1Gi``, ``1000000000`` -> ``1000000000``)."""
    if -1024 < n < 1024:
        return format_decimal(n)
    exponent = 0
    while n % 1024 == 0 and exponent < len(_BINARY_SUFFIXES) - 1:
        n //= 1024
        exponent += 1
    return f"{n}{_BINARY_SUFFIXES[exponent]}"


def format_millis(millis: int) -> str:
    """Milli-units as Kubernetes prints ``NewMilliQuantity(millis, DecimalSI)``: ``1500m``,
    ``2`` for 2000."""
    if millis % 1000 == 0:
        return format_decimal(millis // 1000)
    return f"{millis}m"


# --- quantities as text (what `kubectl get` prints and what objects carry) ------------------------
#
# Not the canonical set above, and not to be merged with it: the two say different things about
# the same number. format_* is Kubernetes' Quantity.String() for a value of a known Format, what
# Karmada's ResourceList (to_resource_list) must equal byte for byte; one Format per resource
# (memory BinarySI: 10**9 bytes is "1000000000", 10**6 cores is "1k"). cpu_text/memory_text give
# the shortest exact text whatever the Format, as people write requests (tables, `requirements`,
# the scheduler objects' minResources: 10**9 bytes is "1G", 1000 cores "1000"). Both parse back
# to the same value (tests/resolve/test_quantity.py pins where they differ).

_BINARY_UNITS = (
    ("Ei", 1 << 60),
    ("Pi", 1 << 50),
    ("Ti", 1 << 40),
    ("Gi", 1 << 30),
    ("Mi", 1 << 20),
    ("Ki", 1 << 10),
)
_DECIMAL_UNITS = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def cpu_text(millis: int) -> str:
    """Millicores as a Kubernetes quantity: ``4``, ``500m``, ``0``."""
    if millis % 1000 == 0:
        return str(millis // 1000)
    return f"{millis}m"


def memory_text(value: int) -> str:
    """Bytes (or any whole units) as a Kubernetes quantity: binary units when exact (``16Gi``),
    else decimal when exact (``70M``), else plain."""
    if value == 0:
        return "0"
    for suffix, unit in _BINARY_UNITS:
        if value % unit == 0:
            return f"{value // unit}{suffix}"
    for suffix, unit in _DECIMAL_UNITS:
        if value % unit == 0:
            return f"{value // unit}{suffix}"
    return str(value)
