"""The demo pipeline end to end: real edge agents, a real broker, ingest, the store."""

import json
import sqlite3

import pytest

from ms4watch.demo import STEP_NS, Demo, DemoOptions
from tests.support.waiting import wait_for


def _run(tmp_path, **over):
    opts = DemoOptions(days=over.pop("days", 0.5), speed=0, workdir=tmp_path / "demo", **over)
    lines: list[str] = []
    summary = Demo(opts, report=lines.append).run()
    return summary, lines, tmp_path / "demo" / "store.db"


def _assert_complete(summary, store):
    assert summary.readings_published > 0
    assert summary.readings_taken == summary.readings_published == summary.readings_stored
    assert summary.duplicate_messages >= 0 and summary.rejected_messages == 0
    db = sqlite3.connect(store)
    dup = db.execute("SELECT count(*) FROM (SELECT device, sensor, time_ns FROM readings "
                     "GROUP BY 1, 2, 3 HAVING count(*) > 1)").fetchone()[0]
    assert dup == 0
    assert db.execute("SELECT count(*) FROM readings").fetchone()[0] == summary.readings_stored
    # canonical units only
    units = dict(db.execute("SELECT DISTINCT quantity, unit FROM readings").fetchall())
    assert units == {"rain": "in", "flow": "gpm", "turbidity": "NTU", "battery": "V", "signal": "dBm"}
    return db


def test_demo_on_embedded_broker(tmp_path):
    summary, lines, store = _run(tmp_path, http="off")     # the workbench is not what this checks
    db = _assert_complete(summary, store)
    assert summary.devices == 7
    # half a day: 7 loggers, 1-min rain at two gauges, 5-min flow and turbidity, 15-min battery and signal
    expected = 2 * 721 + 5 * 145 + 7 * 49 * 2
    assert summary.readings_stored == expected
    assert any("embedded MQTT broker" in line for line in lines)
    # the metric gauge was converted: RG-2 reported mm, the store holds inches
    # (0.2 mm tips = 0.007874 in)
    tips = db.execute("SELECT DISTINCT value FROM readings WHERE station='RG-2' AND quantity='rain' "
                      "AND value > 0").fetchall()
    assert tips and all(abs(v / 0.007874 - round(v / 0.007874)) < 1e-3 for (v,) in tips)
    # OF-2 reports L/s: stored flow is gpm, small values at most a runoff peak
    assert 1 < db.execute("SELECT max(value) FROM readings WHERE station='OF-2' AND quantity='flow'").fetchone()[0] < 1000
    # the storm of the demo week started 8 h in: rain reached the store
    assert db.execute("SELECT sum(value) FROM readings WHERE station='RG-1' AND quantity='rain'").fetchone()[0] > 0.5


@pytest.mark.mosquitto
def test_demo_through_real_mosquitto(tmp_path, mosquitto_broker):
    # an hour and a bit (every quantity, the 15-min battery and signal included), no workbench:
    # what differs from the embedded broker is the broker, not the length of the run
    summary, lines, store = _run(tmp_path, days=0.05, http="off", broker_url=mosquitto_broker.url)
    _assert_complete(summary, store)
    assert not any("embedded" in line for line in lines)


@pytest.fixture(scope="module")
def short_demo(tmp_path_factory):
    """One short demo (an hour and a bit, no workbench) that the tests only reading its
    summary, store and records share: each demo run costs its broker, server and loggers."""
    tmp_path = tmp_path_factory.mktemp("short-demo")
    summary, lines, store = _run(tmp_path, days=0.05, http="off")
    return summary, lines, store.parent


def test_summary_json(short_demo, tmp_path):
    from ms4watch.demo import write_summary
    summary, _, _ = short_demo
    write_summary(summary, tmp_path / "s.json")
    data = json.loads((tmp_path / "s.json").read_text())
    assert {"readings_published", "readings_stored", "alerts"} <= set(data)
    assert all("kind" in a for a in data["alerts"])


def test_workdir_not_made_by_demo_is_refused(tmp_path):
    from ms4watch.errors import DemoError
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "precious.txt").write_text("keep me")
    with pytest.raises(DemoError, match="not empty"):
        _run(tmp_path)
    assert (tmp_path / "demo" / "precious.txt").exists()


