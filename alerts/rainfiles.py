"""Readers for the rain records ``ms4watch storms`` accepts, each into a depth Series [in].

- our readings CSV (``time,station,quantity,value,unit``; rain rows of one station),
- a tip-per-row log with cumulative tip counts (SEPARATE's "Cumulative Tips" format:
  ``DateTime,CumulativeTips``, ``MM/DD/YY HH:MM:SS``, UTF-8 BOM),
- a fixed-interval CSV of depth per logging interval (SEPARATE's "Fixed Interval" format:
  ``DateTime,Depth_mm``),
- a USGS RDB of per-minute increments in inches (Rainmaker's format; ``-9`` is missing),
- a HOBOware CSV export (an event logger's tips, or HOBOware's cumulative ``Rain`` series;
  times in the offset its header names) and a Campbell TOA5 file (a rain total per
  interval; times in the logger's clock), read by :mod:`ms4watch.contract.loggerfiles`.

The format is told from the file itself; ``--format`` must agree with it (a tip log read as
fixed-interval depths would make a storm of its tip counts): a file whose format cannot be
told, or that is not what ``--format`` says, is refused with the reason.

Files without offsets (logger local time) are read as wall-clock times and labelled UTC
for the arithmetic; :class:`RainRecord` says so, and the table is printed without offset.
"""

from __future__ import annotations

import enum
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ms4watch.contract.errors import ConfigError
from ms4watch.contract.readings_csv import bounded_ns, read_readings_csv

from .errors import RainFileError

MM_PER_IN = 25.4


class RainFormat(str, enum.Enum):
    READINGS = "readings"
    TIPS = "tips"
    FIXED = "fixed"
    RDB = "rdb"
    HOBOWARE = "hoboware"
    TOA5 = "toa5"


@dataclass
class RainRecord:
    rain_in: pd.Series          # depth [in] per row, UTC-labelled DatetimeIndex
    format: RainFormat
    naive: bool                 # times were local wall-clock times without offset
    station: str | None = None


def parse_depth(text: str) -> float:
    """``0.2mm`` / ``0.01in`` / ``0.01`` (inches) → inches."""
    t = text.strip().lower()
    try:
        if t.endswith("mm"):
            return float(t[:-2]) / MM_PER_IN
        if t.endswith("in"):
            return float(t[:-2])
        return float(t)
    except ValueError:
        raise RainFileError(f"not a depth: {text!r} (write e.g. 0.2mm or 0.01in)") from None


_DEPTH_WORDS = ("depth", "rain", "precip", "mm", "in")
KNOWN = ("readings (time,station,quantity,value,unit), tips (DateTime,CumulativeTips), fixed (DateTime,Depth_mm), "
         "rdb (USGS, tab-separated), hoboware (HOBOware CSV export), toa5 (Campbell)")


# logger exports ms4watch reads that never hold a rain gauge (sondes and level loggers)
_NO_RAIN = {"korexo": "KorEXO", "winsitu": "Win-Situ", "vusitu": "VuSitu", "solinst": "Solinst"}


def _is_depth(name: str) -> bool:
    n = name.lower()
    return "tip" not in n and any(w in n for w in _DEPTH_WORDS)


def sniff(path: Path) -> RainFormat:
    """The format a rain record's first lines say; RainFileError naming why when none fits."""
    from ms4watch.contract.loggerfiles import looks_like
    logger = looks_like(path)
    if logger in _NO_RAIN:
        raise RainFileError(f"{path}: a {_NO_RAIN[logger]} export holds no rain series: `ms4watch import` reads it; "
                            f"storms reads {KNOWN}")
    if logger is not None:
        return RainFormat(logger)
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            head = line.strip().lower()
            break
        else:
            raise RainFileError(f"{path}: empty file")
    if "\t" in head or path.suffix.lower() == ".rdb":
        return RainFormat.RDB
    cols = [c.strip() for c in head.split(",")]
    if cols[:5] == ["time", "station", "quantity", "value", "unit"]:
        return RainFormat.READINGS
    if len(cols) >= 2 and "tips" in cols[1]:
        return RainFormat.TIPS
    if len(cols) >= 2 and _is_depth(cols[1]):
        return RainFormat.FIXED
    raise RainFileError(f"{path}:1: cannot tell the format of this rain record (header {head!r}); ms4watch reads "
                        f"{KNOWN}")


