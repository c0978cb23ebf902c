"""What every logger export reader needs: the file's text whatever the software wrote (KorEXO:
UTF-16 with a byte-order mark; Win-Situ and Solinst: Windows-1252; others UTF-8, with or
without a mark), its records told from its header and footer, its columns read into
:class:`~.loggerfiles.Column` s, and the zone of a clock the file does not name.

Rules shared by the readers (:mod:`.korexo`, :mod:`.winsitu`, :mod:`.solinst`):

- a record is a row whose date cell looks like a date; blank rows between records are
  skipped; rows after the records that are not records (a footer, a log's event notes) are
  left out and reported; a row that is not a record with records after it refuses the file;
- a record with fewer fields than the header names is read with the missing fields as
  missing values and reported; the last one, in a file that does not end with a line break,
  is a download cut short: left out and reported;
- a cell that is not a number refuses the file, naming the file, line and column;
- steps between times longer than the usual logging interval (gaps) and times that repeat
  or go back are listed (at most ten each).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Callable

import numpy as np

from .errors import ConfigError
from .loggerdates import DateOrderError, parse_times
from .loggerfiles import Column, _localise, method_named, quantity_of, skip_reason, zone
from .units import Quantity

__all__ = ["Spec", "clock_zone", "decode", "head", "local_times", "number", "read_columns", "records", "split_rows", "steps",
           "to_utc"]

_DATE = re.compile(r"^\s*\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}")


def decode(path: Path) -> str:
    """The text of ``path``: UTF-16 or UTF-8 as its byte-order mark says, else UTF-8, else
    Windows-1252 (``°`` as the byte 0xB0). ConfigError when it cannot be read."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ConfigError(str(path), [(None, "", f"cannot read: {e.strerror}")]) from None
    return _text(raw, str(path))


def head(path: Path, size: int = 8192) -> str:
    """The first ``size`` bytes of ``path`` as text (for telling formats apart); "" when unreadable."""
    try:
        with open(path, "rb") as f:
            raw = f.read(size)
    except OSError:
        return ""
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff") and len(raw) % 2:
        raw = raw[:-1]
    try:
        return _text(raw, str(path))
    except ConfigError:
        return ""


def _text(raw: bytes, src: str) -> str:
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError as e:
            raise ConfigError(src, [(None, "", f"not UTF-16 text as its byte-order mark says: {e.reason} at byte "
                                               f"{e.start}")]) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def split_rows(text: str, delimiter: str, src: str) -> list[list[str]]:
    """The file's rows of fields (``delimiter`` between them; quotes as CSV has them)."""
    if delimiter not in (",", ";", "\t", "|"):
        raise ConfigError(src, [(1, "", f"fields separated by {delimiter!r}: not a separator ms4watch reads "
                                        "(',', ';', tab or '|')")])
    try:
        return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as e:
        raise ConfigError(src, [(None, "", f"not CSV ms4watch can split: {e}")]) from None


def number(text: str, decimal_comma: bool = False) -> float:
    t = text.strip()
    if decimal_comma:
        t = t.replace(",", ".")
    if t == "" or t.upper() in ("NAN", "NA", "N/A", "-NAN"):
        return math.nan
    return float(t)


@dataclass(frozen=True)
class Spec:
    """One column of a file: where it is (``index``), its name and unit as written, the
    serial number of its sensor when the file gives one, and the sensor id to store it under."""

    index: int
    name: str
    unit: str
    serial: str = ""
    sensor: str = ""


def records(rows: list[list[str]], start: int, width: int, date_cell: int, src: str, ends_with_newline: bool,
            notes: list[str]) -> list[tuple[int, list[str]]]:
    """``(line, row)`` of the records in ``rows[start:]`` (line numbers from 1); ``width``
    fields expected, the date in ``rows[k][date_cell]``. See the module's rules."""
    body: list[tuple[int, list[str]]] = []
    footer: list[int] = []
    short: list[int] = []
    for k in range(start, len(rows)):
        row, line = rows[k], k + 1
        if not any(c.strip() for c in row):
            continue
        if len(row) > date_cell and _DATE.match(row[date_cell]):
            if footer:
                bad = rows[footer[0] - 1]
                raise ConfigError(src, [(footer[0], "", f"not a record ({','.join(bad)[:60]!r}), and records follow "
                                                        f"it (line {line})")])
            body.append((line, row))
            continue
        if body:
            footer.append(line)
            continue
        raise ConfigError(src, [(line, "", f"not a record (no date in field {date_cell + 1}): "
                                           f"{','.join(row)[:60]!r}")])
    if footer:
        last = footer[-1]
        notes.append(f"lines {footer[0]}–{last}: not records (after the data): left out" if last != footer[0]
                     else f"line {last}: not a record (after the data): left out")
    if body and not footer and not ends_with_newline and len(body[-1][1]) < width:
        notes.append(f"line {body[-1][0]}: the last line is cut short (a download interrupted?): left out")
        body = body[:-1]
    for line, row in body:
        if len(row) < width:
            short.append(line)
    if short:
        notes.append(f"{len(short)} row{'s' if len(short) > 1 else ''} with fewer fields than the header (line {short[0]}"
                     + (f", … {short[-1]}" if len(short) > 1 else "") + "): the missing fields read as missing values")
    return body


