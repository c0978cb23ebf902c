"""Several turbidity pairs sharing a probe (Schenectady ch. 148 Art. I: no "increase in turbidity
that will cause a substantial visible contrast to natural conditions"): one background probe —
the natural conditions — above a site with two discharge points, each judged against it; and a
probe that is one pair's downstream and the next one's upstream along a creek. Replay and the
streaming engine give the same events."""

from __future__ import annotations

from ms4watch.alerts.engine import StreamingEngine
from ms4watch.alerts.replay import final_state, replay

from .support import at, reading, registry, table

SHARED = """
municipality: testtown
timezone: America/New_York
rain_gauges:
  - {id: RG-1}
turbidity_pairs:
  - {id: TP-1, upstream: TU-1, downstream: TD-1}
  - {id: TP-2, upstream: TU-1, downstream: TD-2}
  - {id: TP-3, upstream: TD-2, downstream: TD-3}
"""


def readings():
    rs = []
    for i in range(24):          # 2 h of 5-min data
        rs.append(reading(at(i * 5), "RG-1", "rain", 0.0))
        rs.append(reading(at(i * 5), "TU-1", "turbidity", 10.0))
        rs.append(reading(at(i * 5 + 1), "TD-1", "turbidity", 40.0 if 6 <= i < 12 else 11.0))   # 30 min above
        rs.append(reading(at(i * 5 + 1), "TD-2", "turbidity", 12.0))                             # never above
        rs.append(reading(at(i * 5 + 2), "TD-3", "turbidity", 30.0 if 12 <= i < 18 else 12.5))  # above TD-2
    return rs


def test_pairs_sharing_a_probe_are_each_judged_and_streaming_equals_replay(tmp_path):
    reg = registry(SHARED)
    rs = readings()
    expected = final_state(replay(reg, table(rs)))
    contrast = {k: e for k, e in expected.items() if e.kind.value == "turbidity_contrast"}
    assert sorted((e["pair"], e["start"], e["end"]) for e in contrast.values()) == [
        ("TP-1", at(31), at(56)), ("TP-3", at(62), at(87))]
    assert not any(e.kind.value in ("turbidity_not_evaluable", "stale_station") for e in expected.values())
    eng = StreamingEngine(reg, tmp_path / "state.json")
    out = []
    for k in range(0, len(rs), 7):
        out += eng.feed(rs[k:k + 7])
    out += eng.advance(max(r.time_ns for r in rs))
    got = {k: e for k, e in final_state(out).items() if e.status.value == "active"}
    assert set(got) == set(expected)
    for k in expected:
        assert got[k].fields == expected[k].fields, k
