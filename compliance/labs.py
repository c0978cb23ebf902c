"""Lab results from a CSV file, converted with pint and compared with the town's screening
thresholds; the whole file or nothing.

A file has a header row naming at least ``sample`` (our sample number, as written on the
chain-of-custody form), ``parameter``, ``value``, ``unit``, ``method``; optionally
``detection_limit`` (in the row's unit), ``qualifier``, ``analysed_at`` (ISO 8601, or a
local ``YYYY-MM-DD HH:MM``) and ``lab``. Header names are matched without case; other
columns are ignored.

* Units: pint, with the count units it lacks defined here — ``CFU`` and ``MPN`` (counted
  alike: EPA approves membrane filtration, CFU, and Colilert, MPN, for E. coli) — so
  ``µg/L``, ``ug/L``, ``mg/l``, ``CFU/100 mL``, ``MPN/100mL`` and ``s.u.`` (pH) all parse,
  and a value is compared in its threshold's unit.
* Detection limits: ``<0.05`` or the qualifier ``U`` (not detected) make a non-detect,
  compared by its detection limit: below a threshold it is "not detected"; a limit above
  the threshold cannot say ("indeterminate"). ``>2419.6`` (above the range, e.g. a Quanti-Tray
  maximum) exceeds when the bound does. ``J`` (estimated) values are compared and marked;
  ``R`` (rejected) values are not compared.
* Refusals: every bad row is named by its line and field, and nothing of the file is kept.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..contract.errors import UnitError
from ..contract.units import UnitSpelling
from ..contract.yamlfile import read_yaml
from .errors import ComplianceError, ImportRefused

if TYPE_CHECKING:
    import pint

QUALIFIERS = {
    "": "",
    "U": "not detected at the detection limit",
    "ND": "not detected",
    "J": "estimated (between the detection and reporting limits)",
    "UJ": "not detected; the limit is estimated",
    "B": "found in the method blank too",
    "H": "analysed past its holding time",
    "E": "above the calibration range (estimated)",
    "R": "rejected by the lab: not usable",
}
NON_DETECT = {"U", "ND", "UJ"}
REQUIRED = ("sample", "parameter", "value", "unit", "method")
MAX_ROWS = 10_000


@lru_cache(maxsize=1)
def _ureg() -> pint.UnitRegistry[float]:   # pint's registry with the microbial count units (made on first use)
    import pint
    u: pint.UnitRegistry[float] = pint.UnitRegistry()
    u.define("colony_forming_unit = [microbial_count] = CFU = cfu")
    u.define("most_probable_number = colony_forming_unit = MPN = mpn")
    # Turbidity by the two methods a town meets, kept apart (not convertible): EPA 180.1's
    # white-light nephelometer (NTU) and ISO 7027's infrared one (FNU), as USGS reports them.
    u.define("nephelometric_turbidity_unit = [turbidity_ntu] = NTU = ntu")
    u.define("formazin_nephelometric_unit = [turbidity_fnu] = FNU = fnu")
    return u


_DIMENSIONLESS = {"", "s.u.", "su", "ph", "ph units", "standard units", "unitless"}
KNOWN_HINT = "e.g. mg/L, ug/L, CFU/100 mL, MPN/100mL, NTU, FNU, s.u."


def parse_unit(text: str) -> pint.Quantity[float]:
    """A pint quantity of one ``text`` (``CFU/100 mL`` → CFU per 100 millilitres). ValueError.

    The text is matched, never evaluated (pint's parser would compute ``10**10**7 mg/L``):
    one unit name, optionally ``/`` a count and one more name, each looked up in the registry."""
    raw = text.strip()
    if raw.lower() in _DIMENSIONLESS:
        return _ureg().Quantity(1, "dimensionless")
    refused = ValueError(f"{raw!r} is not a unit the lab import knows ({KNOWN_HINT})")
    try:
        spelt = UnitSpelling.parse(raw.replace("µ", "u").replace("μ", "u"), max_terms=2)
        if [abs(p) for _, p in spelt.terms] not in ([1], [1, 1]) or spelt.terms[0][1] != 1:
            raise refused
        return _ureg().Quantity(1 / spelt.per, spelt.unit(_ureg()))
    except UnitError:
        raise refused from None


def convert(value: float, unit: str, to: str) -> float:
    q = value * parse_unit(unit)
    target = parse_unit(to)
    try:
        return float((q / target).to("dimensionless").magnitude)
    except Exception:  # noqa: BLE001 — DimensionalityError
        raise ValueError(f"{unit!r} cannot be converted to {to!r}") from None


# -- screening thresholds ------------------------------------------------------------------------
class Threshold(BaseModel):
    """A screening threshold: a result ``above`` (or ``below``) ``limit`` [unit] flags the sample."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    parameter: str = Field(min_length=1)
    aliases: tuple[str, ...] = ()
    limit: float = Field(allow_inf_nan=False)
    unit: str
    direction: str = Field(default="above", pattern="^(above|below)$")
    source: str = Field(min_length=1)

    @field_validator("unit")
    @classmethod
    def _unit(cls, v: str) -> str:
        parse_unit(v)
        return v

    @classmethod
    def builtin(cls, **fields: Any) -> Threshold:
        """A threshold written in our code (the defaults), built without validation: validating
        its unit would build pint's registry (~0.6 s of CPU) at the import of every process that
        imports the workbench. tests/compliance/test_labs.py validates each."""
        return cls.model_construct(**fields)

    def names(self) -> set[str]:
        return {_key(self.parameter), *(_key(a) for a in self.aliases)}

    @property
    def label(self) -> str:
        op = ">=" if self.direction == "above" else "<"
        return f"{self.parameter} {op} {self.limit:g} {self.unit}"


# Defaults to review with the town's IDDE program; every number overridable per town
# (``screening-thresholds.yaml`` in the town's data directory).
_CWP = "Center for Watershed Protection, Illicit Discharge Detection and Elimination guidance manual (Brown, " \
       "Caraco & Pitt, 2004), indicator parameters"
_MA = "US EPA Region 1, Massachusetts Small MS4 General Permit (2016) part 2.3.4.8: sewage indicated by " \
      "ammonia >= 0.5 mg/L with surfactants >= 0.25 mg/L"


DEFAULT_THRESHOLDS: tuple[Threshold, ...] = (
    Threshold.builtin(parameter="ammonia", aliases=("ammonia-n", "ammonia as n", "nh3-n", "nh3", "ammonia nitrogen"),
                      limit=0.5, unit="mg/L", source=f"{_MA}; {_CWP}"),
    Threshold.builtin(parameter="surfactants", aliases=("mbas", "detergents", "surfactants (mbas)"), limit=0.25, unit="mg/L",
                      source=f"{_CWP} (detergents > 0.25 mg/L: washwater or sewage); {_MA}"),
    Threshold.builtin(parameter="E. coli", aliases=("e coli", "escherichia coli", "ecoli"), limit=235.0, unit="CFU/100 mL",
                      source="US EPA Ambient Water Quality Criteria for Bacteria (1986): single-sample maximum, designated "
                             "bathing beach, fresh water"),
    Threshold.builtin(parameter="enterococci", aliases=("enterococcus",), limit=61.0, unit="CFU/100 mL",
                      source="US EPA Ambient Water Quality Criteria for Bacteria (1986): single-sample maximum, fresh water"),
    Threshold.builtin(parameter="total residual chlorine", aliases=("chlorine", "trc", "total chlorine"), limit=0.02,
                      unit="mg/L", source=f"detectable chlorine (field kits detect 0.02 mg/L): {_MA}"),
    Threshold.builtin(parameter="fluoride", aliases=(), limit=0.25, unit="mg/L",
                      source=f"{_CWP} (fluoride > 0.25 mg/L: treated tap water)"),
    Threshold.builtin(parameter="pH (low)", aliases=("ph",), limit=6.5, unit="s.u.", direction="below",
                      source="6 NYCRR 703.3: pH shall not be less than 6.5 nor more than 8.5"),
    Threshold.builtin(parameter="pH (high)", aliases=("ph",), limit=8.5, unit="s.u.",
                      source="6 NYCRR 703.3: pH shall not be less than 6.5 nor more than 8.5"),
)


def _key(name: str) -> str:
    return re.sub(r"[\s._]+", " ", name.strip().lower())


def load_thresholds(path: Path) -> tuple[Threshold, ...]:
    """A town's table (a YAML list of thresholds) in place of the defaults; ComplianceError names the entry."""
    try:
        doc = read_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ComplianceError(f"{path}: cannot read the screening thresholds: {e}") from None
    if not isinstance(doc, list) or not doc:
        raise ComplianceError(f"{path}: expected a list of thresholds (parameter, limit, unit, direction, source)")
    out = []
    for i, item in enumerate(doc):
        try:
            out.append(Threshold.model_validate(item))
        except (ValidationError, ValueError) as e:
            msg = e.errors()[0]["msg"] if isinstance(e, ValidationError) else str(e)
            where = ".".join(str(p) for p in e.errors()[0]["loc"]) if isinstance(e, ValidationError) else "unit"
            raise ComplianceError(f"{path}: [{i}].{where}: {msg}") from None
    return tuple(out)


# -- comparing ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Compared:
    verdict: str                  # exceeds | below | not_detected | indeterminate | rejected | no_threshold
    threshold: Threshold | None
    value_std: float | None       # in the threshold's unit
    dl_std: float | None


def compare(parameter: str, value: float | None, unit: str, *, censor: str, qualifier: str, dl: float | None,
            thresholds: tuple[Threshold, ...]) -> list[Compared]:
    """The result against every threshold of its parameter (pH has two)."""
    mine = [th for th in thresholds if _key(parameter) in th.names()]
    if not mine:
        return [Compared("no_threshold", None, None, None)]
    out = []
    for th in mine:
        v = None if value is None else convert(value, unit, th.unit)
        d = None if dl is None else convert(dl, unit, th.unit)
        if qualifier == "R":
            verdict = "rejected"
        elif censor == "<":
            bound = d if d is not None else v
            fails = bound is not None and (bound >= th.limit if th.direction == "above" else False)
            verdict = "indeterminate" if fails else "not_detected"
        elif censor == ">":
            verdict = "exceeds" if th.direction == "above" and v is not None and v >= th.limit else "indeterminate"
        else:
            assert v is not None
            hit = v >= th.limit if th.direction == "above" else v < th.limit
            verdict = "exceeds" if hit else "below"
        out.append(Compared(verdict, th, v, d))
    return out


# -- import -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ParsedFile:
    name: str
    sha256: str
    lab: str | None
    rows: list[dict[str, Any]]     # lab_results rows, ready to store (sample_id resolved)


def parse_file(name: str, data: bytes, *, sample_id: Callable[[str], int | None],
                        thresholds: tuple[Threshold, ...], tz: tzinfo) -> ParsedFile:
    """Every row checked; ImportRefused naming each bad row's line and field, or the rows."""
    problems: list[tuple[int, str, str]] = []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ImportRefused(name, [(1, "", f"not UTF-8 text ({e.reason} at byte {e.start})")]) from None
    reader = csv.DictReader(io.StringIO(text))
    if reader.fieldnames is None:
        raise ImportRefused(name, [(1, "", "empty file: expected a header row")])
    header = {_key(h).replace(" ", "_"): h for h in reader.fieldnames if h}
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise ImportRefused(name, [(1, "", f"the header names no {', '.join(missing)} column "
                                                    f"(has: {', '.join(reader.fieldnames)})")])
    rows: list[dict[str, Any]] = []
    labs: set[str] = set()
    for rec in reader:
        line = reader.line_num
        if len(rows) >= MAX_ROWS:
            problems.append((line, "", f"more than {MAX_ROWS} rows: split the file"))
            break
        get = {k: (rec.get(h) or "").strip() for k, h in header.items()}
        if not any(get.values()):
            continue
        bad = len(problems)
        sid = sample_id(get["sample"]) if get["sample"] else None
        if not get["sample"]:
            problems.append((line, "sample", "empty"))
        elif sid is None:
            problems.append((line, "sample", f"no sample {get['sample']!r} recorded"))
        if not get["parameter"]:
            problems.append((line, "parameter", "empty"))
        if not get["method"]:
            problems.append((line, "method", "empty (e.g. EPA 350.1, SM 9223 B)"))
        qualifier = get.get("qualifier", "").upper()
        if qualifier not in QUALIFIERS:
            problems.append((line, "qualifier", f"{qualifier!r} is not one of {', '.join(q for q in QUALIFIERS if q)}"))
        raw = get["value"]
        censor = ""
        if raw[:1] in "<>":
            censor, raw = raw[0], raw[1:].strip()
        value: float | None = None
        if raw.upper() in ("ND", ""):
            if censor == ">" or (raw == "" and qualifier not in NON_DETECT):
                         problems.append((line, "value", f"{get['value']!r} is not a number (or <DL, >bound, ND)"))
            censor = "<"
        else:
            try:
                         value = float(raw)
                         if not math.isfinite(value):
                             raise ValueError
            except ValueError:
                         problems.append((line, "value", f"{get['value']!r} is not a number (or <DL, >bound, ND)"))
        if qualifier in NON_DETECT:
            censor = "<"
        dl = None
        if get.get("detection_limit"):
            try:
                         dl = float(get["detection_limit"])
                         if not math.isfinite(dl) or dl < 0:
                             raise ValueError
            except ValueError:
                         problems.append((line, "detection_limit", f"{get['detection_limit']!r} is not a number >= 0"))
        if censor == "<" and value is None and dl is None:
            problems.append((line, "detection_limit", "a non-detect needs its detection limit"))
        if censor == "<" and dl is None and value is not None:
            dl = value
        try:
            parse_unit(get["unit"])
        except ValueError as e:
            problems.append((line, "unit", str(e)))
        analysed = None
        if get.get("analysed_at"):
            try:
                         a = datetime.fromisoformat(get["analysed_at"].replace("Z", "+00:00"))
                         analysed = a if a.tzinfo else a.replace(tzinfo=tz)
            except ValueError:
                         problems.append((line, "analysed_at", f"{get['analysed_at']!r} is not a date and time"))
        if len(problems) > bad:
            continue
        try:
            compared = compare(get["parameter"], value, get["unit"], censor=censor, qualifier=qualifier, dl=dl,
                                        thresholds=thresholds)
        except ValueError as e:
            problems.append((line, "unit", f"{e} (the {get['parameter']} threshold's unit)"))
            continue
        worst = _worst(compared)
        if get.get("lab"):
            labs.add(get["lab"])
        rows.append({"sample_id": sid, "line": line, "parameter": get["parameter"], "value": value,
                              "unit": get["unit"], "value_std": worst.value_std,
                              "std_unit": worst.threshold.unit if worst.threshold else None, "method": get["method"],
                              "detection_limit": dl, "dl_std": worst.dl_std, "qualifier": qualifier, "censor": censor,
                              "analysed_at": analysed.astimezone(timezone.utc).isoformat(timespec="seconds") if analysed else None,
                              "threshold": worst.threshold.label if worst.threshold else None, "verdict": worst.verdict})
    if problems:
        raise ImportRefused(name, problems)
    if not rows:
        raise ImportRefused(name, [(2, "", "no result rows")])
    return ParsedFile(name, hashlib.sha256(data).hexdigest(), ", ".join(sorted(labs)) or None, rows)


# A verdict as the pages write it: "below" meant inside the threshold, which read wrong
# beside "pH (low) < 6.5 s.u.".
VERDICT_WORDS = {"exceeds": "outside the limit", "below": "within the limit", "not_detected": "not detected",
                          "indeterminate": "indeterminate (detection limit above the threshold)",
                          "rejected": "rejected by the lab", "no_threshold": "no threshold"}

_ORDER = ("exceeds", "indeterminate", "rejected", "below", "not_detected", "no_threshold")


def _worst(compared: list[Compared]) -> Compared:
    return min(compared, key=lambda c: _ORDER.index(c.verdict))


__all__ = ["Threshold", "DEFAULT_THRESHOLDS", "load_thresholds", "parse_file", "parse_unit", "convert", "compare",
           "Compared", "ParsedFile", "QUALIFIERS"]
