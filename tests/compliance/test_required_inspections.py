"""Whether each required inspection was done in time (the annual report's ``inspections``
section), on hand-built sites and inspections: the items are the engine's own events
(``alerts/evaluate.site_inspections``) turned into incidents as the incident store does
(``event_start``), judged at the boundaries — an inspection exactly when the item opened,
exactly at its due time, one second late; a site's first and last day; across DST."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import pytest

from ms4watch.alerts.evaluate import site_inspections
from ms4watch.alerts.events import AlertKind
from ms4watch.alerts.incidents.model import event_start
from ms4watch.compliance.required_inspections import Kept, judge_all
from ms4watch.contract.registry import load_registry
from ms4watch.contract.timeutil import to_ns
from ms4watch.demo import demo_configs

REG = load_registry(demo_configs() / "sites.yaml")
TZ = REG.tz
SECOND = timedelta(seconds=1)


@dataclass
class Item:                       # what the report reads of an inspection incident
    id: int
    subject: str
    start: datetime
    deadline: datetime
    event: dict[str, Any]
    resolution: str | None = None


def local(*a: int) -> datetime:
    return datetime(*a, tzinfo=TZ)


def registry(active_from: date, active_to: date | None = None):
    site = REG.construction_sites[1].model_copy(update={"id": "CS-9", "active_from": active_from,
                                                         "active_to": active_to, "disturbed_acres": None})
    return REG.model_copy(update={"construction_sites": [site]})


def judged(reg, inspections: list[datetime], now: datetime, storms: tuple[datetime, ...] = ()):
    """The engine's items as of ``now`` (as incidents), each judged by the report."""
    events = site_inspections(reg, "CS-9", {reg.construction_sites[0].rain_gauges[0]: [to_ns(s) for s in storms]},
                              [to_ns(t) for t in inspections], to_ns(now))
    items = [Item(n, "CS-9", event_start(e), e.instant("due"), e.to_dict(TZ))
             for n, e in enumerate(events) if e.kind is AlertKind.INSPECTION_DUE]
    items.sort(key=lambda i: i.deadline)
    return [(i, j) for i, j in zip(items, judge_all(reg, items, {"CS-9": inspections}, now))]


def routine(pairs):
    return [(i.deadline, j) for i, j in pairs if i.event["reason"] == "routine"]


def test_the_inspection_that_opened_a_cycle_does_not_close_it():
    """Items 12 and 19 of the demo: the cycle opened by the inspection of 2 June is due 9 June;
    no inspection came after, yet it was listed on time."""
    reg = registry(date(2026, 5, 30))
    first = local(2026, 6, 2, 10)
    out = routine(judged(reg, [first], now=local(2026, 6, 12)))
    assert [(d, j.status, j.closed) for d, j in out] == [
        (local(2026, 6, 6), Kept.ON_TIME, first),               # the site's first item: closed by it
        (local(2026, 6, 9, 10), Kept.MISSED, None),             # opened by it: still open, and past due
        (local(2026, 6, 16, 10), Kept.NOT_YET_DUE, None)]       # opened at the missed one's due time
    assert out[1][1].opened == first


def test_exactly_at_due_is_on_time_and_a_second_later_is_late():
    reg = registry(date(2026, 5, 30))
    first, due = local(2026, 6, 2, 10), local(2026, 6, 9, 10)
    on = routine(judged(reg, [first, due], now=local(2026, 6, 12)))
    assert (on[1][0], on[1][1].status, on[1][1].closed) == (due, Kept.ON_TIME, due)
    late = routine(judged(reg, [first, due + SECOND], now=local(2026, 6, 12)))
    assert (late[1][1].status, late[1][1].closed) == (Kept.LATE, due + SECOND)


def test_an_inspection_in_the_sites_first_second_closes_its_first_item_only():
    """The first item opens at local midnight of ``active_from``, not at an inspection: one in
    the first second closes it, and opens the next, which it does not close. (Exactly at
    midnight the engine gives both items the same id: see the module's notes.)"""
    reg = registry(date(2026, 5, 30))
    midnight, first = local(2026, 5, 30), local(2026, 5, 30, 0, 0, 1)
    out = routine(judged(reg, [first], now=local(2026, 6, 5)))
    assert [(j.opened, j.status, j.closed) for _, j in out] == [(midnight, Kept.ON_TIME, first),
                                                                (first, Kept.NOT_YET_DUE, None)]


def test_the_sites_last_day():
    """Active 30 May to 5 June: one item, due at the end of the last day (owed); an inspection
    in the day's last second is on time; none is missed."""
    reg = registry(date(2026, 5, 30), date(2026, 6, 5))
    out = routine(judged(reg, [local(2026, 6, 5, 23, 59, 59)], now=local(2026, 6, 20)))
    assert [(d, j.status) for d, j in out] == [(local(2026, 6, 6), Kept.ON_TIME)]
    out = routine(judged(reg, [], now=local(2026, 6, 20)))
    assert [(d, j.status) for d, j in out] == [(local(2026, 6, 6), Kept.MISSED)]


