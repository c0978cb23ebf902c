"""Compose the rules into events for one subject (gauge, outfall, pair, site, station).

Replay and the streaming engine both call these functions; they differ only in where the
readings come from (a whole file, or a per-station buffer) and what "now" is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Callable, Mapping, Sequence, cast

import numpy as np

from ms4watch.contract.registry import Registry
from ms4watch.contract.timeutil import format_duration, from_ns

from .events import AlertEvent, AlertKind, overdue_id
from .rules import dry_weather as dw
from .rules import dry_weather_flow as dwf
from .rules import health, inspections, qc, storms, turbidity
from .rules.calibration import uncalibrated_field
from .rules._common import episodes, silence_ns, td_ns

# (station, quantity) -> (t_ns sorted unique int64, values float64, flags object array)
Arrays = tuple[np.ndarray, np.ndarray, np.ndarray]
Getter = Callable[[str, str], Arrays]
EMPTY: Arrays = (np.empty(0, np.int64), np.empty(0, np.float64), np.empty(0, dtype=object))


def storm_params(reg: Registry, gauge: str) -> storms.StormParams:
    r = reg.rules
    return storms.StormParams(inter_event=r.storm_inter_event, qualifying_in=r.storm_min_depth_in,
                              double_tip=r.double_tip)


# -- storms ---------------------------------------------------------------------------------
def gauge_storms(reg: Registry, gauge: str, rain: Arrays, now_ns: int) -> list[AlertEvent]:
    """Storm events of a gauge; a storm is confirmed (``end`` set) once now - last rain > MIT."""
    p = storm_params(reg, gauge)
    if not np.any(rain[1] > 0):  # no rain row: no storm (exact shortcut)
        return []
    mit = td_ns(p.inter_event)
    params = p.as_dict()
    out = []
    for start, end, first, depth_uin, duration_h, _n, i5, i15, i60, qualifying in storms.storm_rows(rain[0], rain[1], p):
        done = now_ns - end > mit
        out.append(AlertEvent(AlertKind.STORM, f"storm/{gauge}/{first}", {
            "gauge": gauge, "start": start, "end": end if done else None,
            "depth_in": depth_uin / storms.MICRO, "qualifying": qualifying, "confirmed": done,
            "last_rain": end, "duration_h": round(duration_h, 4),
            "peak_i5_in_h": round(i5, 4), "peak_i15_in_h": round(i15, 4),
            "peak_i60_in_h": round(i60, 4),
            **uncalibrated_field((rain, first, end))}, params, storms.PROVISION))   # issue 13
    return out


# -- inspections ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Inspection:
    site: str
    time_ns: int
    inspector: str = ""
    note: str = ""


def site_inspections(reg: Registry, site_id: str, confirmed_storms: Mapping[str, Sequence[int]],
                     inspections_ns: Sequence[int], now_ns: int) -> list[AlertEvent]:
    """Post-storm and routine inspection items of one site, and escalations when overdue.

    ``confirmed_storms``: gauge -> end times [UTC ns] of its confirmed qualifying storms.
    """
    r = reg.rules
    site = next(s for s in reg.construction_sites if s.id == site_id)
    tz = reg.tz
    insp = np.sort(np.asarray(list(inspections_ns), dtype=np.int64))
    twice = site.disturbed_acres is not None and site.disturbed_acres > inspections.TWICE_WEEKLY_ACRES
    params = {"after_storm_h": r.inspection_after_storm.total_seconds() / 3600,
              "routine_days": r.routine_inspection_interval.total_seconds() / 86400,
              "routine_per_period": 2 if twice else 1, "qualifying_in": float(r.storm_min_depth_in)}
    out: list[AlertEvent] = []

    def item(key: str, gauge: str | None, storm_end: int | None, due: int, closed: int | None, reason: str) -> None:
        out.append(AlertEvent(AlertKind.INSPECTION_DUE, key, {
            "site": site_id, "gauge": gauge, "storm_end": storm_end, "due": due, "reason": reason,
            "closed_at": closed}, params, inspections.PROVISION))
        if now_ns > due and (closed is None or closed > due):
            out.append(AlertEvent(AlertKind.INSPECTION_OVERDUE, overdue_id(key), {
                "site": site_id, "gauge": gauge, "storm_end": storm_end, "due": due, "reason": reason,
                "closed_at": closed}, params, inspections.PROVISION))

    for gauge in site.rain_gauges:
        ends = sorted(int(e) for e in confirmed_storms.get(gauge, ()))
        for _site, _gauge, storm_end, due in inspections.storm_inspections(ends, [site], gauge, tz,
                                                                          after=r.inspection_after_storm):
            k = np.searchsorted(insp, storm_end, side="left")   # the first inspection from the storm's end
            item(f"inspection/{site_id}/storm/{gauge}/{storm_end}", gauge, storm_end, due,
                 int(insp[k]) if k < insp.size else None, "storm")
    for it in inspections.routine_inspections(site, cast(Sequence[int], insp), now_ns, tz, interval=r.routine_inspection_interval):
        item(f"inspection/{site_id}/routine/{it.key}", None, None, it.due_ns, it.closed_ns, "routine")
    return out


def site_opens_ns(reg: Registry, site_id: str) -> int:
    """When a site's first routine item opens: local midnight of ``active_from`` [UTC ns]."""
    site = next(s for s in reg.construction_sites if s.id == site_id)
    return inspections.local_midnight(site.active_from, reg.tz)


