"""In-Situ data exported by VuSitu (the phone app of the Aqua TROLL, Level TROLL and Rugged
TROLL instruments; CSV or its HTML report) and as CSV by HydroVu (In-Situ's web service), read
into columns of canonical readings.

The layout, as VuSitu writes it (read from real exports, ``tests/contract/testdata/exports/
README.md``): UTF-8, CRLF, every field quoted; blocks of ``"Key = Value"`` lines, each under
its title — ``Location Properties`` (``Location Name``), ``Report Properties`` (``Start
Time``, ``Time Offset = -05:00:00``, ``Duration``, ``Readings``) and one ``Instrument
Properties`` block per instrument (``Device Model``, ``Device SN``) — then the header
``"Date Time","<parameter> (<unit>) (<sensor serial>)",…`` and one row per reading
(``"2020-01-24 15:05:14"``; empty where a sensor has no value). HydroVu's export has the same
skeleton: a ``Location Properties`` block (``Location Name``, ``Location ID``, ``Latitude``,
``Longitude``) and ``Time shown in UTC`` instead of the report's offset, and columns without
serial numbers (the layout of a real HydroVu export; tested on a file written to it).

- The times are in the offset the file states (``Time Offset``, held for the whole file: the
  phone's offset when the report was made) or in UTC (``Time shown in UTC``); ``tz``
  overrides both (reported). A file that states neither, or another zone (HydroVu's "time
  shown in telemetry device's time zone"), needs ``tz``.
- Parameters are named ``<name> (<unit>)``: ``Depth (ft)`` is a level, ``Turbidity (NTU)``
  and ``(FNU)`` different sensors, ``Actual`` and ``Specific Conductivity`` each its own;
  pressures, dissolved oxygen, salinity, positions and the ``Marked`` column are listed as
  skipped with the reason. ``Depth to Water`` (measured down from the top of a well: it
  falls as the water rises) and an ``Elevation`` (above a datum) are skipped, not read as a
  level.
- Each column's sensor serial number (the last parenthesis) is kept with it. A parameter
  measured by two instruments (``Temperature`` of the sonde in the water and of the
  Bluetooth device in the air) is two sensors, each named with its serial number
  (``Temperature_676038``). The instruments are listed in the notes; the file's serial
  number is the first one's.
- ``Location Name = Device Location`` (every real export in the tests' sources: readings taken
  with no site chosen, it seems) names no station: ``--station`` says which.
- VuSitu's report states how many readings it holds (``Readings = 26``): a file holding
  another number (cut short, rows deleted) is reported.
- VuSitu shares a report as HTML by default: the same rows in ``<table id="isi-report">``
  (told by its ``isi-report-*`` meta tags), read alike; errors name the line the row starts
  on, and a table cut off before ``</table>`` loses its last row, reported.
- Files re-saved by Excel (a byte-order mark, empty fields after the properties, dates
  ``2019/10/12 15:16:08.000``, no final line break), fields separated by ``;`` with decimal
  commas, and separate ``Date`` and ``Time`` columns are read alike.
"""

from __future__ import annotations

import re
from datetime import timedelta, timezone, tzinfo
from html.parser import HTMLParser
from pathlib import Path

from .errors import ConfigError
from .loggerfiles import LoggerFile, zone
from .loggertext import Spec, decode, local_times, read_columns, records, split_rows, steps, to_utc

__all__ = ["looks_like_vusitu", "read_vusitu"]

_NO_LOCATION = "Device Location"
_HEADER = re.compile(r'^\ufeff?"?Date(?: Time)?"?([,;\t])', re.M)
_OFFSET = re.compile(r"^([+-])(\d{1,2}):(\d\d)(?::(\d\d))?$")
_COLUMN = re.compile(r"^(?P<name>.*?)\s*(?:\((?P<unit>[^()]*)\))?\s*(?:\((?P<sn>\d{3,})\))?\s*$")


