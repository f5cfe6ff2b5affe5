from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workload_map.errors import ResolveError
from workload_map.resolve.quantity import (
    NANO,
    QuantityError,
    cpu_text,
    format_binary,
    format_millis,
    memory_text,
    parse_quantity,
    to_millis,
    to_units,
)


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        ("1", NANO),
        ("0", 0),
        ("100m", 100_000_000),
        ("0.5", 500_000_000),
        ("1.5", 1_500_000_000),
        (".5", 500_000_000),
        ("2.", 2 * NANO),
        ("+3", 3 * NANO),
        ("1k", 1000 * NANO),
        ("1M", 10**6 * NANO),
        ("1G", 10**9 * NANO),
        ("1T", 10**12 * NANO),
        ("1P", 10**15 * NANO),
        ("1E", 10**18 * NANO),  # E alone is the exa suffix
        ("1Ki", 1024 * NANO),
        ("1Mi", 2**20 * NANO),
        ("1.5Gi", 3 * 2**29 * NANO),
        ("1Ti", 2**40 * NANO),
        ("1Pi", 2**50 * NANO),
        ("1Ei", 2**60 * NANO),
        ("1e3", 1000 * NANO),  # e<n> is an exponent
        ("1E3", 1000 * NANO),
        ("12E6", 12 * 10**6 * NANO),
        ("12e6", 12 * 10**6 * NANO),
        ("1e-3", 10**6),
        ("1.5e+2", 150 * NANO),
        ("1n", 1),  # n and u are accepted by Kubernetes' parser though not in the documented grammar
        ("5u", 5000),
    ],
)
def test_parse_table(text: str, nanos: int | None) -> None:
    if nanos is None:
        with pytest.raises(QuantityError):
            parse_quantity(text)
    else:
        assert parse_quantity(text) == nanos


@pytest.mark.parametrize(
    "text", ["", "abc", "1Ki5", "1.2.3", "Gi", "1 Gi", "1e", "1ki", "1KiB", "--1", "1e3.5", "."]
)
def test_invalid(text: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert isinstance(info.value, ResolveError)


def test_precision_beyond_nano_rounds_up() -> None:
    assert parse_quantity("1e-12") == 1
    assert parse_quantity("0.0000000001") == 1
    assert parse_quantity("1.0000000001") == NANO + 1


def test_numbers_are_quantities() -> None:
    assert parse_quantity(2) == 2 * NANO
    assert parse_quantity(0.25) == 250_000_000
    assert parse_quantity(1e3) == 1000 * NANO


@pytest.mark.parametrize("value", [None, True, [], {}, float("nan"), float("inf")])
def test_non_quantities(value: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(value)


def test_rounding_to_millis_and_units_is_up() -> None:
    assert to_millis(parse_quantity("0.0001")) == 1  # 0.1m -> 1m
    assert to_millis(parse_quantity("250m")) == 250
    assert to_units(parse_quantity("1.5")) == 2
    assert to_units(parse_quantity("0.1Ki")) == 103  # 102.4 bytes -> 103
    assert to_units(parse_quantity("128974848")) == 128974848
    assert to_units(parse_quantity("129e6")) == 129_000_000
    assert to_units(parse_quantity("123Mi")) == 123 * 2**20


def test_whitespace_is_tolerated_around() -> None:
    assert parse_quantity(" 1Gi ") == 2**30 * NANO


# --- property: parsing agrees with exact rational arithmetic --------------------------------

_SUFFIX = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}


@given(
    int_part=st.text("0123456789", min_size=1, max_size=6),
    frac_part=st.one_of(st.none(), st.text("0123456789", max_size=12)),
    suffix=st.one_of(st.sampled_from(sorted(_SUFFIX)), st.integers(-15, 15).map(lambda e: f"e{e}")),
    negative=st.booleans(),
)
def test_parse_matches_exact_arithmetic(
    int_part: str, frac_part: str | None, suffix: str, negative: bool
) -> None:
    number = int_part if frac_part is None else f"{int_part}.{frac_part}"
    value = Fraction(number)
    value *= _SUFFIX[suffix] if suffix in _SUFFIX else Fraction(10) ** int(suffix[1:])
    nanos = value * NANO
    expected = -((-nanos.numerator) // nanos.denominator)  # ceil of the magnitude
    text = ("-" if negative else "") + number + suffix
    assert parse_quantity(text) == (-expected if negative else expected)


def test_huge_quantities_stay_exact_inside_and_saturate_in_machine_output() -> None:
    # The API server accepts this memory request; one such pod must not break JSON output.
    import orjson

    from workload_map.resolve.quantity import INT64_MAX, saturate
    from workload_map.resolve.resources import pod_spec_totals
    from workload_map.views.model import Resources

    spec = {
        "containers": [{"name": "c", "resources": {"requests": {"memory": "999999999999999999999999Ei"}}}]
    }
    totals = pod_spec_totals(spec).times(3)
    assert totals.memory_bytes == 3 * 999999999999999999999999 * 2**60  # exact
    assert totals.to_dict()["memoryBytes"] == INT64_MAX
    assert orjson.loads(orjson.dumps(Resources.of(totals).to_dict()))["memoryBytes"] == INT64_MAX
    assert saturate(-(2**70)) == -(2**63)
    assert saturate(12) == 12


def test_canonical_and_display_texts_differ_where_kubernetes_format_decides() -> None:
    """Two formatter sets, two facts (see the comment in quantity.py): the canonical text of a
    BinarySI memory value / DecimalSI milli-cpu value (format_binary's and format_millis's
    documented cases), and the shortest exact text people write. They differ only where the
    Format decides; both read back as the same quantity, so merging them would change output
    without changing a value."""
    assert (format_binary(10**9), memory_text(10**9)) == ("1000000000", "1G")
    assert (format_millis(10**6), cpu_text(10**6)) == ("1k", "1000")
    for n in (0, 1000, 1024, 1536, 10**9, 16 << 30, 500 * 2**20, 3 * 10**12):
        assert to_units(parse_quantity(format_binary(n))) == n == to_units(parse_quantity(memory_text(n)))
        assert format_binary(n) == memory_text(n) or n % 1024 != 0 or n < 1024
    for millis in (0, 1, 500, 1000, 1500, 10**6, 10**6 + 1):
        assert (
            to_millis(parse_quantity(format_millis(millis)))
            == millis
            == to_millis(parse_quantity(cpu_text(millis)))
        )