# -- a station's silence --------------------------------------------------------------------
def stale_after_ns(reg: Registry, station: str) -> int:
    """The silence after which ``station`` is stale [ns]: ``rules.stale_intervals`` x its
    expected report interval from the registry (its ``report_interval``, else
    ``rules.report_interval``): 3 x 15 min by default. Never the interval its logger states
    in a status message: replay does not see those, and the rules that end a "sustained"
    run at a silence (dry-weather flow, turbidity contrast) must judge streaming as replay."""
    return reg.rules.stale_intervals * report_interval(reg, station)[0]


def silence_after_ns(reg: Registry, station: str) -> int:
    """The gap between ``station``'s readings [ns] beyond which a run of dry-weather flow or
    of turbidity contrast ends: its stale threshold (:func:`stale_after_ns`), at most
    ``rules.dry_lookback``. The streaming engine keeps no station's readings across a
    silence longer than ``lateness`` + ``dry_lookback`` (the station has gone silent, it no
    longer holds its subjects back: docs/rules.md), so a longer gap could not join a run in
    streaming; with readings delivered within ``lateness``, one up to ``dry_lookback`` can.
    (The rules raise it to the minimum duration when it is less.)"""
    return min(stale_after_ns(reg, station), td_ns(reg.rules.dry_lookback))