def read_rain(path: str | Path, *, fmt: RainFormat | None = None, tip_in: float | None = None,
              station: str | None = None, column: str | None = None, tz: str | None = None,
              date_order: str | None = None) -> RainRecord:
    """A rain record. ``fmt`` (``--format``) must agree with what the file says it is."""
    path = Path(path)
    if not path.exists():
        raise RainFileError(f"{path}: no such file")
    if fmt is None:
        fmt = sniff(path)
    else:
        try:
            found = sniff(path)
        except RainFileError:
            found = None
        if found is not None and found is not fmt:
            raise RainFileError(f"{path}: --format {fmt.value} does not fit this file: its header says it is a "
                                f"{found.value} file ({_what(found)})")
    if fmt is RainFormat.READINGS:
        return _readings(path, station)
    if fmt is RainFormat.TIPS:
        return _tips(path, tip_in if tip_in is not None else 0.2 / MM_PER_IN)
    if fmt is RainFormat.FIXED:
        return _fixed(path)
    if fmt in (RainFormat.HOBOWARE, RainFormat.TOA5):
        return _logger_file(path, fmt, tip_in, tz, column, date_order)
    return _rdb(path, column)


def _what(fmt: RainFormat) -> str:
    return {RainFormat.TIPS: "a cumulative tip count per row", RainFormat.FIXED: "a depth per logging interval",
            RainFormat.READINGS: "ms4watch readings", RainFormat.RDB: "a USGS RDB table",
            RainFormat.HOBOWARE: "a HOBOware export", RainFormat.TOA5: "a Campbell TOA5 table"}[fmt]


def _logger_file(path: Path, fmt: RainFormat, tip_in: float | None, tz: str | None, column: str | None,
                 date_order: str | None = None) -> RainRecord:
    """The rain series of a HOBOware or TOA5 file, as depth per row [in]."""
    from ms4watch.contract.loggerfiles import read_hoboware, read_toa5
    from ms4watch.contract.units import Quantity
    try:
        lf = read_toa5(path, tz or "UTC") if fmt is RainFormat.TOA5 else read_hoboware(path, tz, date_order=date_order)
    except (ConfigError, ValueError) as e:
        raise RainFileError(str(e)) from None
    rain = [c for c in lf.columns if c.quantity is Quantity.RAIN and (column is None or c.name == column)]
    if not rain:
        names = ", ".join(c.name for c in lf.columns) or "none"
        raise RainFileError(f"{path}: no rain column{f' {column!r}' if column else ''} (columns read: {names})")
    try:
        t, v = rain[0].canonical(tip=tip_in)
    except ValueError as e:
        raise RainFileError(f"{path}: {e} (--tip)") from None
    idx = pd.DatetimeIndex(pd.to_datetime(t, utc=True)).as_unit("ns")
    naive = fmt is RainFormat.TOA5 and tz is None     # the logger's clock, zone unknown: wall-clock times
    return RainRecord(pd.Series(v, index=idx, name="rain_in").sort_index(kind="stable"), fmt, naive=naive)


def _readings(path: Path, station: str | None) -> RainRecord:
    try:
        res = read_readings_csv(path)
    except ConfigError as e:
        raise RainFileError(str(e)) from None
    f = res.frame
    f = f[f["quantity"] == "rain"]
    stations = sorted(f["station"].unique())
    if station is None:
        if len(stations) != 1:
            raise RainFileError(f"{path}: rain rows of {len(stations)} stations ({', '.join(stations) or 'none'}); "
                                "choose one with --station")
        station = stations[0]
    f = f[f["station"] == station]
    if f.empty:
        raise RainFileError(f"{path}: no rain rows for station {station!r}")
    s = pd.Series(f["value"].to_numpy(), index=pd.DatetimeIndex(f["time"]).as_unit("ns"), name="rain_in")
    return RainRecord(s.sort_index(kind="stable"), RainFormat.READINGS, naive=False, station=station)


def _times(text: pd.Series, fmt: str, path: Path, first_line: int) -> pd.DatetimeIndex:
    try:
        t = pd.to_datetime(text.str.strip(), format=fmt, errors="coerce")
    except (pd.errors.OutOfBoundsDatetime, ValueError, OverflowError):   # pandas raises for some anyway
        t = pd.Series(pd.NaT, index=text.index, dtype="datetime64[ns]")
    t = bounded_ns(t.dt.tz_localize("UTC"))
    bad = np.flatnonzero(t.isna().to_numpy())
    if bad.size:
        i = int(bad[0])
        raise RainFileError(f"{path}:{first_line + i}: DateTime: not a time in format {fmt}: {text.iat[i]!r}")
    return pd.DatetimeIndex(t)


