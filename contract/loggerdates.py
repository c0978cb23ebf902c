"""Date-times as logger software writes them, whose order of day, month and year the file
does not state: ``06/01/26 08:00:00 AM`` is 1 June in HOBOware's US default and 6 January with
a British computer's settings; Excel re-saves them as ``2026-06-01 8:00``.

The order is settled from the file, in this order, or refused with a request for
``--date-order``:

1. an order given (``--date-order mdy|dmy|ymd``) or named in the column's header
   (``Date Time (DD/MM/YY)``);
2. a four-digit first field: year/month/day;
3. any first field over 12 rules out month-first, any second field over 12 day-first; a
   reading with a time outside the plausible window (below) is ruled out;
4. the times must increase, mostly by the logging interval: of month/day/year,
   day/month/year and year/month/day with a two-digit year first (HOBOware's
   ``20-03-27``, which day/month/year reads as 20 March 2027, or 2009…2026 before the
   27th) the one whose times go back less often, then keep the interval more often, then
   jump least, wins; a tie (a file of one day, every field ≤ 12) is refused.

Times outside the plausible window (before 1990, or after now plus two days) are refused:
a day read as a year gives 2001…2031.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import numpy as np

__all__ = ["ORDERS", "DateOrderError", "parse_times", "EARLIEST"]

ORDERS = ("mdy", "dmy", "ymd")
EARLIEST = datetime(1990, 1, 1)
_NAMES = {"mdy": "month/day/year", "dmy": "day/month/year", "ymd": "year/month/day"}
_DT = re.compile(r"^\s*(\d{1,4})([/.-])(\d{1,2})\2(\d{1,4})(?:[ T]+(\d{1,2}):(\d\d)(?::(\d\d)(?:\.(\d{1,6}))?)?"
                 r"\s*(?:([AaPp])\.?[Mm]\.?)?)?\s*$")
_HINT = re.compile(r"\b(MM|DD|YY(?:YY)?)[/.-](MM|DD)[/.-](MM|DD|YY(?:YY)?)\b", re.I)


class DateOrderError(ValueError):
    """A time that cannot be read: ``index`` is the row (0-based) it names."""

    def __init__(self, index: int, message: str):
        super().__init__(message)
        self.index = index


@dataclass(frozen=True)
class _Fields:
    a: int
    b: int
    c: int
    c_digits: int
    h: int
    mi: int
    s: int
    us: int


def _fields(text: str, i: int) -> _Fields:
    m = _DT.match(text)
    if not m:
        raise DateOrderError(i, f"not a date-time: {text!r}")
    a, _, b, c, h, mi, s, frac, ampm = m.groups()
    hour = int(h or 0)
    if ampm:
        if not 1 <= hour <= 12:
            raise DateOrderError(i, f"not a 12-hour time: {text!r}")
        hour = hour % 12 + (12 if ampm.lower() == "p" else 0)
    us = int((frac or "0").ljust(6, "0"))
    first = int(a) if len(a) < 4 else -int(a)       # a four-digit first field: a year (negative marks it)
    return _Fields(first, int(b), int(c), len(c), hour, int(mi or 0), int(s or 0), us)


def _year(v: int, digits: int) -> int:
    return v if digits >= 3 else 2000 + v if v < 70 else 1900 + v


def _build(f: _Fields, order: str) -> datetime:
    if order == "ymd":
        y, mo, d = (-f.a if f.a < 0 else _year(f.a, 2)), f.b, f.c
    elif order == "mdy":
        mo, d, y = f.a, f.b, _year(f.c, f.c_digits)
    else:
        d, mo, y = f.a, f.b, _year(f.c, f.c_digits)
    return datetime(y, mo, d, f.h, f.mi, f.s, f.us)


def _naive_ns(dts: list[datetime]) -> np.ndarray:
    epoch = datetime(1970, 1, 1)
    return np.array([(d - epoch) // timedelta(microseconds=1) * 1000 for d in dts], dtype=np.int64)


def _score(t: np.ndarray) -> tuple[int, int, int]:
    """(steps back, steps off the logging interval, largest step): smaller is likelier."""
    if t.size < 2:
        return (0, 0, 0)
    step = np.diff(t)
    back = int((step < 0).sum())
    forward = step[step > 0]
    if forward.size == 0:
        return (back, 0, 0)
    vals, counts = np.unique(forward, return_counts=True)
    interval = vals[np.argmax(counts)]
    return (back, int((forward != interval).sum()), int(forward.max()))


def hinted(header: str) -> str | None:
    """The order a date-time column's header names (``Date Time (DD/MM/YY)``), if any."""
    m = _HINT.search(header)
    if not m:
        return None
    return "".join(p[0].lower() for p in m.groups())