# -- dry-weather flow -----------------------------------------------------------------------
def outfall_events(reg: Registry, outfall: str, flow: Arrays, rain: Mapping[str, Arrays],
                   rain_index: Mapping[str, dw.RainIndex] | None = None) -> list[AlertEvent]:
    """Dry-weather flow episodes (with suppression) and data-gap notices of one outfall.

    ``rain``: gauge id -> that gauge's rain rows, for every gauge of the outfall. Each gauge
    is judged on its own (depths at different points never add up); the episode names the
    gauges whose data decided (``rain_gauges_used``: covered and dry in the episode), those
    without coverage (``rain_gauges_missing``) and each used gauge's largest trailing-window
    depth in the episode (``rain_in_by_gauge`` [in]). ``rain_index``: gauge id -> its rows
    as a :class:`~.rules.dry_weather.RainIndex` (``dry_rain_max_gap``), which the streaming
    engine keeps up to date (else one is built from ``rain``).
    """
    r = reg.rules
    of = reg.outfall(outfall)
    above = flow[1] > of.flow_floor_gpm
    md = td_ns(r.dwf_min_duration)
    if flow[0].size == 0 or not np.any(above) or not episodes(flow[0], above, md, 0):
        return []  # both rules need a sustained run above the floor: nothing to judge (exact shortcut)
    gauges = list(of.rain_gauges)
    t, v = flow[0], flow[1]
    index = rain_index or {}
    dry, states, depths = dw.outfall_dry_codes(
        {g: index.get(g) or rain.get(g, EMPTY)[:2] for g in gauges}, t, lookback_ns=td_ns(r.dry_lookback),
        max_rain_uin=storms.decimal_to_micro(r.dry_max_rain_in), max_gap_ns=td_ns(r.dry_rain_max_gap),
        after_rain_ns=td_ns(r.dry_after_rain), double_tip_ns=td_ns(r.double_tip))
    params = {"floor_gpm": of.flow_floor_gpm, "min_duration_min": r.dwf_min_duration.total_seconds() / 60,
              "dry_lookback_h": r.dry_lookback.total_seconds() / 3600, "dry_max_rain_in": float(r.dry_max_rain_in),
              "rain_max_gap_min": r.dry_rain_max_gap.total_seconds() / 60,
              "dry_after_rain_h": r.dry_after_rain.total_seconds() / 3600, "rain_gauges": gauges}

    def gauges_in(start: int, end: int) -> tuple[list[str], list[str], dict[str, float]]:
        a, b = np.searchsorted(t, start, side="left"), np.searchsorted(t, end, side="right")
        st = states[a:b]
        used = [g for j, g in enumerate(gauges) if np.any(st[:, j] == dw.DRY)]
        missing = [g for j, g in enumerate(gauges) if np.any(st[:, j] == dw.UNKNOWN)]
        depth_in = {g: round(float(depths[a:b, j].max()), 6) for j, g in enumerate(gauges) if g in used}
        return used, missing, depth_in

    gap = silence_after_ns(reg, outfall)   # the outfall's flow station: a silence ends a run
    out = []
    for start, end, is_open, peak, _n in dwf.flow_episodes(t, v, dry, dw.DryState.DRY, floor_gpm=of.flow_floor_gpm,
                                                           min_duration_ns=md, rearm_ns=md, max_gap_ns=gap):
        used, missing, depth_in = gauges_in(start, end)
        out.append(AlertEvent(AlertKind.DRY_WEATHER_FLOW, f"dwf/{outfall}/{start}", {
            "outfall": outfall, "start": start, "end": None if is_open else end, "peak_gpm": round(peak, 4),
            "suppressed": suppression(reg, outfall, start, end), "rain_gauges_used": used,
            "rain_gauges_missing": missing, "rain_in_by_gauge": depth_in, "last_met": end,
            **uncalibrated_field((flow, start, end), *((rain.get(g, EMPTY), start - td_ns(r.dry_lookback), end)
                                                       for g in used))}, params, dwf.PROVISION))   # issue 13
    for start, end, is_open, peak, _n in dwf.flow_episodes(t, v, dry, dw.DryState.UNKNOWN, floor_gpm=of.flow_floor_gpm,
                                                           min_duration_ns=md, rearm_ns=md, max_gap_ns=gap):
        _used, missing, _depth = gauges_in(start, end)
        out.append(AlertEvent(AlertKind.DRY_WEATHER_UNKNOWN, f"dwu/{outfall}/{start}", {
            "outfall": outfall, "start": start, "end": None if is_open else end, "peak_gpm": round(peak, 4),
            "reason": "no rain data covering the dry-weather window", "rain_gauges_missing": missing,
            "last_met": end}, params, dw.PROVISION))
    return out