def looks_like_vusitu(head: str) -> bool:
    """The first lines of a VuSitu or HydroVu CSV export (``Location Properties``, then a
    ``Date Time`` header) or of VuSitu's HTML report (its ``isi-report`` meta tags)."""
    if re.search(r'<meta name="isi-report-(?:type|id)"', head):
        return True
    first = next((ln for ln in head.lstrip("\ufeff").splitlines() if ln.strip(' ",;\t')), "")
    return first.strip().strip(",;\t").strip('"') == "Location Properties" and bool(_HEADER.search(head))


def read_vusitu(path: str | Path, tz: str | tzinfo | None = None, *, date_order: str | None = None) -> LoggerFile:
    """A VuSitu or HydroVu CSV export, or VuSitu's HTML report, its times in the offset it
    states (``tz`` overrides it, and is needed when it states none)."""
    path = Path(path)
    src = str(path)
    text = decode(path)
    if not looks_like_vusitu(text[:8192]):
        raise ConfigError(src, [(1, "", 'not a VuSitu or HydroVu export: "Location Properties", then a header "Date '
                                        'Time",<parameter> (<unit>),… expected')])
    if re.search(r'<meta name="isi-report-(?:type|id)"', text[:8192]):
        rows, complete = _html_rows(text)
        delimiter = ","
    else:
        m = _HEADER.search(text)
        delimiter = m.group(1) if m else ","
        rows, complete = split_rows(text, delimiter, src), text.endswith(("\n", "\r"))
    h = next((k for k, r in enumerate(rows) if len(r) > 1 and (r[0].strip().lstrip("\ufeff") == "Date Time" or
                                                               (r[0].strip() == "Date" and r[1].strip() == "Time"))),
             None)
    if h is None:
        raise ConfigError(src, [(None, "", 'not a VuSitu or HydroVu export: no header "Date Time",<parameter> '
                                           '(<unit>),… (a quote left open?)')])
    props: dict[str, str] = {}
    instruments: list[tuple[str, str]] = []          # (model, serial)
    zone_line: tuple[int, str] | None = None          # (line, text) of the offset the file states
    for k, row in enumerate(rows[:h]):
        cell = (row[0] if row else "").strip().lstrip("\ufeff")
        if cell.startswith(("Time shown in", "Time Offset")) or re.match(r"(?i)(?:time ?zone|utc offset)\b", cell):
            zone_line = (k + 1, cell)         # what the file says of its zone: read below, or refused naming it
        key, eq, value = cell.partition(" = ")
        if not eq:
            continue
        key, value = key.strip(), value.strip()
        if key == "Device Model":
            instruments.append((value, ""))
        elif key == "Device SN" and instruments and not instruments[-1][1]:
            instruments[-1] = (instruments[-1][0], value)
        else:
            props.setdefault(key, value)
    header = [c.strip() for c in rows[h]]
    while header and not header[-1]:
        header.pop()
    split = len(header) > 2 and header[0] == "Date" and header[1] == "Time"
    notes: list[str] = []
    tzi, source = _zone(tz, zone_line, src, notes)
    notes_body: list[str] = []
    body = records(rows, h + 1, len(header), 0, src, complete, notes_body)
    if split:
        body = [(line, [f"{r[0].strip()} {r[1].strip() if len(r) > 1 else ''}".strip()] + r[2:]) for line, r in body]
        header = ["Date Time"] + header[2:]
    line_nos = [line for line, _ in body]
    local, order = local_times([r[0] for _, r in body], line_nos, src, "Date Time", order=date_order, header="")
    t_ns = to_utc(local, tzi, notes)
    decimal_comma = delimiter != "," and any(re.fullmatch(r"\s*-?\d+,\d+\s*", c) for _, r in body[:20] for c in r[1:])
    if instruments:
        notes.insert(0, "instruments: " + ", ".join(f"{m} S/N {s}" if s else m for m, s in instruments))
    notes += notes_body + steps(t_ns, line_nos)
    said = props.get("Readings", "")
    if said.isdigit() and int(said) != len(body):
        notes.append(f"the report says {said} readings, the file holds {len(body)} (cut short or edited?)")
    parsed = []
    for j, col in enumerate(header):
        if j == 0 or not col:
            continue
        m = _COLUMN.match(col)
        name, unit, serial = (m["name"], m["unit"] or "", m["sn"] or "") if m else (col, "", "")
        parsed.append((j, name.strip(), unit.strip(), serial))
    names = [name for _, name, _, _ in parsed]
    specs = [Spec(j, name, unit, serial, f"{name}_{serial}" if serial and names.count(name) > 1 else name)
             for j, name, unit, serial in parsed]
    skipped = [(f"{s.name} {s.unit}".strip(), why) for s in specs if (why := _not_a_level(s.name))]
    specs = [s for s in specs if not _not_a_level(s.name)]
    location = props.get("Location Name") or None
    serial = next((s for _, s in instruments if s), None)
    out = LoggerFile(path, "vusitu", None if location == _NO_LOCATION else location, serial, tzi, source)
    out.date_order = order
    out.skipped = skipped
    out.columns = read_columns(specs, body, t_ns, src, decimal_comma, out.skipped)
    out.notes = notes
    return out


