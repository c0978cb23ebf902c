"""Events: typed in process, ``events.jsonl`` only at the edge; a bad record names its field."""

from __future__ import annotations

import pytest

from ms4watch.alerts.errors import AlertError
from ms4watch.alerts.events import AlertEvent, AlertKind, AlertEventStatus, overdue_id
from tests.support.notify_peers import utc

RECORD = {"kind": "dry_weather_flow", "outfall": "OF-12", "start": "2026-06-01T11:30:00-04:00", "end": None,
          "peak_gpm": 4.2, "suppressed": None, "id": "dwf/OF-12/1", "status": "active",
          "params": {"floor_gpm": 0.5}, "provision": "Ramapo ch. 218"}


def test_a_record_round_trips_with_times_as_instants():
    e = AlertEvent.from_dict(RECORD)
    assert e.kind is AlertKind.DRY_WEATHER_FLOW and e.fields["start"] == 1780327800 * 10**9
    assert e.instant("start") == utc(2026, 6, 1, 15, 30) and e.instant("end") is None
    assert e.subject == "OF-12"
    from zoneinfo import ZoneInfo
    assert AlertEvent.from_dict(e.to_dict(ZoneInfo("America/New_York"))) == e


@pytest.mark.parametrize("change, message", [
    ({"kind": "flood"}, "kind: not an event kind: 'flood'"),
    ({"id": None}, "id: missing"),
    ({"start": "2026-06-01T11:30:00"}, "start: time without offset"),
    ({"end": 1780327800}, "end: not an ISO 8601 time"),
    ({"status": "gone"}, "status: must be active or retracted"),
])
def test_a_bad_record_names_its_field(change, message):
    with pytest.raises(AlertError, match=message):
        AlertEvent.from_dict({**RECORD, **change})


def test_an_escalation_names_the_item_it_escalates():
    item = "inspection/CS-7/storm/RG-1/1"
    e = AlertEvent(AlertKind.INSPECTION_OVERDUE, overdue_id(item), {"site": "CS-7", "due": 0})
    assert e.overdue_of == item
    assert AlertEvent(AlertKind.INSPECTION_DUE, item, {"site": "CS-7"}).overdue_of is None
    assert e.retracted().status is AlertEventStatus.RETRACTED