def extend_open_episode(reg: Registry, outfall: str, open_event: AlertEvent, flow: Arrays, rain: Mapping[str, Arrays],
                        rain_index: Mapping[str, dw.RainIndex], first: int) -> AlertEvent | None:
    """``open_event``, the outfall's open dry-weather-flow episode or dry-weather-unknown
    notice as :func:`outfall_events` made it on the flow readings before ``first`` (its
    ``last_met`` is the reading at ``first - 1``), extended through the readings from
    ``first`` on: the event :func:`outfall_events` makes of them all, or None when it cannot
    be had from the new readings alone (then the rules run).

    The caller vouches that nothing else changed that could change a judgement at or before
    ``last_met``: no flow reading was inserted or corrected, and no rain row was inserted,
    corrected or appended at a time that can change the dry-weather state there (the
    engine's ``rain_lead`` bound, ``engine.outfall.Outfalls.flow_may_change``). Then the readings up
    to ``last_met`` are judged as before, and when every new one is above the floor and in
    the event's state (DRY, or UNKNOWN) the open run goes on through them and no other run
    changes: the event keeps its start and stays open; its peak, gauges, depths and flags
    are those before joined with the new readings' (a max of rounded values is the rounded
    max: rounding is monotonic); its suppression is asked again for the new end. A gauge
    first used by the new readings (its largest depth over the whole episode would be
    needed) gives None."""
    t, v = flow[0], flow[1]
    nt, nv = t[first:].tolist(), v[first:].tolist()
    of = reg.outfall(outfall)
    floor = of.flow_floor_gpm
    if not nt or not all(x > floor for x in nv):
        return None
    gap = silence_ns(silence_after_ns(reg, outfall), td_ns(reg.rules.dwf_min_duration))
    if any(b - a > gap for a, b in zip([int(t[first - 1])] + nt, nt)):
        return None   # a silence of the flow station ends the run (dwf.flow_episodes)
    is_dwf = open_event.kind is AlertKind.DRY_WEATHER_FLOW
    want = dw.DRY if is_dwf else dw.UNKNOWN
    r = reg.rules
    gauges = list(of.rain_gauges)
    lb, gap = td_ns(r.dry_lookback), td_ns(r.dry_rain_max_gap)
    args = dict(lookback_ns=lb, max_rain_uin=storms.decimal_to_micro(r.dry_max_rain_in),
                after_rain_ns=td_ns(r.dry_after_rain))
    # each gauge judged at the new readings (RainIndex.states_at: what outfall_dry_codes gives)
    per_gauge = [(rain_index.get(g) or dw.RainIndex(*rain.get(g, EMPTY)[:2], gap, td_ns(r.double_tip)))
                 .states_at(nt, **args)
                 for g in gauges]
    for i in range(len(nt)):   # dw.combine_dry_codes: WET if any, else DRY if any, else UNKNOWN
        codes = [c[i] for c, _ in per_gauge]
        if (dw.WET if dw.WET in codes else dw.DRY if dw.DRY in codes else dw.UNKNOWN) != want:
            return None
    f0 = open_event.fields
    used0, missing0 = f0.get("rain_gauges_used", ()), f0["rain_gauges_missing"]
    missing, depth_in = [], {}
    for g, (codes, totals) in zip(gauges, per_gauge):
        if g in used0:   # depth: total / EXACT in float64, as outfall_dry_codes (exact below 2**53)
            d, d0 = round(float(max(totals)) / storms.EXACT, 6), f0["rain_in_by_gauge"][g]
            depth_in[g] = d if d > d0 else d0
        elif is_dwf and dw.DRY in codes:
            return None
        if g in missing0 or dw.UNKNOWN in codes:
            missing.append(g)
    start, last, end = f0["start"], f0["last_met"], nt[-1]
    peak = round(max(nv), 4)
    fields = dict(f0)
    fields["peak_gpm"] = peak if peak > f0["peak_gpm"] else f0["peak_gpm"]
    fields["rain_gauges_missing"] = missing
    fields["last_met"] = end
    if is_dwf:
        fields["suppressed"] = suppression(reg, outfall, start, end)
        fields["rain_gauges_used"] = list(used0)
        fields["rain_in_by_gauge"] = depth_in
        if not f0.get("uncalibrated"):   # the spans grew by (last, end]: their readings' flags too
            fields.update(uncalibrated_field((flow, last + 1, end),
                                             *((rain.get(g, EMPTY), last + 1, end) for g in used0)))
    return AlertEvent(open_event.kind, open_event.id, fields, open_event.params, open_event.provision)


def suppression(reg: Registry, outfall: str, start_ns: int, end_ns: int) -> str | None:
    """The reason an episode is not notified: an approved discharge or exempt flow covering it."""
    s, e = from_ns(start_ns), from_ns(end_ns)
    for d in reg.discharges_for(outfall, s, e):
        return f"approved discharge: {d.reason}"
    for x in reg.outfall(outfall).exempt_flows:
        if (x.from_ is None or x.from_ <= s) and (x.to is None or e <= x.to):
            return f"exempt flow: {x.kind}" + (f" ({x.note})" if x.note else "")
    return None


