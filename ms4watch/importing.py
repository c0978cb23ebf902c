"""``ms4watch import``: readings from loggers already in the ground into the store, or into a
readings CSV for ``ms4watch replay``.

Reads HOBOware CSV exports and Campbell TOA5 files (units and time zones from their headers,
:mod:`ms4watch.contract.loggerfiles`), YSI KorEXO exports (:mod:`~ms4watch.contract.korexo`),
In-Situ Win-Situ 5 CSV exports (:mod:`~ms4watch.contract.winsitu`), In-Situ VuSitu and HydroVu
CSV exports (:mod:`~ms4watch.contract.vusitu`), Solinst Levelogger CSV,
``.xle`` and ``.lev`` files (:mod:`~ms4watch.contract.solinst`) and the formats ``ms4watch storms`` reads (our readings
CSV; tip logs, fixed-interval depths and USGS RDB files of one rain gauge). Every value is
converted to its canonical unit. Readings of stations the registry does not know are left out
and counted, station by station, so a typo in a station id never slips into the store.

Into the store they go as messages of an importing "device" (``--device``, default
``IMPORT-<format>-<station>``) whose epoch is drawn from the file's content and whose
sequence numbers count its batches, so importing the same file twice stores it once.
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, cast

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from .contract.errors import ConfigError, Ms4Error
from .contract.ids import check_id
from .contract.korexo import read_korexo
from .contract.loggerfiles import LoggerFile, looks_like, read_hoboware, read_toa5, standard_time
from .contract.solinst import read_solinst
from .contract.vusitu import read_vusitu
from .contract.winsitu import read_winsitu
from .contract.registry import Registry
from .contract.units import CANONICAL, Quantity
from .contract.wire import CanonicalReading
from .ingest.stores.base import ReadingsSource

BATCH = 5000
_ORDER_NAMES = {"mdy": "month/day/year", "dmy": "day/month/year", "ymd": "year/month/day"}


class ImportError_(Ms4Error):
    """A file that cannot be imported as asked (its reason names the file)."""


@dataclass(frozen=True)
class Conflict:
    """Two values at one time of one sensor: the one kept (or stored) and the file's other one."""

    station: str
    sensor: str
    quantity: str
    time_ns: int
    kept: float
    other: float
    unit: str
    line: str = ""                 # where the other one is, when known

    def describe(self, kept_word: str = "stored") -> str:
        from .contract.timeutil import iso_utc
        from .contract.units import Quantity as Q
        from .contract.units import converter
        try:      # shown in the file's own unit where it has one (mm for a rain gauge's millimetres)
            back = converter(Q(self.quantity), self.unit)
            scale = 1 / back(1.0) if back(1.0) else 1.0
        except Exception:   # noqa: BLE001 — a display nicety only
            scale = 1.0
        k, o = self.kept * scale, self.other * scale
        return (f"{self.station} {self.sensor} {iso_utc(self.time_ns).replace('Z', '+00:00')} {kept_word} "
                f"{k:.6g} {self.unit}, file {o:.6g} {self.unit}")


@dataclass
class Imported:
    """What one file gave: its readings (canonical), and what was left out and why."""

    path: Path
    format: str
    readings: list[CanonicalReading]
    unknown: Counter = field(default_factory=Counter)     # station -> readings left out
    skipped_columns: list[tuple[str, str]] = field(default_factory=list)
    tz: str = ""
    device: str = ""
    notes: list[str] = field(default_factory=list)       # what the technician should know: order, gaps, cut lines
    repeated: int = 0                                    # rows repeating a time with the same value (stored once)
    conflicts: list[Conflict] = field(default_factory=list)    # a time repeated with another value (first kept)
    already_stored: int = 0                              # readings the store holds with the same value: skipped
    store_conflicts: list[Conflict] = field(default_factory=list)   # a different value stored at that time
    units: dict[str, str] = field(default_factory=dict)  # sensor -> the unit its file wrote
    serials: dict[str, str] = field(default_factory=dict)  # sensor -> its serial number, where the file gives one

    def by_station(self) -> Counter:
        return Counter((r.station, r.quantity) for r in self.readings)


def _id(text: str, what: str) -> str:
    clean = "".join(ch if ch.isalnum() or ch in "_.-" else "_" for ch in text.strip())[:64].strip("_.-") or "x"
    return check_id(what, clean)


