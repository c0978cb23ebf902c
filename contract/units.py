"""Canonical units, and conversion at the boundary with pint.

Every reading is converted once, at ingest (and in replay/import), into the canonical unit
of its quantity. Everything downstream — the store, the rules, the dashboards — sees only
canonical units, so a threshold never meets a number in the wrong unit.

=============  ==========  =====================================================
quantity       canonical   accepted on the wire (a plain pint spelling: see ``UnitSpelling``)
=============  ==========  =====================================================
rain           in          in, mm, cm (depth fallen in the interval ending at t)
flow           gpm         gpm, cfs (ft³/s), L/s, m³/s, MGD
level          ft          ft, in, m, cm, mm
velocity       ft/s        ft/s, m/s
turbidity      NTU         NTU, FNU, FTU, FNMU (treated 1:1; see note)
battery        V           V, mV
temperature    degC        degC, degF, K
signal         dBm         dBm
conductivity   uS/cm       uS/cm, mS/cm
=============  ==========  =====================================================

Note on turbidity: NTU (EPA 180.1, white light, 90°) and FNU (ISO 7027, near-infrared,
90°) are different methods, not different units; USGS reports them side by side without a
conversion. We store both as "NTU-equivalent" numbers and keep the method in the raw unit.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

from .errors import UnitError


_V = TypeVar("_V")


class Converter(Protocol):
    """Turns values in one unit into the canonical unit: a float, or an array of them at once."""

    @overload
    def __call__(self, v: float, /) -> float: ...
    @overload
    def __call__(self, v: NDArray[np.float64], /) -> NDArray[np.float64]: ...


class Quantity(str, enum.Enum):
    RAIN = "rain"
    FLOW = "flow"
    LEVEL = "level"
    VELOCITY = "velocity"
    TURBIDITY = "turbidity"
    BATTERY = "battery"
    TEMPERATURE = "temperature"
    SIGNAL = "signal"
    CONDUCTIVITY = "conductivity"


CANONICAL: dict[Quantity, str] = {
    Quantity.RAIN: "in",
    Quantity.FLOW: "gpm",
    Quantity.LEVEL: "ft",
    Quantity.VELOCITY: "ft/s",
    Quantity.TURBIDITY: "NTU",
    Quantity.BATTERY: "V",
    Quantity.TEMPERATURE: "degC",
    Quantity.SIGNAL: "dBm",
    Quantity.CONDUCTIVITY: "uS/cm",
}

# Spellings seen on loggers that pint does not know; mapped to pint expressions.
_ALIASES = {
    "gpm": "gallon / minute",
    "cfs": "foot ** 3 / second",
    "l/s": "liter / second",
    "lps": "liter / second",
    "mgd": "1e6 gallon / day",
    "cms": "meter ** 3 / second",
    "m3/s": "meter ** 3 / second",
    "ft/s": "foot / second",
    "fps": "foot / second",
    "m/s": "meter / second",
    "us/cm": "microsiemens / centimeter",
    "ms/cm": "millisiemens / centimeter",
    "degc": "degC",
    "degf": "degF",
    "c": "degC",
    "f": "degF",
    "k": "kelvin",
    "v": "volt",
    "mv": "millivolt",
    "in": "inch",
    "inch": "inch",
    "inches": "inch",
    "mm": "millimeter",
    "cm": "centimeter",
    "m": "meter",
    "ft": "foot",
}
_TURBIDITY = {"ntu", "fnu", "ftu", "fnmu", "fbu"}


# pint's own factors for the units of the table above, as ``converter`` would compute them
# with pint: (value of 1 unit, value of 0 units) in the canonical unit. A logger or ingest
# whose units are all here never loads pint (and numpy with it: ~25 MB on a logger);
# tests/contract/test_units.py checks every entry against pint. Other spellings ask pint.
_FACTORS: dict[tuple[Quantity, str], tuple[float, float]] = {
    (Quantity.RAIN, "cm"): (0.3937007874015748, 0.0),
    (Quantity.RAIN, "ft"): (12.0, 0.0),
    (Quantity.RAIN, "inch"): (1.0, 0.0),
    (Quantity.RAIN, "inches"): (1.0, 0.0),
    (Quantity.RAIN, "m"): (39.37007874015748, 0.0),
    (Quantity.RAIN, "mm"): (0.03937007874015749, 0.0),
    (Quantity.FLOW, "cfs"): (448.83116883116884, 0.0),
    (Quantity.FLOW, "cms"): (15850.323141488907, 0.0),
    (Quantity.FLOW, "l/s"): (15.85032314148891, 0.0),
    (Quantity.FLOW, "lps"): (15.85032314148891, 0.0),
    (Quantity.FLOW, "m3/s"): (15850.323141488907, 0.0),
    (Quantity.FLOW, "mgd"): (694.4444444444443, 0.0),
    (Quantity.LEVEL, "cm"): (0.03280839895013123, 0.0),
    (Quantity.LEVEL, "in"): (0.08333333333333333, 0.0),
    (Quantity.LEVEL, "inch"): (0.08333333333333333, 0.0),
    (Quantity.LEVEL, "inches"): (0.08333333333333333, 0.0),
    (Quantity.LEVEL, "m"): (3.2808398950131235, 0.0),
    (Quantity.LEVEL, "mm"): (0.0032808398950131233, 0.0),
    (Quantity.VELOCITY, "fps"): (1.0, 0.0),
    (Quantity.VELOCITY, "m/s"): (3.2808398950131235, 0.0),
    (Quantity.BATTERY, "mv"): (0.001, 0.0),
    (Quantity.TEMPERATURE, "c"): (1.0, 0.0),
    (Quantity.TEMPERATURE, "degf"): (-17.2222222222222, -17.777777777777743),
    (Quantity.TEMPERATURE, "f"): (-17.2222222222222, -17.777777777777743),
    (Quantity.TEMPERATURE, "k"): (-272.15, -273.15),
    (Quantity.CONDUCTIVITY, "ms/cm"): (1000.0, 0.0),
}


# -- a unit as written, matched and never evaluated --------------------------------------------
# pint's string parser is an expression evaluator: ``10**10**7 m`` computes a ten-million-digit
# integer (seconds holding the GIL) before it is refused. Text from outside (the wire, logger
# files, lab results) is matched against this grammar first and only its plain unit names
# reach pint, one at a time: name (power)? ((* | / | space) count? name (power)?)*, where a
# name is letters (``°C``, ``°F`` and ``%`` too), a power is ``**n``, ``^n``, ``²`` or ``³``
# with n in 1..3, and a count (at most 6 digits, ``CFU/100 mL``) may follow a ``/`` only.
_MAX_SPELLING = 64
_NAME = r"°[CF]|%|[^\W\d_¹²³]+(?:_[^\W\d_¹²³]+)*"
_TERM = re.compile(rf"""\s*(?P<op>[*/·])?\s*(?P<count>\d{{1,6}}(?:\.\d{{1,3}})?(?=\s*[^\W\d_]))?\s*(?P<name>{_NAME})
                        (?:\s*(?:\*\*|\^)\s*(?P<power>[1-3])(?![\d.])|(?P<sup>[²³]))?""", re.X)
_SPECIAL = {"°C": "degC", "°F": "degF", "%": "percent"}


@dataclass(frozen=True)
class UnitSpelling:
    """A unit as written, parsed without evaluating anything: ``terms`` are (unit name,
    power), a negative power in the denominator; ``per`` is a count in the denominator
    (``CFU/100 mL``: 100)."""

    text: str
    terms: tuple[tuple[str, int], ...]
    per: float = 1.0

    @classmethod
    def parse(cls, text: str, *, max_terms: int = 4) -> "UnitSpelling":
        """UnitError when ``text`` is not a plain spelling (numbers, parentheses, operators…)."""
        raw = text.strip()
        refused = UnitError(f"{text!r} is not a plain unit (names with * or /, powers 1-3, no numbers or parentheses)")
        if not raw or len(raw) > _MAX_SPELLING:
            raise refused
        terms: list[tuple[str, int]] = []
        per, pos, spaced = 1.0, 0, False
        while pos < len(raw):
            m = _TERM.match(raw, pos)
            if m is None or len(terms) >= max_terms:
                raise refused
            op = m["op"]
            if (not terms and op) or (terms and not op and not spaced) or (m["count"] and op != "/"):
                raise refused
            power = int(m["power"] or {"²": 2, "³": 3}.get(m["sup"] or "", 1))
            terms.append((_SPECIAL.get(m["name"], m["name"]), -power if op == "/" else power))
            if m["count"]:
                per *= float(m["count"])
            pos = m.end()
            spaced = pos < len(raw) and raw[pos].isspace()
        return cls(raw, tuple(terms), per)

    def unit(self, ureg: Any) -> Any:
        """The pint unit, each name looked up in ``ureg`` on its own. UnitError names an unknown one."""
        out = None
        for name, power in self.terms:
            if not ureg.parse_unit_name(name):
                whole = "" if name == self.text.strip() else f"{self.text!r}: "
                raise UnitError(f"{whole}{name!r} is not a unit pint knows")
            u = ureg.Unit(name) ** power if power != 1 else ureg.Unit(name)
            out = u if out is None else out * u
        return out


@lru_cache(maxsize=1)
def _ureg() -> Any:  # pint.UnitRegistry, imported on first use (it costs ~17 MB on a logger)
    import pint

    return pint.UnitRegistry()


@lru_cache(maxsize=512)
def converter(quantity: Quantity | str, unit: str) -> Converter:
    """A function turning a value in ``unit`` into the canonical unit of ``quantity``.

    Cached: pint is consulted once per (quantity, unit), so the hot path is one multiply
    (or an affine map for temperature).
    """
    q = Quantity(quantity)
    u = unit.strip()
    key = u.lower()
    if q is Quantity.TURBIDITY:
        if key in _TURBIDITY:
            return _identity
        raise UnitError(f"unit {unit!r} is not a turbidity unit (NTU, FNU, FTU, FNMU)")
    if key == CANONICAL[q].lower():
        return _identity  # already canonical: no need to load pint (a logger saves ~17 MB)
    if q is Quantity.SIGNAL:
        if key == "dbm":
            return _identity
        raise UnitError(f"unit {unit!r} is not a signal unit (dBm)")
    one, zero = _FACTORS.get((q, key)) or pint_factors(q, unit)
    if zero == 0.0:
        if one == 1.0:
            return _identity
        return _scale(one)
    return _affine(one - zero, zero)


def _scale(s: float) -> Converter:
    def scale(v: Any) -> Any:
        return v * s
    return scale


def _affine(s: float, z: float) -> Converter:
    def affine(v: Any) -> Any:
        return v * s + z
    return affine


def pint_factors(quantity: Quantity | str, unit: str) -> tuple[float, float]:
    """What pint says 1 and 0 ``unit`` are in the canonical unit of ``quantity``."""
    q = Quantity(quantity)
    u = unit.strip()
    key = u.lower()
    ureg = _ureg()
    try:
        dst_expr = _ALIASES.get(CANONICAL[q].lower(), CANONICAL[q])
        if key == "mgd":
            return ureg.Quantity(1e6, "gallon / day").to(dst_expr).magnitude, 0.0
        if key in _ALIASES:
            src = ureg.Unit(_ALIASES[key])                                 # our own table: safe to parse
        else:
            spelt = UnitSpelling.parse(u)                                  # text from outside: never evaluated
            if spelt.per != 1.0:
                raise UnitError(f"unit {unit!r} has a number in it")
            src = spelt.unit(ureg)
        dst = ureg.Unit(dst_expr)
        if src.dimensionality != dst.dimensionality:
            raise UnitError(f"unit {unit!r} does not measure {q.value} (canonical {CANONICAL[q]})")
        return ureg.Quantity(1.0, src).to(dst).magnitude, ureg.Quantity(0.0, src).to(dst).magnitude
    except UnitError as e:
        if "does not measure" in str(e):
            raise
        raise UnitError(f"unknown unit {unit!r} for {q.value}: {e}") from None
    except Exception as e:  # pint raises several types; translate at the boundary
        raise UnitError(f"unknown unit {unit!r} for {q.value}: {e}") from None


def to_canonical(quantity: Quantity | str, value: float, unit: str) -> float:
    return converter(quantity, unit)(value)


def canonical_unit(quantity: Quantity | str) -> str:
    return CANONICAL[Quantity(quantity)]


def _identity(v: _V) -> _V:
    return v
