"""Files from loggers already in the ground: HOBOware CSV exports and Campbell TOA5 files,
read into columns of canonical readings with the units and time zone their headers state.

**Campbell Scientific TOA5** (LoggerNet manual, "TOA5"; CR1000/CR3000 manuals, "TOA5 ASCII
file format"): four quoted header lines, then comma-separated records:

1. environment: ``"TOA5", station name, datalogger model, serial number, OS version,
   program name, program signature, table name``;
2. field names (``"TIMESTAMP","RECORD","Rain_mm_Tot","BattV_Min"``);
3. units (``"TS","RN","mm","Volts"``);
4. processing (``"","","Tot","Min"``: Tot a total over the interval, Avg, Smp, Min, Max);

records: ``"2026-06-01 00:05:00",1,0.2,12.8`` — the timestamp in the logger's clock, which
the file does not name: the zone must be given (``tz``; Campbell loggers usually keep
standard time all year, so ``ms4watch import`` defaults to the registry zone's standard
offset). In a zone with daylight saving, local times that do not exist or repeat are read
(repeats in their order) and reported in ``notes``, as are RECORD gaps and repeats and a last
line cut short (left out). ``NAN`` is a missing value.

**HOBOware CSV export** (Onset HOBOware User's Guide, exporting table data): an optional
``"Plot Title: …"`` line, then a header ``"#","Date Time, GMT-04:00","<Series>, <unit> (LGR
S/N: <n>, SEN S/N: <m>)",…`` — the offset from GMT of every time in the file is in the
date-time column's name — then one row per sample or event: the row number, the time
(``MM/DD/YY hh:mm:ss AM``; 24-hour and four-digit years as HOBOware's preferences allow),
and the series' values (empty where the series has no value at that row). The order of day,
month and year is settled from the file or given (:mod:`.loggerdates`); fields may be
separated by ``;`` or tabs with decimal commas. Event-logger series are cumulative: in
``units`` a count of tips, in ``mm`` or ``in`` (an RG3 scaled by HOBOware) a depth; ``Rain``
as HOBOware's data assistant writes it is the cumulative depth. Channels of one name (a
4-channel logger's ``Temp``) are each their own sensor, named by ``LBL`` or ``SEN S/N``. Status columns (``Coupler
Attached``, ``Host Connected``, ``Stopped``, ``End Of File``, …) carry no readings.

**HOBOconnect CSV** (the app of the MX loggers; the layout of a real MX2501 export, see
``tests/contract/test_loggerfiles.py``): ``#,Date-Time (EST/EDT),Temperature (°C) ,…,Host
Connected,Stopped,End of File``, times ``03-09-2025 01:56:06``. The time column names the zone:
one abbreviation (``EDT``) is one offset; a pair (``EST/EDT``, ``AST/ADT``) the zone with its
daylight saving, as the logger's times follow it (the real export steps from 01:56:06 to
03:06:06 on 9 March 2025). Series are ``<name> (<unit>)``, ``Ch: 1 - <name>   (<unit>)``.

Columns become quantities by their names and units (:func:`quantity_of`); a column that is
none of ours is listed in ``skipped`` with the reason, never guessed. Errors name the file,
the line and the column.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from .errors import ConfigError, UnitError
from .loggerdates import EARLIEST, DateOrderError, parse_times
from .units import Quantity, converter

__all__ = ["Column", "LoggerFile", "read_toa5", "read_hoboware", "looks_like", "method_named", "quantity_of",
           "skip_reason", "standard_time", "zone"]

# name keyword → quantity (names are matched lower-case, first keyword found wins)
_KEYWORDS: tuple[tuple[str, Quantity], ...] = (
    ("rain", Quantity.RAIN), ("precip", Quantity.RAIN), ("turb", Quantity.TURBIDITY), ("batt", Quantity.BATTERY),
    ("flow", Quantity.FLOW), ("discharge", Quantity.FLOW),
    ("level", Quantity.LEVEL), ("stage", Quantity.LEVEL), ("lvl", Quantity.LEVEL), ("depth", Quantity.LEVEL),
    ("velocity", Quantity.VELOCITY), ("vel", Quantity.VELOCITY),
    ("temp", Quantity.TEMPERATURE), ("airt", Quantity.TEMPERATURE), ("tair", Quantity.TEMPERATURE),
    ("cond", Quantity.CONDUCTIVITY), ("signal", Quantity.SIGNAL),
    ("range", Quantity.CONDUCTIVITY),       # a HOBO U24's "Low Range" / "High Range" / "Full Range", in µS/cm
)
_UNIT_ALIASES = {"volts": "V", "volt": "V", "deg c": "degC", "degc": "degC", "°c": "degC", "c": "degC",
                 "°f": "degF", "deg f": "degF", "degf": "degF", "f": "degF", "inches": "in", "inch": "in",
                 "ntu": "NTU", "fnu": "FNU", "us/cm": "uS/cm", "\u00b5s/cm": "uS/cm", "\u03bcs/cm": "uS/cm", "ms/cm": "mS/cm"}


def zone(name: str) -> tzinfo:
    """An IANA zone (``America/New_York``) or a fixed offset (``-04:00``, ``GMT-04:00``, ``UTC``)."""
    m = re.fullmatch(r"(?:GMT|UTC)?\s*([+-])(\d{1,2}):?(\d\d)", name.strip())
    if m:
        sign = -1 if m.group(1) == "-" else 1
        return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    if name.strip().upper() in ("UTC", "GMT", "Z"):
        return timezone.utc
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r} (an IANA name like America/New_York, or an offset "
                         "like -04:00)") from None


@dataclass
class Column:
    """One series of a file: its name as written, the quantity and unit it was read as, how its
    values relate to time (``sample``: the value at that time; ``interval``: a total over the
    interval ending then; ``cumulative``: a running total), the sample times [UTC ns] and the
    values in the file's unit."""

    name: str
    quantity: Quantity
    unit: str
    kind: str
    times_ns: np.ndarray
    values: np.ndarray
    sensor: str = ""                  # the sensor it is stored under (the name; + channel where names repeat)
    serial: str = ""                  # the sensor's serial number, where the file gives one

    def __post_init__(self) -> None:
        self.sensor = self.sensor or self.name

    def canonical(self, tip: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(times [UTC ns], values in the quantity's canonical unit). A cumulative series
        becomes the increment since the previous row (its first row: 0); a count of tips
        (``unit == "tips"``) becomes depth with ``tip`` [in]."""
        v = self.values.astype(np.float64)
        if self.kind == "cumulative":
            v = np.diff(v, prepend=v[:1])
        if self.unit == "tips":
            if tip is None:
                raise ValueError(f"column {self.name!r} counts tips: give the depth of one tip")
            return self.times_ns, v * tip
        return self.times_ns, converter(self.quantity, self.unit)(v)


@dataclass
class LoggerFile:
    path: Path
    format: str                       # "toa5" | "hoboware" | "korexo" | "winsitu" | "vusitu" | "solinst"
    station: str | None               # what the file says (TOA5 station name; HOBOware plot title)
    serial: str | None
    tz: tzinfo
    tz_source: str                    # "header", "given" or "held" (a default zone's offset at the first time)
    columns: list[Column] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (column, why)
    date_order: str = "ymd"           # how its dates were read: "mdy" | "dmy" | "ymd"
    notes: list[str] = field(default_factory=list)                 # what a technician should know (line: what)

    def column(self, quantity: Quantity) -> Column | None:
        return next((c for c in self.columns if c.quantity is quantity), None)


def method_named(sensor: str, quantity: Quantity, unit: str) -> str:
    """``sensor``, with the turbidity's unit added when its name does not say it: FNU and NTU
    are different methods, never one series (``Turbidity`` in FNU → ``Turbidity FNU``)."""
    if quantity is Quantity.TURBIDITY and unit.upper() not in sensor.upper():
        return f"{sensor} {unit.upper()}"
    return sensor


def quantity_of(name: str, unit: str) -> tuple[Quantity, str] | None:
    """The quantity and unit of a column called ``name`` with unit ``unit``, or None when it
    is none of ours (or its unit does not fit the quantity its name says)."""
    u = _UNIT_ALIASES.get(unit.strip().lower(), unit.strip())
    low = name.lower()
    if low.startswith(("ptemp", "panel")):
        return None       # the logger's own panel temperature: not a measurement of the station
    for key, q in _KEYWORDS:
        if key in low:
            if q is Quantity.RAIN and u.lower() in ("units", "tips", "count", ""):
                return q, "tips"
            try:
                converter(q, u)
            except UnitError:
                return None
            return q, u
    return None


def skip_reason(name: str, unit: str) -> str:
    """Why a column called ``name`` with unit ``unit`` is not read: its name, or its unit."""
    low = name.lower()
    if low.startswith(("ptemp", "panel")):
        return "the logger's panel temperature, not a measurement of the station"
    q = next((q for key, q in _KEYWORDS if key in low), None)
    if q is None:
        return f"{name!r} is none of ms4watch's quantities (unit {unit!r})"
    return f"unit {unit!r} does not fit {q.value}"


def looks_like(path: Path) -> str | None:
    """``"toa5"``, ``"hoboware"``, ``"korexo"``, ``"winsitu"``, ``"vusitu"`` or ``"solinst"``
    when the file's first lines say so, else None."""
    from . import korexo, solinst, vusitu, winsitu
    from .loggertext import head
    text = head(Path(path))
    for name, test in (("korexo", korexo.looks_like_korexo), ("winsitu", winsitu.looks_like_winsitu),
                       ("vusitu", vusitu.looks_like_vusitu), ("solinst", solinst.looks_like_solinst)):
        if text and test(text):
            return name
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            first = f.readline().strip()
            second = f.readline().strip()
    except OSError:
        return None
    if first.startswith('"TOA5"') or first.startswith("TOA5,"):
        return "toa5"
    for line in (first, second):
        if line.lstrip('"').startswith("Plot Title") or re.match(r'^"?#"?[,;\t]\s*"?Date(?: Time|-Time|"?[,;\t]\s*"?Time)',
                                                                  line):
            return "hoboware"
    return None


def _rows(path: Path, delimiter: str = ",") -> list[list[str]]:
    try:
        raw = path.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            try:      # HOBOware on Windows writes its code page: "°" as the byte 0xB0
                text = raw.decode("cp1252")
            except UnicodeDecodeError:
                raise ConfigError(str(path), [(None, "", f"not text (UTF-8 or Windows-1252): {e.reason} at byte "
                                                         f"{e.start}")]) from None
    except OSError as e:
        raise ConfigError(str(path), [(None, "", f"cannot read: {e.strerror}")]) from None
    return list(csv.reader(io.StringIO(text), delimiter=delimiter))


def _to_ns(dt: datetime) -> int:
    d = dt - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (d.days * 86400 + d.seconds) * 1_000_000_000 + d.microseconds * 1000


def _number(text: str, decimal_comma: bool = False) -> float:
    t = text.strip()
    if decimal_comma:
        t = t.replace(",", ".")
    if t == "" or t.upper() in ("NAN", "INF", "-INF"):
        return math.nan
    return float(t)


def read_toa5(path: str | Path, tz: str | tzinfo | None) -> LoggerFile:
    """A Campbell TOA5 file. ``tz``: the zone of the logger's clock (TOA5 does not say)."""
    path = Path(path)
    src = str(path)
    if tz is None:
        raise ConfigError(src, [(None, "", "a TOA5 file does not say its time zone: give it (--tz)")])
    tzi = zone(tz) if isinstance(tz, str) else tz
    rows = _rows(path)
    if len(rows) < 5 or not rows[0] or rows[0][0] != "TOA5":
        raise ConfigError(src, [(1, "", "not a TOA5 file: four header lines starting \"TOA5\", then records")])
    env, names, units, procs = rows[0], rows[1], rows[2], rows[3]
    if not names or names[0] != "TIMESTAMP":
        raise ConfigError(src, [(2, names[0] if names else "", "the first field must be TIMESTAMP")])
    if len(units) != len(names) or len(procs) != len(names):
        raise ConfigError(src, [(3, "", f"{len(names)} field names but {len(units)} units and {len(procs)} "
                                        "processing entries")])
    out = LoggerFile(path, "toa5", env[1] if len(env) > 1 else None, env[3] if len(env) > 3 else None, tzi, "given")
    body = [(i, r) for i, r in enumerate(rows[4:], start=5) if r]
    if body and _toa5_cut_short(body[-1][1], len(names), path):
        out.notes.append(f"line {body[-1][0]}: the last line is cut short (a download interrupted?): left out")
        body = body[:-1]
    local: list[datetime] = []
    cells: list[list[str]] = []
    for i, r in body:
        if len(r) < len(names):
            raise ConfigError(src, [(i, "", f"{len(r)} values, the header names {len(names)}")])
        try:
            t = datetime.strptime(r[0].strip()[:26], "%Y-%m-%d %H:%M:%S" + (".%f" if "." in r[0] else ""))
        except ValueError:
            raise ConfigError(src, [(i, "TIMESTAMP", f"not a time YYYY-MM-DD HH:MM:SS[.f]: {r[0]!r}")]) from None
        if not EARLIEST <= t <= datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(days=2):
            raise ConfigError(src, [(i, "TIMESTAMP", f"{r[0]!r}: not a plausible time (before {EARLIEST:%Y} or after "
                                                     "today): is the logger's clock set?")])
        local.append(t)
        cells.append(r)
    times = _localise(local, tzi, out.notes)
    if "RECORD" in names:
        out.notes += _record_steps([(i, r[names.index("RECORD")]) for i, r in body])
    t_ns = np.array(times, dtype=np.int64)
    for j, (name, unit, proc) in enumerate(zip(names, units, procs)):
        if j == 0 or name == "RECORD":
            continue
        found = quantity_of(name, unit)
        if found is None:
            out.skipped.append((name, skip_reason(name, unit)))
            continue
        q, u = found
        kind = "interval" if q is Quantity.RAIN or proc.strip().lower() == "tot" else "sample"
        try:
            vals = np.array([_number(c[j]) for c in cells], dtype=np.float64)
        except ValueError:
            k = next(k for k, c in enumerate(cells) if not _is_number(c[j]))
            raise ConfigError(src, [(k + 5, name, f"not a number: {cells[k][j]!r}")]) from None
        ok = ~np.isnan(vals)
        out.columns.append(Column(name, q, u, kind, t_ns[ok], vals[ok], method_named(name, q, u)))
    return out


def _toa5_cut_short(row: list[str], width: int, path: Path) -> bool:
    """The last record, with too few fields or a time or number cut off, in a file that does
    not end with a line break: a download cut short."""
    try:
        with open(path, "rb") as f:
            f.seek(-1, 2)
            if f.read(1) in (b"\n", b"\r"):
                return False
    except OSError:
        return False
    if len(row) < width:
        return True
    try:
        datetime.strptime(row[0].strip()[:19], "%Y-%m-%d %H:%M:%S")
    except ValueError:
        return True
    return not all(_is_number(c) for c in row[1:])


def _localise(local: list[datetime], tzi: tzinfo, notes: list[str]) -> list[int]:
    """UTC ns of a logger's wall-clock times in ``tzi``. In a zone with daylight saving, times
    that do not exist (clocks forward) are read as standard time and reported; times in the
    repeated hour (clocks back) are read in their order — the first pass daylight time, the
    second standard time — and reported with how many went each way."""
    if not isinstance(tzi, ZoneInfo):
        return [_to_ns(t.replace(tzinfo=tzi)) for t in local]
    out: list[int] = []
    missing: dict[str, int] = {}
    repeated: dict[str, list[int]] = {}      # day -> [first pass, second pass]
    second = False
    last_amb: datetime | None = None
    for t in local:
        a, b = t.replace(tzinfo=tzi, fold=0), t.replace(tzinfo=tzi, fold=1)
        if a.astimezone(timezone.utc).astimezone(tzi).replace(tzinfo=None) != t:
            second, last_amb = False, None
            missing[t.strftime("%Y-%m-%d")] = missing.get(t.strftime("%Y-%m-%d"), 0) + 1
            offsets = (a.utcoffset(), b.utcoffset())
            assert offsets[0] is not None and offsets[1] is not None    # aware: tzi is a ZoneInfo
            out.append(_to_ns(t.replace(tzinfo=timezone(min(offsets[0], offsets[1])))))  # standard time
            continue
        if a.utcoffset() == b.utcoffset():
            second, last_amb = False, None
            out.append(_to_ns(a))
            continue
        if last_amb is not None and t <= last_amb:
            second = True                     # the clock went back: the hour again, now standard time
        last_amb = t
        n = repeated.setdefault(t.strftime("%Y-%m-%d"), [0, 0])
        n[1 if second else 0] += 1
        out.append(_to_ns(b if second else a))
    name = str(tzi)
    std = _standard_offset(tzi)
    for day, count in missing.items():
        notes.append(f"{count} rows at local times that do not exist in {name} (clocks went forward on {day}): read as "
                     f"standard time; a logger keeping standard time wants --tz {std}")
    for day, (first, again) in repeated.items():
        notes.append(f"{first + again} rows in the hour repeated on {day} (clocks went back): {first} read as "
                     f"daylight time, {again} as standard time, by their order"
                     + ("" if again else f"; a logger keeping standard time wants --tz {std}"))
    return out


def _standard_offset(tzi: tzinfo) -> str:
    """``-05:00``: a zone's standard (winter) offset."""
    offs = [datetime(2026, m, 15, tzinfo=tzi).utcoffset() or timedelta(0) for m in (1, 7)]
    sec = int(min(offs).total_seconds())
    return f"{'-' if sec < 0 else '+'}{abs(sec) // 3600:02d}:{abs(sec) % 3600 // 60:02d}"


def standard_time(name: str) -> tzinfo:
    """The fixed offset of an IANA zone's standard time (Campbell loggers keep it all year)."""
    return zone(_standard_offset(zone(name)))


def _record_steps(records: list[tuple[int, str]], limit: int = 10) -> list[str]:
    """RECORD numbers that jump (records missing) or repeat/go back (a record again, or the
    logger reset), each with its line; at most ``limit`` listed, then a count."""
    notes: list[str] = []
    prev: int | None = None
    extra = 0
    for line, text in records:
        try:
            k = int(float(text))
        except ValueError:
            continue
        if prev is not None:
            msg = None
            if k > prev + 1:
                msg = f"RECORD {prev} to {k} at line {line}: {k - prev - 1} records missing"
            elif k <= prev:
                msg = f"RECORD {k} again at line {line} (after {prev}: a repeated record, or the logger reset)"
            if msg:
                if len(notes) < limit:
                    notes.append(msg)
                else:
                    extra += 1
        prev = k
    if extra:
        notes.append(f"… and {extra} more RECORD gaps or repeats")
    return notes


def _is_number(text: str) -> bool:
    try:
        _number(text)
        return True
    except ValueError:
        return False


# HOBOconnect's time column names its zone: one abbreviation, one offset; a pair, the zone with its daylight saving
_ABBREVIATED = {
    "UTC": "+00:00", "GMT": "+00:00", "EST": "-05:00", "EDT": "-04:00", "CST": "-06:00", "CDT": "-05:00",
    "MST": "-07:00", "MDT": "-06:00", "PST": "-08:00", "PDT": "-07:00", "AST": "-04:00", "ADT": "-03:00",
    "AKST": "-09:00", "AKDT": "-08:00", "HST": "-10:00", "NST": "-03:30", "NDT": "-02:30", "BST": "+01:00",
    "CET": "+01:00", "CEST": "+02:00",
    **{f"{a}/{b}": iana for a, b, iana in (
        ("EST", "EDT", "America/New_York"), ("CST", "CDT", "America/Chicago"), ("MST", "MDT", "America/Denver"),
        ("PST", "PDT", "America/Los_Angeles"), ("AST", "ADT", "America/Halifax"), ("AKST", "AKDT", "America/Anchorage"),
        ("NST", "NDT", "America/St_Johns"), ("GMT", "BST", "Europe/London"), ("CET", "CEST", "Europe/Berlin"))},
}
_ABBREVIATED.update({f"{k.split('/')[1]}/{k.split('/')[0]}": v for k, v in list(_ABBREVIATED.items()) if "/" in k})
_CONNECT_SERIES = re.compile(r"^(?:Ch:\s*\d+\s*-\s*)?(?P<name>[^()]+?)\s*\((?P<unit>[^():]*)\)\s*$")
_SERIES = re.compile(r"^(?P<name>[^,(]+?)(?:,\s*(?P<unit>[^(]*?))?\s*(?:\((?P<sn>[^)]*)\))?\s*$")
_DEPTH_UNITS = ("mm", "in", "inch", "inches")


def read_hoboware(path: str | Path, tz: str | tzinfo | None = None, *, date_order: str | None = None) -> LoggerFile:
    """A HOBOware CSV export; the time zone from its ``Date Time, GMT±hh:mm`` column (``tz``
    only when the header has none); the order of day, month and year settled from the file
    (:mod:`ms4watch.contract.loggerdates`) or given (``date_order``)."""
    path = Path(path)
    src = str(path)
    delimiter = _hobo_delimiter(path)
    rows = _rows(path, delimiter)
    title = None
    h = 0
    if rows and rows[0] and rows[0][0].startswith("Plot Title"):
        title = rows[0][0].split(":", 1)[1].strip() or None
        h = 1
    split = len(rows) > h and len(rows[h]) > 3 and rows[h][1].strip() == "Date" and rows[h][2].startswith("Time")
    if split:        # "separate date and time columns": one date-time column as in the default export
        rows[h:] = [r[:1] + [f"{r[1].strip()} {r[2].strip()}".strip()] + r[3:] if len(r) > 2 else r for r in rows[h:]]
    if len(rows) <= h or len(rows[h]) < 3 or rows[h][0].strip() != "#" or \
            not rows[h][1].startswith(("Date Time", "Date-Time")):
        got = ",".join(rows[h][:3]) if len(rows) > h else "nothing"
        raise ConfigError(src, [(h + 1, "", 'not a HOBOware export: a header "#","Date Time, GMT±hh:mm",<series>,… '
                                            'expected (fields separated by ",", ";" or tabs); '
                                            f"found {got[:80]!r}")])
    header = rows[h]
    decimal_comma = delimiter != ","          # ";" or tabs between fields: "," is the decimal sign
    m = re.search(r"GMT\s*([+-]\d\d:\d\d)", header[1])
    named = re.search(r"\(([A-Za-z]{2,5}(?:/[A-Za-z]{2,5})?)\)", header[1]) if header[1].startswith("Date-Time") else None
    if m:
        tzi, tz_source = zone(m.group(1)), "header"
    elif named and (named.group(1).upper() in _ABBREVIATED or tz is None):
        # HOBOconnect: "Date-Time (EDT)", one offset; "Date-Time (EST/EDT)", the zone with its daylight saving
        abbreviated = _ABBREVIATED.get(named.group(1).upper())
        if abbreviated is None:
            raise ConfigError(src, [(h + 1, header[1].strip(), f"{named.group(1)!r} is not a zone ms4watch knows: give it "
                                                               "(--tz)")])
        tzi, tz_source = zone(abbreviated), "header"
    elif tz is not None:
        tzi, tz_source = (zone(tz) if isinstance(tz, str) else tz), "given"
    else:
        raise ConfigError(src, [(h + 1, header[1], "no GMT offset in the date-time column: give the zone (--tz)")])
    body = [(i, r) for i, r in enumerate(rows[h + 1:], start=h + 2) if r and any(x.strip() for x in r)]
    out = LoggerFile(path, "hoboware", title, None, tzi, tz_source)
    if body and _cut_short(body[-1][1], len(header), path):
        out.notes.append(f"line {body[-1][0]}: the last line is cut short (a download interrupted?): left out")
        body = body[:-1]
    try:
        local, out.date_order = parse_times([r[1] if len(r) > 1 else "" for _, r in body], order=date_order,
                                            header=header[1])
    except DateOrderError as e:
        raise ConfigError(src, [(body[e.index][0] if body else h + 2, "Date Time", str(e))]) from None
    t_ns = np.array(_localise(local, tzi, out.notes), dtype=np.int64)
    serial = None
    hoboconnect = header[1].startswith("Date-Time")
    series = []
    for j, col in enumerate(header[2:], start=2):
        sm = _SERIES.match(col)
        name = (sm.group("name") if sm else col).strip()
        unit = ((sm.group("unit") or "") if sm else "").strip()
        cm = _CONNECT_SERIES.match(col) if hoboconnect and not unit else None
        if cm:        # HOBOconnect: "Temperature (°C) ", "Ch: 1 - Water Level   (ft)"
            name, unit = cm.group("name").strip(), cm.group("unit").strip()
        tags = dict(re.findall(r"(LGR S/N|SEN S/N|LBL):\s*([^,)]+)", col))
        if tags.get("LGR S/N") and serial is None:
            serial = tags["LGR S/N"].strip()
        series.append((j, name, unit, tags))
    names = Counter(name for _, name, _, _ in series)
    has_reading = np.zeros(len(body), dtype=bool)      # rows with a reading (not only events)
    for j, name, unit, tags in series:
        low = name.lower()
        if low.startswith("event") or (low.startswith("rain") and unit.lower() in ("", "units", "tips", "count")):
            # an event logger's count: tips when its unit is "units", a depth when HOBOware scaled it (RG3: mm, in)
            found = (Quantity.RAIN, "tips") if unit.lower() in ("", "units", "tips", "count") else \
                quantity_of("rain", unit)
            why = f"unit {unit!r} is neither a count of tips nor a depth" if found is None else ""
        elif not unit:
            found, why = None, "a status column"
        else:
            found, why = quantity_of(name, unit), skip_reason(name, unit)
        if found is None:
            out.skipped.append((name, why))
            continue
        q, u = found
        vals = []
        for i, r in body:
            cell = r[j].strip() if j < len(r) else ""
            try:
                vals.append(_number(cell, decimal_comma))
            except ValueError:
                raise ConfigError(src, [(i, name, f"not a number: {cell!r}")]) from None
        v = np.array(vals, dtype=np.float64)
        ok = ~np.isnan(v)
        has_reading |= ok
        kind = "cumulative" if q is Quantity.RAIN else "sample"
        if kind == "cumulative" and np.any(np.diff(v[ok]) < 0):
            k = int(np.flatnonzero(np.diff(v[ok]) < 0)[0]) + 1
            line = [i for (i, _), o in zip(body, ok) if o][k]
            raise ConfigError(src, [(line, name, "a cumulative rain series goes down here (the logger relaunched?): "
                                                 "export each deployment on its own")])
        sensor = name
        if names[name] > 1:      # a multi-channel logger: each channel its own sensor, named by its header
            others = [t for _, n, _, t in series if n == name]
            for key in ("LBL", "SEN S/N"):
                if tags.get(key) and len({t.get(key) for t in others}) == len(others):
                    sensor = f"{name}_{tags[key].strip().replace(' ', '_')}"
                    break
            else:
                sensor = f"{name}_ch{[jj for jj, n, _, _ in series if n == name].index(j) + 1}"
        out.columns.append(Column(name, q, u, kind, t_ns[ok], v[ok], method_named(sensor, q, u)))
    from .loggertext import steps
    out.notes += steps(t_ns[has_reading], [i for (i, _), h in zip(body, has_reading) if h])
    out.serial = serial
    return out


def _hobo_delimiter(path: Path) -> str:
    """What separates a HOBOware export's fields: the character after its header's ``"#"``
    (``,``; ``;`` or a tab where the computer's decimal sign is ``,``)."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            for line in (f.readline(), f.readline()):
                m = re.match(r'^"?#"?([,;\t])', line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return ","


def _cut_short(row: list[str], width: int, path: Path) -> bool:
    """A last row with fewer fields than the header, in a file that does not end with a line
    break: a download cut short."""
    if len(row) >= width:
        return False
    try:
        with open(path, "rb") as f:
            f.seek(-1, 2)
            return f.read(1) not in (b"\n", b"\r")
    except OSError:
        return False
