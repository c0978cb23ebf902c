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
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from ._common import DEFAULT_MAX_GAP, episodes, in_order, ns_index, open_run_start, silence_ns, td_ns, to_index

PROVISION = ("Schenectady ch. 148 Art. I: no increase in turbidity causing a substantial visible contrast "
             "to natural conditions (6 NYCRR 703.2)")


@dataclass(frozen=True)
class ContrastParams:
    delta_ntu: float = 5.0                          # [NTU]
    fraction: float = 0.10                          # of upstream [-]
    min_duration: timedelta = timedelta(minutes=15)
    backstop_ntu: float = 250.0                     # downstream above this is an exceedance [NTU]
    align_tolerance: timedelta = timedelta(minutes=5)

    def as_dict(self) -> dict[str, Any]:
        return {"delta_ntu": self.delta_ntu, "fraction": self.fraction,
                "min_duration_min": self.min_duration.total_seconds() / 60,
                "backstop_ntu": self.backstop_ntu,
                "align_tolerance_min": self.align_tolerance.total_seconds() / 60}


def nearest_upstream(up_t_ns: np.ndarray, down_t_ns: np.ndarray, tolerance_ns: int) -> np.ndarray:
    """Position of the upstream reading nearest in time to each downstream reading, -1 when
    none lies within ``tolerance_ns`` (ties go to the earlier upstream reading)."""
    tu, td = np.asarray(up_t_ns, dtype=np.int64), np.asarray(down_t_ns, dtype=np.int64)
    if tu.size == 0 or td.size == 0:
        return np.full(td.size, -1, dtype=np.int64)
    j = np.searchsorted(tu, td, side="left")  # first upstream >= t
    prev = np.clip(j - 1, 0, tu.size - 1)
    nxt = np.clip(j, 0, tu.size - 1)
    dprev = np.where(j > 0, td - tu[prev], np.iinfo(np.int64).max)
    dnext = np.where(j < tu.size, tu[nxt] - td, np.iinfo(np.int64).max)
    pos = np.where(dprev <= dnext, prev, nxt)
    return np.where(np.minimum(dprev, dnext) <= tolerance_ns, pos, -1)


def align_pair(upstream_ntu: pd.Series, downstream_ntu: pd.Series, tolerance: timedelta) -> pd.DataFrame:
    """Each downstream reading with the upstream reading nearest in time within ``tolerance``.

    Returns a DataFrame indexed by the downstream times with ``up``, ``down`` [NTU] and
    ``up_pos`` (position of the matched upstream reading), downstream readings without an
    upstream partner left out. Ties go to the earlier upstream reading.
    """
    import pandas as pd
    td = ns_index(downstream_ntu)
    pos = nearest_upstream(ns_index(upstream_ntu), td, td_ns(tolerance))
    ok = pos >= 0
    return pd.DataFrame({"up": upstream_ntu.to_numpy(dtype="float64")[pos[ok]],
                         "down": downstream_ntu.to_numpy(dtype="float64")[ok], "up_pos": pos[ok]},
                        index=to_index(td[ok]))


def exceeds(up_ntu: np.ndarray, down_ntu: np.ndarray, params: ContrastParams) -> np.ndarray:
    """downstream − upstream > max(delta_ntu, fraction × upstream), or downstream > backstop.

    Strict inequalities: a delta of exactly 10 % of a 100 NTU upstream (10 NTU) is allowed.
    """
    return contrast_exceeds(up_ntu, down_ntu, params) | (down_ntu > params.backstop_ntu)


# Both sides of the contrast test are rounded to this many decimals of an NTU before they are
# compared: far below any probe's resolution (0.01 NTU), far above the error of a float
# subtraction (8.3 − 3.3 = 5.000000000000001), so a reading exactly at the allowance is
# exactly at it, as the probe reported it.
COMPARE_DECIMALS = 9


def contrast_exceeds(up_ntu: np.ndarray, down_ntu: np.ndarray, params: ContrastParams) -> np.ndarray:
    """The contrast test alone: downstream − upstream > max(delta_ntu, fraction × upstream) [NTU],
    strictly, in the readings' decimals (:data:`COMPARE_DECIMALS`): 8.3 against 3.3 is
    exactly 5 NTU, not an exceedance."""
    allowance = np.maximum(params.delta_ntu, params.fraction * up_ntu)
    exceeds: np.ndarray = np.round(down_ntu - up_ntu, COMPARE_DECIMALS) > np.round(allowance, COMPARE_DECIMALS)
    return exceeds


# Why the contrast could not be evaluated at a downstream reading (not-evaluable causes).
UPSTREAM_MISSING = "upstream_missing"   # no upstream reading within the align tolerance
UPSTREAM_QC = "upstream_qc"             # the upstream reading failed QC
DOWNSTREAM_QC = "downstream_qc"         # the downstream reading failed QC (no backstop either)
CAUSES = (UPSTREAM_MISSING, UPSTREAM_QC, DOWNSTREAM_QC)


