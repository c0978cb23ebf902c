"""Construction-site inspections: after qualifying storms, and every seven calendar days.

References
----------
Schenectady ch. 148 Art. I (construction inspections): "Following the commencement of
construction, site inspections shall be conducted by a licensed/certified professional at
least every seven calendar days and within 24 hours of the end of a storm event 0.5 inch or
greater" — REGULATIONS.md rows *Post-storm inspection due* and *Routine inspection* ("7
days; twice a week for > 5 acres disturbed", NYSDEC construction permit).

NYSDEC SPDES General Permit for Stormwater Discharges from Construction Activity,
GP-0-20-001, Part IV.C.2.b: where the owner or operator is authorized to disturb more than
five acres of soil at any one time, the qualified inspector conducts at least two site
inspections every seven calendar days, separated by a minimum of two full calendar days.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone
from typing import TYPE_CHECKING, NamedTuple, Protocol, Sequence
from zoneinfo import ZoneInfo

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from ._common import td_ns

PROVISION = ("Schenectady ch. 148 Art. I: inspections at least every seven calendar days and within "
             "24 hours of the end of a storm event 0.5 inch or greater")


class Site(Protocol):
    """What the rules read of a construction site (the registry's ``ConstructionSite``)."""

    @property
    def id(self) -> str: ...
    @property
    def rain_gauges(self) -> list[str]: ...
    @property
    def active_from(self) -> date: ...
    @property
    def active_to(self) -> date | None: ...
    def active_on(self, day: date) -> bool: ...


def local_date(ns: int, tz: ZoneInfo) -> date:
    """The local date in ``tz`` of a time [UTC ns]."""
    return (_EPOCH + timedelta(microseconds=ns // 1000)).astimezone(tz).date()


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def inspection_due(storms: pd.DataFrame, sites: Sequence[Site], gauge: str, tz: ZoneInfo, *,
                   after: timedelta = timedelta(hours=24)) -> pd.DataFrame:
    """Post-storm inspection items.

    Parameters
    ----------
    storms : DataFrame from :func:`~.storms.storm_events` (``end``, ``qualifying``), only
        storms that are over (confirmed).
    sites : construction sites (``id``, ``rain_gauges``, ``active_on(date)``).
    gauge : the gauge the storms were measured at.
    tz : the municipality's time zone; a site is active on the local date of the storm end.
    after : timedelta [h], inspection due at storm end + this (24 h).

    Returns
    -------
    DataFrame: ``site``, ``gauge``, ``storm_end`` (UTC ns), ``due`` (UTC ns), one row per
    qualifying storm and site served by the gauge and active at the storm's end.
    """
    import pandas as pd
    q = storms[storms["qualifying"]]
    ends = [int(pd.Timestamp(end).value) for end in q["end"]]
    return pd.DataFrame(storm_inspections(ends, sites, gauge, tz, after=after),
                        columns=["site", "gauge", "storm_end", "due"])


def storm_inspections(storm_ends_ns: Sequence[int], sites: Sequence[Site], gauge: str, tz: ZoneInfo, *,
                      after: timedelta = timedelta(hours=24)) -> list[tuple[str, str, int, int]]:
    """:func:`inspection_due` on the end times [UTC ns] of the gauge's qualifying storms (the
    form the alert engine calls): ``(site, gauge, storm_end, due)`` [UTC ns], in that order."""
    rows = []
    for end_ns in storm_ends_ns:
        day = local_date(end_ns, tz)
        for s in sites:
            if gauge in s.rain_gauges and s.active_on(day):
                rows.append((s.id, gauge, end_ns, end_ns + td_ns(after)))
    return rows


class RoutineItem(NamedTuple):
    """One routine inspection the site owes: opened, due and closed [UTC ns]; ``key`` is
    stable across evaluations (the event id's tail)."""

    opened_ns: int
    due_ns: int
    closed_ns: int | None
    key: str


TWICE_WEEKLY_ACRES = 5.0     # "more than five acres" disturbed: two inspections every 7 days
TWO_FULL_DAYS = 3            # second inspection's local date >= first's + 3 (two full days between)


def routine_inspections(site: Site, inspections_ns: Sequence[int], now_ns: int, tz: ZoneInfo, *,
                        interval: timedelta = timedelta(days=7)) -> list[RoutineItem]:
    """Routine inspection items of one site up to ``now_ns``.

    Parameters
    ----------
    site : construction site (``active_from``, ``active_to`` local dates, both inclusive;
        ``disturbed_acres`` [acre] or None).
    inspections_ns : recorded inspections of the site [UTC ns].
    now_ns : the present [UTC ns]; items opened later do not exist yet.
    tz : the municipality's time zone: days are its calendar days.
    interval : timedelta, whole days [d]; 7 calendar days by default (a registry may only
        shorten it).

    Returns
    -------
    :class:`RoutineItem` list. An item is closed by the first inspection after it opened
    (late or not); it is overdue when not closed by ``due``.

    Notes
    -----
    *Every seven calendar days* (sites up to 5 acres disturbed, or not given): the first
    item opens at local midnight of ``active_from`` and is due ``interval`` calendar days
    later; each next one opens at the inspection that closed the previous (or at the
    previous due time if none did) and is due ``interval`` calendar days later at the same
    local wall time — calendar arithmetic in ``tz``, so a due time never shifts by an hour
    across a DST change (a wall time the spring change skips moves forward by the gap).

    *More than 5 acres disturbed*: the site's weeks run back to back from ``active_from``
    (``interval`` calendar days each, local midnight to midnight). Each week owes two
    inspections at least two full calendar days apart (GP-0-20-001 Part IV.C.2.b): item 1
    is closed by the week's first inspection and due early enough for the second to fit
    (end of day 4 of 7); item 2 is closed by the first inspection whose local date is at
    least three days after item 1's, and due at the end of the week.

    The site's own days bound everything: nothing opens before ``active_from``, and an item
    due after the end of ``active_to`` is not owed (the site closed first), so it neither
    appears nor escalates. An item due exactly at the end of the last day is owed (a site
    active for exactly seven days owes one inspection).
    """
    days = interval / timedelta(days=1)
    if days != int(days) or days < 1:
        raise ValueError(f"routine interval must be a whole number of days, got {interval}")
    days = int(days)
    start = local_midnight(site.active_from, tz)
    stop = local_midnight(site.active_to + timedelta(days=1), tz) if site.active_to else None
    insp = np.sort(np.asarray(list(inspections_ns), dtype=np.int64))
    insp = insp[insp <= now_ns]

    def first_at_or_after(t: int, strictly: bool = False) -> int | None:
        k = int(np.searchsorted(insp, t, side="right" if strictly else "left"))
        return int(insp[k]) if k < insp.size else None

    out: list[RoutineItem] = []
    acres = getattr(site, "disturbed_acres", None)
    if acres is not None and acres > TWICE_WEEKLY_ACRES:
        sep = min(TWO_FULL_DAYS, days - 1)
        week = start
        while week <= now_ns:
            first_due = add_calendar_days(week, days - sep, tz)
            end = add_calendar_days(week, days, tz)
            if stop is not None and first_due > stop:
                break
            i1 = first_at_or_after(week)
            out.append(RoutineItem(week, first_due, i1, f"{week}/1"))
            if stop is None or end <= stop:
                i2 = None
                if i1 is not None:   # dated `sep` days after the first or later, and after it
                    earliest = local_midnight(local_date(i1, tz) + timedelta(days=sep), tz)
                    i2 = first_at_or_after(earliest) if earliest > i1 else first_at_or_after(i1, strictly=True)
                out.append(RoutineItem(week, end, i2, f"{week}/2"))
            week = end
        return out
    opened, first = start, True
    while opened <= now_ns:
        due = add_calendar_days(opened, days, tz)
        if stop is not None and due > stop:
            break
        closed = first_at_or_after(opened, strictly=not first)
        out.append(RoutineItem(opened, due, closed, str(opened)))
        opened, first = (closed if closed is not None else due), False
    return out


def add_calendar_days(t_ns: int, days: int, tz: ZoneInfo) -> int:
    """``t_ns`` [UTC ns] plus ``days`` calendar days in ``tz``: the same local wall time.

    A wall time that does not exist on the target day (skipped by the spring change) is
    moved forward by the gap; one that exists twice (fall back) is the first (PEP 495
    ``fold=0``).
    """
    us, rest = divmod(int(t_ns), 1000)
    wall = (EPOCH + timedelta(microseconds=us)).astimezone(tz).replace(tzinfo=None, fold=0)
    later = (wall + timedelta(days=days)).replace(tzinfo=tz)
    return _to_ns(later) + rest


EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _to_ns(dt: datetime) -> int:
    d = dt - EPOCH
    return (d.days * 86400 + d.seconds) * 1_000_000_000 + d.microseconds * 1000


def local_midnight(day: date, tz: ZoneInfo) -> int:
    """00:00 of the local date ``day`` in ``tz`` [UTC ns]."""
    return _to_ns(datetime.combine(day, time(0), tzinfo=tz))