def _not_a_level(name: str) -> str:
    """Why a column named like a level is not one ("" when it is, or is no level at all)."""
    low = name.lower()
    if "to water" in low:
        return "a depth to water, measured down from the top of a well: it falls as the water rises, not a level"
    if "elevation" in low:
        return "an elevation above a datum, not the depth of water at the station: export the depth"
    return ""


class _Table(HTMLParser):
    """The rows of VuSitu's HTML report (``<table id="isi-report">``): each ``<tr>``'s cells
    as text, with the line the row starts on; ``closed`` once the table ends."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[tuple[int, list[str]]] = []
        self.closed = False
        self._inside = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and dict(attrs).get("id") == "isi-report":
            self._inside = True
        elif self._inside and tag == "tr":
            self.rows.append((self.getpos()[0], []))
        elif self._inside and tag == "td" and self.rows:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.rows[-1][1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table" and self._inside:
            self._inside, self.closed = False, True

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _html_rows(text: str) -> tuple[list[list[str]], bool]:
    """The report's rows placed at the lines they start on (other lines empty, so errors name
    the file's line), and whether the table is complete (a cut download is not)."""
    table = _Table()
    table.feed(text)
    table.close()
    rows: list[list[str]] = [[] for _ in range(text.count("\n") + 1)]
    if len({line for line, _ in table.rows}) < len(table.rows):      # rows sharing a line: number them instead
        return [cells for _, cells in table.rows], table.closed
    for line, cells in table.rows:
        rows[line - 1] = cells
    return rows, table.closed


def _zone(tz: str | tzinfo | None, stated: tuple[int, str] | None, src: str, notes: list[str]) -> tuple[tzinfo, str]:
    """(zone, source): ``tz`` when given, else the offset the file states."""
    if tz is not None:
        if stated is not None:
            what = stated[1].split("=", 1)[1].strip() if "=" in stated[1] else stated[1].removeprefix("Time shown in ")
            notes.append(f"the file's offset is {what}; read in the zone given")
        return (zone(tz) if isinstance(tz, str) else tz), "given"
    if stated is None:
        raise ConfigError(src, [(None, "", 'the file says no time offset ("Time Offset = …" or "Time shown in UTC"): '
                                           "give its zone (--tz)")])
    line, cell = stated
    if cell.startswith("Time Offset") and "=" in cell:
        m = _OFFSET.match(cell.split("=", 1)[1].strip())
        if m:
            sign = -1 if m.group(1) == "-" else 1
            off = timedelta(hours=int(m.group(2)), minutes=int(m.group(3)), seconds=int(m.group(4) or 0))
            return timezone(sign * off), "header"
    elif cell.removeprefix("Time shown in").strip().upper() in ("UTC", "GMT"):
        return timezone.utc, "header"
    raise ConfigError(src, [(line, "", f'"{cell}": not a zone ms4watch can read: give it (--tz)')])

