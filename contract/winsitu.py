"""In-Situ Aqua TROLL / Level TROLL logs exported by Win-Situ 5 as CSV, read into columns of
canonical readings.

The layout, as Win-Situ writes it (read from real exports, ``tests/contract/testdata/
exports/README.md``): the computer's list separator between fields (``;`` with German
settings) and its date format (``23.05.2016 15:31:50``); report, device (``Site``,
``Serial Number``) and log properties; ``Log Notes``; ``Log Data:`` with the sensors and a
``Time Zone: <Windows zone name>`` line; then three header rows — ``Sensor: <name>``, ``SN#:
<serial>`` and ``Date and Time;Seconds;<parameter> (<unit>);…`` — and one row per sample,
its values padded with spaces.

- The times are the computer's wall clock in the zone named, with daylight saving (the real
  export in the tests steps from 01:50 to 03:05 on 30 March 2014 while its elapsed seconds
  step 900). Windows zone names ms4watch knows (:data:`WINDOWS_ZONES`, English names of the
  US zones and a few others) become IANA zones; any other name needs ``tz``. The
  ``Seconds`` column (elapsed time) checks the zone: where the times step otherwise than
  the seconds, the zone is wrong and the file is refused, naming the line.
- ``Turbidity (NTU)`` and ``(FNU)`` are different sensors; ``Pressure (PSI)`` and other
  columns that are none of ms4watch's quantities are listed as skipped with the reason.
- Each column's sensor serial number (``SN#``) is kept with it; the device's serial number
  and site come from ``Device Properties``.
"""

from __future__ import annotations

import re
from datetime import tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np

from .errors import ConfigError
from .loggerfiles import LoggerFile, zone
from .loggertext import Spec, decode, local_times, number, read_columns, records, split_rows, steps, to_utc

__all__ = ["WINDOWS_ZONES", "looks_like_winsitu", "read_winsitu"]

# Windows time zone names (standard and daylight, as Windows writes them in English) → IANA zones
WINDOWS_ZONES: dict[str, str] = {
    **{f"{w} {kind} Time": iana for w, iana in (
        ("Eastern", "America/New_York"), ("US Eastern", "America/Indiana/Indianapolis"),
        ("Central", "America/Chicago"), ("Mountain", "America/Denver"), ("US Mountain", "America/Phoenix"),
        ("Pacific", "America/Los_Angeles"), ("Atlantic", "America/Halifax"), ("Alaskan", "America/Anchorage"),
        ("Hawaiian", "Pacific/Honolulu"), ("GMT", "Europe/London"), ("W. Europe", "Europe/Berlin"),
        ("Central Europe", "Europe/Budapest"), ("Romance", "Europe/Paris"))
       for kind in ("Standard", "Daylight")},
    "Coordinated Universal Time": "UTC", "UTC": "UTC", "Greenwich Standard Time": "Atlantic/Reykjavik",
}


def looks_like_winsitu(head: str) -> bool:
    return bool(re.search(r"^Application:?[;,\t ]+WinSitu\.exe", head, re.M | re.I)) and "Log File Properties" in head


