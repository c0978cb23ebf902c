"""Solinst Levelogger files exported by Levelogger software: CSV exports, ``.xle`` XML
files and older ``.lev`` text files, read into columns of canonical readings.

The layouts, as Levelogger software writes them (read from real files, ``tests/contract/
testdata/exports/README.md``):

- **CSV, Levelogger 4 and later**: ``Serial_number:`` / ``<serial>`` / ``Project ID:`` /
  … / ``Location:`` / ``<location>``, then per channel its name (``LEVEL``) and ``UNIT: cm``
  (``Offset:``, ``Altitude:``, ``Density:`` may follow), then ``Date,Time,ms,LEVEL,
  TEMPERATURE`` and the records (``2017/05/03,13:00:00,0,1919.32,7.849``). With a computer
  whose decimal sign is a comma: ``;`` between fields and ``1919,32``.
- **CSV, older software (Levelogger Gold)**: ``Serial Number`` / tab ``<serial>`` /
  ``Location`` / …, channels with ``Unit`` on the next line, then ``,Date,Time,100
  ms,LEVEL,TEMPERATURE`` and numbered records (``1,2017-05-02,13:00:00,0,923.5610,8.936``).
- **XLE**: ``<Body_xle>`` with ``Instrument_info`` (``Serial_number``),
  ``Instrument_info_data_header`` (``Location``), ``Ch<n>_data_header`` (``Identification``,
  ``Unit``) and ``<Log>`` elements (``Date``, ``Time``, ``ms``, ``ch1``…).
- **LEV** (Levelogger 3 and earlier): ``Data file for DataLogger.``, ``[Instrument info]``
  and ``[Channel n]`` sections of ``key = value`` lines, ``[Data]``, the number of records,
  records separated by spaces, and ``END OF DATA FILE OF DATALOGGER FOR WINDOWS`` (reported
  as a line after the data; a record count that differs from the records read is reported).

``LEVEL`` in a length unit (m, cm, ft) is a level; ``LEVEL`` in kPa, psi or mbar is a
pressure (a Barologger, or a logger set to pressure units), which ms4watch does not store:
the column is skipped with that reason; so is the ``LEVEL`` of an ``.xle`` whose model is
``M1.5`` (Solinst's Barologger), whatever its unit. Older CSV exports without a ``Unit`` line
take the unit of the channel's ``Offset`` or ``Range`` (``500.00 cm``); the Solinst app's
``.xle`` writes dates as ``2020_01_04``; decimal commas are read in both layouts. ``TEMPERATURE`` in °C or °F is a temperature;
``CONDUCTIVITY`` in mS/cm or µS/cm a conductivity. Neither layout names the clock's zone:
a Levelogger's clock is set from the computer when it is started and does not change for
daylight saving, so without ``tz`` the offset of the default zone at the first record is
held (:func:`.loggertext.clock_zone`).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import timedelta, tzinfo
from pathlib import Path

from .errors import ConfigError
from .loggerfiles import LoggerFile, quantity_of
from .loggertext import Spec, clock_zone, decode, local_times, number, read_columns, records, split_rows, steps, to_utc
from .units import Quantity

__all__ = ["looks_like_solinst", "read_solinst"]

_PRESSURE = ("kpa", "psi", "mbar", "bar", "cmh2o", "mh2o", "inhg", "mmhg")


def looks_like_solinst(head: str) -> bool:
    h = head.lstrip("\ufeff")
    return h.startswith(("Serial_number:", "Serial Number", "Data file for DataLogger.")) or \
        (h.startswith("<?xml") and "<Body_xle>" in h)


def _classify(name: str, unit: str) -> tuple[Quantity, str] | None:
    u = unit.strip().replace("°", "deg ").replace("Deg ", "deg ").strip()
    key = u.lower().replace(" ", "")
    if name.upper().startswith("LEVEL") and key in _PRESSURE:
        return None
    if key in ("degc", "degf"):
        u = "degC" if key == "degc" else "degF"
    return quantity_of(name, u)


def _reason(name: str, unit: str) -> str | None:
    if name.upper().startswith("LEVEL") and unit.strip().lower().replace(" ", "") in _PRESSURE:
        return (f"LEVEL in {unit.strip()} is a pressure (a Barologger, or a logger set to pressure units), not a "
                "water level: export it in m, cm or ft after barometric compensation")
    return None


def read_solinst(path: str | Path, tz: str | tzinfo | None = None, *, default_zone: str | tzinfo | None = None,
                 date_order: str | None = None) -> LoggerFile:
    """A Solinst CSV export or ``.xle`` file. ``tz``: the zone of the logger's clock; without
    it the offset of ``default_zone`` at the first record, held."""
    path = Path(path)
    src = str(path)
    text = decode(path)
    if text.lstrip("\ufeff").startswith("<?xml"):
        return _read_xle(path, text, tz, default_zone)
    if text.lstrip("\ufeff").startswith("Data file for DataLogger."):
        return _read_lev(path, text, tz, default_zone, date_order)
    lines = text.splitlines()
    h = next((k for k, ln in enumerate(lines) if re.match(r"^,?Date[,;\t]Time[,;\t]", ln)), None)
    if not looks_like_solinst(text[:200]) or h is None:
        raise ConfigError(src, [(h + 1 if h is not None else 1, "", "not a Solinst export: \"Serial_number:\", then "
                                                                    "a header \"Date,Time,ms,LEVEL,…\" expected")])
    delimiter = lines[h][lines[h].index("Date") + 4]
    rows = split_rows(text, delimiter, src)
    h = next((k for k, r in enumerate(rows) if [c.strip() for c in r[:3]][-3:] in (["", "Date", "Time"], ["Date", "Time"])
              or [c.strip() for c in r[:2]] == ["Date", "Time"]), -1)
    if h < 0:
        raise ConfigError(src, [(None, "", "not a Solinst export: no header \"Date,Time,…\" (a quote left open?)")])
    header = [c.strip() for c in rows[h]]
    di = header.index("Date")
    meta = [delimiter.join(r).strip() for r in rows[:h]]
    serial = _after(meta, ("Serial_number:", "Serial Number"))
    location = _after(meta, ("Location:", "Location"))
    units = _units(meta)
    notes: list[str] = []
    body = records(rows, h + 1, len(header), di, src, text.endswith(("\n", "\r")), notes)
    line_nos = [line for line, _ in body]
    local, order = local_times([f"{r[di]} {r[di + 1] if di + 1 < len(r) else ''}" for _, r in body], line_nos, src,
                               "Date", order=date_order, header="")
    ms_i = next((j for j, c in enumerate(header) if c.lower() in ("ms", "100 ms")), None)
    if ms_i is not None:
        scale = 100 if header[ms_i].lower() == "100 ms" else 1
        for k, (line, r) in enumerate(body):
            try:
                v = number(r[ms_i], delimiter != ",") if ms_i < len(r) else 0.0
                if not 0 <= v * scale < 1000 and v == v:
                    raise ValueError
            except ValueError:
                raise ConfigError(src, [(line, header[ms_i], f"not a number of milliseconds: {r[ms_i]!r}")]) from None
            if v == v and v:
                local[k] += timedelta(milliseconds=v * scale)
    tzi, source = clock_zone(tz, default_zone, local[0] if local else None, src, "a Solinst export")
    t_ns = to_utc(local, tzi, notes)
    notes += steps(t_ns, line_nos)
    specs = []
    skipped: list[tuple[str, str]] = []
    for j, name in enumerate(header):
        if j <= di + 1 or j == ms_i or not name:
            continue
        m = re.match(r"^(?P<name>.*?)\s*\((?P<unit>[^()]*)\)\s*$", name)      # "CONDUCTIVITY (mS/cm)"
        nm, unit = (m["name"], m["unit"]) if m else (name, units.get(name.upper(), ""))
        why = _reason(nm, unit)
        if why:
            skipped.append((nm, why))
            continue
        specs.append(Spec(j, nm, unit, serial or "", nm.capitalize()))
    decimal_comma = delimiter != ","
    out = LoggerFile(path, "solinst", location, serial, tzi, source)
    out.date_order = order
    out.skipped = skipped
    out.columns = read_columns(specs, body, t_ns, src, decimal_comma, out.skipped, _classify)
    out.notes = notes
    return out


def _after(meta: list[str], labels: tuple[str, ...]) -> str | None:
    """The line after the first of ``labels`` (the value of a ``Serial_number:`` block)."""
    for k, ln in enumerate(meta):
        if ln in labels and k + 1 < len(meta):
            v = meta[k + 1].strip()
            return v or None
    return None


def _units(meta: list[str]) -> dict[str, str]:
    """Channel name → unit, from ``LEVEL`` / ``UNIT: cm`` (or ``Unit`` / ``cm``) blocks."""
    out: dict[str, str] = {}
    of_range: dict[str, str] = {}      # older exports without a Unit line: the unit of the channel's Offset or Range
    channel = None
    for k, ln in enumerate(meta):
        if re.fullmatch(r"[A-Z][A-Z ]+", ln) and not ln.startswith(("UNIT", "OFFSET")):
            channel = ln
        elif channel and ln.upper().startswith("UNIT:"):
            out.setdefault(channel, ln.split(":", 1)[1].strip())
        elif channel and ln.upper() == "UNIT" and k + 1 < len(meta):
            out.setdefault(channel, meta[k + 1].strip())
        elif channel and ln.lower() in ("offset", "range") and k + 1 < len(meta):
            m = re.fullmatch(r"-?[\d.,]+\s+(\S+)", meta[k + 1].strip())
            if m:
                of_range.setdefault(channel, m[1])
        elif ln.lower() == "identification" and k + 1 < len(meta):
            channel = meta[k + 1].strip().upper()
    return {**of_range, **out}


def _read_xle(path: Path, text: str, tz: str | tzinfo | None, default_zone: str | tzinfo | None) -> LoggerFile:
    src = str(path)
    if re.search(r"<!(?:DOCTYPE|ENTITY)", text):
        raise ConfigError(src, [(None, "", "an .xle file with a DOCTYPE or ENTITY declaration: not read")])
    body_text = re.sub(r"^\ufeff?<\?xml[^>]*\?>", "", text)
    try:
        root = ET.fromstring(body_text)
    except ET.ParseError as e:
        raise ConfigError(src, [(e.position[0] + (1 if body_text is not text else 0), "",
                                 f"not well-formed XML (a download cut short?): {e}")]) from None
    if root.tag != "Body_xle":
        raise ConfigError(src, [(1, "", f"not a Solinst .xle file: its root is <{root.tag}>, <Body_xle> expected")])
    serial = (root.findtext("Instrument_info/Serial_number") or "").strip() or None
    location = (root.findtext("Instrument_info_data_header/Location") or "").strip() or None
    channels = []
    for k in range(1, 10):
        ch = root.find(f"Ch{k}_data_header")
        if ch is None:
            break
        channels.append(((ch.findtext("Identification") or "").strip(), (ch.findtext("Unit") or "").strip()))
    logs = root.findall("Data/Log")
    # the Solinst app writes 2020_01_04 (year, month, day)
    texts = [f"{(lg.findtext('Date') or '').strip().replace('_', '/')} {(lg.findtext('Time') or '').strip()}"
             for lg in logs]
    ids = [int(lg.get("id", "0") or 0) for lg in logs]
    local, order = local_times(texts, ids, src, "Date", order=None, header="")
    for k, lg in enumerate(logs):
        ms = (lg.findtext("ms") or "0").strip()
        if ms not in ("", "0"):
            try:
                v = float(ms)
                if not 0 <= v < 1000:
                    raise ValueError
            except ValueError:
                raise ConfigError(src, [(None, "ms", f"log {ids[k]}: not a number of milliseconds: {ms!r}")]) from None
            local[k] += timedelta(milliseconds=v)
    tzi, source = clock_zone(tz, default_zone, local[0] if local else None, src, "a Solinst .xle file")
    notes: list[str] = []
    t_ns = to_utc(local, tzi, notes)
    notes += [n.replace("line", "log") for n in steps(t_ns, ids)]
    rows = [(i, [(lg.findtext(f"ch{k + 1}") or "").strip() for k in range(len(channels))]) for i, lg in zip(ids, logs)]
    specs, skipped = [], []
    model = (root.findtext("Instrument_info/Model_number") or "").strip().upper()
    for k, (name, unit) in enumerate(channels):
        why = _reason(name, unit)
        if model == "M1.5" and name.upper().startswith("LEVEL"):      # Solinst's model number of a Barologger
            why = ("a Barologger (model M1.5) measures air pressure, not a water level: use it to compensate a "
                   "Levelogger, then export the compensated level")
        if why:
            skipped.append((name, why))
            continue
        specs.append(Spec(k, name, unit, serial or "", name.capitalize()))
    out = LoggerFile(path, "solinst", location, serial, tzi, source)
    out.date_order = order
    out.skipped = skipped
    try:
        decimal_comma = any(re.fullmatch(r"-?\d+,\d+", c) for _, r in rows[:20] for c in r)
        out.columns = read_columns(specs, rows, t_ns, src, decimal_comma, out.skipped, _classify)
    except ConfigError as e:
        raise ConfigError(src, [(None, "", str(e).split(": ", 1)[-1].replace(f"{src}:", "log "))]) from None
    out.notes = notes
    return out


def _read_lev(path: Path, text: str, tz: str | tzinfo | None, default_zone: str | tzinfo | None,
              date_order: str | None) -> LoggerFile:
    """A ``.lev`` file (Levelogger software 3 and earlier): ``[Instrument info]`` and
    ``[Channel n]`` sections of ``key = value`` lines, then ``[Data]``, the number of records,
    the records (date, time, one value per channel, separated by spaces) and a closing line
    ``END OF DATA FILE OF DATALOGGER FOR WINDOWS``."""
    src = str(path)
    lines = text.splitlines()
    sections: dict[str, dict[str, str]] = {}
    current = ""
    data_at = None
    for k, ln in enumerate(lines):
        m = re.fullmatch(r"\s*\[(.+)\]\s*", ln)
        if m:
            current = m[1].strip().lower()
            if current == "data":
                data_at = k
                break
            sections[current] = {}
            continue
        kv = re.fullmatch(r"\s*([^=]*?)\s*=(.*)", ln)
        if kv and current and kv[1]:
            sections[current].setdefault(kv[1].lower(), kv[2].strip())
    if data_at is None:
        raise ConfigError(src, [(None, "", "not a Solinst .lev file: no [Data] section")])
    info = sections.get("instrument info from data header") or sections.get("instrument info", {})
    digits = re.findall(r"\d+", info.get("serial number", ""))
    serial = max(digits, key=len) if digits else None
    channels = []
    for n in range(1, 10):
        ch = sections.get(f"channel {n} from data header") or sections.get(f"channel {n}")
        if ch is None:
            break
        unit = ch.get("unit", "")
        if not unit:
            m = re.fullmatch(r"-?[\d.,]+\s+(\S+)", ch.get("range") or ch.get("reference") or ch.get("offset") or "")
            unit = m[1] if m else ""
        channels.append((ch.get("identification", f"CH{n}").strip(), unit))
    declared = lines[data_at + 1].strip() if data_at + 1 < len(lines) else ""
    rows = [ln.split() for ln in lines]
    notes: list[str] = []
    body = records(rows, data_at + 2, 2 + len(channels), 0, src, text.endswith(("\n", "\r")), notes)
    line_nos = [line for line, _ in body]
    local, order = local_times([f"{r[0]} {r[1] if len(r) > 1 else ''}" for _, r in body], line_nos, src, "Date",
                               order=date_order, header="")
    tzi, source = clock_zone(tz, default_zone, local[0] if local else None, src, "a Solinst .lev file")
    t_ns = to_utc(local, tzi, notes)
    if declared.isdigit() and int(declared) != len(body):
        notes.append(f"the file says {declared} records; {len(body)} read")
    notes += steps(t_ns, line_nos)
    specs, skipped = [], []
    for k, (name, unit) in enumerate(channels):
        why = _reason(name, unit)
        if why:
            skipped.append((name, why))
            continue
        specs.append(Spec(k + 2, name, unit, serial or "", name.capitalize()))
    out = LoggerFile(path, "solinst", info.get("location") or None, serial, tzi, source)
    out.date_order = order
    out.skipped = skipped
    out.columns = read_columns(specs, body, t_ns, src, False, out.skipped, _classify)
    out.notes = notes
    return out