def test_status_of_every_logger_is_kept(short_demo):
    summary, _, wd = short_demo
    db = sqlite3.connect(f"file:{wd / 'store.db'}?mode=ro", uri=True)
    rows = db.execute("SELECT device, station, state FROM device_status ORDER BY device").fetchall()
    assert len(rows) == summary.devices
    assert {r[0] for r in rows} >= {"LOG-RG1", "LOG-OF2", "LOG-DS1"}
    assert ("LOG-OF2", "OF-2") in {(r[0], r[1]) for r in rows}


def test_ctrl_c_stops_cleanly_with_nothing_lost(tmp_path):
    import signal
    import subprocess
    import sys
    from contextlib import closing
    summary = tmp_path / "summary.json"
    # no workbench: what is asserted is the stop (its start-up would be a third of this test's CPU)
    proc = subprocess.Popen([sys.executable, "-m", "ms4watch", "demo", "--speed", "3000", "--http", "off",
                             "--workdir", str(tmp_path / "demo"), "--summary-json", str(summary)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout:
        if "simulated loggers" in line:
            break
    # Ctrl-C once the simulation is under way: the store holds readings more than one step
    # (15 simulated minutes) apart, so the first steps are done (simulated_days > 0).
    store = tmp_path / "demo" / "store.db"

    def stored_span_ns() -> int:
        try:
            with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)) as db:
                return db.execute("SELECT coalesce(max(time_ns) - min(time_ns), 0) FROM readings").fetchone()[0]
        except sqlite3.OperationalError:        # the store or its table is not made yet
            return 0

    wait_for(lambda: proc.poll() is not None or stored_span_ns() > STEP_NS, 60, poll_s=0.1)
    assert proc.poll() is None, f"the demo ended before Ctrl-C (exit code {proc.returncode})"
    assert stored_span_ns() > STEP_NS, "no readings past the first simulated step in the store after 60 s"
    proc.send_signal(signal.SIGINT)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == 0, out
    assert "Traceback" not in out
    data = json.loads(summary.read_text())
    assert data["interrupted"] is True
    assert 0 < data["simulated_days"] < 7
    assert data["readings_published"] == data["readings_stored"] == data["readings_taken"]


