"""A sensor taken from the running agent for a calibration, and given back — also when the
calibration process dies."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from ms4watch.edge.calibration.pause import CalibrationHold, PauseTimeout, SensorBusy, SensorLocks
from tests.support.waiting import wait_for


def test_without_an_agent_the_hold_is_immediate(tmp_path):
    with CalibrationHold(tmp_path, "turb", timeout_s=1) as h:
        assert h.waited_s < 1
        with pytest.raises(SensorBusy, match="another session"):
            CalibrationHold(tmp_path, "turb", timeout_s=1).__enter__()


def test_the_agent_lets_go_when_asked_and_takes_it_back_after(tmp_path):
    agent = SensorLocks(tmp_path, "turb")
    assert agent.take() and not agent.requested()
    stop = threading.Event()
    let_go = threading.Event()

    def agent_loop():       # what Agent.check_pauses does each time round its loop
        while not stop.is_set():
            if agent.held and agent.requested():
                agent.let_go()
                let_go.set()
            stop.wait(0.02)

    t = threading.Thread(target=agent_loop)
    t.start()
    try:
        with CalibrationHold(tmp_path, "turb", timeout_s=10):
            assert let_go.is_set() and not agent.held
            assert not agent.take()            # never while the calibration holds it
        assert agent.take()
    finally:
        stop.set()
        t.join()
        agent.close()


def test_an_agent_that_does_not_let_go_times_out(tmp_path):
    agent = SensorLocks(tmp_path, "turb")
    assert agent.take()
    with pytest.raises(PauseTimeout, match="did not let go of sensor turb"):
        with CalibrationHold(tmp_path, "turb", timeout_s=0.2):
            pass
    assert not agent.requested()            # the failed hold asks for nothing any more
    agent.close()


def test_a_killed_calibration_never_leaves_the_sensor_paused(tmp_path):
    code = ("import sys, time; from ms4watch.edge.calibration.pause import CalibrationHold\n"
            f"h = CalibrationHold({str(tmp_path)!r}, 'turb').__enter__(); print('held', flush=True); time.sleep(60)")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    agent = SensorLocks(tmp_path, "turb")
    try:
        assert p.stdout.readline() == b"held\n"
        assert agent.requested() and not agent.take()
        p.kill()
        p.wait()
        assert wait_for(agent.take, 5)
    finally:
        p.kill()
        agent.close()
