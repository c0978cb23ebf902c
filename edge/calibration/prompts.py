"""Talking to the technician: a terminal (a laptop or a phone's SSH app on the logger), or
JSON lines for a script.

Both have the same four verbs the procedures use — ``say``, ``ask``, ``measure``,
``confirm`` — so a procedure is written once:

* :class:`TerminalPrompter`: questions with defaults, and while the sensor sits in a
  standard its live readings on one refreshed line until the technician presses Enter
  (``q`` then Enter cancels the run, nothing written).
* :class:`JsonPrompter` (``--json``): every step is one JSON object on stdout (``ask``,
  ``measure``, ``reading``, ``say``, finally ``result``); the script answers an ``ask`` with
  one line on stdin and accepts a ``measure`` with an empty line (``abort`` cancels). When
  stdin has ended (``< /dev/null``) nothing is waited for: a question takes its default
  (or the run stops naming the missing flag) and a measurement takes its readings at once.
"""

from __future__ import annotations

import json
import os
import select
import statistics
import time
from typing import IO, Any, Callable, Protocol, Sequence

from ..errors import DriverError, EdgeError

__all__ = ["Aborted", "Missing", "Prompter", "TerminalPrompter", "JsonPrompter", "Measurement"]


class Aborted(EdgeError):
    """The technician cancelled the run."""


class Missing(EdgeError):
    """A value the run needs was neither given by a flag nor answered."""


class Measurement:
    """The readings taken while the technician waited, and the one value accepted."""

    def __init__(self, values: Sequence[float], value: float):
        self.values = list(values)
        self.value = value


Reader = Callable[[], float]


class Prompter(Protocol):
    def say(self, text: str) -> None: ...

    def ask(self, key: str, question: str, default: str | None = None) -> str: ...

    def measure(self, key: str, instruction: str, read: Reader, unit: str, *, samples: int = 3,
                count: bool = False) -> Measurement: ...

    def confirm(self, key: str, question: str, default: bool = True) -> bool: ...

    def result(self, data: dict[str, Any], lines: Sequence[str]) -> None: ...


def _accept(values: list[float], samples: int, count: bool) -> float:
    if count:
        return float(sum(values))
    return float(statistics.median(values[-samples:]))


