"""Each procedure run end to end in-process, its readings through the real drivers: a rain
gauge on an injected pulse source (as the pulse driver's tests do), level and flow sensors on
an SDI-12 line simulated on a pseudo-terminal; answers over the JSON-lines protocol."""

from __future__ import annotations

import io
import json
import os
from typing import Callable

import pytest

from ms4watch.contract.calibration import Procedure, Result
from ms4watch.edge.calibration.prompts import JsonPrompter
from ms4watch.edge.calibration.runs import run_flow, run_level, run_rain
from ms4watch.edge.calibration.session import CalibrationSession
from ms4watch.edge.config import load_agent_config
from tests.edge.drivers.instruments import Sdi12Bus, Sdi12Sensor

HEAD = "device: LOG-1\nmunicipality: town\nstation: OF-1\nconfig_version: \"7\"\nsensors:\n"


class Script(io.TextIOBase):
    """The prompter's stdout: each JSON line goes to ``on_event``, which may answer on stdin."""

    def __init__(self, on_event: Callable[[dict, "Script"], None]):
        self.on_event = on_event
        self.events: list[dict] = []
        self.r, self.w = os.pipe()
        self.stdin = os.fdopen(self.r, "r")

    def write(self, text: str) -> int:
        for line in text.splitlines():
            ev = json.loads(line)
            self.events.append(ev)
            self.on_event(ev, self)
        return len(text)

    def answer(self, text: str = "") -> None:
        os.write(self.w, (text + "\n").encode())

    def prompter(self) -> JsonPrompter:
        return JsonPrompter(self.stdin, self, period_s=0.02)


class Edges:
    """A reed switch the test closes (the pulse driver's ``PulseSource``)."""

    def __init__(self) -> None:
        self.on_edge: Callable[[float], None] | None = None
        self.t = 1000.0

    def start(self, on_edge):
        self.on_edge = on_edge

    def stop(self):
        self.on_edge = None

    def tips(self, n: int) -> None:
        for _ in range(n):
            self.t += 2.0           # a slow pour: tips 2 s apart, never double tips
            self.on_edge(self.t)


def test_rain_gauge_known_volume(tmp_path):
    cfg = tmp_path / "fw.yaml"
    cfg.write_text(HEAD + "  - {id: rain, driver: pulse, quantity: rain, unit: in, interval: 1min, "
                          "options: {pin: 17, tip_size: 0.01}, "
                          "calibration: {performed: 2026-01-01, due: 2026-07-01, slope: 1.0}}\n")
    gauge = Edges()

    def on_event(ev, s):
        if ev["event"] == "measure":
            gauge.tips(57)                        # 473 mL through an 8 in funnel: 57.42 expected
        elif ev["event"] == "reading" and sum(e.get("value") or 0 for e in s.events
                                              if e["event"] == "reading") >= 0.565:
            s.answer()

    script = Script(on_event)
    with CalibrationSession(cfg, tmp_path / "data", "rain", shared={"pulse_sources": {"rain": gauge}}) as s:
        out = run_rain(s, script.prompter(), volume_ml=473, orifice_in=8, tolerance_pct=2)
        fin = s.finish(out, Procedure.RAIN_VOLUME, "Sam")
    assert out.details["counted_tips"] == 57 and out.result is Result.PASS
    assert fin.record.fit.slope == pytest.approx(57.4236 / 57, abs=1e-5)
    config, _ = load_agent_config(cfg)
    assert config.config_version == "7+cal1" and config.sensors[0].calibration.slope == fin.record.fit.slope
    # the calibration's tips never reach the agent's own counter
    assert not (tmp_path / "data" / "pulse-rain.json").exists()


@pytest.fixture
def line():
    with Sdi12Bus({"0": Sdi12Sensor([0.48]), "1": Sdi12Sensor([180.0])}) as bus:
        yield bus


SDI = "options: {{address: \"{a}\", break_ms: 0, retries: 1, baudrate: 9600, framing: 8N1}}"


def test_level_zero_against_a_measured_depth(tmp_path, line):
    cfg = tmp_path / "fw.yaml"
    cfg.write_text(HEAD + f"  - {{id: level, driver: sdi12, quantity: level, unit: ft, port: {line.port}, "
                   + SDI.format(a="0") + "}\n")

    def on_event(ev, s):
        if ev["event"] == "measure" and ev["key"] == "as_left":
            line.sensors["0"].values = [0.481]
        if ev["event"] == "reading" and ev["value"] is not None:
            s.answer()

    script = Script(on_event)
    with CalibrationSession(cfg, tmp_path / "data", "level") as s:
        out = run_level(s, script.prompter(), measured=0.52, tolerance=0.01, samples=1)
    assert out.fit.offset == pytest.approx(0.04) and out.as_left[0].reading == pytest.approx(0.521)
    assert out.result is Result.PASS


def test_flow_against_a_vnotch_weir(tmp_path, line):
    cfg = tmp_path / "fw.yaml"
    cfg.write_text(HEAD + f"  - {{id: flow, driver: sdi12, quantity: flow, unit: gpm, port: {line.port}, "
                   + SDI.format(a="1") + "}\n")
    ref_gpm = 2.49 * 0.5 ** 2.48 * 448.8311688

    def on_event(ev, s):
        if ev["event"] == "measure" and ev["key"].startswith("as_left"):
            line.sensors["1"].values = [181.0]
        if ev["event"] == "reading" and ev["value"] is not None:
            s.answer()

    script = Script(on_event)
    with CalibrationSession(cfg, tmp_path / "data", "flow") as s:
        out = run_flow(s, script.prompter(), method="vnotch", tolerance_pct=10, samples=1, head_ft=0.5)
        fin = s.finish(out, Procedure.FLOW_PRIMARY, "Sam", dry_run=True)
    assert out.as_found[0].reference == pytest.approx(ref_gpm, rel=1e-6) and not out.as_found[0].ok
    assert out.fit.slope == pytest.approx(ref_gpm / 180.0, rel=1e-6)
    assert out.result is Result.PASS and fin.messages[-1] == "dry run: nothing written"
    assert not fin.spooled and load_agent_config(cfg)[0].config_version == "7"
