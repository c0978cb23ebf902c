"""Dry weather at an outfall: less than 0.10 in of rain in the trailing 72 h.

The 0.10 in is a depth of rain at the outfall. A gauge measures that depth at one point;
two gauges that each saw the same 0.06 in shower do not make 0.12 in at the outfall. So
each gauge is judged on its own (:func:`is_dry_weather`) and the outfall's state combines
them without ever adding depths (:func:`combine_dry_states`): the wettest gauge decides.

References
----------
Ramapo ch. 218 and Schenectady ch. 148 Art. II (prohibition of illicit discharges) —
REGULATIONS.md row *Dry weather*: less than 0.10 in in the previous 72 h (IDDE screening,
CMRSWC SOP 1; 40 CFR 122.21(g)(7)(ii) mirror image).
"""

from __future__ import annotations

import enum
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Mapping

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from ._common import ns_index, td_ns
from .storms import EXACT, PER_MICRO, decimal_to_micro, filter_double_tips, to_exact

PROVISION = "Ramapo ch. 218 / Schenectady ch. 148 Art. II (illicit discharges); IDDE dry-weather screening"


class DryState(enum.IntEnum):
    UNKNOWN = -1   # rain data does not cover the window: never assumed dry
    WET = 0
    DRY = 1


# The codes as plain ints for numpy (an IntEnum member costs numpy ~10 us to convert, and
# ~1 us to look up on its class)
UNKNOWN, WET, DRY = int(DryState.UNKNOWN), int(DryState.WET), int(DryState.DRY)


def rain_coverage(rain_t_ns: np.ndarray, max_gap_ns: int) -> tuple[np.ndarray, np.ndarray]:
    """Intervals ``[a, b]`` (ns) covered by a gauge's rows (zeros included).

    Consecutive rows closer than ``max_gap_ns`` cover the time between them; a row covers
    the ``max_gap_ns`` before and after it (a reporting gauge is trusted until it has been
    silent for ``max_gap_ns``). Returns start and end arrays.
    """
    t = np.asarray(rain_t_ns, dtype=np.int64)
    if t.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    brk = np.flatnonzero(np.diff(t) > max_gap_ns) + 1
    first = np.concatenate(([0], brk))
    last = np.concatenate((brk - 1, [t.size - 1]))
    return t[first] - max_gap_ns, t[last] + max_gap_ns


def is_dry_weather(rain_in: pd.Series, at: pd.DatetimeIndex | pd.Series, *,
                   lookback: timedelta = timedelta(hours=72), max_rain_in: Decimal = Decimal("0.10"),
                   max_gap: timedelta = timedelta(hours=1), after_rain: timedelta = timedelta(0),
                   double_tip: timedelta = timedelta(seconds=1)) -> pd.Series:
    """Dry-weather state at each time of ``at``, judged on one rain gauge.

    Parameters
    ----------
    rain_in : Series [in], indexed by UTC time
        Rain per row at *one* gauge, zero rows included (they show the gauge was
        reporting). Never concatenate gauges: depths at different points do not add up
        (use :func:`outfall_dry_weather` for an outfall with several gauges).
    at : DatetimeIndex (UTC)
        Times to judge (typically the outfall's flow readings).
    lookback : timedelta [h]
        Trailing window ``(t - lookback, t]``; 72 h by default (48–72 h allowed).
    max_rain_in : Decimal [in]
        Strictly less than this in the window is dry (0.10 in: 0.09 dry, 0.10 wet).
    max_gap : timedelta
        Rows further apart than this leave a gap: a window touching a gap is UNKNOWN.
    after_rain : timedelta [h]
        Any rain in ``(t - after_rain, t]`` makes ``t`` WET however little has fallen: a
        storm is not dry weather while it runs off (its first 0.09 in would otherwise
        make its runoff look like an illicit discharge). The registry default is the
        storm's minimum inter-event time, 6 h (EPA SYNOP; REGULATIONS.md *Storm end*);
        0 turns it off.
    double_tip : timedelta [s]
        A tip within this of the previous kept tip counts no rain (REGULATIONS.md *Double
        tip*: 1 s; as for storms). A missing depth (NaN) is no row at all (no coverage) and a
        negative depth is no rain.

    Returns
    -------
    Series of :class:`DryState` (int) indexed like ``at``: DRY, WET, or UNKNOWN when the
    rain rows do not cover the whole window (a data gap is never assumed dry). A window
    already holding 0.10 in or more is WET even with a gap.

    References
    ----------
    REGULATIONS.md row *Dry weather*; Ramapo ch. 218, Schenectady ch. 148 Art. II.
    """
    state, _ = _gauge_state(rain_in, at, lookback=lookback, max_rain_in=max_rain_in, max_gap=max_gap,
                            after_rain=after_rain, double_tip=double_tip)
    return state