def _csv(path: Path, source: str | io.StringIO | None = None, *, columns: int = 2, **kw) -> pd.DataFrame:
    """A CSV as strings, or RainFileError naming the file (and line, where pandas says)."""
    try:
        raw = pd.read_csv(source if source is not None else path, encoding="utf-8-sig", dtype=str,
                          keep_default_na=False, **kw)
    except pd.errors.EmptyDataError:
        raise RainFileError(f"{path}: empty: no header") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as e:
        text = str(e).replace("Error tokenizing data. C error: ", "")
        raise RainFileError(f"{path}: not a table this format can read: {text}") from None
    if len(raw.columns) < columns:
        raise RainFileError(f"{path}:1: expected at least {columns} columns, found {len(raw.columns)}")
    if raw.empty:
        raise RainFileError(f"{path}: no rows after the header")
    return raw


def _tips(path: Path, tip_in: float) -> RainRecord:
    raw = _csv(path)
    tcol, ccol = raw.columns[0], raw.columns[1]
    if "tip" not in ccol.lower():
        raise RainFileError(f"{path}:1: column {ccol!r} is not a cumulative tip count: not a tip log")
    idx = _times(raw[tcol], "%m/%d/%y %H:%M:%S", path, 2)
    counts = pd.to_numeric(raw[ccol].str.strip(), errors="coerce")
    if counts.isna().any():
        i = int(np.flatnonzero(counts.isna().to_numpy())[0])
        raise RainFileError(f"{path}:{i + 2}: {ccol}: not a tip count: {raw[ccol].iat[i]!r}")
    cumulative = counts.to_numpy()
    tips = np.diff(cumulative, prepend=cumulative[0])  # first row: the logger start, 0 tips
    if np.any(tips < 0):
        i = int(np.flatnonzero(tips < 0)[0])
        raise RainFileError(f"{path}:{i + 2}: {ccol}: cumulative count goes down")
    return RainRecord(pd.Series(tips * tip_in, index=idx, name="rain_in"), RainFormat.TIPS, naive=True)


def _fixed(path: Path) -> RainRecord:
    raw = _csv(path)
    tcol, dcol = raw.columns[0], raw.columns[1]
    if not _is_depth(dcol):
        raise RainFileError(f"{path}:1: column {dcol!r} is not a depth per interval (Depth_mm, Rain_in, …): "
                            "not a fixed-interval record")
    fmt = "%Y-%m-%d %H:%M:%S" if "-" in str(raw[tcol].iat[0]) else "%m/%d/%y %H:%M:%S"
    idx = _times(raw[tcol], fmt, path, 2)
    depth = pd.to_numeric(raw[dcol].str.strip(), errors="coerce")
    if depth.isna().any():
        i = int(np.flatnonzero(depth.isna().to_numpy())[0])
        raise RainFileError(f"{path}:{i + 2}: {dcol}: not a depth: {raw[dcol].iat[i]!r}")
    scale = 1 / MM_PER_IN if "mm" in dcol.lower() else 1.0
    # logger clocks jump back (DST fall-back, relaunch): order rows by their time stamps
    s = pd.Series(depth.to_numpy() * scale, index=idx, name="rain_in").sort_index(kind="stable")
    return RainRecord(s, RainFormat.FIXED, naive=True)


def _rdb(path: Path, column: str | None) -> RainRecord:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise RainFileError(f"{path}: not text (UTF-8): {e.reason} at byte {e.start}") from None
    lines = [ln for ln in text.splitlines() if not ln.startswith("#")]
    if len(lines) < 3:
        raise RainFileError(f"{path}: not an RDB file (header, format line and rows missing)")
    body = "\n".join([lines[0]] + lines[2:])  # line 2 is the RDB column-format line
    raw = _csv(path, io.StringIO(body), sep="\t")
    raw.columns = [c.strip() for c in raw.columns]
    col = column or next((c for c in raw.columns[1:] if c.startswith("gage")), None)
    if col is None or col not in raw.columns:
        raise RainFileError(f"{path}: no rain column {column!r} (columns: {', '.join(raw.columns)})")
    idx = _times(raw[raw.columns[0]], "%Y/%m/%d %H:%M", path, 3)
    v = pd.to_numeric(raw[col].str.strip(), errors="coerce").to_numpy()
    v = np.where(v < 0, np.nan, v)  # -9 = missing
    s = pd.Series(v, index=idx, name="rain_in").dropna()
    return RainRecord(s, RainFormat.RDB, naive=True)
