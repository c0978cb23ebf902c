"""A tip counter that survives restarts, with debounce and the double-tip filter.

Pure logic over edge times plus a small JSON state file written atomically (write to a
temporary file, fsync, rename) on every accepted tip and every read, so a power cut loses
at most the tip being written and never reports a tip twice.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ...errors import DriverError

log = logging.getLogger(__name__)

__all__ = ["TipCounter", "TipState"]


@dataclass
class TipState:
    total: int = 0       # accepted tips since the counter file was made
    reported: int = 0    # of those, already handed out by take()
    discarded: int = 0   # tips dropped by the double-tip filter (diagnostics)


class TipCounter:
    """Count tips from edge times ``t_s`` [s, monotonic].

    * an edge within ``debounce_s`` of the previous edge is contact bounce: ignored;
    * a tip within ``double_tip_s`` of the last *accepted* tip is a double tip of the
      bucket: discarded (and counted in ``discarded``).
    """

    def __init__(self, path: Path, debounce_s: float, double_tip_s: float):
        self.path = Path(path)
        self.debounce_s = debounce_s
        self.double_tip_s = double_tip_s
        self._lock = threading.Lock()
        self._last_edge: float | None = None
        self._last_tip: float | None = None
        self.state = self._load()

    def edge(self, t_s: float) -> bool:
        """One falling edge at ``t_s``; True if it counted as a tip."""
        with self._lock:
            if self._last_edge is not None and t_s - self._last_edge < self.debounce_s:
                self._last_edge = t_s
                return False
            self._last_edge = t_s
            if self._last_tip is not None and t_s - self._last_tip < self.double_tip_s:
                self.state.discarded += 1
                self._save_or_log()
                return False
            self._last_tip = t_s
            self.state.total += 1
            self._save_or_log()
            return True

    def take(self) -> int:
        """Tips accepted since the last take (or since the last take before a restart)."""
        with self._lock:
            new = self.state.total - self.state.reported
            if new:
                before = self.state.reported
                self.state.reported = self.state.total
                try:
                    self._save()
                except DriverError:
                    self.state.reported = before  # report them next time rather than twice
                    raise
            return new

    def pending(self) -> int:
        with self._lock:
            return self.state.total - self.state.reported

    # -- the file ----------------------------------------------------------------------

    def _load(self) -> TipState:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return TipState()
        except OSError as e:
            raise DriverError(f"{self.path}: cannot read the tip counter: {e.strerror}") from None
        try:
            data = json.loads(text)
            state = TipState(int(data["total"]), int(data["reported"]), int(data.get("discarded", 0)))
            if not 0 <= state.reported <= state.total:
                raise ValueError(f"reported {state.reported} outside 0..total {state.total}")
            return state
        except (ValueError, KeyError, TypeError) as e:
            # A torn or hand-edited file must not stop the gauge: keep it aside, start at zero.
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            os.replace(self.path, aside)
            log.error("%s: unreadable tip counter (%s); kept as %s, counting from zero", self.path, e, aside)
            return TipState()

    def _save(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(asdict(self.state), f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except OSError as e:
            raise DriverError(f"{self.path}: cannot save the tip counter: {e.strerror}") from None

    def _save_or_log(self) -> None:
        # Called from the GPIO callback thread: the tip stays counted in memory.
        try:
            self._save()
        except DriverError as e:
            log.error("%s", e)