def _gauge_state(rain_in: pd.Series, at: pd.DatetimeIndex | pd.Series, *, lookback: timedelta, max_rain_in: Decimal,
                 max_gap: timedelta, after_rain: timedelta, double_tip: timedelta) -> tuple[pd.Series, np.ndarray]:
    """:func:`is_dry_weather` and the depth in each window [1/EXACT in] (int64)."""
    import pandas as pd
    at_idx = at if isinstance(at, pd.DatetimeIndex) else pd.DatetimeIndex(at)
    state, total = gauge_dry_state(ns_index(rain_in), rain_in.to_numpy(), ns_index(at_idx), lookback_ns=td_ns(lookback),
                                   max_rain_uin=decimal_to_micro(max_rain_in), max_gap_ns=td_ns(max_gap),
                                   after_rain_ns=td_ns(after_rain), double_tip_ns=td_ns(double_tip))
    return pd.Series(state, index=at_idx, name="dry_state"), total


def gauge_dry_state(rain_t_ns: np.ndarray, rain_in: np.ndarray, at_ns: np.ndarray, *, lookback_ns: int,
                    max_rain_uin: int, max_gap_ns: int, after_rain_ns: int,
                    double_tip_ns: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`is_dry_weather` on arrays (the form the alert engine calls): one gauge's rows
    (times [UTC ns], depths [in]) judged at the times ``at_ns`` [UTC ns]; durations in ns,
    ``max_rain_uin`` in micro-inches. Returns the :class:`DryState` codes (int8) and the depth
    in each trailing window [1/:data:`~.storms.EXACT` in] (int64: exact for inch and mm records).
    ``double_tip_ns``: a tip this close after the previous kept one counts no rain (0: off)."""
    return RainIndex(rain_t_ns, rain_in, max_gap_ns, double_tip_ns).states(at_ns, lookback_ns=lookback_ns, max_rain_uin=max_rain_uin,
                                                            after_rain_ns=after_rain_ns)


def _clean(t: np.ndarray, rain_in: np.ndarray, double_tip_ns: int, last_tip: int | None
           ) -> tuple[np.ndarray, np.ndarray]:
    """A gauge's sorted rows as :class:`RainIndex` counts them: times and depths [1/EXACT in].

    * A missing depth (NaN) is not a row: it neither adds rain nor shows the gauge covered
      the time (a data gap is never assumed dry; replay drops such rows too).
    * A negative depth is no rain (0 in): rain cannot be negative, and a negative row must
      not cancel rain that fell (0.12 in then -0.05 in is not "less than 0.10 in").
    * A tip within ``double_tip_ns`` of the previous kept tip (``last_tip`` the one before
      these rows) is a double tip and counts 0 in (REGULATIONS.md *Double tip*, as
      :func:`~.storms.storm_rows` drops it); a row at the same time twice is one.
    """
    ok = ~np.isnan(rain_in)
    if not ok.all():
        t, rain_in = t[ok], rain_in[ok]
    v = np.maximum(to_exact(rain_in), 0)
    if double_tip_ns > 0:
        pos = np.flatnonzero(v > 0)
        if pos.size:
            times = t[pos] if last_tip is None else np.concatenate(([last_tip], t[pos]))
            keep = filter_double_tips(times, double_tip_ns)
            if last_tip is not None:
                keep = keep[1:]
            v[pos[~keep]] = 0
    return t, v


class RainIndex:
    """One gauge's rows prepared for judging dry weather at any times (:meth:`states`): the
    cumulative depth [1/EXACT in], the times of the rows with rain and the coverage intervals
    (:func:`rain_coverage`). :func:`gauge_dry_state` builds one per call; the streaming
    engine keeps one per gauge and extends it with the rows appended since (:meth:`extend`), so
    judging an outfall's flow readings costs a few searches instead of a pass over the
    gauge's 72 h of rows. Built or extended, the arrays are the same."""

    __slots__ = ("t", "cum", "tpos", "ca", "cb", "n", "npos", "ns", "gap", "double_tip")

    def __init__(self, rain_t_ns: np.ndarray, rain_in: np.ndarray, max_gap_ns: int, double_tip_ns: int = 0) -> None:
        t = np.asarray(rain_t_ns, dtype=np.int64)
        raw = np.asarray(rain_in, dtype=np.float64)
        if t.size and np.any(np.diff(t) < 0):
            o = np.argsort(t, kind="stable")
            t, raw = t[o], raw[o]
        t, v = _clean(t, raw, double_tip_ns, None)
        ca, cb = rain_coverage(t, max_gap_ns)
        tpos = t[v > 0]
        n = t.size
        self.gap, self.n, self.npos, self.ns = max_gap_ns, n, tpos.size, ca.size
        self.double_tip = double_tip_ns
        self._store(t, np.concatenate(([0], np.cumsum(v))), tpos, ca, cb, 0)

    def _store(self, t: np.ndarray, cum: np.ndarray, tpos: np.ndarray, ca: np.ndarray, cb: np.ndarray, more: int) -> None:
        """Arrays with room for ``more`` rows and as many again (tpos, ca, cb hold at most one
        entry per row)."""
        cap = 2 * (t.size + more) + 16
        self.t, self.cum, self.tpos, self.ca, self.cb = (np.empty(cap + (a is cum), dtype=np.int64)
                                                         for a in (t, cum, tpos, ca, cb))
        for a, out in ((t, self.t), (cum, self.cum), (tpos, self.tpos), (ca, self.ca), (cb, self.cb)):
            out[:a.size] = a

    @property
    def last(self) -> int | None:
        """The latest row's time (None: no row)."""
        return int(self.t[self.n - 1]) if self.n else None

    def extend(self, rain_t_ns: np.ndarray, rain_in: np.ndarray) -> None:
        """Add rows later than the latest (sorted): as if built with them."""
        k = len(rain_t_ns)
        if not k:
            return
        n, npos, ns = self.n, self.npos, self.ns
        t_new, v_new = _clean(np.asarray(rain_t_ns, dtype=np.int64), np.asarray(rain_in, dtype=np.float64),
                              self.double_tip, int(self.tpos[npos - 1]) if npos else None)
        k = t_new.size
        if not k:
            return
        if n + k > self.t.size:
            self._store(self.t[:n], self.cum[:n + 1], self.tpos[:npos], self.ca[:ns], self.cb[:ns], k)
        self.t[n:n + k] = t_new
        self.cum[n + 1:n + k + 1] = self.cum[n] + np.cumsum(v_new)
        pos = t_new[v_new > 0]
        self.tpos[npos:npos + pos.size] = pos
        self.npos = npos + pos.size
        gap = self.gap
        prev = int(self.t[n - 1]) if n else None
        for x in t_new.tolist():
            if prev is not None and x - prev <= gap:
                self.cb[ns - 1] = x + gap            # joins the stretch before it
            else:
                self.ca[ns], self.cb[ns] = x - gap, x + gap
                ns += 1
            prev = x
        self.n, self.ns = n + k, ns

    def states(self, at_ns: np.ndarray, *, lookback_ns: int, max_rain_uin: int, after_rain_ns: int
               ) -> tuple[np.ndarray, np.ndarray]:
        """:func:`gauge_dry_state` at the times ``at_ns``: codes (int8) and depths [1/EXACT in]."""
        t_at = np.asarray(at_ns, dtype=np.int64)
        t_r, cum = self.t[:self.n], self.cum[:self.n + 1]
        lb = lookback_ns
        hi = np.searchsorted(t_r, t_at, side="right")
        lo = np.searchsorted(t_r, t_at - lb, side="right")
        total = cum[hi] - cum[lo]
        wet = total >= max_rain_uin * PER_MICRO   # in exact units: 2.54 mm is 0.10 in
        ar = after_rain_ns
        if ar > 0:
            t_pos = self.tpos[:self.npos]
            k_last = np.searchsorted(t_pos, t_at, side="right") - 1
            recent = (k_last >= 0) & (t_at - t_pos[np.maximum(k_last, 0)] < ar) if t_pos.size else \
                np.zeros(t_at.size, dtype=bool)
            wet = wet | recent
        ca, cb = self.ca[:self.ns], self.cb[:self.ns]
        # covered if one coverage interval holds [t - lookback, t]
        k = np.searchsorted(ca, t_at - lb, side="right") - 1
        ok = k >= 0
        kk = np.maximum(k, 0)
        covered = ok & (cb[kk] >= t_at) if ca.size else np.zeros(t_at.size, dtype=bool)
        state = np.where(wet, WET, np.where(covered, DRY, UNKNOWN)).astype(np.int8)
        return state, total


    def states_at(self, at_ns: list[int], *, lookback_ns: int, max_rain_uin: int, after_rain_ns: int
                  ) -> tuple[list[int], list[int]]:
        """:meth:`states` at a few times (a list of ints), worked out in Python: the same codes
        and depths [1/EXACT in], as lists. For the one or two new flow readings of a live
        batch, where :meth:`states`' dozen numpy calls cost more than the work."""
        n, npos, ns = self.n, self.npos, self.ns
        t_r, cum, t_pos, ca, cb = self.t, self.cum, self.tpos, self.ca, self.cb
        codes, totals = [], []
        for x in at_ns:
            start = x - lookback_ns
            total = int(cum[int(t_r[:n].searchsorted(x, side="right"))]) - \
                int(cum[int(t_r[:n].searchsorted(start, side="right"))])
            wet = total >= max_rain_uin * PER_MICRO
            if not wet and after_rain_ns > 0 and npos:
                k = int(t_pos[:npos].searchsorted(x, side="right")) - 1
                wet = k >= 0 and x - int(t_pos[k]) < after_rain_ns
            if wet:
                codes.append(WET)
            else:
                k = int(ca[:ns].searchsorted(start, side="right")) - 1 if ns else -1
                codes.append(DRY if k >= 0 and int(cb[k]) >= x else UNKNOWN)
            totals.append(total)
        return codes, totals


def combine_dry_states(states: pd.DataFrame) -> pd.Series:
    """The outfall's dry-weather state from its gauges' states (one column per gauge).

    WET if any gauge is WET (a gauge with coverage that is wet, or a gauge with a gap whose
    window already holds the threshold or recent rain: observed rain is never ignored);
    else DRY if at least one gauge is DRY (has coverage and is dry: every gauge with
    coverage is then dry); else UNKNOWN (no gauge covers the window). Depths are never
    added: the wettest gauge decides. No gauge at all: UNKNOWN.
    """
    import pandas as pd
    return pd.Series(combine_dry_codes(states.to_numpy(dtype=np.int8)), index=states.index, name="dry_state")


def combine_dry_codes(states: np.ndarray) -> np.ndarray:
    """:func:`combine_dry_states` on an (n readings, n gauges) array of :class:`DryState` codes."""
    a = np.asarray(states, dtype=np.int8)
    if a.shape[1] == 0:
        return np.full(len(a), UNKNOWN, dtype=np.int8)
    if a.shape[1] == 1:
        return a[:, 0].copy()   # one gauge: its own state
    wet = (a == WET).any(axis=1)
    dry = (a == DRY).any(axis=1)
    return np.where(wet, WET, np.where(dry, DRY, UNKNOWN)).astype(np.int8)


def outfall_dry_weather(rain_by_gauge: Mapping[str, pd.Series], at: pd.DatetimeIndex | pd.Series, *,
                        lookback: timedelta = timedelta(hours=72), max_rain_in: Decimal = Decimal("0.10"),
                        max_gap: timedelta = timedelta(hours=1), after_rain: timedelta = timedelta(0),
                        double_tip: timedelta = timedelta(seconds=1)) -> tuple[pd.Series, pd.DataFrame, pd.DataFrame]:
    """Dry-weather state of an outfall served by one or more rain gauges.

    Parameters
    ----------
    rain_by_gauge : mapping gauge id -> Series [in], indexed by UTC time
        Each gauge's rows (zeros included), as for :func:`is_dry_weather`.
    at, lookback, max_rain_in, max_gap, after_rain, double_tip
        As for :func:`is_dry_weather`, applied to each gauge on its own.

    Returns
    -------
    ``(state, per_gauge, depth_in)``: the outfall's :class:`DryState` at each time
    (:func:`combine_dry_states`), each gauge's state (DataFrame, one column per gauge) and
    each gauge's rain in the trailing window [in] (DataFrame, same shape).

    Notes
    -----
    The outfall is DRY when every gauge with coverage is dry and at least one has
    coverage; a gauge without coverage (dead, or not yet reporting) is left out unless the
    rain it did record already makes the window wet.

    References
    ----------
    REGULATIONS.md row *Dry weather* (less than 0.10 in of rain in the previous 72 h: a
    depth at the outfall); Ramapo ch. 218, Schenectady ch. 148 Art. II.
    """
    import pandas as pd
    at_idx = at if isinstance(at, pd.DatetimeIndex) else pd.DatetimeIndex(at)
    gauges = list(rain_by_gauge)
    state, per_gauge, depth = outfall_dry_codes(
        {g: (ns_index(r), r.to_numpy()) for g, r in rain_by_gauge.items()}, ns_index(at_idx),
        lookback_ns=td_ns(lookback), max_rain_uin=decimal_to_micro(max_rain_in), max_gap_ns=td_ns(max_gap),
        after_rain_ns=td_ns(after_rain), double_tip_ns=td_ns(double_tip))
    return (pd.Series(state, index=at_idx, name="dry_state"),
            pd.DataFrame(per_gauge, index=at_idx, columns=gauges),
            pd.DataFrame(depth, index=at_idx, columns=gauges, dtype=np.float64))


def outfall_dry_codes(rain_by_gauge: Mapping[str, "tuple[np.ndarray, np.ndarray] | RainIndex"], at_ns: np.ndarray, *,
                      lookback_ns: int, max_rain_uin: int, max_gap_ns: int, after_rain_ns: int,
                      double_tip_ns: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`outfall_dry_weather` on arrays (the form the alert engine calls).

    ``rain_by_gauge``: gauge id -> (times [UTC ns], depths [in]), or its :class:`RainIndex`
    (built with ``max_gap_ns`` and ``double_tip_ns``: the streaming engine keeps them); durations in ns,
    ``max_rain_uin`` in micro-inches (:func:`gauge_dry_state`). Returns the outfall's
    :class:`DryState` codes (n,), each gauge's codes (n, gauges) and each gauge's depth in
    the trailing window [in] (n, gauges), gauges in the mapping's order.
    """
    t_at = np.asarray(at_ns, dtype=np.int64)
    n, k = t_at.size, len(rain_by_gauge)
    per_gauge = np.empty((n, k), dtype=np.int8)
    depth = np.empty((n, k), dtype=np.float64)
    for j, rain in enumerate(rain_by_gauge.values()):
        index = rain if isinstance(rain, RainIndex) else RainIndex(rain[0], rain[1], max_gap_ns, double_tip_ns)
        per_gauge[:, j], total = index.states(t_at, lookback_ns=lookback_ns, max_rain_uin=max_rain_uin,
                                              after_rain_ns=after_rain_ns)
        depth[:, j] = total / EXACT
    return combine_dry_codes(per_gauge), per_gauge, depth
