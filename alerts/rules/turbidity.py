"""Turbidity contrast between a downstream (outfall / below site) and upstream (background) probe.

References
----------
Schenectady ch. 148 Art. I (water quality standards): no "increase in turbidity that will
cause a substantial visible contrast to natural conditions" (6 NYCRR 703.2) —
REGULATIONS.md row *Turbidity contrast*: downstream − upstream > max(5 NTU, 10 % of
upstream), sustained >= 15 min, both sensors passing QC; absolute backstop 250 NTU
(Shandaken Tunnel SPDES form; WAC 173-201A; OAR 340-041-0036).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import numpy as np
import pandas as pd

from ._common import episodes, ns_index, td_ns, to_index

PROVISION = ("Schenectady ch. 148 Art. I: no increase in turbidity causing a substantial visible contrast "
             "to natural conditions (6 NYCRR 703.2)")


@dataclass(frozen=True)
class ContrastParams:
    delta_ntu: float = 5.0                          # [NTU]
    fraction: float = 0.10                          # of upstream [-]
    min_duration: timedelta = timedelta(minutes=15)
    backstop_ntu: float = 250.0                     # downstream above this is an exceedance [NTU]
    align_tolerance: timedelta = timedelta(minutes=5)

    def as_dict(self) -> dict:
        return {"delta_ntu": self.delta_ntu, "fraction": self.fraction,
                "min_duration_min": self.min_duration.total_seconds() / 60,
                "backstop_ntu": self.backstop_ntu,
                "align_tolerance_min": self.align_tolerance.total_seconds() / 60}


def align_pair(upstream_ntu: pd.Series, downstream_ntu: pd.Series, tolerance) -> pd.DataFrame:
    """Each downstream reading with the upstream reading nearest in time within ``tolerance``.

    Returns a DataFrame indexed by the downstream times with ``up``, ``down`` [NTU] and
    ``up_pos`` (position of the matched upstream reading), downstream readings without an
    upstream partner left out. Ties go to the earlier upstream reading.
    """
    tu = ns_index(upstream_ntu)
    td = ns_index(downstream_ntu)
    tol = td_ns(tolerance)
    if tu.size == 0 or td.size == 0:
        return pd.DataFrame({"up": [], "down": [], "up_pos": []}, index=to_index(np.empty(0, np.int64)))
    j = np.searchsorted(tu, td, side="left")  # first upstream >= t
    prev = np.clip(j - 1, 0, tu.size - 1)
    nxt = np.clip(j, 0, tu.size - 1)
    dprev = np.where(j > 0, td - tu[prev], np.iinfo(np.int64).max)
    dnext = np.where(j < tu.size, tu[nxt] - td, np.iinfo(np.int64).max)
    pos = np.where(dprev <= dnext, prev, nxt)
    dist = np.minimum(dprev, dnext)
    ok = dist <= tol
    return pd.DataFrame({"up": upstream_ntu.to_numpy(dtype="float64")[pos[ok]],
                         "down": downstream_ntu.to_numpy(dtype="float64")[ok], "up_pos": pos[ok]},
                        index=to_index(td[ok]))


def exceeds(up_ntu: np.ndarray, down_ntu: np.ndarray, params: ContrastParams) -> np.ndarray:
    """downstream − upstream > max(delta_ntu, fraction × upstream), or downstream > backstop.

    Strict inequalities: a delta of exactly 10 % of a 100 NTU upstream (10 NTU) is allowed.
    """
    allowance = np.maximum(params.delta_ntu, params.fraction * up_ntu)
    return ((down_ntu - up_ntu) > allowance) | (down_ntu > params.backstop_ntu)


def turbidity_contrast(upstream_ntu: pd.Series, downstream_ntu: pd.Series, *,
                       upstream_bad: pd.Series | None = None, downstream_bad: pd.Series | None = None,
                       params: ContrastParams = ContrastParams()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Contrast episodes and not-evaluable spans of one turbidity pair.

    Parameters
    ----------
    upstream_ntu, downstream_ntu : Series [NTU], indexed by UTC time, sorted
    upstream_bad, downstream_bad : Series of bool, indexed like the readings
        QC failures (:func:`~.qc.qartod_fail`, logger flags, calibration overdue).
    params : ContrastParams

    Returns
    -------
    (episodes, not_evaluable): DataFrames with ``start``, ``end`` (first and last aligned
    readings meeting the condition), ``open`` and ``max_delta_ntu`` [NTU] (episodes) or
    ``n_readings`` (both). An exceedance must hold in every aligned, QC-passing reading for
    ``min_duration``; a reading failing QC breaks it, so a single spike never opens an
    episode. Runs of not-evaluable readings lasting ``min_duration`` become notices.

    References
    ----------
    Schenectady ch. 148 Art. I; 6 NYCRR 703.2; REGULATIONS.md *Turbidity contrast*.
    """
    al = align_pair(upstream_ntu, downstream_ntu, params.align_tolerance)
    t = ns_index(al)
    up, down = al["up"].to_numpy(), al["down"].to_numpy()
    bad = np.zeros(len(al), dtype=bool)
    if downstream_bad is not None and len(al):
        dbad = downstream_bad.to_numpy(dtype=bool)
        bad |= dbad[np.searchsorted(ns_index(downstream_bad), t)]
    if upstream_bad is not None and len(al):
        bad |= upstream_bad.to_numpy(dtype=bool)[al["up_pos"].to_numpy(dtype=np.int64)]
    md = td_ns(params.min_duration)
    cond = exceeds(up, down, params) & ~bad
    eps = episodes(t, cond, md, md)
    delta = down - up
    ep = pd.DataFrame({
        "start": to_index(np.array([t[a] for a, _, _ in eps], dtype=np.int64)),
        "end": to_index(np.array([t[b] for _, b, _ in eps], dtype=np.int64)),
        "open": [o for _, _, o in eps],
        "max_delta_ntu": [float(np.max(delta[a:b + 1][cond[a:b + 1]])) for a, b, _ in eps],
        "n_readings": [b - a + 1 for a, b, _ in eps],
    })
    ne = episodes(t, bad, md, md)
    nev = pd.DataFrame({
        "start": to_index(np.array([t[a] for a, _, _ in ne], dtype=np.int64)),
        "end": to_index(np.array([t[b] for _, b, _ in ne], dtype=np.int64)),
        "open": [o for _, _, o in ne],
        "n_readings": [b - a + 1 for a, b, _ in ne],
    })
    return ep, nev
