"""Data quality (QARTOD) tests for one sensor's series, via the IOOS ``ioos_qc`` library.

References
----------
Both laws, access and monitoring: "All devices used to measure stormwater flow and quality
shall be calibrated to ensure their accuracy" — REGULATIONS.md: readings from an
out-of-calibration sensor are flagged, never silently trusted. Tests follow the IOOS
QARTOD manuals (gross range, spike, flat line) as implemented by ``ioos_qc.qartod``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from ._common import ns_index, td_ns

PROVISION = "Ramapo ch. 218 / Schenectady ch. 148: monitoring devices calibrated; IOOS QARTOD tests"

# QARTOD flag values
PASS, NOT_EVALUATED, SUSPECT, FAIL, MISSING = 1, 2, 3, 4, 9

# Flags carried on the wire that make a reading unusable for a comparison; and not_reportable,
# which a drift correction over the maximum allowable limit adds (contract/drift.py).
BAD_WIRE_FLAGS = ("sensor_error", "range", "spike", "flat_line", "calibration_overdue", "not_reportable")


@dataclass(frozen=True)
class QcParams:
    """Thresholds of the QARTOD tests for one quantity (units of the quantity)."""

    fail_span: tuple[float, float] = (0.0, 4000.0)   # gross range [unit]
    spike_fail: float = 200.0                         # |x - mean(neighbours)| [unit]
    flat_line_fail: timedelta = timedelta(hours=6)    # unchanged this long fails
    flat_line_tolerance: float = 0.0                  # [unit]

    def as_dict(self) -> dict[str, Any]:
        return {"fail_span": list(self.fail_span), "spike_fail": self.spike_fail,
                "flat_line_fail_h": self.flat_line_fail.total_seconds() / 3600,
                "flat_line_tolerance": self.flat_line_tolerance}


def qartod_fail(values: pd.Series, params: QcParams = QcParams()) -> pd.Series:
    """True where any QARTOD test (gross range, spike, flat line) FAILs.

    Parameters
    ----------
    values : Series [unit of the quantity, e.g. NTU], indexed by UTC time, sorted
    params : QcParams

    Returns
    -------
    Series of bool, indexed like ``values``. The spike test needs the next reading: the
    last reading is "not evaluated" (not a failure) until it arrives.

    Notes
    -----
    Uses ``ioos_qc.qartod.gross_range_test`` and ``spike_test`` (method "average").
    The flat-line test is :func:`flat_line_fail` here, not ``ioos_qc``'s: that one turns
    the time threshold into a count of readings with the *median* interval of the whole
    array, so its answer for a reading depends on how much history is passed in, and the
    streaming engine (which passes a window) would disagree with replay. It also flags
    only ranges strictly below the tolerance, so a tolerance of 0 never fails.
    """
    import pandas as pd
    return pd.Series(qartod_fail_array(ns_index(values), values.to_numpy(dtype="float64"), params),
                     index=values.index, name="qc_fail")


def qartod_fail_array(t_ns: np.ndarray, values: np.ndarray, params: QcParams = QcParams()) -> np.ndarray:
    """:func:`qartod_fail` on arrays (the form the alert engine calls): times [UTC ns], sorted,
    and values [unit of the quantity] in; a bool array out. ``ioos_qc`` is asked only when
    some reading may fail its tests (~0.1-2 ms a call, its spike test loops in Python): a
    reading strictly inside the gross range, and less than the spike threshold from the
    mean of its neighbours, fails neither (and ``ioos_qc``, ~1 s to import with xarray, is
    not even imported while no reading may fail)."""
    v = np.asarray(values, dtype="float64")
    if v.size == 0:
        return np.zeros(0, dtype=bool)
    flat = flat_line_fail(np.asarray(t_ns, dtype=np.int64), v, td_ns(params.flat_line_fail), params.flat_line_tolerance)
    lo, hi = sorted(params.fail_span)
    inside = bool(np.all((v > lo) & (v < hi)))
    if inside and (v.size < 3 or bool(np.all(np.abs(v[1:-1] - (v[:-2] + v[2:]) / 2) < params.spike_fail))):
        return flat   # every reading strictly inside the range and no spike near the threshold: none can fail
    from ioos_qc import qartod  # imported here, when a reading may fail: ~1 s

    gross = _flags(qartod.gross_range_test(v, fail_span=params.fail_span))
    spike = _flags(qartod.spike_test(v, suspect_threshold=params.spike_fail / 2, fail_threshold=params.spike_fail))
    fails: np.ndarray = (gross == FAIL) | (spike == FAIL) | flat
    return fails


def flat_line_fail(t_ns: np.ndarray, v: np.ndarray, duration_ns: int, tolerance: float) -> np.ndarray:
    """True where the value has stayed within ``tolerance`` of its neighbours for ``duration_ns``.

    A segment is a run of readings each within ``tolerance`` [unit] of the previous one; a
    reading fails when it is at least ``duration_ns`` after the first reading of its
    segment (QARTOD flat-line test on real time stamps, no median interval).
    """
    n = v.size
    if n == 0:
        return np.zeros(0, dtype=bool)
    same = np.zeros(n, dtype=bool)
    same[1:] = np.abs(np.diff(v)) <= tolerance
    seg_start = np.maximum.accumulate(np.where(~same, np.arange(n), 0))
    flat: np.ndarray = (t_ns - t_ns[seg_start]) >= duration_ns
    return flat


def surely_passes(values: np.ndarray, i: int, flags: str, params: QcParams = QcParams()) -> bool:
    """A bound of the QC tests for the alert engine's shortcuts: True only if reading ``i`` of
    a probe's sorted ``values`` [unit] certainly passes :func:`qartod_fail` and
    :func:`wire_flags_bad` with these neighbours; False means "not sure", not "fails".

    It is inside the gross range (strictly), differs from the mean of its two neighbours by
    less than the spike threshold (the first and last readings are not judged by the spike
    test), differs from the reading before it by more than the flat-line tolerance (a flat
    segment starts there, so it cannot have lasted ``flat_line_fail``), and carries no bad
    logger flag."""
    v = float(values[i])
    lo, hi = sorted(params.fail_span)
    if not lo < v < hi or params.flat_line_fail <= timedelta(0):
        return False
    if flags and any(name in flags for name in BAD_WIRE_FLAGS):
        return False
    if i > 0:
        before = float(values[i - 1])
        if not abs(v - before) > params.flat_line_tolerance:
            return False
        if i + 1 < len(values) and not abs(v - (before + float(values[i + 1])) / 2) < params.spike_fail:
            return False
    return True


def _flags(result: np.ndarray) -> np.ndarray:   # a masked array where QARTOD had no data
    return np.asarray(np.ma.filled(result, MISSING))


def wire_flag_fail(flags: pd.Series) -> pd.Series:
    """True where a reading carries a quality flag from the logger that makes it unusable."""
    import pandas as pd
    return pd.Series(wire_flags_bad(flags.to_numpy(dtype=object)), index=flags.index, name="flag_fail")


def wire_flags_bad(flags: np.ndarray) -> np.ndarray:
    """:func:`wire_flag_fail` on an array of flag strings (comma-separated; None or NaN: none)."""
    f = np.asarray(flags, dtype=object)
    bad = np.zeros(f.size, dtype=bool)
    try:
        flagged = np.flatnonzero(f != "")   # readings without flags ("") are the rule
    except TypeError:                       # pd.NA among them
        flagged = np.arange(f.size)
    for i in flagged.tolist():
        x = f[i]
        if not isinstance(x, str):
            import pandas as pd     # a frame's missing flags (None, NaN, pd.NA): replay's, never the engine's strings
            if pd.isna(x):
                continue
            x = str(x)
        bad[i] = any(name in x for name in BAD_WIRE_FLAGS)
    return bad
