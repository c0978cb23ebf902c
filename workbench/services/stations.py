"""Stations: the status board (every station coloured by its state), a station's page (its
latest status, battery, signal, calibration, open incidents) and chart, calibrations due.

A station's state comes from what the alert engine judged (open incidents: an alert, a
stale station, a not-evaluable notice) and what the store knows (its newest reading, its
logger's status and calibrations: the store's optional ``StationState``). Worst first:
alerting, stale, not evaluable, calibration overdue, reporting.
"""

from __future__ import annotations

import enum
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING, AbstractSet, Callable

from ...alerts.events import AlertKind
from ...alerts.kinds import describe
from ...alerts.kinds.units import inches
from ...alerts.rules.turbidity import DOWNSTREAM_QC
from ...contract.registry import Registry
from ...contract.timeutil import to_ns
from ...contract.wire import QualityFlag
from ...ingest.errors import StoreUnavailable
from ...contract.calibration import CalibrationRecord
from ...ingest.stores.base import (STATS, Bucket, CalibrationHistory, DeviceStatus, LatestReading, ReadingsSource,
                                  StationState, Summarising)
from ...ingest.stores.summary import summarise
from .. import svgchart
from ..errors import NotFound
from ..roles import Actor, Permission
from .incidents import ACTIVE

if TYPE_CHECKING:
    from ...alerts.incidents import Incident
    from ...ingest.corrections import CorrectionStore
    from ...alerts.incidents.service import IncidentService
    from .alertside import AlertSide

log = logging.getLogger(__name__)

MAX_WINDOW = timedelta(days=1100)      # the records' three years, and a little
RECENT = timedelta(days=2)             # a station's newest reading is looked for this far back first,
LATEST_SINCE = timedelta(days=400)     # then, for a station silent longer, this far (kept SILENT_TTL_S)
SILENT_TTL_S = 300.0
HISTORY = timedelta(days=3 * 366)      # calibration records shown: the laws' three years of records
LINE = frozenset({"min", "max"})       # what a line draws
RAIN = frozenset({"sum"})              # what rain bars draw


class State(str, enum.Enum):
    ALERTING = "alerting"
    STALE = "stale"
    NOT_EVALUABLE = "not evaluable"
    CALIBRATION_OVERDUE = "calibration overdue"
    REPORTING = "reporting"

    @property
    def css(self) -> str:
        return self.value.replace(" ", "-")


ORDER = list(State)     # worst first


@dataclass(frozen=True)
class Station:
    id: str
    name: str
    kind: str                   # rain gauge | outfall | turbidity upstream | turbidity downstream
    quantity: str               # rain | flow | turbidity
    subject: str                # the gauge, outfall or pair it belongs to
    lat: float | None = None
    lon: float | None = None


@dataclass(frozen=True)
class Calibration:
    station: str
    device: str
    sensor: str
    performed: date
    due: date
    days_left: int

    @property
    def overdue(self) -> bool:
        return self.days_left < 0


@dataclass
class StationStatus:
    station: Station
    states: list[State] = field(default_factory=list)       # worst first; reporting only when nothing else
    reasons: list[str] = field(default_factory=list)
    latest: LatestReading | None = None
    devices: list[DeviceStatus] = field(default_factory=list)
    calibrations: list[Calibration] = field(default_factory=list)
    incidents: list["Incident"] = field(default_factory=list)

    @property
    def state(self) -> State:
        return self.states[0] if self.states else State.REPORTING

    @property
    def battery_v(self) -> float | None:
        return next((d.battery_v for d in self.devices if d.battery_v is not None), None)

    @property
    def signal_dbm(self) -> float | None:
        return next((d.signal_dbm for d in self.devices if d.signal_dbm is not None), None)

    @property
    def calibration_due(self) -> date | None:
        return min((c.due for c in self.calibrations), default=None)


@dataclass(frozen=True)
class Board:
    stations: list[StationStatus]
    now: datetime
    store_note: str | None = None          # why the store's part is missing, if it is

    def counts(self) -> dict[State, int]:
        out = {s: 0 for s in ORDER}
        for st in self.stations:
            out[st.state] += 1
        return out

    @property
    def located(self) -> list[StationStatus]:
        return [s for s in self.stations if s.station.lat is not None and s.station.lon is not None]