def test_demo_serve_keeps_the_workbench_up_until_ctrl_c_and_its_report_agrees_with_the_command(tmp_path):
    """``ms4watch demo --serve`` prints the workbench's URL and a login, keeps it up after the
    simulated days, and stops cleanly on Ctrl-C. Meanwhile, on its records: the annual report's
    inspection items (and every other section) read the same on the page as from ``ms4watch
    report annual`` (one serving demo for both: each costs a server, a workbench and loggers)."""
    import re
    import signal
    import subprocess
    import sys

    import httpx
    from typer.testing import CliRunner

    from ms4watch.cli import build_app
    from ms4watch.demo import demo_configs
    wd = tmp_path / "demo"
    proc = subprocess.Popen([sys.executable, "-m", "ms4watch", "demo", "--days", "0.05", "--speed", "0", "--serve",
                             "--workdir", str(wd)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        url = login = None
        for line in proc.stdout:
            m = re.search(r"workbench on (http://127\.0\.0\.1:\d+) — log in as smo / (\S+)", line)
            if m:
                url, login = m.groups()
            if "the workbench stays on" in line:
                break
        assert url and login, "no URL and login printed"
        (tmp_path / "ms4watch.toml").write_text(f'registry = "{demo_configs() / "sites.yaml"}"\ndata_dir = "{wd}"\n')
        r = CliRunner().invoke(build_app(), ["report", "annual", "--year", "2026", "--out", str(tmp_path / "out"),
                                             "--config", str(tmp_path / "ms4watch.toml")])
        assert r.exit_code == 0, r.output
        with httpx.Client(base_url=url, timeout=30) as c:
            assert c.get("/health").json() == {"status": "ok"}
            page = c.get("/login")
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
            r = c.post("/login", data={"username": "smo", "password": login, "csrf": csrf})
            assert r.status_code == 303
            assert c.get("/api/v1/me").json()["role"] == "admin"
            for section in ("inspections", "outfalls", "screened", "enforcement", "swppp_reviews"):
                web = c.get(f"/reports/annual/2026/{section}.csv")
                assert web.status_code == 200, section
                assert web.content == (tmp_path / "out" / f"{section}.csv").read_bytes(), section
            items = (tmp_path / "out" / "inspections.csv").read_text().splitlines()[1:]
            assert items and all(line.endswith(",not yet due") for line in items), items
        proc.send_signal(signal.SIGINT)
        out = proc.communicate(timeout=60)[0]
        assert proc.returncode == 0, out
        assert "Traceback" not in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_demos_records_and_its_report_take_the_simulated_clock(short_demo, tmp_path):
    """The demo writes its simulated present beside its records; ``ms4watch report annual``
    on them counts to it (as the demo's workbench does), not to today."""
    from datetime import datetime, timedelta, timezone

    from zoneinfo import ZoneInfo

    from typer.testing import CliRunner

    from ms4watch.cli import build_app
    from ms4watch.demo import demo_configs, simulated_now
    summary, _, wd = short_demo
    now = simulated_now(wd)
    start = DemoOptions().start
    assert now is not None and start < now <= start + timedelta(days=summary.simulated_days)
    inspected = sqlite3.connect(f"file:{wd / 'incidents.db'}?mode=ro", uri=True).execute(
        "SELECT max(recorded_at) FROM inspections").fetchone()[0]
    assert inspected is None or datetime.fromisoformat(inspected) <= now
    (tmp_path / "ms4watch.toml").write_text(f'registry = "{demo_configs() / "sites.yaml"}"\ndata_dir = "{wd}"\n')
    r = CliRunner().invoke(build_app(), ["report", "annual", "--year", "2026", "--out", str(tmp_path / "out"),
                                         "--config", str(tmp_path / "ms4watch.toml")])
    assert r.exit_code == 0, r.output
    assert f"counted to {now.astimezone(ZoneInfo('America/New_York')):%Y-%m-%d %H:%M}" in r.output, r.output
    assert datetime.now(timezone.utc).strftime("%Y-%m-%d") not in r.output.splitlines()[0]
    assert simulated_now(tmp_path) is None                          # not a demo's directory


class _SignalAfterBegin:
    """A spool connection that delivers SIGINT to this process just after the main thread's
    ``BEGIN IMMEDIATE`` returns: where a loaded machine puts a Ctrl-C most often (the main
    thread waits in BEGIN for the uplink's write lock), and where an exception raised by the
    signal leaves the spool's transaction open: the uplink's next acknowledgement fails in
    it (``PRAGMA synchronous`` inside a transaction), paho's thread dies, and the demo waited
    out its 120 s drain with messages stuck in the spool. Records whether a transaction was
    open when the spool was closed."""

    open_at_close: list[bool] = []

    def __init__(self, db, armed):
        self._db = db
        self._armed = armed

    def close(self):
        self.open_at_close.append(self._db.in_transaction)
        self._db.close()

    def execute(self, sql, *args):
        import signal
        import threading
        cur = self._db.execute(sql, *args)
        if sql == "BEGIN IMMEDIATE" and threading.current_thread() is threading.main_thread() and self._armed():
            signal.raise_signal(signal.SIGINT)
        return cur

    def __getattr__(self, name):
        return getattr(self._db, name)


def test_ctrl_c_as_the_main_thread_begins_a_spool_write_loses_nothing(tmp_path, monkeypatch):
    """Ctrl-C is a request to stop, taken between simulated steps: it never raises into
    whatever the main thread is doing (here, opening a spool transaction)."""
    from ms4watch.edge.spool import Spool
    steps: list[float] = []
    fired: list[bool] = []

    def armed() -> bool:               # once, a few simulated steps in
        if len(steps) >= 3 and not fired:
            fired.append(True)
            return True
        return False

    real_init = Spool.__init__

    def init(self, *a, **k):
        real_init(self, *a, **k)
        self._db = _SignalAfterBegin(self._db, armed)

    monkeypatch.setattr(Spool, "__init__", init)
    monkeypatch.setattr(_SignalAfterBegin, "open_at_close", [])
    opts = DemoOptions(days=0.5, speed=0, workdir=tmp_path / "demo", drain_timeout_s=20)
    lines: list[str] = []
    summary = Demo(opts, report=lines.append, progress=lambda done, total: steps.append(done)).run()
    assert fired, "the signal was never delivered"
    assert len(_SignalAfterBegin.open_at_close) == summary.devices
    assert not any(_SignalAfterBegin.open_at_close), "a spool transaction was left open"
    assert summary.interrupted is True
    assert 0 < summary.simulated_days < 0.5
    assert not any("still has" in line for line in lines), lines   # nothing left in a spool
    _assert_complete(summary, tmp_path / "demo" / "store.db")


def test_a_second_ctrl_c_while_stopping_exits_at_once(tmp_path):
    import signal
    import subprocess
    import sys
    # no workbench: what is asserted is the second signal (its start-up would be most of this test's CPU)
    proc = subprocess.Popen([sys.executable, "-m", "ms4watch", "demo", "--speed", "3000", "--http", "off",
                             "--workdir", str(tmp_path / "demo")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "simulated loggers" in line:
                proc.send_signal(signal.SIGINT)
            if "interrupted: draining" in line:      # the first one was taken as a request to stop
                proc.send_signal(signal.SIGINT)
                break
        out = "".join(lines) + proc.communicate(timeout=60)[0]
        assert proc.returncode == 130, out
        assert "SIGINT again while stopping; exiting now" in out
        assert "Traceback" not in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_after_the_demo_the_commands_it_prints_work_on_its_town(tmp_path, monkeypatch):
    """Issue 23: after `ms4watch demo`, the commands for incidents, reports and users work on
    the demo's town as printed (a settings file of the demo's own, named by one export line),
    and a command run without settings says how to name them instead of pointing at a flag
    it does not have or making a database where no server was set up."""
    import os
    import shlex

    from typer.testing import CliRunner

    from ms4watch.cli import build_app
    for k in [k for k in os.environ if k.startswith("MS4WATCH_")]:
        monkeypatch.delenv(k)
    monkeypatch.chdir(tmp_path)

    def ms4watch(argv, **env):
        r = CliRunner().invoke(build_app(), argv, env={"COLUMNS": "200", **env})
        return r.exit_code, r.output

    rc, out = ms4watch(["demo", "--days", "0.05", "--speed", "0", "--http", "off"])
    assert rc == 0, out
    lines = [ln.strip() for ln in out.splitlines()]
    export = next(ln for ln in lines if ln.startswith("export MS4WATCH_CONFIG="))
    settings_file = shlex.split(export.removeprefix("export "))[0].split("=", 1)[1]
    assert os.path.isabs(settings_file) and os.path.exists(settings_file)
    commands = [ln for ln in lines[lines.index(export) + 1:] if ln.startswith("ms4watch ")]
    assert {c.split()[1] for c in commands} >= {"incidents", "report", "users"}, commands
    (tmp_path / "pw").write_text("a long enough demo password\n")
    for c in commands:
        argv = shlex.split(c.split("#")[0])[1:]
        if argv[:2] == ["users", "add"]:
            argv += ["--password-file", str(tmp_path / "pw")]
        rc, out = ms4watch(argv, MS4WATCH_CONFIG=settings_file)
        assert rc == 0, f"{c}: {out}"
        if argv[:2] == ["incidents", "list"]:
            assert "CS-1" in out     # the demo town's construction site, due its routine inspection
    rc, out = ms4watch(["users", "list"], MS4WATCH_CONFIG=settings_file)
    assert "viewer1" in out and "viewer" in out
    # Without settings: one line naming how to give them, no flag that does not exist, nothing made.
    empty = tmp_path / "nowhere"
    (tmp_path / "none.toml").write_text("")
    for argv in (["report", "annual", "--year", "2026"], ["incidents", "list"], ["users", "list"]):
        rc, out = ms4watch(argv, MS4WATCH_DATA_DIR=str(empty), MS4WATCH_CONFIG=str(tmp_path / "none.toml"))
        assert rc == 2, f"{argv}: {out}"
        assert "MS4WATCH_CONFIG" in out and "--registry" not in out, f"{argv}: {out}"
    assert not empty.exists()
