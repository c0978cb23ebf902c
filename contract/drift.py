"""Data corrected for fouling and calibration drift, prorated over the service interval (pure).

At a service visit the technician measures two errors of the sensor (USGS TM 1-D3):

* **fouling** — in the stream, the reading before cleaning against the reading after
  cleaning: the correction is ``after - before``;
* **calibration drift** — the cleaned sensor in a standard: the correction is
  ``standard - reading``.

Neither happened at once: both grew over the interval since the previous visit, so the
correction applied to a reading at time t is the total correction measured at the end
prorated linearly in time from zero at the start of the interval:

    c(t) = C · (t - t0) / (t1 - t0),     t0 ≤ t ≤ t1

A correction is either absolute, in the sensor's unit (``corrected = raw + c(t)``), or a
percentage of the reading (``corrected = raw · (1 + c(t) / 100)``); fouling and drift add.
The raw values are never changed: a correction is applied on reading them back.

Data whose combined correction — the error the record carries — exceeds the maximum
allowable limit is **not reportable** (TM 1-D3 maximum allowable limits; REGULATIONS.md:
±30 % for turbidity): those readings are flagged so, never silently reported.

References
----------
Wagner, R.J., Boulger, R.W., Jr., Oblinger, C.J., and Smith, B.A., 2006, USGS Techniques and
Methods 1-D3: record computation — fouling and calibration drift corrections, prorated over
the period between service visits; maximum allowable limits for reporting.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .calibration import MAX_ALLOWABLE_TURBIDITY_PCT

__all__ = ["Basis", "CorrectionKind", "DriftCorrection", "Corrected", "prorate", "apply_correction", "correct_arrays",
           "CORRECTED_FLAG", "NOT_REPORTABLE_FLAG", "MAX_ALLOWABLE_PCT"]

CORRECTED_FLAG = "drift_corrected"
NOT_REPORTABLE_FLAG = "not_reportable"
MAX_ALLOWABLE_PCT = {"turbidity": MAX_ALLOWABLE_TURBIDITY_PCT}
"""Maximum allowable combined correction by quantity [%] (REGULATIONS.md, TM 1-D3)."""


class Basis(str, enum.Enum):
    """Which values a rule or an evidence export used."""

    RAW = "raw"
    CORRECTED = "corrected"


class CorrectionKind(str, enum.Enum):
    ABSOLUTE = "absolute"   # in the sensor's unit
    PERCENT = "percent"     # of the reading


@dataclass(frozen=True)
class DriftCorrection:
    """The corrections measured at a visit ending a service interval [t0_ns, t1_ns] [epoch ns].

    fouling, drift : the total corrections at t1 (``after - before``; ``standard - reading``),
        each in the sensor's unit or in % of the reading, as ``fouling_kind`` / ``drift_kind``.
    max_allowable_pct : readings whose combined correction exceeds this share of their value
        [%] are not reportable; None: no limit for this quantity.
    """

    t0_ns: int
    t1_ns: int
    fouling: float = 0.0
    drift: float = 0.0
    fouling_kind: CorrectionKind = CorrectionKind.ABSOLUTE
    drift_kind: CorrectionKind = CorrectionKind.PERCENT
    max_allowable_pct: float | None = None

    def __post_init__(self) -> None:
        if self.t1_ns <= self.t0_ns:
            raise ValueError("the interval must end after it starts")
        for name in ("fouling", "drift"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number")
        object.__setattr__(self, "fouling_kind", CorrectionKind(self.fouling_kind))
        object.__setattr__(self, "drift_kind", CorrectionKind(self.drift_kind))


def prorate(t_ns: np.ndarray, t0_ns: int, t1_ns: int, total: float) -> np.ndarray:
    """``total · (t - t0) / (t1 - t0)``, 0 before t0 and ``total`` from t1 on [unit of total]."""
    t = np.asarray(t_ns, dtype=np.int64)
    frac = np.clip((t - t0_ns) / float(t1_ns - t0_ns), 0.0, 1.0)
    return total * frac


@dataclass(frozen=True)
class Corrected:
    """Readings corrected: ``values`` [unit], the correction applied to each [unit], the
    combined correction as a share of the reading [%] (None where the reading is 0), and
    which are not reportable."""

    values: np.ndarray
    correction: np.ndarray
    combined_pct: np.ndarray
    not_reportable: np.ndarray


def apply_correction(t_ns: np.ndarray, raw: np.ndarray, c: DriftCorrection) -> Corrected:
    """Apply ``c`` to the readings ``raw`` [unit] taken at ``t_ns`` inside [t0, t1] (readings
    outside the interval are returned unchanged, uncorrected, reportable)."""
    t = np.asarray(t_ns, dtype=np.int64)
    v = np.asarray(raw, dtype=np.float64)
    inside = (t >= c.t0_ns) & (t <= c.t1_ns)
    absolute = np.zeros(v.shape)
    for total, kind in ((c.fouling, c.fouling_kind), (c.drift, c.drift_kind)):
        part = prorate(t, c.t0_ns, c.t1_ns, total)
        absolute += part if kind is CorrectionKind.ABSOLUTE else v * part / 100.0
    absolute = np.where(inside, absolute, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pct = np.where(v != 0, 100.0 * absolute / np.abs(v), np.where(absolute == 0, 0.0, np.inf))
    limit = c.max_allowable_pct
    bad = inside & (np.abs(pct) > limit) if limit is not None else np.zeros(v.shape, dtype=bool)
    return Corrected(v + absolute, absolute, pct, bad)


def correct_arrays(t_ns: np.ndarray, values: np.ndarray, flags: np.ndarray,
                   corrections: Sequence[DriftCorrection]) -> tuple[np.ndarray, np.ndarray]:
    """``values`` [unit] at ``t_ns`` corrected by each of ``corrections`` that covers them (at
    most one covers a reading), and ``flags`` (comma-joined strings) with ``drift_corrected``
    and, where the combined correction exceeds the limit, ``not_reportable`` added."""
    t = np.asarray(t_ns, dtype=np.int64)
    v = np.asarray(values, dtype=np.float64).copy()
    f = np.asarray(flags, dtype=object).copy()
    for c in corrections:
        inside = (t >= c.t0_ns) & (t <= c.t1_ns)
        if not inside.any():
            continue
        out = apply_correction(t[inside], v[inside], c)
        v[inside] = out.values
        for j, bad in zip(np.flatnonzero(inside), out.not_reportable):
            have = f[j].split(",") if f[j] else []
            f[j] = ",".join([*have, CORRECTED_FLAG, *([NOT_REPORTABLE_FLAG] if bad else [])])
    return v, f
