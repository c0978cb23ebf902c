"""YSI EXO sonde data exported by KorEXO ("KorEXO Measurement File Export" CSV), read into
columns of canonical readings.

The layout, as KorEXO writes it (read from real exports, ``tests/contract/testdata/exports/
README.md``): UTF-16 text with a byte-order mark and CRLF line ends; a ``sep=,`` line (the
separator), ``KorEXO MEASUREMENT DATA FILE EXPORT``, ``FILE CREATED:,<time>``, rows of each
column's ``MEAN VALUE:`` and ``STANDARD DEVIATION:`` and the ``SENSOR SERIAL NUMBER:`` of
each column (aligned with the header below), then the header ``Date (MM/DD/YYYY),Time
(HH:mm:ss),Time (Fract. Sec),Site Name,<parameter> <unit>,…`` and one row per sample.

- Parameters are named with their unit after a space (``Turbidity FNU``, ``Temp °C``,
  ``Depth m``, ``SpCond µS/cm``, ``Battery V``); the unit decides the conversion. FNU
  (ISO 7027) and NTU turbidity are stored as different sensors (``Turbidity FNU``).
  Columns that are none of ms4watch's quantities (ODO, pH, chlorophyll, pressure in psi a…)
  are listed as skipped, never guessed.
- Each sensor's serial number is kept with its column (``Column.serial``); the sonde's is
  the one its ``Battery V`` column carries (as USGS stglib's EXO reader takes it).
- The date order is the date column's header (``MM/DD/YYYY``); dates and times are in
  separate columns, fractions of a second in a third.
- Newer Kor software (as USGS stglib's EXO reader describes it) writes the headers in
  capitals (``TEMP °C``, ``TIME (HH:MM:SS.TTT)`` with AM/PM) and the newest row first:
  units are matched whatever their case, and rows that run backwards are read in time
  order (reported).
- The file does not name its clock's zone. The sonde's clock is set from the computer when
  it is deployed and does not change for daylight saving (the real export in the tests
  logs 01:00–01:55 once on the night clocks went back): without ``tz`` the offset the
  default zone had at the first sample is held (:func:`.loggertext.clock_zone`).
- The site is the ``Site Name`` column when every row names the same one (``<site>`` is
  KorEXO's empty placeholder).
- Older KOR software opens with a ``KOR Export File`` block (``Sonde ID`` with the sonde's
  model and serial number, a row per sensor) before the same data header, as USGS stglib's
  2018 EXO reader reads it: read alike, the sonde's serial number from ``Sonde ID``; its
  sensors' rows are not mapped to columns (not tested on a real export).
"""

from __future__ import annotations

import re
from datetime import timedelta, tzinfo
from pathlib import Path

from .errors import ConfigError
from .loggerfiles import LoggerFile
from .loggertext import Spec, clock_zone, decode, local_times, number, read_columns, records, split_rows, steps, to_utc

__all__ = ["read_korexo", "looks_like_korexo", "split_unit"]

_UNIT = re.compile(r"^(?P<name>.+?)\s+(?P<unit>°[CF]|[µμu]S/cm|mS/cm|FNU|NTU|FTU|m|cm|mm|ft|in|psi(?: [ag])?|kPa|"
                   r"mmHg|V|mV|mA|mg/L|[µμu]g/L|RFU|QSU|psu|ppt|%(?: \w+)?)$", re.I)
# units as newer Kor software writes them in capitals → as KorEXO writes them
_SPELLING = {u.lower(): u for u in ("°C", "°F", "µS/cm", "uS/cm", "mS/cm", "FNU", "NTU", "FTU", "m", "cm", "mm", "ft", "in",
                                    "psi", "psi a", "psi g", "kPa", "mmHg", "V", "mV", "mA", "mg/L", "µg/L", "ug/L", "RFU",
                                    "QSU", "psu", "ppt")}


def looks_like_korexo(head: str) -> bool:
    """The first lines of a KorEXO (or Kor) measurement file export, or of an older KOR
    software's ``KOR Export File``."""
    return bool(re.search(r"^\s*(?:sep=.\s*)?\r?\n?\s*Kor(?:EXO)? MEASUREMENT DATA FILE EXPORT", head, re.I | re.M)) \
        or head.lstrip("\ufeff").startswith("KOR Export File")


def split_unit(header: str) -> tuple[str, str]:
    """``"Turbidity FNU"`` → ``("Turbidity", "FNU")``; a name without a unit → ``(name, "")``."""
    h = header.strip()
    if h.upper() in ("FNU", "NTU"):            # the handheld's export names the turbidity column by its unit
        return "Turbidity", h.upper()
    m = _UNIT.match(h)
    if not m:
        return h, ""
    return m["name"].strip(), _SPELLING.get(m["unit"].lower().replace("μ", "µ"), m["unit"])