def turbidity_contrast(upstream_ntu: pd.Series, downstream_ntu: pd.Series, *,
                       upstream_bad: pd.Series | None = None, downstream_bad: pd.Series | None = None,
                       params: ContrastParams = ContrastParams(),
                       max_gap: timedelta = DEFAULT_MAX_GAP) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Exceedance episodes and not-evaluable spans of one turbidity pair, on the downstream readings.

    Parameters
    ----------
    upstream_ntu, downstream_ntu : Series [NTU], indexed by UTC time
        The upstream (background, "natural conditions") and downstream probes. Either may
        be empty: a missing upstream probe does not silence the downstream one. Readings
        out of order are sorted; a time given twice keeps its first reading (as the
        streaming engine's buffers do). A reading without a value (NaN) is no reading, as
        the engine and replay skip it; an infinite one fails QC.
    upstream_bad, downstream_bad : Series of bool, indexed like the readings
        QC failures (:func:`~.qc.qartod_fail`, logger flags, calibration overdue).
    params : ContrastParams
    max_gap : timedelta [min]
        The downstream probe's stale threshold, ``rules.stale_intervals`` x its expected
        report interval (default 3 x 15 min): downstream readings further apart than this
        (never less than ``min_duration``) end a run of the condition.

    Returns
    -------
    (episodes, not_evaluable): DataFrames with ``start``, ``end`` (first and last
    downstream readings meeting the condition), ``open`` and ``n_readings``; episodes also
    ``max_delta_ntu`` [NTU] (largest downstream − upstream over the readings meeting the
    condition with a QC-passing upstream partner; NaN when none had one),
    ``max_downstream_ntu`` [NTU] and ``basis``; not-evaluable spans ``causes`` (tuple of
    :data:`CAUSES` present in the span).

    Notes
    -----
    A downstream reading meets the condition when

    * **contrast**: an upstream reading lies within ``align_tolerance``, both pass QC, and
      downstream − upstream > max(``delta_ntu``, ``fraction`` × upstream) — or
    * **backstop**: the downstream reading passes QC and exceeds ``backstop_ntu``; this
      needs no upstream reading at all (an absolute limit on the downstream water).

    It must hold in every downstream reading for ``min_duration`` (a reading that does not
    meet it, a QC failure included, breaks the run, so a single spike never opens an
    episode; so do two downstream readings further apart than ``max_gap``, the silence
    after which the probe is stale: it showed no contrast sustained through the silence,
    while a logger reporting every 30 min as it should did). ``basis`` is ``"contrast"``
    when every qualifying reading met the contrast test, ``"backstop"`` when none did (downstream above the backstop alone, e.g. with the
    upstream probe missing), ``"contrast+backstop"`` otherwise.

    The contrast is *not evaluable* at a downstream reading without a QC-passing upstream
    partner or failing QC itself; runs of such readings lasting ``min_duration`` are
    returned as not-evaluable spans, whether or not the backstop holds meanwhile.

    References
    ----------
    Schenectady ch. 148 Art. I; 6 NYCRR 703.2; REGULATIONS.md *Turbidity contrast*
    (both sensors passing QC; absolute backstop 250 NTU; "sustained"); the stale-station
    rule (docs/rules.md *health*) for what a silence is.
    """
    import pandas as pd
    # a reading without a value (NaN) is no reading, as the engine and replay skip it
    upstream_ntu, downstream_ntu = in_order(upstream_ntu).dropna(), in_order(downstream_ntu).dropna()
    tu, td = ns_index(upstream_ntu), ns_index(downstream_ntu)
    eps, ne, _ = contrast_runs(tu, upstream_ntu.to_numpy(dtype="float64"), td, downstream_ntu.to_numpy(dtype="float64"),
                            up_bad=_at(upstream_bad, tu), down_bad=_at(downstream_bad, td), params=params,
                            max_gap_ns=td_ns(max_gap))
    ep = pd.DataFrame({
        "start": to_index(np.array([r[0] for r in eps], dtype=np.int64)),
        "end": to_index(np.array([r[1] for r in eps], dtype=np.int64)),
        "open": [r[2] for r in eps], "max_delta_ntu": np.array([r[3] for r in eps], dtype=np.float64),
        "max_downstream_ntu": np.array([r[4] for r in eps], dtype=np.float64),
        "basis": [r[5] for r in eps], "n_readings": [r[6] for r in eps],
    })
    nev = pd.DataFrame({
        "start": to_index(np.array([r[0] for r in ne], dtype=np.int64)),
        "end": to_index(np.array([r[1] for r in ne], dtype=np.int64)),
        "open": [r[2] for r in ne], "n_readings": [r[3] for r in ne], "causes": [r[4] for r in ne],
    })
    return ep, nev


def _at(bad: pd.Series | None, t_ns: np.ndarray) -> np.ndarray | None:
    """QC failures (indexed by time, any order) at the readings' times ``t_ns``."""
    if bad is None or t_ns.size == 0:
        return None
    bad = in_order(bad)
    return bad.to_numpy(dtype=bool)[np.searchsorted(ns_index(bad), t_ns)]


class ContrastRuns(NamedTuple):
    """What :func:`contrast_runs` finds on one pair's readings."""

    episodes: list[tuple[Any, ...]]         # (start_ns, end_ns, open, max_delta_ntu, max_downstream_ntu, basis, n)
    not_evaluable: list[tuple[Any, ...]]    # (start_ns, end_ns, open, n, causes)
    open_from: int | None                   # [UTC ns] the first reading of the earliest run (of contrast or
    #   backstop, or not evaluable) still going on at the last downstream reading, however short: later
    #   readings may make it an episode or a span that starts there. None: no run goes on.


def contrast_runs(up_t_ns: np.ndarray, up_ntu: np.ndarray, down_t_ns: np.ndarray, down_ntu: np.ndarray, *,
                  up_bad: np.ndarray | None = None, down_bad: np.ndarray | None = None,
                  params: ContrastParams = ContrastParams(),
                  max_gap_ns: int, span_max_gap_ns: int | None = None) -> ContrastRuns:
    """:func:`turbidity_contrast` on arrays (the form the alert engine calls): each probe's
    times [UTC ns], sorted, and readings [NTU]; QC failures as bool arrays aligned with
    them (a reading that is NaN or infinite fails QC too); ``max_gap_ns`` [ns]: the
    downstream probe's stale threshold (``max_gap``; :func:`.health.stale_spans`);
    ``span_max_gap_ns`` [ns]: a silence of the downstream probe longer than this ends a
    not-evaluable span too (None: none does; the alert engine passes ``dry_lookback``,
    for it keeps no readings across a longer one). Returns
    episodes as ``(start_ns, end_ns, open, max_delta_ntu, max_downstream_ntu, basis,
    n_readings)``, not-evaluable spans as ``(start_ns, end_ns, open, n_readings,
    causes)`` and where the runs still going on at the last reading began
    (:class:`ContrastRuns`)."""
    td = np.asarray(down_t_ns, dtype=np.int64)
    down = np.asarray(down_ntu, dtype=np.float64)
    n = td.size
    dbad = np.zeros(n, dtype=bool) if down_bad is None or n == 0 else np.asarray(down_bad, dtype=bool)
    dbad = dbad | ~np.isfinite(down)   # no value, no measurement: never "within the allowance"
    # The partner: the QC-passing upstream reading nearest in time within the tolerance (a
    # failing one nearer does not make the reading unjudgeable while a passing one is in reach).
    tu = np.asarray(up_t_ns, dtype=np.int64)
    vu = np.asarray(up_ntu, dtype=np.float64)
    tol = td_ns(params.align_tolerance)
    passing = np.isfinite(vu)
    if up_bad is not None and tu.size:
        passing &= ~np.asarray(up_bad, dtype=bool)
    good = np.flatnonzero(passing)
    pos = nearest_upstream(tu[good], td, tol)
    has_up = pos >= 0
    up = np.full(n, np.nan)
    up[has_up] = vu[good[pos[has_up]]]
    near_any = has_up | (nearest_upstream(tu, td, tol) >= 0)
    ubad = near_any & ~has_up                  # upstream readings in reach, none passing QC
    evaluable = has_up & ~dbad
    delta = down - up
    contrast = np.zeros(n, dtype=bool)
    contrast[evaluable] = contrast_exceeds(up[evaluable], down[evaluable], params)
    backstop = ~dbad & (down > params.backstop_ntu)
    cond = contrast | backstop
    md = td_ns(params.min_duration)
    rows = []
    # sustained means shown: downstream readings further apart than the probe's stale threshold
    # end a run (a silent probe showed no contrast through the silence); not-evaluable spans go on
    gap = silence_ns(max_gap_ns, md)
    for a, b, is_open in episodes(td, cond, md, md, max_gap_ns=gap):
        c = cond[a:b + 1]
        with_up = c & evaluable[a:b + 1]
        by_contrast = contrast[a:b + 1][c]
        basis = "contrast" if by_contrast.all() else ("backstop" if not by_contrast.any() else "contrast+backstop")
        rows.append((int(td[a]), int(td[b]), is_open,
                     float(np.max(delta[a:b + 1][with_up])) if with_up.any() else np.nan,
                     float(np.max(down[a:b + 1][c])), basis, b - a + 1))
    why = {UPSTREAM_MISSING: ~near_any, UPSTREAM_QC: ubad, DOWNSTREAM_QC: dbad}
    spans = [(int(td[a]), int(td[b]), is_open, b - a + 1, tuple(c for c in CAUSES if why[c][a:b + 1].any()))
             for a, b, is_open in episodes(td, ~evaluable, md, md, max_gap_ns=span_max_gap_ns)]
    going = [a for a in (open_run_start(td, cond, gap), open_run_start(td, ~evaluable, span_max_gap_ns))
             if a is not None]
    return ContrastRuns(rows, spans, int(td[min(going)]) if going else None)