def stations_of(reg: Registry) -> list[Station]:
    out = [Station(g.id, g.name or g.id, "rain gauge", "rain", g.id, g.lat, g.lon) for g in reg.rain_gauges]
    out += [Station(o.id, o.name, "outfall", "flow", o.id, o.lat, o.lon) for o in reg.outfalls]
    for p in reg.turbidity_pairs:
        name = p.name or p.id
        out.append(Station(p.upstream, f"{name} (upstream)", "turbidity upstream", "turbidity", p.id, p.lat, p.lon))
        out.append(Station(p.downstream, f"{name} (downstream)", "turbidity downstream", "turbidity", p.id, p.lat,
                           p.lon))
    return out


class StationDesk:
    def __init__(self, registry: Registry, incidents: "IncidentService", readings: ReadingsSource | None,
                 clock: Callable[[], datetime], alert_side: "AlertSide | None" = None,
                 corrections: "CorrectionStore | None" = None):
        self.registry = registry
        self.corrections = corrections      # drift corrections, for charts of corrected values
        self.incidents = incidents
        self.readings = readings
        self.clock = clock
        self.alert_side = alert_side
        self.stations = {s.id: s for s in stations_of(registry)}
        self._pool = ThreadPoolExecutor(4, thread_name_prefix="ms4watch-chart")
        self._silent: tuple[float, dict[tuple[str, str], LatestReading]] | None = None

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    # -- the board -------------------------------------------------------------------------
    def board(self, actor: Actor) -> Board:
        actor.require(Permission.READ)
        now = self.clock()
        out = {sid: StationStatus(st) for sid, st in self.stations.items()}
        note = None
        latest: list[LatestReading] = []
        devices: list[DeviceStatus] = []
        if isinstance(self.readings, StationState):
            try:
                latest = self._latest(now)
                devices = self.readings.device_statuses()
            except StoreUnavailable as e:
                note = f"the store does not answer: {e}"
        elif self.readings is not None:
            note = "this store does not keep station status (SQLite and InfluxDB do)"
        for r in latest:
            s = out.get(r.station)
            if s is not None and r.quantity == s.station.quantity:
                s.latest = r
        today = now.astimezone(self.registry.tz).date()
        for d in devices:
            if d.station in out:
                out[d.station].devices.append(d)
            for c in d.calibrations or ():
                sid = c.station or d.station
                if sid in out:
                    out[sid].calibrations.append(Calibration(sid, d.device, c.sensor, c.performed, c.due,
                                                             (c.due - today).days))
        for inc in self.incidents.list(list(ACTIVE), limit=100_000):
            for sid, state, why in self._affects(inc):
                if sid in out:
                    s = out[sid]
                    s.incidents.append(inc)
                    if state is not None:
                        s.states.append(state)
                        s.reasons.append(why)
        for s in out.values():
            if s.latest is None and isinstance(self.readings, StationState) and note is None \
                    and State.STALE not in s.states:
                s.states.append(State.STALE)      # not "reporting": the store holds nothing of it
                s.reasons.append(f"no reading stored in the last {LATEST_SINCE.days} days")
            late = [c for c in s.calibrations if c.overdue]
            if late:
                s.states.append(State.CALIBRATION_OVERDUE)
                s.reasons.append("calibration overdue since " + ", ".join(f"{c.due:%Y-%m-%d} ({c.sensor})" for c in late))
            elif s.latest is not None and QualityFlag.CALIBRATION_OVERDUE.value in s.latest.flags.split(","):
                s.states.append(State.CALIBRATION_OVERDUE)
                s.reasons.append("its latest reading is flagged calibration overdue")
            s.states = sorted(set(s.states), key=ORDER.index)
        return Board(list(out.values()), now, note)

    def _latest(self, now: datetime) -> list[LatestReading]:
        """Each station's newest reading: of the last days (cheap on any store), and for a
        station silent longer, of the last ``LATEST_SINCE`` (a long scan on InfluxDB: kept
        ``SILENT_TTL_S``)."""
        assert isinstance(self.readings, StationState)
        found = {(r.station, r.quantity): r for r in self.readings.latest_readings(now - RECENT)}
        wanted = {(s.id, s.quantity) for s in self.stations.values()}
        if wanted - set(found):
            held = self._silent
            if held is None or time.monotonic() - held[0] > SILENT_TTL_S:
                older = {(r.station, r.quantity): r for r in self.readings.latest_readings(now - LATEST_SINCE)}
                held = self._silent = (time.monotonic(), older)
            found = {**held[1], **found}
        return list(found.values())

    def _affects(self, inc: "Incident") -> list[tuple[str, State | None, str]]:
        """The stations an incident is about, the state it puts them in (None: shown, no state)."""
        kind, subj, ev = inc.kind, inc.subject, inc.event
        what = f"{describe(self.registry, kind, subj).what} since {inc.start.astimezone(self.registry.tz):%Y-%m-%d %H:%M %Z} (incident {inc.id})"
        pair = next((p for p in self.registry.turbidity_pairs if p.id == subj), None)
        if kind == AlertKind.DRY_WEATHER_FLOW.value:
            return [(subj, None if inc.suppressed else State.ALERTING, what)]
        if kind == AlertKind.TURBIDITY_CONTRAST.value and pair is not None:
            return [(pair.downstream, None if inc.suppressed else State.ALERTING, what), (pair.upstream, None, what)]
        if kind == AlertKind.STALE_STATION.value:
            return [(subj, State.STALE, ev.get("reason") or what)]
        if kind == AlertKind.DRY_WEATHER_UNKNOWN.value:
            return [(subj, State.NOT_EVALUABLE, ev.get("reason") or what)]
        if kind == AlertKind.TURBIDITY_NOT_EVALUABLE.value and pair is not None:
            causes = ev.get("causes") or []
            why = ev.get("reason") or what
            out = [(pair.upstream, State.NOT_EVALUABLE if any(c != DOWNSTREAM_QC for c in causes) else None, why)]
            out.append((pair.downstream, State.NOT_EVALUABLE if DOWNSTREAM_QC in causes else None, why))
            return out
        if kind == AlertKind.LOW_BATTERY.value:
            return [(subj, None, what)]
        if kind == AlertKind.STORM.value:
            return [(subj, None, what)]
        return []

    def status(self, actor: Actor, sid: str) -> StationStatus:
        board = self.board(actor)
        for s in board.stations:
            if s.station.id == sid:
                return s
        raise NotFound(f"no station {sid!r} in {self.registry.municipality}")

    def calibrations(self, actor: Actor) -> list[Calibration]:
        """Every sensor's calibration the loggers report, soonest due first."""
        return sorted((c for s in self.board(actor).stations for c in s.calibrations),
                      key=lambda c: (c.due, c.station, c.sensor))

    def calibration_history(self, actor: Actor, *, station: str | None = None,
                            sensor: str | None = None) -> tuple[list[CalibrationRecord], str | None]:
        """Every calibration run the store holds (``ms4watch calibrate``: one record per run,
        pass or fail) of the last three years, newest first, with why there are none when
        the store cannot say (it keeps no history, or does not answer)."""
        actor.require(Permission.READ)
        if station is not None:
            self.station(station)
        if not isinstance(self.readings, CalibrationHistory):
            return [], "this store keeps no calibration history (SQLite and InfluxDB do)"
        try:
            records = self.readings.calibration_history(station=station, sensor=sensor,
                                                        start=self.clock() - HISTORY)
        except StoreUnavailable as e:
            return [], f"the store does not answer: {e}"
        known = self.stations
        return sorted((r for r in records if r.station in known), key=lambda r: r.performed, reverse=True), None

    # -- a station's chart -----------------------------------------------------------------
    def station(self, sid: str) -> Station:
        try:
            return self.stations[sid]
        except KeyError:
            raise NotFound(f"no station {sid!r} in {self.registry.municipality}") from None

    def chart(self, actor: Actor, sid: str, start: datetime, end: datetime, pixels: int,
              full: bool = False, corrected: bool = False) -> svgchart.Chart:
        """The station's readings over [start, end] in ``pixels`` buckets, with its
        thresholds, the storms of its rain gauges and its alert episodes. The series are
        asked of the store at once, each for what the chart draws (``full``: every
        statistic, for the API and the CSV). ``corrected``: with the drift corrections in
        force applied (the raw readings read back and summarised here; the chart's notes
        say which series were corrected, and that raw values are the default)."""
        actor.require(Permission.READ)
        st = self.station(sid)
        reg, rules = self.registry, self.registry.rules
        a, b = to_ns(start), to_ns(end)
        width = max((b - a) // max(pixels, 1) + 1, 1_000_000_000)
        lines: list[svgchart.Line] = []
        thresholds: list[svgchart.Threshold] = []
        unit = {"rain": "in", "flow": "gpm", "turbidity": "NTU"}[st.quantity]
        notes: list[str] = []
        want: dict[str, tuple[str, str, frozenset[str]]] = {}      # what to ask the store, by name
        if st.quantity == "rain":
            gauges = [st.id]
        elif st.quantity == "flow":
            of = reg.outfall(st.id)
            gauges = list(of.rain_gauges)
            want["flow"] = (st.id, "flow", LINE)
        else:
            pair = next(p for p in reg.turbidity_pairs if p.id == st.subject)
            want["up"] = (pair.upstream, "turbidity", LINE | {"mean"})
            want["down"] = (pair.downstream, "turbidity", LINE)
            site = next((s for s in reg.construction_sites if s.id == pair.construction_site), None)
            gauges = list(site.rain_gauges) if site else []
        if gauges:
            want["rain"] = (gauges[0], "rain", RAIN)
            if len(gauges) > 1:
                notes.append(f"Rain of {gauges[0]} (of {', '.join(gauges)}).")
        fixed = {k for k, (s, q, _) in want.items() if corrected and self.corrected_in(s, q, start, end)}
        if corrected:
            notes.append("Values corrected for drift (USGS TM 1-D3): " + ", ".join(
                f"{want[k][0]} {want[k][1]}" for k in sorted(fixed)) + "; any other series raw." if fixed
                else "No drift correction in force in this window: raw values.")
        got = self._summaries({k: (s, q, STATS if full else stats) for k, (s, q, stats) in want.items()},
                              start, end, width, notes, fixed)
        if st.quantity == "flow":
            lines.append(svgchart.Line("flow", got["flow"]))
            thresholds.append(svgchart.Threshold(f"flow floor {of.flow_floor_gpm:g} gpm", of.flow_floor_gpm))
        elif st.quantity == "turbidity":
            lines += [svgchart.Line(f"upstream {pair.upstream}", got["up"], svgchart.COLOURS[2]),
                      svgchart.Line(f"downstream {pair.downstream}", got["down"], svgchart.COLOURS[1])]
            d, f = rules.turbidity_delta_ntu, rules.turbidity_fraction
            thresholds.append(svgchart.Threshold(
                f"contrast: upstream + max({d:g} NTU, {f:.0%})",
                points=[(x.start_ns, x.mean + max(d, f * x.mean)) for x in got["up"] if x.mean is not None]))
            thresholds.append(svgchart.Threshold(f"backstop {rules.turbidity_backstop_ntu:g} NTU",
                                                 rules.turbidity_backstop_ntu))
        bands = self._storms(gauges, a, b) + self._episodes(st, a, b)
        label = {"flow": "flow", "up": f"upstream {want.get('up', ('',))[0]}",
                 "down": f"downstream {want.get('down', ('',))[0]}", "rain": "rain"}
        title = f"{st.name} ({st.id}), {st.kind}" + (", corrected values" if fixed else "")
        return svgchart.Chart(title, a, b, unit, lines, got.get("rain", []), thresholds, bands, width, tuple(notes),
                              {label[k]: "corrected" for k in fixed})

    def _summaries(self, want: dict[str, tuple[str, str, frozenset[str]]], start: datetime, end: datetime,
                   width: int, notes: list[str], fixed: AbstractSet[str] = frozenset()) -> dict[str, list[Bucket]]:
        """Each series' buckets, asked of the store side by side (a remote store answers
        them in parallel: the chart waits for the slowest, not for the sum); those named in
        ``fixed`` with the drift corrections in force applied."""
        if self.readings is None:
            return {k: [] for k in want}
        futures = {k: self._pool.submit(self._buckets, s, q, start, end, width, stats, k in fixed)
                   for k, (s, q, stats) in want.items()}
        out = {}
        for k, fut in futures.items():
            try:
                out[k] = fut.result()
            except StoreUnavailable as e:
                s, q, _ = want[k]
                notes.append(f"The store did not answer for {s} {q}: {e}.")
                out[k] = []
        return out

    def corrected_in(self, station: str, quantity: str, start: datetime, end: datetime) -> bool:
        """Whether a drift correction of (station, quantity) is in force over [start, end]."""
        return self.corrections is not None and bool(self.corrections.in_force(station, quantity, to_ns(start),
                                                                               to_ns(end)))

    def _buckets(self, station: str, quantity: str, start: datetime, end: datetime, width: int,
                 stats: frozenset[str], corrected: bool = False) -> list[Bucket]:
        assert self.readings is not None
        if corrected and self.corrections is not None:
            from ...ingest.corrections import CorrectedReadings
            rows = CorrectedReadings(self.readings, self.corrections).readings(station, quantity, start, end)
            return summarise(rows, to_ns(start), width)
        if isinstance(self.readings, Summarising):
            return self.readings.summary(station, quantity, start, end, width, stats)
        return summarise(self.readings.readings(station, quantity, start, end), to_ns(start), width)

    def storms(self, gauges: list[str], a: int, b: int) -> list[dict]:
        """The storms of these gauges overlapping [a, b] (engine events, else qualifying ones
        from the incidents): dicts of the storm event's fields."""
        out = []
        if self.alert_side is not None:
            for e in self.alert_side.engine_events():
                if e.kind is AlertKind.STORM and e["gauge"] in gauges and e["start"] <= b \
                        and (e["end"] or e["last_rain"]) >= a:
                    out.append(dict(e.fields))
            return sorted(out, key=lambda s: s["start"])
        for inc in self.incidents.list(None, kind=AlertKind.STORM.value, limit=10_000):
            if inc.subject in gauges:
                s_ns = to_ns(inc.start)
                e_ns = to_ns(inc.end) if inc.end else to_ns(self.clock())
                if s_ns <= b and e_ns >= a:
                    out.append({"gauge": inc.subject, "start": s_ns, "end": e_ns, "last_rain": e_ns,
                                "depth_in": inc.event.get("depth_in"), "qualifying": True})
        return sorted(out, key=lambda s: s["start"])

    def _storms(self, gauges: list[str], a: int, b: int) -> list[svgchart.Band]:
        return [svgchart.Band(s["start"], s["end"] or s["last_rain"],
                              f"storm {s['depth_in']:.2f} in"
                              + (f" ≥ {inches(self.registry.rules.storm_min_depth_in)}" if s.get("qualifying") else "")
                              + ("" if s["end"] else " (raining)"), "storm")
                for s in self.storms(gauges, a, b) if s.get("depth_in") is not None]

    def _episodes(self, st: Station, a: int, b: int) -> list[svgchart.Band]:
        kinds = {"flow": (AlertKind.DRY_WEATHER_FLOW.value,), "turbidity": (AlertKind.TURBIDITY_CONTRAST.value,)}
        out = []
        for kind in kinds.get(st.quantity, ()):
            for inc in self.incidents.list(None, kind=kind, subject=st.subject, limit=10_000):
                s = to_ns(inc.start)
                e = to_ns(inc.end) if inc.end else to_ns(self.clock())
                if s <= b and e >= a:
                    out.append(svgchart.Band(s, e, f"incident {inc.id}: {describe(self.registry, kind, inc.subject).what}"
                                             + (" (suppressed)" if inc.suppressed else ""), "episode"))
        return out


EARLIEST = datetime(1970, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(2262, 1, 1, tzinfo=timezone.utc)      # 64-bit nanoseconds end in April 2262


def window_of(start: datetime, end: datetime) -> tuple[datetime, datetime]:
    """A window the chart draws: in order, at most ``MAX_WINDOW`` (ValueError otherwise)."""
    if end <= start:
        raise ValueError("the window's end must be after its start")
    if end - start > MAX_WINDOW:
        raise ValueError(f"a chart covers at most {MAX_WINDOW.days} days")
    return clamp_window(start, end)


def clamp_window(start: datetime, end: datetime) -> tuple[datetime, datetime]:
    """Any two instants as a window (the API never refuses one): in order, within 1970–2262,
    at least a minute, at most ``MAX_WINDOW`` ending at ``end``."""
    a = min(max(start.astimezone(timezone.utc), EARLIEST), LATEST)
    b = min(max(end.astimezone(timezone.utc), EARLIEST), LATEST)
    if b < a:
        a, b = b, a
    if b - a < timedelta(minutes=1):
        a, b = (a, a + timedelta(minutes=1)) if a < LATEST else (b - timedelta(minutes=1), b)
    if b - a > MAX_WINDOW:
        a = b - MAX_WINDOW
    return a, b


__all__ = ["StationDesk", "Station", "StationStatus", "State", "Board", "Calibration", "stations_of", "window_of",
           "clamp_window"]
