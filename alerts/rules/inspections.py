"""Construction-site inspections: after qualifying storms, and every seven days.

References
----------
Schenectady ch. 148 Art. I (construction inspections): site inspections "at least every
seven calendar days and within 24 hours of the end of a storm event 0.5 inch or greater" —
REGULATIONS.md rows *Post-storm inspection due* and *Routine inspection*.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Sequence
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from ._common import td_ns

PROVISION = ("Schenectady ch. 148 Art. I: inspections at least every seven calendar days and within "
             "24 hours of the end of a storm event 0.5 inch or greater")


def local_date(ns: int, tz: ZoneInfo):
    return pd.Timestamp(ns, tz="UTC").tz_convert(tz).date()


def inspection_due(storms: pd.DataFrame, sites: Sequence, gauge: str, tz: ZoneInfo, *,
                   after=timedelta(hours=24)) -> pd.DataFrame:
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
    rows = []
    q = storms[storms["qualifying"]]
    for end in q["end"]:
        end_ns = int(pd.Timestamp(end).value)
        day = local_date(end_ns, tz)
        for s in sites:
            if gauge in s.rain_gauges and s.active_on(day):
                rows.append((s.id, gauge, end_ns, end_ns + td_ns(after)))
    return pd.DataFrame(rows, columns=["site", "gauge", "storm_end", "due"])


def routine_inspections(site, inspections_ns: Sequence[int], now_ns: int, tz: ZoneInfo, *,
                        interval=timedelta(days=7)) -> list[tuple[int, int, int | None]]:
    """Routine inspection items of one site up to ``now_ns``.

    The first is due ``interval`` after local midnight of ``active_from``; each following
    one ``interval`` after the inspection that closed the previous (or after the previous
    due time if none did). Items exist while the site is active.

    Returns ``(opened_ns, due_ns, closed_ns | None)``: an item is closed by the first
    inspection after it opened.
    """
    iv = td_ns(interval)
    start = _local_midnight(site.active_from, tz)
    stop = _local_midnight(site.active_to + timedelta(days=1), tz) if site.active_to else None
    insp = np.sort(np.asarray(list(inspections_ns), dtype=np.int64))
    out: list[tuple[int, int, int | None]] = []
    opened = start
    while opened <= now_ns and (stop is None or opened < stop):
        due = opened + iv
        k = np.searchsorted(insp, opened, side="right")
        closed = int(insp[k]) if k < insp.size and insp[k] <= now_ns else None
        out.append((opened, due, closed))
        opened = closed if closed is not None else due
    return out


def _local_midnight(day, tz: ZoneInfo) -> int:
    return int(pd.Timestamp(datetime.combine(day, time(0), tzinfo=tz)).value)