def _unknown_format(path: Path) -> str | None:
    """Why ``path``, whose first lines fit no format, is refused: its first line and what
    ``ms4watch import`` reads. None when the file cannot be read (the caller's message stands)."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            first = next((ln.strip() for ln in f if ln.strip()), "")
    except OSError:
        return None
    if not first:
        return None
    return (f"{path}:1: not a file `ms4watch import` reads (first line {first[:60]!r}): it reads logger exports "
            f"({', '.join(LOGGER_FORMATS)}) and readings, tips, fixed and rdb records")


def read_file(path: Path, registry: Registry, *, fmt: str | None = None, station: str | None = None,
              device: str | None = None, tz: str | None = None, tip_in: float | None = None,
              date_order: str | None = None) -> Imported:
    """One file's readings; stations the registry does not know counted in ``unknown``."""
    from .alerts.rainfiles import RainFileError, RainFormat, read_rain, sniff
    path = Path(path)
    if not path.exists():
        raise ImportError_(f"{path}: no such file")
    found = looks_like(path)
    if found is None:
        try:
            found = sniff(path).value
        except RainFileError as e:
            raise ImportError_(_unknown_format(path) or str(e)) from None
    if fmt is not None and fmt != found:
        raise ImportError_(f"{path}: --format {fmt} does not fit this file: its header says it is {found}")
    known = registry.station_ids()
    rows: list[tuple[int, str, str, str, float, str]] = []     # (t, station, sensor, quantity, value, unit)
    notes: list[str] = []
    units: dict[str, str] = {}                                  # sensor -> the file's unit (for messages)
    serials: dict[str, str] = {}                                # sensor -> its serial number (for the dry run)
    skipped: list[tuple[str, str]] = []
    zone_name = ""
    if found in LOGGER_FORMATS:
        try:
            lf = _read_logger(found, path, tz, registry.timezone, date_order)
        except ConfigError as e:
            raise ImportError_(str(e)) from None
        except ValueError as e:
            raise ImportError_(f"{path}: {e}") from None
        st = station or lf.station
        if not st:
            raise ImportError_(f"{path}: the file names no station: give --station")
        st = _id(st, "station id")
        if lf.tz_source == "header":
            zone_name = f"{lf.tz} (the file's header)"
        elif lf.tz_source == "held":
            zone_name = (f"{lf.tz} (the registry's {registry.timezone} offset at the file's first time, held: the "
                         "instrument's clock does not change for daylight saving; give --tz if this one did)")
        else:
            zone_name = f"{tz} (given)" if tz else f"{registry.timezone} (the registry's; the file names none)"
        if found == "toa5" and not tz:
            zone_name = (f"{lf.tz} (standard time of the registry's {registry.timezone}: Campbell loggers keep "
                         "standard time; give --tz if this one kept daylight time)")
        skipped = lf.skipped
        notes = list(lf.notes)
        if found != "toa5":
            notes.insert(0, f"dates {_ORDER_NAMES[lf.date_order]}")
        listed = [f"{c.sensor} {c.serial}" for c in lf.columns if c.serial]
        if listed:
            notes.append("sensor serial numbers: " + ", ".join(listed))
        for c in lf.columns:
            try:
                t, values = c.canonical(tip=tip_in)
            except ValueError as e:
                raise ImportError_(f"{path}: {e} (--tip)") from None
            sensor = _id(c.sensor, "sensor id")
            units[sensor] = c.unit
            if c.serial:
                serials[sensor] = c.serial
            rows += [(int(a), st, sensor, c.quantity.value, float(b), CANONICAL[c.quantity])
                     for a, b in zip(t.tolist(), values.tolist())]
        device = device or f"IMPORT-{found}-{lf.serial or st}"
    elif found == RainFormat.READINGS.value:
        from .contract.readings_csv import read_readings_csv
        try:
            res = read_readings_csv(path, strict=True)
        except ConfigError as e:
            raise ImportError_(str(e)) from None
        f = res.frame
        t = f["time"].dt.tz_convert("UTC").dt.as_unit("ns").astype("int64").to_numpy()
        rows = [(int(a), s, q, q, float(v), u) for a, s, q, v, u in
                zip(t, f["station"], f["quantity"], f["value"], f["unit"])]
        zone_name = "offsets in the file"
        device = device or "IMPORT-readings"
    else:
        if station is None:
            raise ImportError_(f"{path}: a {found} rain record names no station: give --station")
        try:
            rec = read_rain(path, fmt=RainFormat(found), tip_in=tip_in, tz=tz)
        except RainFileError as e:
            raise ImportError_(str(e)) from None
        times = cast("pd.DatetimeIndex", rec.rain_in.index)
        if rec.naive:
            # wall-clock times of the logger: the registry's zone (the town's), never UTC by accident
            idx = times.tz_localize(None).tz_localize(registry.timezone, ambiguous="NaT",
                                                      nonexistent="NaT").tz_convert("UTC")
            zone_name = f"{tz} (given)" if tz else f"{registry.timezone} (the registry's; the file names none)"
        else:
            idx = times
            zone_name = "UTC"
        ok = idx.notna()
        st = _id(station, "station id")
        rows = [(int(a), st, "rain", "rain", float(v), "in") for a, v in
                zip(idx[ok].as_unit("ns").asi8.tolist(), rec.rain_in.to_numpy()[ok].tolist())]
        device = device or f"IMPORT-{found}-{st}"
    device = _id(device, "device id")
    unknown: Counter = Counter()
    keep: list[CanonicalReading] = []
    for t_ns, st, sensor, q, v, u in rows:
        if st not in known:
            unknown[st] += 1
            continue
        if not np.isfinite(v):
            continue
        keep.append(CanonicalReading(t_ns, st, device, sensor, q, v, u, "", 0))
    keep.sort(key=lambda r: (r.time_ns, r.station, r.sensor))
    keep, repeated, conflicts = _once(keep, units)
    return Imported(path, found, keep, unknown, skipped, zone_name, device, notes, repeated, conflicts,
                    units=units, serials=serials)


