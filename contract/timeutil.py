"""Time: everything on the wire and in the store is UTC; durations are written like 6h, 30min."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

from .errors import ConfigValueError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|sec|min|m|h|hr|d|day|days)\s*$")
_FACTORS = {"ms": 0.001, "s": 1, "sec": 1, "min": 60, "m": 60, "h": 3600, "hr": 3600,
            "d": 86400, "day": 86400, "days": 86400}


def parse_duration(text: str | int | float | timedelta) -> timedelta:
    """Parse ``"6h"``, ``"30min"``, ``"90s"``, ``"7d"`` (or a number of seconds) into a timedelta."""
    if isinstance(text, timedelta):
        return text
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return timedelta(seconds=float(text))
    m = _DURATION.match(str(text))
    if not m:
        raise ValueError(f"not a duration: {text!r} (write e.g. 6h, 30min, 90s, 7d)")
    return timedelta(seconds=float(m.group(1)) * _FACTORS[m.group(2)])


def parse_month_day(text: str) -> tuple[int, int]:
    """``"01-03"`` -> (1, 3); a day that no year has is refused (29 February too: a year must start every year)."""
    try:
        m, d = (int(x) for x in str(text).split("-"))
        date(2001, m, d)
    except ValueError:
        raise ValueError(f"not a month and day as MM-DD: {text!r}") from None
    return m, d


def format_duration(td: timedelta) -> str:
    s = td.total_seconds()
    for unit, f in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= f and s % f == 0:
            return f"{int(s // f)}{unit}"
    return f"{s:g}s"


def to_ns(dt: datetime) -> int:
    """Epoch nanoseconds of an aware datetime. Naive datetimes are refused."""
    if dt.tzinfo is None:
        raise ValueError(f"time without a UTC offset: {dt.isoformat()}")
    delta = dt - EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def from_ns(ns: int) -> datetime:
    return EPOCH + timedelta(microseconds=ns // 1000)


def iso_utc(ns: int) -> str:
    """``2026-06-01T12:00:00Z`` (milliseconds shown only when present)."""
    dt = from_ns(ns)
    if dt.microsecond:
        return dt.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


# The one form of time on the wire: RFC 3339 (a profile of ISO 8601) with an upper-case
# ``T``, seconds always written, at most 6 decimals (what a datetime holds) and an offset.
_WIRE_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?"
                        r"(Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])?", re.ASCII)
WIRE_TIME_FORM = "YYYY-MM-DDTHH:MM:SS[.ffffff] then Z or ±HH:MM (RFC 3339)"


def parse_wire_time(text: object) -> datetime:
    """A time as a message carries it: ``YYYY-MM-DDTHH:MM:SS[.ffffff]`` then ``Z`` or ``±HH:MM``.

    Only this RFC 3339 form: the other ISO 8601 forms :meth:`datetime.fromisoformat` takes
    (week dates ``2026-W23-1``, the basic form ``20260601T120000``, a space or a lower-case
    ``t``, a comma before the decimals, no seconds, more than 6 decimals) and a time without
    an offset raise ValueError, as does a date or time that does not exist (``T24:00:00``,
    a leap second ``:60``, February 30th).

    References: RFC 3339 section 5.6 (Internet date/time format).
    """
    if type(text) is not str:
        raise ValueError(f"a time must be a string {WIRE_TIME_FORM}, got {type(text).__name__}")
    m = _WIRE_TIME.fullmatch(text)
    if m is None:
        raise ValueError(f"{text!r} is not a time {WIRE_TIME_FORM}")
    if m.group(1) is None:
        raise ValueError(f"{text!r} has no UTC offset (end it with Z or ±HH:MM)")
    try:
        return datetime.fromisoformat(text[:-1] + "+00:00" if m.group(1) == "Z" else text)
    except ValueError as e:
        raise ValueError(f"{text!r} is not a valid time: {e}") from None


def parse_time(text: str) -> datetime:
    """ISO 8601 with an offset (``Z`` allowed). A time without an offset is refused
    (:class:`~.errors.ConfigValueError`, a ValueError too)."""
    try:
        dt = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConfigValueError(f"not an ISO 8601 time: {text!r} (e.g. 2026-06-01T09:00:00-04:00)") from None
    if dt.tzinfo is None:
        raise ConfigValueError(f"time without a UTC offset: {text!r}")
    return dt


EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def due_not_before_performed(due: date, performed: date | None) -> date:
    """A calibration's ``due`` day, refused when it comes before ``performed`` (pydantic validator body)."""
    if performed is not None and due < performed:
        raise ValueError(f"due {due} is before performed {performed}")
    return due
