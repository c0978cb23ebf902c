"""The terminal lines printed for events: values rounded for a person to read, times in
the municipality's zone."""

from zoneinfo import ZoneInfo

from ms4watch.alerts.events import AlertEvent
from ms4watch.terminal import NotificationEcho, event_line

NY = ZoneInfo("America/New_York")


def line(d):
    return event_line(AlertEvent.from_dict({"id": "x", **d}), NY)


def test_storm_depths_and_values_are_rounded():
    assert line({"kind": "storm", "gauge": "RG-2", "start": "2026-06-06T20:19:00-04:00", "depth_in": 0.031496}) == \
        "[2026-06-06 20:19] storm RG-2 0.03 in, raining"
    assert line({"kind": "storm", "gauge": "RG-1", "start": "2026-06-03T05:00:00Z", "depth_in": 0.85,
                 "qualifying": True, "end": "2026-06-03T09:10:00-04:00"}) == \
        "[2026-06-03 01:00] storm RG-1 0.85 in, qualifying, ended 09:10"
    assert line({"kind": "turbidity_contrast", "pair": "TP-1", "start": "2026-06-06T20:30:00-04:00",
                 "max_delta_ntu": 15.948}).endswith("max +15.9 NTU")


def test_inspections_retractions_and_closed_episodes():
    assert line({"kind": "inspection_overdue", "site": "CS-7", "gauge": "RG-1", "reason": "storm",
                 "due": "2026-06-04T13:10:00Z", "storm_end": "2026-06-03T13:10:00Z"}) == \
        "[2026-06-04 09:10] inspection overdue CS-7 after the storm at RG-1, due 2026-06-04 09:10"
    assert line({"kind": "dry_weather_flow", "outfall": "OF-1", "start": "2026-06-05T02:00:00-04:00",
                 "end": "2026-06-05T03:30:00-04:00", "peak_gpm": 12.345, "suppressed": None}) == \
        "[2026-06-05 02:00] dry weather flow OF-1 peak 12.3 gpm, closed 03:30"
    assert line({"kind": "dry_weather_flow", "outfall": "OF-1", "start": "2026-06-05T02:00:00-04:00",
                 "peak_gpm": 3.0, "status": "retracted"}).endswith("(retracted)")


def test_each_notification_the_file_channel_writes_becomes_one_line():
    lines = []
    echo = NotificationEcho(lines.append)
    echo.write("=" * 72 + "\n[2026-06-05T06:00:00Z] OPEN #3  key incident:3|Pat|file|open\nTo: Pat Doe (smo)\n")
    echo.write("Dry-weather flow at Main St outfall\nmore details\n")
    echo.flush()
    assert lines == ["  ✉ Dry-weather flow at Main St outfall → Pat Doe (smo)"]


def test_a_backstop_episode_says_so():
    assert line({"kind": "turbidity_contrast", "pair": "TP-1", "start": "2026-06-06T20:30:00-04:00",
                 "max_delta_ntu": None, "basis": "backstop", "max_downstream_ntu": 301.25}) == \
        "[2026-06-06 20:30] turbidity contrast TP-1 downstream up to 301.2 NTU (backstop)"