def read_winsitu(path: str | Path, tz: str | tzinfo | None = None, *, date_order: str | None = None) -> LoggerFile:
    """A Win-Situ 5 CSV export; the zone from its ``Time Zone:`` line (``tz`` overrides it,
    and is needed when the name is not one of :data:`WINDOWS_ZONES`)."""
    path = Path(path)
    src = str(path)
    text = decode(path)
    lines = text.splitlines()
    # the data's header, not the log notes' ("Date and Time;Note")
    h = next((k for k in range(len(lines) - 1, -1, -1) if lines[k].startswith("Date and Time")
              and len(lines[k]) > 13 and "seconds" in lines[k].lower()), None)
    if not looks_like_winsitu(text[:4000]) or h is None or h < 2:
        raise ConfigError(src, [(h + 1 if h else 1, "", "not a Win-Situ export: \"Application: WinSitu.exe\", "
                                                       "then a header row \"Date and Time;Seconds;…\" expected")])
    delimiter = lines[h][13]
    rows = split_rows(text, delimiter, src)
    h = next((k for k in range(len(rows) - 1, 1, -1) if rows[k] and rows[k][0].strip() == "Date and Time"
              and any(c.strip().lower() == "seconds" for c in rows[k])), -1)
    if h < 2:
        raise ConfigError(src, [(None, "", "not a Win-Situ export: no header row \"Date and Time;Seconds;…\" (a quote "
                                           "left open?)")])
    props = {r[0].strip().rstrip(":"): r[1].strip() for r in rows[:h] if len(r) > 1 and r[0].strip()}
    zone_line = next((k for k, ln in enumerate(lines[:h]) if ln.startswith("Time Zone:")), None)
    named = lines[zone_line].split(":", 1)[1].strip().strip(delimiter).strip() if zone_line is not None else ""
    notes: list[str] = []
    if tz is not None:
        tzi, source = (zone(tz) if isinstance(tz, str) else tz), "given"
        if named:
            notes.append(f"the file names its zone {named!r}; read in the zone given")
    else:
        iana = next((WINDOWS_ZONES[n.strip()] for n in named.split("/") if n.strip() in WINDOWS_ZONES), None)
        if iana is None:
            raise ConfigError(src, [(zone_line + 1 if zone_line is not None else h + 1, "Time Zone",
                                     f"the file's zone {named!r} is not one ms4watch knows: give its IANA name "
                                     "(--tz America/New_York, Europe/Berlin…)" if named else
                                     "the file names no time zone: give it (--tz)")])
        tzi, source = ZoneInfo(iana), "header"
    header = [c.strip() for c in rows[h]]
    sns = [c.strip() for c in rows[h - 1]]
    while header and not header[-1]:
        header.pop()
    notes_body: list[str] = []
    body = records(rows, h + 1, len(header), 0, src, text.endswith(("\n", "\r")), notes_body)
    line_nos = [line for line, _ in body]
    local, order = local_times([r[0] for _, r in body], line_nos, src, "Date and Time", order=date_order,
                               header="")
    t_ns = to_utc(local, tzi, notes)
    decimal_comma = delimiter != "," and any(re.fullmatch(r"\s*-?\d+,\d+\s*", c) for _, r in body[:20] for c in r[1:])
    secs_i = next((j for j, c in enumerate(header) if c.lower() == "seconds"), None)
    if secs_i is not None and body:
        _check_elapsed(t_ns, body, secs_i, tzi, src, decimal_comma)
    notes += notes_body + steps(t_ns, line_nos)
    specs = []
    for j, col in enumerate(header):
        if j == 0 or j == secs_i or not col:
            continue
        m = re.match(r"^(?P<name>.*?)\s*\((?P<unit>[^()]*)\)\s*$", col)
        name, unit = (m["name"], m["unit"]) if m else (col, "")
        serial = sns[j].split(":", 1)[1].strip() if j < len(sns) and ":" in sns[j] else ""
        specs.append(Spec(j, name, unit, serial, name))
    out = LoggerFile(path, "winsitu", props.get("Site") or None, props.get("Serial Number") or None, tzi, source)
    out.date_order = order
    out.columns = read_columns(specs, body, t_ns, src, decimal_comma, out.skipped)
    out.notes = notes
    return out


def _check_elapsed(t_ns: np.ndarray, body: list[tuple[int, list[str]]], j: int, tzi: tzinfo, src: str,
                   decimal_comma: bool) -> None:
    """Refuse when the times, read in ``tzi``, step otherwise than the elapsed seconds."""
    secs = []
    for line, r in body:
        try:
            secs.append(number(r[j], decimal_comma) if j < len(r) else float("nan"))
        except ValueError:
            raise ConfigError(src, [(line, "Seconds", f"not a number: {r[j].strip()!r}")]) from None
    s = np.array(secs)
    d_t = np.diff(t_ns) / 1e9
    d_s = np.diff(s)
    bad = np.flatnonzero(np.abs(d_t - d_s) > 1.0)
    if bad.size:
        k = int(bad[0])
        raise ConfigError(src, [(body[k + 1][0], "Date and Time",
                                 f"read in {tzi}, the time steps {d_t[k]:+.0f} s here but the elapsed seconds step "
                                 f"{d_s[k]:+.0f} s: the clock was not in {tzi} (daylight saving?); give its zone "
                                 "(--tz)")])