class _Lines:
    """Lines from an input stream without blocking past a deadline (select on its descriptor)."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self.ended = False
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None

    def ready(self, timeout_s: float) -> bool:
        if self.ended:
            return False
        if self.fd is None:
            return True
        r, _, _ = select.select([self.fd], [], [], max(0.0, timeout_s))
        return bool(r)

    def read(self) -> str | None:
        if self.ended:
            return None
        line = self.stream.readline()
        if line == "":
            self.ended = True
            return None
        return line.rstrip("\r\n")


class TerminalPrompter:
    """Prompts on a terminal; live readings refresh one line (``\\r``)."""

    def __init__(self, stdin: IO[str], stdout: IO[str], *, period_s: float = 1.0):
        self.lines = _Lines(stdin)
        self.out = stdout
        self.period_s = period_s

    def _print(self, text: str = "", end: str = "\n") -> None:
        self.out.write(text + end)
        self.out.flush()

    def say(self, text: str) -> None:
        self._print(text)

    def ask(self, key: str, question: str, default: str | None = None) -> str:
        while True:
            self._print(f"{question}" + (f" [{default}]" if default not in (None, "") else "") + ": ", end="")
            line = self.lines.read()
            if line is None:
                if default is not None:
                    return default
                raise Missing(f"{key}: no answer (input ended)")
            line = line.strip()
            if line.lower() == "q":
                raise Aborted("cancelled; nothing written")
            if line:
                return line
            if default is not None:
                return default
            self._print("  (an answer is needed; q cancels)")

    def confirm(self, key: str, question: str, default: bool = True) -> bool:
        answer = self.ask(key, question + (" [Y/n]" if default else " [y/N]"), "").strip().lower()
        if not answer:
            return default
        return answer in ("y", "yes", "j", "o", "oui")

    def measure(self, key: str, instruction: str, read: Reader, unit: str, *, samples: int = 3,
                count: bool = False) -> Measurement:
        self._print(instruction)
        self._print("  live readings below; press Enter when " + ("the last drop has gone through" if count else
                                                                    "the reading is steady") + " (q cancels)")
        values: list[float] = []
        note = ""
        while True:
            started = time.monotonic()
            try:
                values.append(read())
                note = ""
            except DriverError as e:
                note = f"  no reading: {e}"
            if values:
                shown = (f"  {sum(values):.6g} {unit} counted" if count else
                         f"  live: {values[-1]:.6g} {unit}   last {min(samples, len(values))}: "
                         + " ".join(f"{v:.6g}" for v in values[-samples:]))
            else:
                shown = "  waiting for a reading…"
            self._print("\r" + (shown + note)[:110].ljust(110), end="")
            if self.lines.ready(self.period_s - (time.monotonic() - started)):
                line = self.lines.read()
                if line is None or line.strip().lower() != "q":
                    if count or len(values) >= samples:
                        self._print()
                        return Measurement(values, _accept(values, samples, count))
                    self._print(f"\r  (need {samples} readings; {len(values)} so far)".ljust(110), end="")
                    continue
                self._print()
                raise Aborted("cancelled; nothing written")

    def result(self, data: dict[str, Any], lines: Sequence[str]) -> None:
        for line in lines:
            self._print(line)


class JsonPrompter:
    """One JSON object per line on ``stdout``; answers, one per line, on ``stdin``."""

    def __init__(self, stdin: IO[str], stdout: IO[str], *, period_s: float = 1.0):
        self.lines = _Lines(stdin)
        self.out = stdout
        self.period_s = period_s

    def _emit(self, **data: Any) -> None:
        self.out.write(json.dumps(data, separators=(",", ":"), default=str) + "\n")
        self.out.flush()

    def say(self, text: str) -> None:
        self._emit(event="say", text=text)

    def ask(self, key: str, question: str, default: str | None = None) -> str:
        self._emit(event="ask", key=key, question=question, default=default)
        line = self.lines.read()
        if line is None or line.strip() == "":
            if default is not None:
                return default
            raise Missing(f"{key}: needed (give it as a flag, or answer the ask line on stdin)")
        if line.strip() == "abort":
            raise Aborted("cancelled; nothing written")
        return line.strip()

    def confirm(self, key: str, question: str, default: bool = True) -> bool:
        answer = self.ask(key, question, "yes" if default else "no").lower()
        return answer in ("y", "yes", "true", "1")

    def measure(self, key: str, instruction: str, read: Reader, unit: str, *, samples: int = 3,
                count: bool = False) -> Measurement:
        self._emit(event="measure", key=key, instruction=instruction, unit=unit, samples=samples, count=count)
        values: list[float] = []
        while True:
            started = time.monotonic()
            try:
                v = read()
                values.append(v)
                self._emit(event="reading", key=key, value=v, unit=unit)
            except DriverError as e:
                self._emit(event="reading", key=key, value=None, error=str(e))
            if self.lines.ended:          # nobody to wait for: take the readings now
                if count or len(values) >= samples:
                    break
                continue
            if self.lines.ready(self.period_s - (time.monotonic() - started)):
                line = self.lines.read()
                if line is not None and line.strip() == "abort":
                    raise Aborted("cancelled; nothing written")
                if line is None and not count and len(values) < samples:
                    continue
                if count or len(values) >= samples:
                    break
        m = Measurement(values, _accept(values, samples, count))
        self._emit(event="measured", key=key, value=m.value, unit=unit, readings=len(values))
        return m

    def result(self, data: dict[str, Any], lines: Sequence[str]) -> None:
        self._emit(event="result", **data)


def is_terminal(stream: IO[str]) -> bool:
    try:
        return os.isatty(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return False
