"""``ms4watch <args>`` in this process, answered like ``subprocess.run(..., capture_output=True,
text=True)``: a :class:`subprocess.CompletedProcess` with the exit code, stdout and stderr.

A separate ``python -m ms4watch`` pays Python's start-up and the heavy imports (pyogrio and
pandas, networkx, pydantic's settings, typer) again at every call: ~1 s of CPU on a quiet
machine, most of the time of a test that runs a command a few times. In process the imports
are paid once per test process. What the real entry point adds — the console script, the
interpreter's own exit code, ``-m ms4watch`` — each command keeps covered by one test that
runs it as a separate process (:func:`run_process`).

The command runs as :func:`ms4watch.cli.main` runs it (``build_app`` of the named command),
through typer's ``CliRunner`` (which swaps ``sys.stdin``/``stdout``/``stderr`` and click's
prompt and width state, and restores them). Around it, what a command may change for the whole
process is put back as it was, so that one call cannot leak into the next:

* ``os.environ`` — the call sees exactly ``env`` (default: this process's environment) and
  the environment is restored afterwards, whatever the command set;
* the working directory (``cwd``) and ``sys.argv``;
* logging: the root logger's handlers (``setup_logging`` replaces them with one on the
  captured stderr) and every logger's level, handlers, ``propagate`` and ``disabled``;
  ``logging.disable``;
* signal handlers (``StopSignals`` installs SIGINT/SIGTERM handlers).

An exception the command does not handle is exit code 1 with the traceback on stderr, as
from the interpreter. A command that truly needs a process of its own (signals to it, a
daemon, fork, a terminal on stdin) keeps ``subprocess``.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from ms4watch.cli import build_app, invoked_command

REPO = Path(__file__).resolve().parents[2]
THREADS_END_WITHIN_S = 5.0
_SCRIPT = Path(sys.executable).parent / "ms4watch"
ENTRY_POINT = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "ms4watch"]


class CliResult(subprocess.CompletedProcess[str]):
    """A :class:`subprocess.CompletedProcess`, plus what only an in-process run can tell:
    ``output``, stdout and stderr interleaved as written, and ``exception``, what the command
    let out (None for an exit, even a non-zero one)."""

    def __init__(self, args: list[str], returncode: int, stdout: str, stderr: str, output: str,
                 exception: BaseException | None):
        super().__init__(args, returncode, stdout, stderr)
        self.output = output
        self.exception = exception


def run_cli(*args: str | Path, env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
            input: str | None = None) -> CliResult:
    """``ms4watch *args`` in process; ``env`` is the whole environment it sees (like
    ``subprocess.run``'s), ``input`` its stdin."""
    argv = [str(a) for a in args]
    before = set(threading.enumerate())
    with _isolated(env, cwd, argv):
        app = build_app(invoked_command(argv))
        result = CliRunner().invoke(app, argv, input=input, prog_name="ms4watch", catch_exceptions=True)
    _no_threads_left(before, argv)
    stderr, output, code, exception = result.stderr, result.output, result.exit_code, result.exception
    if isinstance(exception, SystemExit):
        exception = None
    elif exception is not None:
        assert result.exc_info is not None
        trace = "".join(traceback.format_exception(*result.exc_info))
        stderr, output, code = stderr + trace, output + trace, 1
    return CliResult(["ms4watch", *argv], code, result.stdout, stderr, output, exception)


def _no_threads_left(before: set[threading.Thread], argv: list[str]) -> None:
    """A process ends its threads when it exits; in process, a thread the command left
    running would outlive it (and write to what the next call sees): that command needs its
    own process."""
    deadline = time.monotonic() + THREADS_END_WITHIN_S
    for t in [t for t in set(threading.enumerate()) - before if not t.daemon]:
        t.join(max(0.0, deadline - time.monotonic()))
    left = [t.name for t in set(threading.enumerate()) - before if t.is_alive() and not t.daemon]
    assert not left, f"ms4watch {' '.join(argv)} left threads running ({', '.join(left)}): run it with run_process"


def run_process(*args: str | Path, env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
                input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``ms4watch *args`` as a separate process: the real entry point, the console script
    installed beside this Python (``python -m ms4watch`` where there is none)."""
    return subprocess.run([*ENTRY_POINT, *map(str, args)], capture_output=True, text=True,
                          env=None if env is None else dict(env), cwd=cwd, input=input, timeout=timeout)


EMPTY_SETTINGS = Path(__file__).resolve().parent / "empty-settings.toml"


def env_without_settings(**extra: str) -> dict[str, str]:
    """This process's environment without any ``MS4WATCH_*`` setting, plus ``extra``. The
    settings file stays the tests' empty one (``MS4WATCH_CONFIG``, unless ``extra`` names
    another): without it a command reads /etc/ms4watch/ms4watch.toml, which tests/test_deb.py
    installs while other tests run."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith("MS4WATCH_")}
    return kept | {"MS4WATCH_CONFIG": str(EMPTY_SETTINGS)} | extra


@dataclass
class _LoggerState:
    level: int
    handlers: list[logging.Handler]
    propagate: bool
    disabled: bool


@dataclass
class _Saved:
    environ: dict[str, str]
    cwd: str
    argv: list[str]
    disable: int
    loggers: dict[str, _LoggerState] = field(default_factory=dict)
    root: _LoggerState | None = None
    signals: dict[signal.Signals, Any] = field(default_factory=dict)


def _logger_state(lg: logging.Logger) -> _LoggerState:
    return _LoggerState(lg.level, list(lg.handlers), lg.propagate, lg.disabled)


def _restore_logger(lg: logging.Logger, state: _LoggerState | None) -> None:
    state = state or _LoggerState(logging.NOTSET, [], True, False)   # one the command created
    for h in lg.handlers:
        if h not in state.handlers:
            h.close()
    lg.setLevel(state.level)
    lg.handlers[:] = state.handlers
    lg.propagate = state.propagate
    lg.disabled = state.disabled


def _handlers() -> dict[signal.Signals, Any]:
    got = {}
    for sig in signal.valid_signals():
        try:
            got[signal.Signals(sig)] = signal.getsignal(sig)
        except (ValueError, OSError):
            continue
    return got


@contextmanager
def _isolated(env: Mapping[str, str] | None, cwd: str | Path | None, argv: list[str]) -> Iterator[None]:
    manager = logging.root.manager
    saved = _Saved(environ=dict(os.environ), cwd=os.getcwd(), argv=list(sys.argv), disable=manager.disable,
                   root=_logger_state(logging.root), signals=_handlers())
    saved.loggers = {name: _logger_state(lg) for name, lg in manager.loggerDict.items()
                     if isinstance(lg, logging.Logger)}
    try:
        if env is not None:
            _set_environ(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = ["ms4watch", *argv]
        yield
    finally:
        sys.argv = saved.argv
        os.chdir(saved.cwd)
        _set_environ(saved.environ)
        logging.disable(saved.disable)
        _restore_logger(logging.root, saved.root)
        for name, lg in list(manager.loggerDict.items()):
            if isinstance(lg, logging.Logger):
                _restore_logger(lg, saved.loggers.get(name))
        for sig, handler in saved.signals.items():
            if signal.getsignal(sig) is not handler and handler is not None:
                signal.signal(sig, handler)


def _set_environ(env: Mapping[str, str]) -> None:
    tz = os.environ.get("TZ")
    for k in [k for k in os.environ if k not in env]:
        del os.environ[k]
    os.environ.update(env)
    if os.environ.get("TZ") != tz:
        time.tzset()


__all__ = ["CliResult", "run_cli", "run_process", "ENTRY_POINT", "env_without_settings", "REPO"]