LOGGER_FORMATS = ("hoboware", "toa5", "korexo", "winsitu", "vusitu", "solinst")


def _read_logger(fmt: str, path: Path, tz: str | None, registry_zone: str, date_order: str | None) -> LoggerFile:
    """A logger export by its format, with the zone defaults each needs when the file names
    none: Campbell TOA5 the registry zone's standard time; HOBOware the registry zone; KorEXO
    and Solinst the registry zone's offset at the first record, held."""
    if fmt == "toa5":
        return read_toa5(path, tz or standard_time(registry_zone))    # Campbell loggers keep standard time
    if fmt == "hoboware":
        return read_hoboware(path, tz or registry_zone, date_order=date_order)
    if fmt == "korexo":
        return read_korexo(path, tz, default_zone=registry_zone, date_order=date_order)
    if fmt == "solinst":
        return read_solinst(path, tz, default_zone=registry_zone, date_order=date_order)
    if fmt == "vusitu":
        return read_vusitu(path, tz, date_order=date_order)
    return read_winsitu(path, tz, date_order=date_order)


def _value(r: CanonicalReading) -> float:
    """An imported reading's value: every one has one (rows without a finite value are not kept)."""
    if r.value is None:
        raise ValueError(f"{r.station} {r.sensor} at {r.time_ns}: an imported reading without a value")
    return r.value


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _once(readings: list[CanonicalReading], units: dict[str, str]) -> tuple[list[CanonicalReading], int,
                                                                              list[Conflict]]:
    """Each (station, sensor, quantity, time) once: a repeat with the same value counted, one
    with another value a conflict (the first kept). ``readings`` sorted by time."""
    out: list[CanonicalReading] = []
    seen: dict[tuple[str, str, str, int], float] = {}
    repeated = 0
    conflicts: list[Conflict] = []
    for r in readings:
        key = (r.station, r.sensor, r.quantity, r.time_ns)
        if key in seen:
            if _same(seen[key], _value(r)):
                repeated += 1
            else:
                conflicts.append(Conflict(r.station, r.sensor, r.quantity, r.time_ns, seen[key], _value(r),
                                          units.get(r.sensor, r.unit)))
            continue
        seen[key] = _value(r)
        out.append(r)
    return out, repeated, conflicts