def local_times(texts: list[str], lines: list[int], src: str, column: str, *, order: str | None,
                header: str) -> tuple[list[datetime], str]:
    """Naive times of ``texts`` (:func:`~.loggerdates.parse_times`), errors naming the line."""
    try:
        return parse_times(texts, order=order, header=header)
    except DateOrderError as e:
        raise ConfigError(src, [(lines[e.index] if lines else None, column, str(e))]) from None


def clock_zone(tz: str | tzinfo | None, default_zone: str | tzinfo | None, first: datetime | None,
               src: str, what: str) -> tuple[tzinfo, str]:
    """(zone, source) of a logger clock the file does not name: ``tz`` when given ("given");
    else the offset ``default_zone`` had at the file's first time, held all through ("held":
    the instrument's clock is set from a computer when it is launched and does not change for
    daylight saving); else ConfigError asking for --tz."""
    if tz is not None:
        return (zone(tz) if isinstance(tz, str) else tz), "given"
    if default_zone is None:
        raise ConfigError(src, [(None, "", f"{what} does not say its clock's time zone: give it (--tz)")])
    zi = zone(default_zone) if isinstance(default_zone, str) else default_zone
    if first is None:                 # no records: nothing to read in it
        return zi, "held"
    off = first.replace(tzinfo=zi).utcoffset() or timedelta(0)
    return timezone(off), "held"


def to_utc(local: list[datetime], tzi: tzinfo, notes: list[str]) -> np.ndarray:
    """UTC ns of wall-clock times in ``tzi`` (missing and repeated local hours reported)."""
    return np.array(_localise(local, tzi, notes), dtype=np.int64)


def steps(times_ns: np.ndarray, lines: list[int], limit: int = 10) -> list[str]:
    """Gaps (a step over 1.5 logging intervals) and times that repeat or go back, with lines."""
    if times_ns.size < 3:
        return []
    d = np.diff(times_ns)
    pos = d[d > 0]
    if pos.size == 0:
        return []
    vals, counts = np.unique(pos, return_counts=True)
    interval = int(vals[np.argmax(counts)])
    out: list[str] = []
    gaps = np.flatnonzero(d > interval * 1.5)
    back = np.flatnonzero(d <= 0)
    for k in gaps[:limit]:
        out.append(f"gap of {_span(int(d[k]))} before line {lines[k + 1]} (logging every {_span(interval)})")
    if gaps.size > limit:
        out.append(f"… and {gaps.size - limit} more gaps")
    for k in back[:limit]:
        out.append(f"line {lines[k + 1]}: the time " + ("repeats" if d[k] == 0 else f"goes back {_span(-int(d[k]))}"))
    if back.size > limit:
        out.append(f"… and {back.size - limit} more times that repeat or go back")
    return out


def _span(ns: int) -> str:
    """``4 d 3 h 10 min``: a span to the second, in its largest units."""
    s = ns // 1_000_000_000
    parts = [(s // 86400, "d"), (s % 86400 // 3600, "h"), (s % 3600 // 60, "min"), (s % 60, "s")]
    return " ".join(f"{n} {u}" for n, u in parts if n) or "0 s"


def read_columns(specs: list[Spec], body: list[tuple[int, list[str]]], t_ns: np.ndarray, src: str,
                 decimal_comma: bool, skipped: list[tuple[str, str]],
                 classify: Callable[[str, str], tuple[Quantity, str] | None] = quantity_of) -> list[Column]:
    """Columns of ``specs`` read from the records: those that are none of ours go to ``skipped``
    with the reason; a cell that is not a number refuses the file (file, line, column)."""
    out: list[Column] = []
    for s in specs:
        found = classify(s.name, s.unit)
        if found is None:
            skipped.append((_label(s), skip_reason(s.name, s.unit)))
            continue
        q, u = found
        vals = np.empty(len(body), dtype=np.float64)
        for k, (line, row) in enumerate(body):
            cell = row[s.index] if s.index < len(row) else ""
            try:
                vals[k] = number(cell, decimal_comma)
            except ValueError:
                raise ConfigError(src, [(line, _label(s), f"not a number: {cell.strip()!r}")]) from None
        ok = ~np.isnan(vals)
        out.append(Column(_label(s), q, u, "sample", t_ns[ok], vals[ok], method_named(s.sensor or s.name, q, u),
                          s.serial))
    return out


def _label(s: Spec) -> str:
    return f"{s.name} {s.unit}".strip() if s.unit and s.unit not in s.name else s.name