# -- turbidity ------------------------------------------------------------------------------
def qc_params(reg: Registry) -> qc.QcParams:
    r = reg.rules
    return qc.QcParams(fail_span=(0.0, r.qc_turbidity_max_ntu), spike_fail=r.qc_turbidity_spike_ntu,
                       flat_line_fail=r.qc_flat_line)


def contrast_params(reg: Registry) -> turbidity.ContrastParams:
    r = reg.rules
    return turbidity.ContrastParams(r.turbidity_delta_ntu, r.turbidity_fraction, r.turbidity_min_duration,
                                    r.turbidity_backstop_ntu, r.turbidity_align_tolerance)


def turbidity_bad(a: Arrays, qp: qc.QcParams) -> np.ndarray:
    """QC failures of one probe's readings: QARTOD tests or the logger's flags (bool array)."""
    bad: np.ndarray = qc.qartod_fail_array(a[0], a[1], qp) | qc.wire_flags_bad(a[2])
    return bad


NOT_EVALUABLE_WHY = {
    turbidity.UPSTREAM_MISSING: "no upstream reading within the align tolerance (probe missing or silent)",
    turbidity.UPSTREAM_QC: "the upstream probe failed QC",
    turbidity.DOWNSTREAM_QC: "the downstream probe failed QC",
}


def pair_events(reg: Registry, pair_id: str, up: Arrays, down: Arrays) -> list[AlertEvent]:
    """Turbidity exceedances (contrast, or the 250 NTU backstop on the downstream probe alone)
    and not-evaluable notices of one pair. A missing upstream probe silences neither."""
    return pair_judgement(reg, pair_id, up, down)[0]


def pair_judgement(reg: Registry, pair_id: str, up: Arrays, down: Arrays) -> tuple[list[AlertEvent], int | None]:
    """:func:`pair_events`, and where the runs still going on at the last downstream reading
    began [UTC ns] (``ContrastRuns.open_from``: the streaming engine keeps their readings)."""
    pair = next(p for p in reg.turbidity_pairs if p.id == pair_id)
    cp, qp = contrast_params(reg), qc_params(reg)
    if down[0].size == 0:
        return [], None  # every judgement is made at a downstream reading (a missing one: stale station)
    eps, nev, open_from = turbidity.contrast_runs(up[0], up[1], down[0], down[1], up_bad=turbidity_bad(up, qp),
                                       down_bad=turbidity_bad(down, qp), params=cp,
                                       max_gap_ns=silence_after_ns(reg, pair.downstream),
                                       span_max_gap_ns=td_ns(reg.rules.dry_lookback))
    params = {**cp.as_dict(), "qc": qp.as_dict(), "upstream": pair.upstream, "downstream": pair.downstream}
    out = []
    for start, end, is_open, max_delta, max_down, basis, _n in eps:
        out.append(AlertEvent(AlertKind.TURBIDITY_CONTRAST, f"turbidity/{pair_id}/{start}", {
            "pair": pair_id, "start": start, "end": None if is_open else end,
            "max_delta_ntu": None if np.isnan(max_delta) else round(max_delta, 3), "suppressed": None,
            "basis": basis, "max_downstream_ntu": round(max_down, 3), "last_met": end,
            "construction_site": pair.construction_site}, params, turbidity.PROVISION))
    for start, end, is_open, _n, causes in nev:
        uncal = uncalibrated_field((up, start, end), (down, start, end))           # issue 13
        out.append(AlertEvent(AlertKind.TURBIDITY_NOT_EVALUABLE, f"turbidity_ne/{pair_id}/{start}", {
            "pair": pair_id, "start": start, "end": None if is_open else end, "last_met": end,
            "reason": "; ".join(NOT_EVALUABLE_WHY[c] for c in causes) + (" (calibration overdue)" if uncal else ""),
            "causes": list(causes), **uncal}, params, turbidity.PROVISION))
    return out, open_from