def against_store(imp: Imported, source: ReadingsSource) -> Imported:
    """``imp`` without the readings ``source`` already holds: the same value at the same time
    of the same sensor skipped and counted; a different value a conflict, not stored."""
    from datetime import datetime, timezone
    groups: dict[tuple[str, str], list[CanonicalReading]] = {}
    for r in imp.readings:
        groups.setdefault((r.station, r.quantity), []).append(r)
    keep: list[CanonicalReading] = []
    same = 0
    conflicts: list[Conflict] = []
    for (st, q), rs in groups.items():
        lo, hi = (datetime.fromtimestamp(t / 1e9, timezone.utc) for t in (rs[0].time_ns - 1000, rs[-1].time_ns + 1000))
        stored = {(s.time_ns, s.sensor): s.value for s in source.readings(st, q, lo, hi)}
        for r in rs:
            v = stored.get((r.time_ns, r.sensor))
            if v is None:
                keep.append(r)
            elif _same(v, _value(r)):
                same += 1
            else:
                conflicts.append(Conflict(st, r.sensor, q, r.time_ns, v, _value(r), imp.units.get(r.sensor, r.unit)))
    keep.sort(key=lambda r: (r.time_ns, r.station, r.sensor))
    return replace(imp, readings=keep, already_stored=same, store_conflicts=conflicts)


@dataclass(frozen=True)
class ColumnSummary:
    """What an import would store of one sensor: for a technician to check before storing."""

    station: str
    sensor: str
    quantity: str
    unit: str
    count: int
    first_ns: int
    last_ns: int
    low: float
    high: float
    file_unit: str = ""            # the unit the file wrote, where it differs from the stored one (FNU, cm…)
    serial: str = ""               # the sensor's serial number, where the file gives one

    def describe(self) -> str:
        from .contract.timeutil import iso_utc
        unit = f"{self.unit}, the file's {self.file_unit}" if self.file_unit else self.unit
        serial = f" S/N {self.serial}" if self.serial else ""
        return (f"{self.station} {self.sensor} {self.quantity} [{unit}]{serial}: {self.count} readings, "
                f"{iso_utc(self.first_ns)} … {iso_utc(self.last_ns)}, min {self.low:.6g}, max {self.high:.6g}")


def summary(imp: Imported) -> list[ColumnSummary]:
    """Per (station, sensor, quantity): count, first and last time, min and max, in the units
    that would be stored."""
    groups: dict[tuple[str, str, str, str], list[CanonicalReading]] = {}
    for r in imp.readings:
        groups.setdefault((r.station, r.sensor, r.quantity, r.unit), []).append(r)
    return [ColumnSummary(st, se, q, u, len(rs), min(r.time_ns for r in rs), max(r.time_ns for r in rs),
                          min(_value(r) for r in rs), max(_value(r) for r in rs),
                          _file_unit(imp.units.get(se, ""), u), imp.serials.get(se, ""))
            for (st, se, q, u), rs in groups.items()]


def _file_unit(written: str, stored: str) -> str:
    """The file's unit when it is not the stored one ("" when the same or not known)."""
    return written if written and written.lower() != stored.lower() and written != "tips" else ""


def messages(imp: Imported) -> list:
    """The file's readings as stored messages: epoch from its content, one seq per batch (a
    second import of the same file is a duplicate, stored once)."""
    from .ingest.stores.base import StoredMessage
    # the epoch from the file and the readings to store: a batch key never names other content
    digest = zlib.crc32(imp.path.read_bytes())
    digest = zlib.crc32(repr([(r.time_ns, r.sensor, r.value) for r in imp.readings]).encode(), digest)
    epoch = (digest & 0x7FFFFFFF) or 1
    out = []
    for k in range(0, len(imp.readings), BATCH):
        seq = k // BATCH + 1
        rs = tuple(r._replace(seq=seq) for r in imp.readings[k:k + BATCH])
        out.append(StoredMessage(imp.device, seq, rs, epoch, None))
    return out


def write_csv(imps: Iterable[Imported], out: Path) -> int:
    """Our readings CSV (``time,station,quantity,value,unit``), for ``ms4watch replay``."""
    from .contract.readings_csv import write_readings_csv
    from .contract.timeutil import iso_utc
    with open(out, "w", encoding="utf-8", newline="") as f:
        return write_readings_csv(((iso_utc(r.time_ns), r.station, r.quantity, _value(r), r.unit)
                                   for imp in imps for r in imp.readings), f)


__all__ = ["ColumnSummary", "Conflict", "Imported", "ImportError_", "against_store", "messages", "read_file", "summary",
           "write_csv", "Quantity"]
