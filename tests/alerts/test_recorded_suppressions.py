"""Approved discharges and exempt flows recorded outside the registry file (on the
workbench): the streaming engine takes them while running (``use_registry``) and replay
takes the same records from their CSV; both suppress the same episodes."""

from __future__ import annotations

import csv
from datetime import timedelta

import pytest

from ms4watch.alerts.engine import StreamingEngine
from ms4watch.alerts.errors import AlertError
from ms4watch.alerts.events import AlertKind
from ms4watch.alerts.replay import read_suppressions, replay
from ms4watch.contract.timeutil import from_ns

from .support import at, registry, series_readings, table

H = 60


def _readings():
    """Four dry days of rain readings (0.00 every 5 min), then flow above the floor for 2 h."""
    rain = series_readings("RG-1", "rain", 0, [0.0] * (5 * 24 * 12), step_min=5)
    flow = series_readings("OF-1", "flow", 4 * 24 * H, [0.1] * 60 + [2.5] * 120 + [0.1] * 60)
    return rain + flow


def _approvals_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "outfall", "from", "to", "flow", "reason", "withdrawn_at", "recorded_by"])
        w.writerows(rows)
    return path


def _episodes(events):
    return {e.id: e["suppressed"] for e in events if e.kind is AlertKind.DRY_WEATHER_FLOW}


def test_an_approval_recorded_while_running_suppresses_the_open_episode_as_replay_does(tmp_path):
    reg = registry()
    rs = _readings()
    start, end = from_ns(at(4 * 24 * H + 50)), from_ns(at(4 * 24 * H + 200))
    approvals = _approvals_csv(tmp_path / "approvals.csv", [
        ("approved_discharge", "OF-1", start.isoformat(), end.isoformat(), "", "hydrant flushing (WO 7)", "", "pat"),
        ("approved_discharge", "OF-1", start.isoformat(), end.isoformat(), "", "withdrawn one", "2026-06-01T00:00Z", "")])
    eng = StreamingEngine(reg, None, eval_interval=timedelta(0))
    half = next(i for i, r in enumerate(rs) if r.station == "OF-1" and r.value > 1) + 60   # the episode is open
    opened = _episodes(eng.feed(rs[:half]))
    assert list(opened.values()) == [None]
    changed = eng.use_registry(read_suppressions(approvals, reg))                # recorded on the workbench now
    assert list(_episodes(changed).values()) == ["approved discharge: hydrant flushing (WO 7)"]
    eng.feed(rs[half:])
    streamed = _episodes(eng.events().values())
    replayed = _episodes(replay(read_suppressions(approvals, reg), table(rs)))
    assert streamed == replayed and list(replayed.values()) == ["approved discharge: hydrant flushing (WO 7)"]
    # withdrawn: the open episode is notified again
    eng2 = StreamingEngine(read_suppressions(approvals, reg), None, eval_interval=timedelta(0))
    eng2.feed(rs[:half])
    assert list(_episodes(eng2.use_registry(reg)).values()) == [None]


def test_a_time_limited_exempt_flow_suppresses_too(tmp_path):
    reg = registry()
    start, end = from_ns(at(4 * 24 * H)), from_ns(at(5 * 24 * H))
    approvals = _approvals_csv(tmp_path / "approvals.csv", [
        ("exempt_flow", "OF-1", start.isoformat(), end.isoformat(), "lawn irrigation", "12 Elm St, permit 44", "", "")])
    got = _episodes(replay(read_suppressions(approvals, reg), table(_readings())))
    assert list(got.values()) == ["exempt flow: lawn irrigation (12 Elm St, permit 44)"]


@pytest.mark.parametrize("row, message", [
    (("approved_discharge", "OF-9", "2026-06-05T12:00:00Z", "2026-06-05T13:00:00Z", "", "x", "", ""),
     "approvals.csv:2: outfall: unknown outfall 'OF-9'"),
    (("permit", "OF-1", "2026-06-05T12:00:00Z", "2026-06-05T13:00:00Z", "", "x", "", ""),
     "approvals.csv:2: kind: expected approved_discharge or exempt_flow, got 'permit'"),
    (("exempt_flow", "OF-1", "2026-06-05T12:00:00Z", "", "irrigation", "x", "", ""),
     "approvals.csv:2: to: an exempt flow recorded on the workbench has an end"),
    (("approved_discharge", "OF-1", "2026-06-05T14:00:00Z", "2026-06-05T13:00:00Z", "", "x", "", ""),
     "approvals.csv:2: approved_discharge: 'to' must be after 'from'"),
    (("approved_discharge", "OF-1", "2026-06-05T12:00:00", "2026-06-05T13:00:00Z", "", "x", "", ""),
     "approvals.csv:2: from: Input should have timezone info"),
])
def test_a_bad_row_is_named_by_file_line_and_field(tmp_path, row, message):
    approvals = _approvals_csv(tmp_path / "approvals.csv", [row])
    with pytest.raises(AlertError) as e:
        read_suppressions(approvals, registry())
    assert str(e.value).endswith(message)


def test_the_engine_refuses_another_town_while_running():
    eng = StreamingEngine(registry(), None)
    with pytest.raises(AlertError, match="only approved discharges and exempt flows"):
        eng.use_registry(registry().model_copy(update={"outfalls": []}))
