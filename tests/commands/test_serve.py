"""``ms4watch serve``'s process set-up around the server (the server itself: tests/test_server.py)."""

from __future__ import annotations

import gc
import threading

import pytest
from typer.testing import CliRunner

import ms4watch.commands.serve as serve_command
import ms4watch.server
from ms4watch.cli import build_app
from tests.support.towns import SITES


@pytest.fixture
def collector_restored():
    """The test's process gets its collector back as it was (serve tunes it for good)."""
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)
    if enabled:
        gc.enable()


def collector() -> tuple[bool, int, bool]:
    return gc.isenabled(), gc.get_threshold()[0], gc.get_freeze_count() > 0


class StartedServer:
    """What ``build_server`` returns, recording the collector as it is built and started."""

    def __init__(self, seen: dict) -> None:
        self.seen = seen
        self.seen["building"] = collector()
        self.registry = type("Reg", (), {"municipality": "testville"})()
        self.web_url = None

    def start(self) -> "StartedServer":
        self.seen["starting"] = collector()
        return self

    def stop(self) -> None:
        self.seen["stopped"] = True


def test_serve_collects_nothing_while_it_builds_then_tunes_the_collector_as_ingest_does(
        tmp_path, monkeypatch, collector_restored):
    """Imports and the server's parts (the registry, the engine, ingest) make ~10^5 objects that
    live as long as the server: no cycle collection walks them while they are made; then they
    are frozen and the young generation collected every 50,000 allocations (``tune_gc``), as
    ``ms4watch ingest`` does, before the server starts (a re-feed after a crash runs with the
    collector on). Untuned, serve spent more CPU in the collector than its alert engine took
    on the backlog bench (docs/store.md)."""
    (tmp_path / "sites.yaml").write_text(SITES)
    seen: dict = {}
    monkeypatch.setattr(ms4watch.server, "build_server", lambda settings, report: StartedServer(seen))
    stop = threading.Event()
    stop.set()                                   # stop at once: the command's set-up is what is under test
    monkeypatch.setattr(serve_command, "stop_on_signals", lambda: stop)
    monkeypatch.setenv("MS4WATCH_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("")
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    out = CliRunner().invoke(build_app(), ["serve", "--registry", str(tmp_path / "sites.yaml"),
                                           "--data-dir", str(tmp_path / "data"), "--http", "off"])
    assert out.exit_code == 0, out.output
    assert seen["building"] == (False, 700, False)
    enabled, threshold, frozen = seen["starting"]
    assert enabled and threshold >= 50_000 and frozen
    assert seen["stopped"]
    assert collector() == seen["starting"]


def test_a_start_that_fails_leaves_the_collector_on(tmp_path, monkeypatch, collector_restored):
    (tmp_path / "none.toml").write_text("")
    monkeypatch.setenv("MS4WATCH_CONFIG", str(tmp_path / "none.toml"))
    out = CliRunner().invoke(build_app(), ["serve", "--registry", str(tmp_path / "absent.yaml"),
                                           "--data-dir", str(tmp_path / "data"), "--http", "off"])
    assert out.exit_code == 2, out.output
    assert gc.isenabled()