def parse_times(texts: list[str], *, order: str | None = None, header: str = "",
                now: datetime | None = None) -> tuple[list[datetime], str]:
    """Naive date-times of ``texts`` and the order they were read in ("mdy", "dmy", "ymd");
    DateOrderError (naming the row) when the order cannot be settled or a time is not one."""
    if order is not None and order not in ORDERS:
        raise DateOrderError(0, f"--date-order {order!r}: one of {', '.join(ORDERS)}")
    if not texts:
        return [], order or "mdy"
    fields = [_fields(t, i) for i, t in enumerate(texts)]
    order = order or hinted(header)
    if order is None and fields:
        if all(f.a < 0 for f in fields):
            order = "ymd"
        elif any(f.a < 0 for f in fields):
            i = next(i for i, f in enumerate(fields) if f.a < 0)
            raise DateOrderError(i, f"a four-digit year first here, not in the rows before: {texts[i]!r}")
    latest = (now or datetime.now(timezone.utc).replace(tzinfo=None)) + timedelta(days=2)
    if order is None:
        cands = ["mdy", "dmy"]
        over_a = next((i for i, f in enumerate(fields) if f.a > 12), None)
        over_b = next((i for i, f in enumerate(fields) if f.b > 12), None)
        if over_a is not None and over_b is not None:
            raise DateOrderError(over_b, f"neither month/day/year nor day/month/year: {texts[over_a]!r} has a first "
                                         f"field over 12 and {texts[over_b]!r} a second")
        if over_a is not None:
            cands.remove("mdy")
        if over_b is not None:
            cands.remove("dmy")
        readings: dict[str, list[datetime]] = {}
        for o in cands + ["ymd"]:        # ymd here: a two-digit year first (HOBOware's yy-mm-dd)
            try:
                readings[o] = [_build(f, o) for f in fields]
            except ValueError:
                continue
        if not readings:
            raise DateOrderError(0, f"not a date in any order: {texts[0]!r}")
        plausible = {o: d for o, d in readings.items() if all(EARLIEST <= x <= latest for x in d)}
        if len(plausible) > 1:
            scores = {o: _score(_naive_ns(d)) for o, d in plausible.items()}
            best = min(scores.values())
            tied = [o for o in ORDERS if scores.get(o) == best]
            if len(tied) > 1:
                names = " or ".join(_NAMES[o] + (" (a two-digit year first)" if o == "ymd" else "") for o in tied)
                raise DateOrderError(0, f"{texts[0]!r} … {texts[-1]!r} read as {names} alike (the fields and the "
                                        f"times fit each): give --date-order {' or '.join(tied)}")
            order = tied[0]
        elif plausible:
            order = next(iter(plausible))
        else:
            order = next(o for o in ORDERS if o in readings and o != "ymd") if set(readings) - {"ymd"} else "ymd"
        out = readings[order]
    else:
        out = []
        for i, f in enumerate(fields):
            try:
                out.append(_build(f, order))
            except ValueError:
                raise DateOrderError(i, f"not a date read as {_NAMES[order]}: {texts[i]!r}") from None
    for i, d in enumerate(out):
        if not EARLIEST <= d <= latest:
            raise DateOrderError(i, f"{texts[i]!r} read as {_NAMES[order]} is {d:%Y-%m-%d %H:%M:%S}: not a plausible "
                                    f"time (before {EARLIEST:%Y} or after today); is the date order right? "
                                    "(--date-order)")
    return out, order
