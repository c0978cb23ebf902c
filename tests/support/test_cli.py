"""tests/support/cli.py: ``ms4watch`` in process answers as the separate process does, and what
one call sets for the whole process is gone before the next."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys

import pytest

import ms4watch.cli
from tests.support.cli import run_cli, run_process


@pytest.mark.parametrize("args", [
    ("--version",),
    ("map", "trace", "OF-1"),                        # exit 1, one line on stdout
    ("map", "bisect", "OF-1", "--by", "volume"),     # a usage error: exit 2, typer's message on stderr
    ("no-such-command",),
])
def test_answers_as_the_separate_process(tmp_path, args):
    argv = [*args, "--data-dir", str(tmp_path)] if args[0] == "map" else list(args)
    env = {**os.environ, "COLUMNS": "100"}
    inside, outside = run_cli(*argv, env=env), run_process(*argv, env=env)
    assert (inside.returncode, inside.stdout, inside.stderr) == (outside.returncode, outside.stdout, outside.stderr)
    assert inside.args == ["ms4watch", *argv] and inside.exception is None


def test_an_exception_the_command_lets_out_is_exit_code_1_with_its_traceback(tmp_path, monkeypatch):
    def boom(*_a, **_k):
        raise RuntimeError("the command broke")
    monkeypatch.setattr(ms4watch.cli, "setup_logging", boom)
    got = run_cli("map", "show", "--data-dir", str(tmp_path))
    assert got.returncode == 1 and isinstance(got.exception, RuntimeError)
    assert "Traceback" in got.stderr and "RuntimeError: the command broke" in got.stderr


def test_two_calls_in_a_row_share_nothing_a_command_set(tmp_path, monkeypatch):
    """The first call's command sets logging to JSON lines (from its environment), sets a
    variable, changes folder, takes SIGTERM, adds to sys.argv and a logger; none of it is there
    afterwards, and the second call logs text lines again."""
    real_setup = ms4watch.cli.setup_logging
    root_handlers, ms4_level = list(logging.root.handlers), logging.getLogger("ms4watch").level
    sigterm, cwd, argv, environ = signal.getsignal(signal.SIGTERM), os.getcwd(), list(sys.argv), dict(os.environ)

    def setup_and_leak(level: int, log_format: str = "text") -> None:
        real_setup(level, log_format)
        logging.getLogger("ms4watch.leaky").warning("set up")
        os.environ["MS4WATCH_LEAKED"] = "1"
        os.chdir(tmp_path)
        signal.signal(signal.SIGTERM, lambda *_: None)
        sys.argv.append("--leaked")
        logging.getLogger("ms4watch.leaky").addHandler(logging.NullHandler())

    monkeypatch.setattr(ms4watch.cli, "setup_logging", setup_and_leak)
    first = run_cli("map", "show", "--data-dir", str(tmp_path / "none"),
                    env={**os.environ, "MS4WATCH_LOG_FORMAT": "json"})
    assert first.returncode == 1 and first.stdout == "no map imported yet (ms4watch map import)\n"
    [line] = first.stderr.splitlines()
    assert json.loads(line)["message"] == "set up"                 # the command did log JSON lines

    assert list(logging.root.handlers) == root_handlers and logging.getLogger("ms4watch").level == ms4_level
    assert not logging.getLogger("ms4watch.leaky").handlers
    assert dict(os.environ) == environ and "MS4WATCH_LEAKED" not in os.environ
    assert (signal.getsignal(signal.SIGTERM), os.getcwd(), sys.argv) == (sigterm, cwd, argv)

    def setup_and_log(level: int, log_format: str = "text") -> None:
        real_setup(level, log_format)
        logging.getLogger("ms4watch.leaky").warning("set up")
        assert "MS4WATCH_LEAKED" not in os.environ and os.getcwd() == cwd

    monkeypatch.setattr(ms4watch.cli, "setup_logging", setup_and_log)
    second = run_cli("map", "show", "--data-dir", str(tmp_path / "none"))
    assert second.returncode == 1 and second.stdout == "no map imported yet (ms4watch map import)\n"
    [line] = second.stderr.splitlines()
    assert line.endswith(" WARNING ms4watch.leaky: set up") and not line.startswith("{")


def test_env_is_the_whole_environment_of_the_call(tmp_path):
    env = {**os.environ, "MS4WATCH_LOG_FORMAT": "xml"}
    refused = run_cli("map", "show", "--data-dir", str(tmp_path), env=env)
    assert refused.returncode == 2 and "expected text or json, got 'xml'" in refused.stderr
    assert "MS4WATCH_LOG_FORMAT" not in os.environ
    assert run_cli("map", "show", "--data-dir", str(tmp_path)).returncode == 1     # no map, no complaint
    without_path = run_cli("map", "show", "--data-dir", str(tmp_path), env={"MS4WATCH_CONFIG": os.environ["MS4WATCH_CONFIG"]})
    assert without_path.returncode == 1 and "PATH" in os.environ


def test_a_thread_the_command_leaves_running_fails_the_call(tmp_path, monkeypatch):
    """In a process of its own the thread would end with it; here it would outlive the call."""
    import threading

    import tests.support.cli
    monkeypatch.setattr(tests.support.cli, "THREADS_END_WITHIN_S", 0.2)
    real_setup = ms4watch.cli.setup_logging
    release = threading.Event()

    def setup_and_start(wait_s: float):
        def start(level: int, log_format: str = "text") -> None:
            real_setup(level, log_format)
            threading.Thread(target=release.wait, args=(wait_s,), name="left-behind").start()
        return start

    monkeypatch.setattr(ms4watch.cli, "setup_logging", setup_and_start(60))
    try:
        with pytest.raises(AssertionError, match=r"left threads running \(left-behind\): run it with run_process"):
            run_cli("map", "show", "--data-dir", str(tmp_path))
    finally:
        release.set()
    monkeypatch.setattr(ms4watch.cli, "setup_logging", setup_and_start(0.01))    # one that ends by itself
    assert run_cli("map", "show", "--data-dir", str(tmp_path)).returncode == 1