def read_korexo(path: str | Path, tz: str | tzinfo | None = None, *, default_zone: str | tzinfo | None = None,
                date_order: str | None = None) -> LoggerFile:
    """A KorEXO CSV export. ``tz``: the zone of the sonde's clock; without it the offset of
    ``default_zone`` at the first sample, held."""
    path = Path(path)
    src = str(path)
    text = decode(path)
    first = text.split("\n", 1)[0].strip()
    delimiter = first[4:5] if first.lower().startswith("sep=") and len(first) > 4 else ","
    rows = split_rows(text, delimiter, src)
    h = next((k for k, r in enumerate(rows) if _is_header(r)), None)
    if not looks_like_korexo(text[:2000]) or h is None:
        raise ConfigError(src, [(h + 1 if h is not None else 1, "", "not a KorEXO export: \"KorEXO MEASUREMENT DATA "
                                "FILE EXPORT\", then a header with Date and Time columns, expected")])
    header = [c.strip() for c in rows[h]]
    low = [c.lower() for c in header]
    di = next(j for j, c in enumerate(low) if c.startswith("date"))
    ti = next(j for j, c in enumerate(low) if c.startswith("time") and "fract" not in c)
    fi = next((j for j, c in enumerate(low) if c.startswith("time") and "fract" in c), None)
    si = next((j for j, c in enumerate(low) if c == "site name"), None)
    serials = next((r for r in rows[:h] if any(c.strip().upper() == "SENSOR SERIAL NUMBER:" for c in r)), [])
    status = {di, ti, fi, si} | {j for j, c in enumerate(low) if c in ("file name", "user id", "fault code")}
    notes: list[str] = []
    body = records(rows, h + 1, len(header), di, src, text.endswith(("\n", "\r")), notes)
    lines = [line for line, _ in body]
    texts = [f"{r[di].strip()} {r[ti].strip() if ti < len(r) else ''}" for _, r in body]
    local, order = local_times(texts, lines, src, header[di], order=date_order, header=header[di])
    decimal_comma = delimiter != "," and any(re.fullmatch(r"\s*-?\d+,\d+\s*", c) for _, r in body[:20] for c in r)
    if fi is not None:
        for k, (line, r) in enumerate(body):
            try:
                frac = number(r[fi], decimal_comma) if fi < len(r) else 0.0
                if not 0 <= frac < 1 and frac == frac:
                    raise ValueError
            except ValueError:
                raise ConfigError(src, [(line, header[fi], f"not a fraction of a second: {r[fi]!r}")]) from None
            if frac == frac and frac:
                local[k] += timedelta(seconds=frac)
    if len(local) > 1 and all(a >= b for a, b in zip(local, local[1:])) and local[0] > local[-1]:
        body, local, lines = body[::-1], local[::-1], lines[::-1]      # newer Kor software: the newest row first
        notes.append("the rows run from the newest to the oldest: read in time order")
    tzi, source = clock_zone(tz, default_zone, local[0] if local else None, src, "a KorEXO export")
    t_ns = to_utc(local, tzi, notes)
    notes += steps(t_ns, lines)
    sites = {r[si].strip() for _, r in body if si is not None and si < len(r)} - {"", "<site>"}
    if len(sites) > 1:
        notes.append(f"the Site Name column names {len(sites)} sites ({', '.join(sorted(sites)[:3])}…): give --station")
    specs = []
    for j, col in enumerate(header):
        if j in status or not col:
            continue
        name, unit = split_unit(col)
        serial = serials[j].strip() if j < len(serials) else ""
        specs.append(Spec(j, name, unit, serial, name))
    # the sonde's serial number: the one its battery column carries (the sonde measures its own battery), or
    # the older KOR Export File's "Sonde ID" (model and serial number)
    sonde = next((sp.serial for sp in specs if sp.name.lower() == "battery" and sp.serial), None)
    sonde_id = next((r[1].split()[-1] for r in rows[:h] if len(r) > 1 and r[0].strip() == "Sonde ID" and r[1].split()),
                    None)
    sonde = sonde or sonde_id
    out = LoggerFile(path, "korexo", next(iter(sites)) if len(sites) == 1 else None, sonde, tzi, source)
    out.date_order = order
    out.columns = read_columns(specs, body, t_ns, src, decimal_comma, out.skipped)
    out.notes = notes
    return out


def _is_header(row: list[str]) -> bool:
    low = [c.strip().lower() for c in row]
    return any(c.startswith("date") for c in low) and any(c.startswith("time") and "fract" not in c for c in low)

