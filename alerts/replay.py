"""Replay: run every rule over a history of readings and write ``events.jsonl``.

The streaming engine must produce the same final events for the same readings, whatever
order they arrive in (tests/alerts/test_engine_property.py).
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, NamedTuple, Sequence

import numpy as np
import pandas as pd

from ms4watch.contract.drift import Basis, DriftCorrection, correct_arrays
from ms4watch.contract.errors import ConfigError
from ms4watch.contract.readings_csv import read_readings_csv
from ms4watch.contract.registry import Registry, load_registry

from . import evaluate as ev
from .errors import AlertError
from .events import AlertEvent, write_jsonl

if TYPE_CHECKING:
    from rich.progress import Progress


def _union_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    c = np.sort(np.concatenate((a, b)), kind="stable")
    keep = np.ones(c.size, dtype=bool)
    keep[1:] = c[1:] != c[:-1]
    return c[keep]


class ReadingTable:
    """Readings grouped by (station, quantity): sorted unique times, values, flags."""

    def __init__(self, t_ns: np.ndarray, station: np.ndarray, quantity: np.ndarray, value: np.ndarray,
                 flags: np.ndarray | None = None):
        t = np.asarray(t_ns, dtype=np.int64)
        v = np.asarray(value, dtype="float64")
        f = np.asarray(flags, dtype=object) if flags is not None else np.full(len(t), "", dtype=object)
        ok = np.isfinite(v)
        t, v, f = t[ok], v[ok], f[ok]
        scode, snames = pd.factorize(np.asarray(station, dtype=object)[ok])
        qcode, qnames = pd.factorize(np.asarray(quantity, dtype=object)[ok])
        # group by (station, quantity) with a stable radix sort on one small int key, then
        # sort by time only the groups that are not already in order (files usually are)
        gkey = scode.astype(np.int64) * max(1, len(qnames)) + qcode
        order = np.argsort(gkey, kind="stable")
        gk = gkey[order]
        t_sorted = t[order]
        gb = np.flatnonzero(np.diff(gk) != 0) + 1
        for a, b in zip(np.concatenate(([0], gb)).tolist(), np.concatenate((gb, [len(gk)])).tolist()):
            if b - a > 1 and np.any(np.diff(t_sorted[a:b]) < 0):
                sub = np.argsort(t_sorted[a:b], kind="stable")
                order[a:b] = order[a:b][sub]
                t_sorted[a:b] = t_sorted[a:b][sub]
        t, v, f, scode, qcode = t_sorted, v[order], f[order], scode[order], qcode[order]
        # (station, quantity, time) duplicates: keep the last row
        last = np.ones(len(t), dtype=bool)
        if len(t) > 1:
            last[:-1] = (t[1:] != t[:-1]) | (qcode[1:] != qcode[:-1]) | (scode[1:] != scode[:-1])
        t, v, f, scode, qcode = t[last], v[last], f[last], scode[last], qcode[last]
        self.groups: dict[tuple[str, str], ev.Arrays] = {}
        self.stations: dict[str, np.ndarray] = {}
        brk = np.flatnonzero((np.diff(scode) != 0) | (np.diff(qcode) != 0)) + 1
        for a, b in zip(np.concatenate(([0], brk)).tolist(), np.concatenate((brk, [len(t)])).tolist()):
            if a < b:
                self.groups[(snames[scode[a]], qnames[qcode[a]])] = (t[a:b], v[a:b], f[a:b])
        for (st, _q), arrays in self.groups.items():
            prev = self.stations.get(st)
            self.stations[st] = arrays[0] if prev is None else _union_sorted(prev, arrays[0])
        self.max_ns = int(t.max()) if len(t) else 0

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> "ReadingTable":
        t = pd.DatetimeIndex(frame["time"]).as_unit("ns").asi8
        flags = frame["flags"].to_numpy(dtype=object) if "flags" in frame else None
        return cls(t, frame["station"].to_numpy(dtype=object), frame["quantity"].to_numpy(dtype=object),
                   frame["value"].to_numpy(), flags)

    def get(self, station: str, quantity: str) -> ev.Arrays:
        return self.groups.get((station, quantity), ev.EMPTY)


def evaluate_all(reg: Registry, get: ev.Getter, station_times: dict[str, np.ndarray], now_ns: int,
                 inspections: Sequence[ev.Inspection] = (), progress=None) -> list[AlertEvent]:
    """All events of a registry over the readings ``get`` returns, judged at ``now_ns``."""
    out: list[AlertEvent] = []
    confirmed: dict[str, list[int]] = {}
    steps = (len(reg.rain_gauges) + len(reg.construction_sites) + len(reg.outfalls)
             + len(reg.turbidity_pairs) + len(set(station_times) | reg.station_ids()))
    task = progress.add_task("rules", total=steps) if progress else None

    def tick() -> None:
        if progress:
            progress.advance(task)

    for g in reg.rain_gauges:
        evs = ev.gauge_storms(reg, g.id, get(g.id, "rain"), now_ns)
        out += evs
        confirmed[g.id] = [int(e["last_rain"]) for e in evs if e["confirmed"] and e["qualifying"]]
        tick()
    for s in reg.construction_sites:
        out += ev.site_inspections(reg, s.id, confirmed, [i.time_ns for i in inspections if i.site == s.id], now_ns)
        tick()
    for o in reg.outfalls:
        out += ev.outfall_events(reg, o.id, get(o.id, "flow"), {g: get(g, "rain") for g in o.rain_gauges})
        tick()
    for p in reg.turbidity_pairs:
        out += ev.pair_events(reg, p.id, get(p.upstream, "turbidity"), get(p.downstream, "turbidity"))
        tick()
    # every station of the registry is expected to report from the start of the data: one that
    # never did is stale as well (the streaming engine takes its earliest reading or clock time)
    since = min((int(t[0]) for t in station_times.values() if len(t)), default=None)
    for st in sorted(set(station_times) | reg.station_ids()):
        out += ev.station_health(reg, st, station_times.get(st, np.empty(0, np.int64)), get(st, "battery"), now_ns,
                                 since_ns=since)
        tick()
    return out


def replay(reg: Registry, table: ReadingTable, *, now_ns: int | None = None,
           inspections: Sequence[ev.Inspection] = (), progress=None, get: ev.Getter | None = None) -> list[AlertEvent]:
    """Every event over ``table``; ``get``: another view of its readings (:func:`corrected`)."""
    now = table.max_ns if now_ns is None else now_ns
    return evaluate_all(reg, get or table.get, table.stations, now, inspections, progress)


def read_inspections(path: str | Path, reg: Registry) -> list[ev.Inspection]:
    """An inspections CSV ``site,time,inspector,note`` (time ISO 8601 with offset)."""
    import csv

    from ms4watch.contract.timeutil import parse_time, to_ns

    sites = {s.id for s in reg.construction_sites}
    out = []
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise AlertError(f"{path}: cannot read: {e.strerror}") from None
    for line, row in enumerate(rows, 2):
        site = (row.get("site") or "").strip()
        if site not in sites:
            raise AlertError(f"{path}:{line}: site: unknown construction site {site!r}")
        try:
            t = to_ns(parse_time(row.get("time") or ""))
        except ValueError as e:
            raise AlertError(f"{path}:{line}: time: {e}") from None
        out.append(ev.Inspection(site, t, (row.get("inspector") or "").strip(), (row.get("note") or "").strip()))
    return out


class ReplayResult(NamedTuple):
    events: int                                  # events written
    problems: list[tuple[int, str, str]]         # rows of the readings CSV left out: (line, field, message)
    unknown_stations: dict[str, int]             # readings of stations the registry does not know, by station


SUPPRESSION_KINDS = ("approved_discharge", "exempt_flow")


def read_suppressions(path: str | Path, reg: Registry) -> Registry:
    """``reg`` with the approved discharges and exempt flows of a CSV — the workbench's
    ``approvals.csv`` export — as the streaming engine sees those recorded on the workbench.

    Columns (others are ignored): ``kind`` (approved_discharge or exempt_flow), ``outfall``,
    ``from``, ``to`` (ISO 8601 with offset), ``flow`` (an exempt flow's kind, e.g.
    irrigation), ``reason``, ``withdrawn_at`` (a row with one is left out). AlertError names
    file, line and field.
    """
    import csv

    from pydantic import ValidationError

    from ms4watch.contract.registry import ApprovedDischarge, ExemptFlow

    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise AlertError(f"{path}: cannot read: {e.strerror}") from None
    outfalls = {o.id for o in reg.outfalls}
    discharges, exempt = [], []
    for line, row in enumerate(rows, 2):
        if (row.get("withdrawn_at") or "").strip():
            continue
        kind = (row.get("kind") or "").strip()
        outfall = (row.get("outfall") or "").strip()
        if kind not in SUPPRESSION_KINDS:
            raise AlertError(f"{path}:{line}: kind: expected {' or '.join(SUPPRESSION_KINDS)}, got {kind!r}")
        if outfall not in outfalls:
            raise AlertError(f"{path}:{line}: outfall: unknown outfall {outfall!r}")
        window = {"from": (row.get("from") or "").strip() or None, "to": (row.get("to") or "").strip() or None}
        reason = (row.get("reason") or "").strip()
        try:
            if kind == "approved_discharge":
                discharges.append(ApprovedDischarge.model_validate({"outfall": outfall, **window, "reason": reason}))
            else:
                if window["to"] is None:
                    raise AlertError(f"{path}:{line}: to: an exempt flow recorded on the workbench has an end")
                exempt.append((outfall, ExemptFlow.model_validate(
                    {"kind": (row.get("flow") or "").strip() or "exempt flow", "note": reason or None, **window})))
        except ValidationError as e:
            err = e.errors(include_url=False)[0]
            where = ".".join(str(p) for p in err["loc"]) or kind
            raise AlertError(f"{path}:{line}: {where}: {err['msg'].removeprefix('Value error, ')}") from None
    return reg.with_suppressions(discharges, exempt)


def corrected(get: ev.Getter, corrections: Callable[[str, str, int, int], Sequence[DriftCorrection]]) -> ev.Getter:
    """A getter whose arrays have the drift corrections in force applied (``corrections``:
    station, quantity, first and last time [ns] → corrections), flags saying so; the raw
    arrays are untouched."""
    cache: dict[tuple[str, str], ev.Arrays] = {}

    def get_corrected(station: str, quantity: str) -> ev.Arrays:
        key = (station, quantity)
        if key not in cache:
            t, v, f = get(station, quantity)
            found = corrections(station, quantity, int(t[0]), int(t[-1])) if t.size else []
            cache[key] = (t, *correct_arrays(t, v, f, found)) if found else (t, v, f)
        return cache[key]
    return get_corrected


def replay_files(registry: str | Path | Registry, readings: str | Path, out: str | Path, *, show_progress: bool = True,
                 now_ns: int | None = None, inspections: str | Path | None = None,
                 corrections: str | Path | None = None,
                 suppressions: str | Path | None = None) -> ReplayResult:
    """``ms4watch replay``: read the registry (a file, or one already loaded) and readings
    CSV, write events.jsonl. ``suppressions``: approvals and exempt flows recorded on the
    workbench (its ``approvals.csv``, see :func:`read_suppressions`).

    ``corrections``: a corrections database (``DATA_DIR/corrections.db``): the rules then run
    on values corrected for fouling and drift, and every event says ``values: corrected``
    (without it they run on the raw values, as the streaming engine does).

    Readings of stations the registry does not know take part in no rule: they are counted,
    by station, so the command can say so instead of letting them vanish.
    """
    try:
        reg = registry if isinstance(registry, Registry) else load_registry(registry)
    except ConfigError as e:
        raise AlertError(str(e)) from None
    if suppressions:
        reg = read_suppressions(suppressions, reg)
    done = read_inspections(inspections, reg) if inspections else []
    progress_cm: AbstractContextManager[Progress | None] = nullcontext(None)
    if show_progress:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
        progress_cm = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                               TimeElapsedColumn(), transient=True)
    with progress_cm as progress:
        if progress:
            rt = progress.add_task(f"reading {Path(readings).name}", total=None)
        try:
            res = read_readings_csv(readings)
        except ConfigError as e:
            raise AlertError(str(e)) from None
        table = ReadingTable.from_frame(res.frame)
        if progress:
            progress.update(rt, total=1, completed=1)
        if corrections is None:
            events = replay(reg, table, now_ns=now_ns, inspections=done, progress=progress)
        else:
            from ms4watch.ingest.corrections import CorrectionStore
            store = CorrectionStore(corrections)
            try:
                get = corrected(table.get, lambda st, q, a, b: [c.correction for c in store.in_force(st, q, a, b)])
                events = [replace(e, fields={**e.fields, "values": Basis.CORRECTED.value})
                          for e in replay(reg, table, now_ns=now_ns, inspections=done, progress=progress, get=get)]
            finally:
                store.close()
    try:
        with open(out, "w", encoding="utf-8") as f:
            n = write_jsonl(events, f, reg.tz)
    except OSError as e:
        raise AlertError(f"{out}: cannot write: {e.strerror}") from None
    known = reg.station_ids()
    counts: dict[Any, int] = dict(res.frame["station"].value_counts()) if len(res.frame) else {}
    unknown = {str(st): int(c) for st, c in sorted(counts.items()) if st not in known}
    return ReplayResult(n, res.problems, unknown)


def final_state(events: Iterable[AlertEvent]) -> dict[str, AlertEvent]:
    """The last version of every event id (what a store of events would hold)."""
    state: dict[str, AlertEvent] = {}
    for e in events:
        state[e.id] = e
    return state
