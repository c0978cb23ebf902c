"""Golden cases: ``testcases/<name>/`` holds sites.yaml, readings.csv and expected.jsonl
(hand-computed; the comment in sites.yaml shows the arithmetic), and optionally
inspections.csv. Every expected line must
match one replayed event on the fields it lists, and replay must give no other event of
the kinds listed (routine inspection items only when the case lists one). A new regression
case is a new folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ms4watch.alerts.replay import replay_files

CASES = sorted(p for p in (Path(__file__).parent / "testcases").iterdir() if p.is_dir())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_golden(case, tmp_path):
    out = tmp_path / "events.jsonl"
    insp = case / "inspections.csv"
    replay_files(case / "sites.yaml", case / "readings.csv", out, show_progress=False,
                 inspections=insp if insp.exists() else None)
    got = [json.loads(x) for x in out.read_text().splitlines()]
    want = [json.loads(x) for x in (case / "expected.jsonl").read_text().splitlines() if x.strip()]
    kinds = {w["kind"] for w in want} | {"inspection_overdue"}
    # routine items are left out unless the case lists some (most cases are about something else)
    routine = [] if any(w.get("reason") == "routine" for w in want) else [g for g in got if g.get("reason") == "routine"]
    relevant = [g for g in got if g["kind"] in kinds and g not in routine]
    assert len(relevant) == len(want), relevant
    for w in want:
        assert any(all(g.get(k) == v for k, v in w.items()) for g in relevant), w