def test_across_the_spring_dst_change():
    """Opened at 10:00 EST on 5 March, due 10:00 EDT on 12 March: seven calendar days, 167 hours.
    The incident's start (due less 168 h) falls an hour before the opening inspection, which
    still does not close the item; one at 09:59 EDT on the 12th does."""
    reg = registry(date(2026, 3, 2))
    opened = local(2026, 3, 5, 10)
    pairs = judged(reg, [opened], now=local(2026, 3, 13))
    item, j = [(i, j) for i, j in pairs if i.event["reason"] == "routine"][1]
    assert item.start < opened and j.opened == opened and j.due == local(2026, 3, 12, 10)
    assert (j.status, j.closed) == (Kept.MISSED, None)
    in_time = local(2026, 3, 12, 9, 59)
    _, j = routine(judged(reg, [opened, in_time], now=local(2026, 3, 13)))[1]
    assert (j.status, j.closed) == (Kept.ON_TIME, in_time)


def test_after_a_storm_an_inspection_from_its_end_on_counts():
    reg = registry(date(2026, 5, 30))
    end = local(2026, 6, 3, 14, 30)
    for inspected, status in ((end, Kept.ON_TIME), (end + timedelta(hours=24), Kept.ON_TIME),
                              (end + timedelta(hours=24) + SECOND, Kept.LATE), (end - SECOND, Kept.MISSED)):
        storm = [j for i, j in judged(reg, [local(2026, 6, 1, 9), inspected], now=local(2026, 6, 5), storms=(end,))
                 if i.event["reason"] == "storm"]
        assert [j.status for j in storm] == [status], inspected


@pytest.mark.parametrize("now, status", [(local(2026, 6, 9, 10), Kept.NOT_YET_DUE),
                                         (local(2026, 6, 9, 10) + SECOND, Kept.MISSED)])
def test_an_open_item_is_not_yet_due_until_its_due_time_has_passed(now, status):
    reg = registry(date(2026, 5, 30))
    assert routine(judged(reg, [local(2026, 6, 2, 10)], now=now))[1][1].status is status


@pytest.mark.parametrize("inspected, status", [(local(2026, 11, 5, 10), Kept.ON_TIME),
                                               (local(2026, 11, 5, 10) + SECOND, Kept.LATE)])
def test_across_the_autumn_dst_change(inspected, status):
    """Opened at 10:00 EDT on 29 October, due 10:00 EST on 5 November (169 hours later)."""
    reg = registry(date(2026, 10, 26))
    opened = local(2026, 10, 29, 10)
    _, j = routine(judged(reg, [opened, inspected], now=local(2026, 11, 9)))[1]
    assert (j.opened, j.due, j.status, j.closed) == (opened, local(2026, 11, 5, 10), status, inspected)


# -- the annual report's reporting year: an item due in one year, inspected in the next ----------
def test_an_item_due_in_one_reporting_year_and_done_in_the_next_counts_in_the_first_as_late(tmp_path):
    """Reporting year 2026 (GP-0-24-001) runs to 3 January 2027 00:00. A storm ending 23:00 on
    1 January 2027 owes an inspection by 23:00 on 2 January: due in 2026's year, so listed
    there, late when done at 01:00 on 3 January (2027's year), and not listed in 2027's. The
    site's first routine item, due at 00:00 on 3 January (the instant 2027's year begins), is
    2027's (and late: the inspection came an hour after)."""
    from types import SimpleNamespace

    from ms4watch.compliance import report
    from ms4watch.compliance.store import ComplianceStore

    reg = registry(date(2026, 12, 27))
    storm_end, done = local(2027, 1, 1, 23), local(2027, 1, 3, 1)
    now = local(2027, 2, 1)
    items = [i for i, _ in judged(reg, [done], now=now, storms=(storm_end,))]
    incidents = SimpleNamespace(
        list=lambda kind, limit: items if kind == "inspection_due" else [],
        store=SimpleNamespace(inspections_after=lambda last: [(1, "CS-9", done, "J. Rivera", None)]))
    store = ComplianceStore(tmp_path / "compliance.db")
    try:
        def section(year):
            built = report.build(registry=reg, store=store, incidents=incidents, year=year, now=now)
            return [(r["reason"], r["due"], r["inspected_at"], r["status"]) for r in built.sections["inspections"].rows]
        assert section(2026) == [("storm", storm_end + timedelta(hours=24), done, "late")]
        assert (("routine", local(2027, 1, 3), done, "late") in section(2027)
                and all(reason == "routine" for reason, *_ in section(2027)))
    finally:
        store.close()
