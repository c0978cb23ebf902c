"""``ms4watch calibrate`` as technicians and scripts use it: a real terminal (tmux) and JSON
lines, against an SDI-12 sonde simulated on a pseudo-terminal: a separate process where the test
talks with it (a terminal, the JSON conversation), in process (tests/support/cli.py) where it
answers at once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ms4watch.contract.calibration import CalibrationRecord
from ms4watch.edge.config import load_agent_config
from ms4watch.edge.spool import Spool
from tests.edge.drivers.instruments import Sdi12Bus, Sdi12Sensor
from tests.support.cli import run_cli
from tests.support.waiting import wait_for

REPO = Path(__file__).resolve().parents[2]
CONFIG = """\
device: LOG-DS1
municipality: town
station: DS-1
config_version: "3"
sensors:
  - id: turb        # the sonde's turbidity
    driver: sdi12
    quantity: turbidity
    unit: FNU
    port: {port}
    options: {{address: "0", break_ms: 0, retries: 1, baudrate: 9600, framing: 8N1}}
    calibration: {{performed: 2026-01-05, due: 2026-04-05, slope: 1.0, offset: 0.0}}
"""
RAW = {0: 0.4, 20: 22.4, 100: 110.4}      # the sonde reads 1.1 × the standard + 0.4


@pytest.fixture
def sonde():
    with Sdi12Bus({"0": Sdi12Sensor([RAW[0]])}) as bus:
        yield bus


def spooled_records(data: Path) -> list[CalibrationRecord]:
    spool = Spool(data / "LOG-DS1.spool.db", "LOG-DS1")
    try:
        events = [json.loads(p) for _, p in spool.events(0, 100)]
    finally:
        spool.close()
    return [CalibrationRecord.model_validate(e["data"]) for e in events if e["kind"] == "calibration"]


def arguments(cfg: Path, data: Path, *extra: str) -> list[str]:
    return ["calibrate", "turbidity", "--config", str(cfg), "--data-dir", str(data), "--sensor", "turb",
            "--period", "0.05", *extra]


def command(cfg: Path, data: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "ms4watch", *arguments(cfg, data, *extra)]


def drive_json(proc: subprocess.Popen, sonde: Sdi12Bus, raw: dict[str, float]) -> list[dict]:
    """Answer the JSON-lines protocol: at each ``measure`` put the sonde in that standard, and
    accept once three readings of it have come."""
    events, seen = [], 0
    for line in proc.stdout:
        ev = json.loads(line)
        events.append(ev)
        if ev["event"] == "measure":
            sonde.sensors["0"].values = [raw[ev["key"]]]
            seen = 0
        elif ev["event"] == "reading":
            seen += 1
            if seen == 3:
                proc.stdin.write("\n")
                proc.stdin.flush()
    proc.wait(30)
    return events


def test_scripted_json_run_refits_records_and_versions_the_config(tmp_path, sonde):
    cfg, data = tmp_path / "firmware.yaml", tmp_path / "data"
    cfg.write_text(CONFIG.format(port=sonde.port))
    proc = subprocess.Popen(command(cfg, data, "--technician", "Pat Doe", "--standard", "0:stablcal:A0",
                                    "--standard", "20:stablcal:A20", "--standard", "100:formazin:F100:2099-01-31",
                                    "--json", "--yes", "--interval", "60d"),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
    raw = {f"{stage}_{v}": r for v, r in RAW.items() for stage in ("as_found", "as_left")}
    events = drive_json(proc, sonde, raw)
    assert proc.returncode == 0
    result = events[-1]
    assert result["event"] == "result" and result["status"] == "pass" and result["config_version"] == "3+cal1"
    [rec] = spooled_records(data)
    assert rec.model_dump(mode="json", by_alias=True) == result["record"]
    assert [p.ok for p in rec.as_found] == [True, False, False] and all(p.ok for p in rec.as_left)
    assert rec.fit.slope == pytest.approx(1 / 1.1) and rec.fit.offset == pytest.approx(-0.4 / 1.1)
    assert [s.lot for s in rec.standards] == ["A0", "A20", "F100"] and str(rec.standards[2].expires) == "2099-01-31"
    assert (rec.next_due - rec.performed.date()).days == 60 and rec.technician == "Pat Doe"
    config, _ = load_agent_config(cfg)
    cal = config.sensors[0].calibration
    assert config.config_version == "3+cal1" and cal.record == rec.id and cal.slope == rec.fit.slope
    assert "# the sonde's turbidity" in cfg.read_text()                   # edited in place
    assert (tmp_path / "firmware.yaml.prev").read_text() == CONFIG.format(port=sonde.port)


def test_a_failing_run_names_the_point_records_it_and_leaves_the_config(tmp_path, sonde):
    cfg, data = tmp_path / "firmware.yaml", tmp_path / "data"
    cfg.write_text(CONFIG.format(port=sonde.port))
    proc = subprocess.Popen(command(cfg, data, "--technician", "Pat", "--standard", "0", "--standard", "100",
                                    "--adjust", "never", "--json", "--yes"),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
    events = drive_json(proc, sonde, {"as_found_0": 0.2, "as_found_100": 105.01})
    assert proc.returncode == 1
    result = events[-1]
    assert result["status"] == "fail" and result["config_version"] is None
    assert result["record"]["problems"] == [
        "as-found 100 FNU stablcal: read 105.01 FNU, +5.01 FNU (+5.01 %), limit ±5 FNU"]
    assert len(spooled_records(data)) == 1
    assert cfg.read_text() == CONFIG.format(port=sonde.port) and not (tmp_path / "firmware.yaml.prev").exists()


def test_missing_values_without_a_terminal_are_named(tmp_path, sonde):
    cfg, data = tmp_path / "firmware.yaml", tmp_path / "data"
    cfg.write_text(CONFIG.format(port=sonde.port))
    out = run_cli(*arguments(cfg, data, "--json"), cwd=REPO)
    assert out.returncode == 2
    assert json.loads(out.stdout.splitlines()[-1]) == {
        "event": "result", "status": "error",
        "error": "technician: needed (give it as a flag, or answer the ask line on stdin)"}


def test_an_expired_standard_is_refused_or_used_with_a_reason_the_record_keeps(tmp_path, sonde):
    cfg, data = tmp_path / "firmware.yaml", tmp_path / "data"
    cfg.write_text(CONFIG.format(port=sonde.port))
    stds = ["--standard", "0:stablcal:A0", "--standard", "20:stablcal:A20",
            "--standard", "100:formazin:F100:2019-06-30"]
    out = run_cli(*arguments(cfg, data, "--technician", "Pat", *stds, "--json", "--yes"), cwd=REPO)
    assert out.returncode == 2, out.stdout
    error = json.loads(out.stdout.splitlines()[-1])["error"]
    assert "standard 100 FNU formazin lot F100 expired on 2019-06-30" in error
    assert spooled_records(data) == [] and cfg.read_text() == CONFIG.format(port=sonde.port)
    proc = subprocess.Popen(command(cfg, data, "--technician", "Pat", *stds, "--expired-ok", "the new lot is late",
                                    "--json", "--yes"),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO)
    raw = {f"{stage}_{v}": r for v, r in RAW.items() for stage in ("as_found", "as_left")}
    drive_json(proc, sonde, raw)
    assert proc.returncode == 0
    [rec] = spooled_records(data)
    assert rec.standards[2].note.startswith("EXPIRED on 2019-06-30, used on ")
    assert rec.standards[2].note.endswith(": the new lot is late")
    assert rec.details["expired_standards"] == "100 FNU formazin lot F100 (expired 2019-06-30): the new lot is late"


class Tmux:
    """A real terminal: tmux on a socket of its own, a 160×50 window."""

    def __init__(self, tmp_path: Path):
        self.socket = f"ms4-{os.getpid()}-{tmp_path.name}"
        self.started = False

    def run(self, *args: str, check: bool = True) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], check=check, capture_output=True, text=True).stdout

    def start(self, cmd: str) -> None:
        self.run("new-session", "-d", "-s", "cal", "-x", "160", "-y", "50", cmd)
        self.started = True

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "cal", "-S", "-200", check=False)

    def type(self, text: str) -> None:
        if text:
            self.run("send-keys", "-t", "cal", "-l", text)
        self.run("send-keys", "-t", "cal", "Enter")

    def wait(self, text: str, timeout_s: float = 20) -> str:
        assert wait_for(lambda: text in self.screen(), timeout_s, poll_s=0.05), \
            f"{text!r} not on the screen:\n{self.screen()}"
        return self.screen()

    def wait_count(self, text: str, n: int, timeout_s: float = 20) -> None:
        assert wait_for(lambda: self.screen().count(text) >= n, timeout_s, poll_s=0.05), \
            f"{text!r} not {n} times on the screen:\n{self.screen()}"

    def close(self) -> None:
        if self.started:
            self.run("kill-server", check=False)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install tmux)")
def test_interactive_in_a_real_terminal(tmp_path, sonde):
    cfg, data = tmp_path / "firmware.yaml", tmp_path / "data"
    cfg.write_text(CONFIG.format(port=sonde.port))
    done = tmp_path / "exit-code"
    cmd = " ".join(command(cfg, data, "--period", "0.2")) + f"; echo $? > {done}; sleep 600"
    term = Tmux(tmp_path)
    term.start(f"cd {REPO} && {cmd}")
    try:
        term.wait("Technician (your name):")
        term.type("Pat Doe")
        term.wait("Standards to use, in FNU, comma-separated [0,20,100,800]:")
        term.type("0,20,100")
        for v, kind, lot in (("0", "stablcal", "A0"), ("20", "stablcal", "A20"), ("100", "formazin", "F100")):
            term.wait(f"{v} FNU: formazin or stablcal [stablcal]:")
            term.type("" if kind == "stablcal" else kind)
            term.wait(f"{v} FNU {kind}: lot number (blank: none):")
            term.type(lot)
        for n, stage in enumerate(("as found", "as left"), 1):
            for v, label in ((0, "0 FNU stablcal lot A0"), (20, "20 FNU stablcal lot A20"),
                             (100, "100 FNU formazin lot F100")):
                term.wait_count(f"put it in the {label} standard", n)        # the n-th time it is asked for
                sonde.sensors["0"].values = [RAW[v]]                          # the sonde goes into the standard
                term.wait_count(f"live: {RAW[v]:g} FNU   last 3: {RAW[v]:g} {RAW[v]:g} {RAW[v]:g}", n)
                term.type("")
            if stage == "as found":
                screen = term.wait("New correction: slope 0.909091, offset -0.363636.")
                assert "20 FNU stablcal lot A20" in screen and "+2.4 (+12 %)  limit ±1  OUT" in screen
        term.wait("Write the record and the new coefficients? [Y/n]")
        term.type("")
        screen = term.wait("reaches the server with the next messages")
        assert "PASS: turbidity of turb on LOG-DS1 (DS-1) by Pat Doe" in screen
        assert "config_version 3+cal1" in screen
        assert wait_for(lambda: done.exists() and done.read_text().strip() == "0", 10)
    finally:
        term.close()
    [rec] = spooled_records(data)
    assert rec.result.value == "pass" and [s.kind for s in rec.standards] == ["stablcal", "stablcal", "formazin"]
    assert load_agent_config(cfg)[0].config_version == "3+cal1"
