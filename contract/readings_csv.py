"""The readings CSV used for replay and import: ``time,station,quantity,value,unit``.

``time`` is ISO 8601 with an offset; a rain row is the depth that fell in the interval
ending at ``time`` (a tip is one row). Values are converted to canonical units on read.
A bad row is reported with file, line and field and left out; the other rows are kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Callable, Iterable

import numpy as np
import pandas as pd

from .errors import ConfigError, UnitError
from .ids import _ID
from .units import CANONICAL, Quantity, converter

if TYPE_CHECKING:
    from pandas._libs.tslibs.nattype import NaTType   # pd.NaT's type, named only in pandas-stubs

COLUMNS = ["time", "station", "quantity", "value", "unit"]
_QUANTITIES = {q.value for q in Quantity}


@dataclass
class ReadResult:
    frame: pd.DataFrame                       # time (UTC), station, quantity, value (canonical), unit
    problems: list[tuple[int, str, str]] = field(default_factory=list)  # (line, field, message)


def read_readings_csv(path: str | Path | IO[str], *, strict: bool = False) -> ReadResult:
    """Read a readings CSV. With ``strict`` any bad row raises :class:`ConfigError`."""
    source = str(path) if not hasattr(path, "read") else getattr(path, "name", "<stream>")
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise ConfigError(source, [(None, "", f"cannot read CSV: {e}")]) from None
    missing = [c for c in COLUMNS if c not in raw.columns]
    if missing:
        raise ConfigError(source, [(1, ",".join(missing), f"missing column(s); header must be {','.join(COLUMNS)}")])
    problems: list[tuple[int, str, str]] = []
    lines = np.arange(len(raw)) + 2  # header is line 1
    bad = np.zeros(len(raw), dtype=bool)

    def flag(mask: np.ndarray, fld: str, msg_of: Callable[[int], str]) -> None:
        nonlocal bad
        for i in np.flatnonzero(mask & ~bad):
            problems.append((int(lines[i]), fld, msg_of(int(i))))
        bad |= mask

    t_text = raw["time"].str.strip()
    times = _times(t_text)
    no_offset = ~t_text.str.contains(r"(?:Z|[+-]\d\d:?\d\d)$", regex=True)
    flag(times.isna().to_numpy() | no_offset.to_numpy(), "time",
         lambda i: f"not an ISO 8601 time with offset: {raw['time'].iat[i]!r}")
    st = raw["station"].str.strip()
    flag(~st.str.fullmatch(_ID.pattern).to_numpy(), "station", lambda i: f"invalid station id {raw['station'].iat[i]!r}")
    qty = raw["quantity"].str.strip().str.lower()
    flag(~qty.isin(_QUANTITIES).to_numpy(), "quantity",
         lambda i: f"unknown quantity {raw['quantity'].iat[i]!r} (one of {', '.join(sorted(_QUANTITIES))})")
    values = pd.to_numeric(raw["value"].str.strip(), errors="coerce")
    flag((values.isna() | ~np.isfinite(values.fillna(0))).to_numpy(), "value",
         lambda i: f"not a number: {raw['value'].iat[i]!r}")
    unit = raw["unit"].str.strip()
    canon = np.full(len(raw), np.nan)
    out_unit = np.empty(len(raw), dtype=object)
    ok = ~bad
    pairs = pd.DataFrame({"q": qty[ok], "u": unit[ok]}).drop_duplicates()
    for q, u in pairs.itertuples(index=False):
        mask = ok & (qty == q).to_numpy() & (unit == u).to_numpy()
        try:
            conv = converter(q, u)
        except UnitError as e:
            why = str(e)
            flag(mask, "unit", lambda i: why)
            continue
        canon[mask] = conv(values.to_numpy()[mask])
        out_unit[mask] = CANONICAL[Quantity(q)]
    if strict and problems:
        raise ConfigError(source, problems[:50] + ([(None, "", f"... and {len(problems) - 50} more")]
                                                   if len(problems) > 50 else []))
    keep = ~bad
    frame = pd.DataFrame({
        "time": times[keep].reset_index(drop=True),
        "station": st[keep].reset_index(drop=True),
        "quantity": qty[keep].reset_index(drop=True),
        "value": canon[keep],
        "unit": pd.Series(out_unit[keep], dtype=object),
    })
    problems.sort()
    return ReadResult(frame, problems)


_EARLIEST = pd.Timestamp("1677-09-22", tz="UTC")   # what nanosecond time stamps hold
_LATEST = pd.Timestamp("2262-04-11", tz="UTC")


def _times(text: pd.Series) -> pd.Series:
    """ISO 8601 times as UTC nanoseconds; NaT where a row is not one or lies outside what
    nanosecond time stamps hold (pandas may parse "-2026-06-01" into a coarser unit, or
    raise even with errors="coerce")."""
    try:
        t = pd.to_datetime(text, utc=True, format="ISO8601", errors="coerce")
    except (pd.errors.OutOfBoundsDatetime, ValueError, OverflowError):
        def one(s: str) -> pd.Timestamp | NaTType:
            try:
                return pd.to_datetime(s, utc=True, format="ISO8601")
            except (pd.errors.OutOfBoundsDatetime, ValueError, OverflowError):
                return pd.NaT
        t = pd.to_datetime(text.map(one), utc=True)
    return bounded_ns(t)


def bounded_ns(t: pd.Series) -> pd.Series:
    """Aware times as nanoseconds, NaT outside 1677-09-22 … 2262-04-11 (what they hold)."""
    ns: pd.Series = t.where((t >= _EARLIEST) & (t < _LATEST)).dt.as_unit("ns")   # the stubs type .dt's results Any
    return ns


def write_readings_csv(rows: Iterable[tuple[str, str, str, float, str]], out: IO[str]) -> int:
    """Write ``(time_iso, station, quantity, value, unit)`` rows; returns the row count."""
    from .csvfile import writer
    w = writer(out)
    w.writerow(COLUMNS)
    n = 0
    for row in rows:
        w.writerow(row)
        n += 1
    return n
