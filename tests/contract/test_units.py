import re
import subprocess
import sys

import pytest

from ms4watch.contract.errors import UnitError
from ms4watch.contract.units import _FACTORS, CANONICAL, Quantity, pint_factors, to_canonical


@pytest.mark.parametrize("quantity, value, unit, expected", [
    ("rain", 25.4, "mm", 1.0),
    ("rain", 0.01, "in", 0.01),
    ("flow", 1.0, "cfs", 448.8312),
    ("flow", 1.0, "L/s", 15.85032),
    ("flow", 1.0, "MGD", 694.4444),
    ("flow", 3.0, "gpm", 3.0),
    ("level", 1.0, "m", 3.28084),
    ("velocity", 0.3048, "m/s", 1.0),
    ("turbidity", 12.0, "FNU", 12.0),
    ("turbidity", 12.0, "NTU", 12.0),
    ("temperature", 212.0, "degF", 100.0),
    ("battery", 12600.0, "mV", 12.6),
])
def test_conversions_to_canonical(quantity, value, unit, expected):
    assert to_canonical(quantity, value, unit) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("quantity, unit", [("flow", "mm"), ("rain", "gpm"), ("turbidity", "mg/L"),
                                            ("flow", "furlongs per fortnight x")])
def test_wrong_units_are_refused(quantity, unit):
    with pytest.raises(UnitError):
        to_canonical(quantity, 1.0, unit)


def test_every_quantity_has_a_canonical_unit():
    assert set(CANONICAL) == set(Quantity)
    for q, u in CANONICAL.items():
        assert to_canonical(q, 2.5, u) == pytest.approx(2.5)


@pytest.mark.parametrize("quantity, key", sorted(_FACTORS, key=str))
def test_the_factor_table_is_pints_own(quantity, key):
    assert _FACTORS[(quantity, key)] == pint_factors(quantity, key)


def test_the_units_of_the_table_convert_without_loading_pint():
    code = ("import sys; from ms4watch.contract.units import to_canonical; "
            "print(to_canonical('flow', 1.0, 'cfs'), to_canonical('temperature', 212.0, 'degF'), "
            "'pint' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [repr(to_canonical("flow", 1.0, "cfs")), repr(to_canonical("temperature", 212.0, "degF")), "False"]


@pytest.mark.timeout(20)
@pytest.mark.parametrize("unit", ["10**10**7*m", "m/10**10**7", "m*1e308", "(m)**99", "m**99", "2*m", "m^3^3^3",
                                  "(m)", "m+1", "m//s", "exp(m)", "m" + "*m" * 300, "m;9**9**9"])
def test_a_unit_from_outside_is_matched_never_evaluated(unit):
    # pint's parser evaluates: 10**10**7 would hold the GIL for many seconds (ingest stopped)
    with pytest.raises(UnitError, match=f"unknown unit .*{re.escape(unit[:20])}.* is not a plain unit"):
        to_canonical("level", 1.0, unit)


@pytest.mark.parametrize("quantity, unit, expected", [("level", "feet", 1.0), ("level", "µm", 3.28084e-6),
                                                       ("flow", "ft³/s", 448.8312), ("flow", "ft^3/s", 448.8312),
                                                       ("flow", "ft**3 / s", 448.8312), ("flow", "liter/minute", 0.264172),
                                                       ("temperature", "°F", -17.22222), ("conductivity", "µS/cm", 1.0)])
def test_plain_spellings_pint_knows_still_convert(quantity, unit, expected):
    assert to_canonical(quantity, 1.0, unit) == pytest.approx(expected, rel=1e-5)