def pair_quiet(up: Arrays, down: Arrays, first: int, cp: turbidity.ContrastParams, qp: qc.QcParams) -> bool:
    """A bound of :func:`pair_events` for the streaming engine's shortcuts: True only if every
    downstream reading from position ``first`` on certainly meets neither the contrast test
    nor the backstop and is evaluable (an upstream reading within the align tolerance, both
    certainly passing QC: :func:`.rules.qc.surely_passes`). Such readings end every run, so
    they neither make nor lengthen an episode or a not-evaluable span. False: not sure.
    ``cp``, ``qp``: :func:`contrast_params`, :func:`qc_params` of the registry."""
    td, vd, fd = down
    if first >= td.size:
        return True
    tu, vu, fu = up
    pos = turbidity.nearest_upstream(tu, td[first:], td_ns(cp.align_tolerance))
    if np.any(pos < 0):
        return False
    d, u = vd[first:], vu[pos]
    if np.any(d > cp.backstop_ntu) or np.any(turbidity.contrast_exceeds(u, d, cp)):
        return False
    a = max(first - 1, 0)                       # the reading before too: the spike and flat-line tests look at it
    dv, df = vd[a:].tolist(), fd[a:].tolist()
    if not all(qc.surely_passes(dv, i, df[i], qp) for i in range(first - a, len(dv))):
        return False
    b = max(int(pos.min()) - 1, 0)
    uv, uf = vu[b:].tolist(), fu[b:].tolist()
    return all(qc.surely_passes(uv, j - b, uf[j - b], qp) for j in set(pos.tolist()))


# -- health ---------------------------------------------------------------------------------
def report_interval(reg: Registry, station: str, from_status: Mapping[str, float] | None = None) -> tuple[int, str]:
    """The station's expected report interval [ns] and where it comes from.

    The registry's ``report_interval`` (the town's statement, which replay sees too) first;
    else the interval its logger states in its status message (``report_interval_s``,
    streaming only); else ``rules.report_interval`` (15 min by default).
    """
    iv = reg.report_interval(station)
    if iv is not None:
        return td_ns(iv), "registry"
    if from_status and station in from_status:
        return int(round(from_status[station] * 1e9)), "status"
    return td_ns(reg.rules.report_interval), "default"


def station_health(reg: Registry, station: str, times_ns: np.ndarray, battery: Arrays, now_ns: int,
                   interval: tuple[int, str] | None = None, since_ns: int | None = None) -> list[AlertEvent]:
    """Stale spans and low-battery episodes of one station.

    ``interval``: (expected report interval [ns], its source), from :func:`report_interval`
    when None. ``since_ns``: when the station was first expected to report (the start of
    the data), so that one that never reported is stale too.
    """
    r = reg.rules
    iv, source = interval if interval is not None else report_interval(reg, station)
    out = []
    t = np.asarray(times_ns, dtype=np.int64)
    for start, end, _iv in health.stale_spans(t, now_ns, r.stale_intervals, iv, since_ns):
        before = bool(np.searchsorted(t, start, side="right"))
        silence = f"more than {r.stale_intervals} x {format_duration(timedelta(microseconds=iv // 1000))}"
        out.append(AlertEvent(AlertKind.STALE_STATION, f"stale/{station}/{start}", {
            "station": station, "start": start, "end": end, "interval_s": iv / 1e9, "interval_source": source,
            "reason": (f"no reading for {silence}" if before else f"never reported ({silence} since monitoring began)")},
            {"stale_intervals": r.stale_intervals}, health.PROVISION))
    if battery[0].size:
        for start, end, is_open, vmin in health.low_battery_arrays(battery[0], battery[1], r.low_battery_v, r.low_battery_hysteresis_v):
            out.append(AlertEvent(AlertKind.LOW_BATTERY, f"battery/{station}/{start}", {
                "station": station, "start": start, "end": None if is_open else end, "min_v": vmin, "last_met": end},
                {"low_battery_v": r.low_battery_v, "hysteresis_v": r.low_battery_hysteresis_v}, health.PROVISION))
    return out
