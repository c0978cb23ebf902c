"""`ms4watch replay`: readings CSV + registry -> events.jsonl following the contract."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from ms4watch.commands import replay as replay_cmd

from .support import REGISTRY, at

from ms4watch.contract.timeutil import iso_utc

SUPPRESS = """approved_discharges:
  - {outfall: OF-1, from: "2026-06-03T00:00:00Z", to: "2026-06-05T00:00:00Z", reason: hydrant flushing (DPW)}
"""


def _write(tmp_path):
    (tmp_path / "sites.yaml").write_text(REGISTRY + SUPPRESS)
    lines = ["time,station,quantity,value,unit"]
    for i in range(0, 4 * 24 * 12):  # 4 days, 5-min heartbeat, 1 bad row
        t = iso_utc(at(i * 5))
        lines.append(f"{t},RG-1,rain,0,in")
        day3 = 3 * 24 * 12
        flow_gpm = 2.0 if day3 <= i < day3 + 10 or 60 * 12 + 100 <= i < 60 * 12 + 107 else 0.0
        lines.append(f"{t},OF-1,flow,{flow_gpm / 448.831:.8f},cfs")
    lines.append("yesterday,OF-1,flow,1,gpm")
    (tmp_path / "readings.csv").write_text("\n".join(lines) + "\n")


def test_replay_cli_writes_contract_fields_and_suppresses(tmp_path):
    _write(tmp_path)
    app = typer.Typer()
    replay_cmd.register(app)

    @app.callback()
    def _root() -> None:
        pass

    out = tmp_path / "events.jsonl"
    res = CliRunner().invoke(app, ["replay", "--registry", str(tmp_path / "sites.yaml"), "--readings",
                                   str(tmp_path / "readings.csv"), "--out", str(out), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "readings.csv:" in res.output and ": time: " in res.output  # the bad row is named and left out
    events = [json.loads(x) for x in out.read_text().splitlines()]
    dwf = [e for e in events if e["kind"] == "dry_weather_flow"]
    # day 3 (dry for 72 h): 10 readings above the floor = 45 min -> one episode, suppressed by the approval;
    # day 2.5: 7 readings = 30 min, but rain data covers only 60 h -> unknown, a data-gap notice instead
    assert len(dwf) == 1
    e = dwf[0]
    assert set(e) >= {"kind", "outfall", "start", "end", "peak_gpm", "suppressed", "params", "provision"}
    assert e["suppressed"] == "approved discharge: hydrant flushing (DPW)"
    assert e["start"].endswith("-04:00") and abs(e["peak_gpm"] - 2.0) < 1e-6
    assert e["params"]["min_duration_min"] == 30.0 and "illicit" in e["provision"]
    assert [x["kind"] for x in events].count("dry_weather_unknown") == 1


def test_replay_cli_names_a_bad_registry(tmp_path):
    (tmp_path / "sites.yaml").write_text("municipality: x\noutfalls:\n  - {id: OF-1, name: a, rain_gauges: [RG-9]}\n")
    (tmp_path / "r.csv").write_text("time,station,quantity,value,unit\n")
    app = typer.Typer()
    replay_cmd.register(app)

    @app.callback()
    def _root() -> None:
        pass

    res = CliRunner().invoke(app, ["replay", "--registry", str(tmp_path / "sites.yaml"), "--readings",
                                   str(tmp_path / "r.csv"), "--out", str(tmp_path / "e.jsonl"), "--no-progress"])
    assert res.exit_code == 2 and "sites.yaml:3" in res.output and "RG-9" in res.output


def test_replay_cli_takes_the_approvals_recorded_on_the_workbench_from_their_csv_or_the_db(tmp_path):
    import threading
    from datetime import datetime, timezone

    from ms4watch.alerts.incidents.db import connect
    from ms4watch.workbench.records import SuppressionKind, SuppressionStore

    _write(tmp_path)
    (tmp_path / "sites.yaml").write_text(REGISTRY)                      # no approval in the file
    db = tmp_path / "workbench.db"
    conn = connect(db)
    SuppressionStore(conn, threading.RLock()).add(
        municipality="testtown", kind=SuppressionKind.APPROVED_DISCHARGE, outfall="OF-1",
        start=datetime(2026, 6, 4, tzinfo=timezone.utc), end=datetime(2026, 6, 5, tzinfo=timezone.utc),
        reason="dye test, recorded on the workbench", by="Pat")
    conn.close()
    (tmp_path / "approvals.csv").write_text(
        "kind,outfall,from,to,flow,reason,withdrawn_at\n"
        "approved_discharge,OF-1,2026-06-04T00:00:00Z,2026-06-05T00:00:00Z,,\"dye test, from the CSV\",\n")
    app = typer.Typer()
    replay_cmd.register(app)

    @app.callback()
    def _root() -> None:
        pass

    for approvals, reason in ((None, None), (db, "approved discharge: dye test, recorded on the workbench"),
                              (tmp_path / "approvals.csv", "approved discharge: dye test, from the CSV")):
        out = tmp_path / "events.jsonl"
        args = ["replay", "--registry", str(tmp_path / "sites.yaml"), "--readings", str(tmp_path / "readings.csv"),
                "--out", str(out), "--no-progress"] + (["--approvals", str(approvals)] if approvals else [])
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        [dwf] = [json.loads(x) for x in out.read_text().splitlines() if '"dry_weather_flow"' in x]
        assert dwf["suppressed"] == reason


def test_replay_says_how_many_readings_belonged_to_stations_the_registry_does_not_know(tmp_path):
    (tmp_path / "sites.yaml").write_text(REGISTRY)
    rows = ["time,station,quantity,value,unit"] + [f"{iso_utc(at(i * 5))},RG-1,rain,0,in" for i in range(12)]
    rows += [f"{iso_utc(at(i * 5))},OF-99,flow,1,gpm" for i in range(5)] + [f"{iso_utc(at(0))},rg-1,rain,0.01,in"]
    (tmp_path / "r.csv").write_text("\n".join(rows) + "\n")
    app = typer.Typer()
    replay_cmd.register(app)

    @app.callback()
    def _root() -> None:
        pass

    res = CliRunner().invoke(app, ["replay", "--registry", str(tmp_path / "sites.yaml"), "--readings",
                                   str(tmp_path / "r.csv"), "--out", str(tmp_path / "e.jsonl"), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert (f"r.csv: 6 readings belonged to stations {tmp_path / 'sites.yaml'} does not know and took part in no "
            "rule: OF-99 (5), rg-1 (1)") in res.output.replace("\n", "")
