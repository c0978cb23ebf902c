"""What ingest set aside, for a person to look at: read, filter, show.

Two places hold it, both in the data directory ``serve`` and ``ingest`` use:

* ``rejected.jsonl`` — one JSON object per line, appended by the ingest service: messages
  that break the contract (topic, error, size, payload), messages over the size limit
  (their first bytes), messages the store refused as bad data, and messages conflicting
  with a stored (device, epoch, seq);
* the ``rejected`` table of ``store-spool.db`` (and of each ``worker-N/store-spool.db``):
  batches the store refused while the spool drained them (``ingest/stores/spooling.py``).

:func:`read_rejected` gives both as :class:`Rejected` records, newest first, filtered by
device, reason and time; ``ms4watch rejected`` and the workbench call it. Reading never
changes either place, and a line that is not JSON (a crash mid-write) is skipped and counted.
"""

from __future__ import annotations

import json
import sqlite3
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from ..sqlite import connect_readonly

REJECTED_FILE = "rejected.jsonl"
SPOOL_FILE = "store-spool.db"


class Reason:
    """The kinds of reason, as :attr:`Rejected.kind` names them."""
    CONTRACT = "contract"     # breaks the wire contract (or who may send what: ingest/identity.py)
    OVERSIZE = "oversize"     # over the size ingest takes; only its first bytes kept
    STORE = "store"           # the store refused it as bad data
    CONFLICT = "conflict"     # its (device, epoch, seq) is stored with other content
    ALL = (CONTRACT, OVERSIZE, STORE, CONFLICT)


@dataclass(frozen=True)
class Rejected:
    id: str                           # "j<line>" in rejected.jsonl, "s<row>" in a spool's table (+ "@worker-N")
    received: datetime                # when it was set aside (UTC)
    kind: str                         # a Reason
    error: str                        # the one-line reason, naming topic and field
    topic: str | None = None
    device: str | None = None
    station: str | None = None
    epoch: int | None = None
    seq: int | None = None
    size: int | None = None           # payload bytes
    readings: int | None = None       # readings in it, when decoded
    payload: str | None = None        # the payload as text (cut), or its readings as JSON
    source: str = ""                  # the file it came from

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if v is not None}
        d["received"] = self.received.isoformat().replace("+00:00", "Z")
        return d


@dataclass
class RejectedList:
    records: list[Rejected]                          # newest first
    matched: int = 0                                 # before the limit
    unreadable: int = 0                              # lines of rejected.jsonl that are not JSON records
    sources: list[Path] = field(default_factory=list)


def kind_of(error: str) -> str:
    if error.startswith("conflict:"):
        return Reason.CONFLICT
    if error.startswith("store refused"):
        return Reason.STORE
    if ": payload: " in error and "bytes, over the" in error:
        return Reason.OVERSIZE
    return Reason.CONTRACT


def read_rejected(data_dir: str | Path, *, device: str | None = None, reason: str | None = None,
                  since: datetime | None = None, limit: int | None = 100) -> RejectedList:
    """What was set aside in ``data_dir``, newest first.

    ``device``: only this device's; ``reason``: a kind (:class:`Reason`) or text the error
    contains (case-insensitive); ``since``: set aside at or after this time; ``limit``: at
    most this many (None: all).
    """
    data_dir = Path(data_dir)
    want = (reason or "").strip().lower()
    since_ts = since.timestamp() if since is not None else None
    out = RejectedList([])
    keep: deque[Rejected] = deque(maxlen=limit) if limit is not None else deque()
    found: list[Rejected] = []

    def take(r: Rejected) -> None:
        if device is not None and r.device != device:
            return
        if want and r.kind != want and want not in r.error.lower():
            return
        if since_ts is not None and r.received.timestamp() < since_ts:
            return
        out.matched += 1
        found.append(r)

    path = data_dir / REJECTED_FILE
    if path.is_file():
        out.sources.append(path)
        for r in _from_jsonl(path, out):
            take(r)
    for spool in [data_dir / SPOOL_FILE, *sorted(data_dir.glob(f"worker-*/{SPOOL_FILE}"))]:
        if spool.is_file():
            out.sources.append(spool)
            for r in _from_spool(spool, data_dir):
                take(r)
    found.sort(key=lambda r: r.received)
    keep.extend(found)
    out.records = list(reversed(keep))
    return out


def find_rejected(data_dir: str | Path, record_id: str) -> Rejected | None:
    """One record by its id (as :func:`read_rejected` gives it)."""
    for r in read_rejected(data_dir, limit=None).records:
        if r.id == record_id:
            return r
    return None


def _from_jsonl(path: Path, out: RejectedList) -> Iterator[Rejected]:
    with path.open("r", encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                received = datetime.fromtimestamp(float(d["received"]), timezone.utc)
                error = str(d["error"])
            except (ValueError, KeyError, TypeError, OverflowError, OSError):
                out.unreadable += 1
                continue
            topic = d.get("topic") if isinstance(d.get("topic"), str) else None
            parts = topic.split("/") if topic else []
            station, dev = (parts[2], parts[3]) if len(parts) == 5 else (None, None)
            readings = d.get("readings")
            yield Rejected(
                id=f"j{n}", received=received, kind=kind_of(error), error=error, topic=topic,
                device=d.get("device") if isinstance(d.get("device"), str) else dev, station=station,
                epoch=_int(d.get("epoch")), seq=_int(d.get("seq")), size=_int(d.get("size")),
                readings=len(readings) if isinstance(readings, list) else None,
                payload=d.get("payload") if isinstance(d.get("payload"), str)
                else (json.dumps(readings) if isinstance(readings, list) else None),
                source=str(path))


def _from_spool(path: Path, data_dir: Path) -> Iterator[Rejected]:
    from .stores.spooling import decode_batch
    where = "" if path.parent == data_dir else f"@{path.parent.name}"
    try:
        db = connect_readonly(path)
    except sqlite3.Error:
        return
    try:
        rows = db.execute("SELECT id, rejected_ns, reason, batch FROM rejected ORDER BY id").fetchall()
    except sqlite3.Error:           # a spool from before the table, or not a spool
        rows = []
    finally:
        db.close()
    for rid, ns, reason, blob in rows:
        received = datetime.fromtimestamp(ns / 1e9, timezone.utc)
        try:
            messages = decode_batch(blob)
        except (ValueError, TypeError):
            messages = []
        error = f"store refused: {reason}"
        if not messages:
            yield Rejected(f"s{rid}{where}", received, Reason.STORE, error, source=str(path))
        for k, m in enumerate(messages):
            yield Rejected(f"s{rid}.{k}{where}" if len(messages) > 1 else f"s{rid}{where}", received, Reason.STORE,
                           error, device=m.device, station=m.readings[0].station if m.readings else None,
                           epoch=m.epoch, seq=m.seq, readings=len(m.readings),
                           payload=json.dumps([list(r) for r in m.readings]), source=str(path))


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


__all__ = ["Reason", "Rejected", "RejectedList", "read_rejected", "find_rejected", "kind_of",
           "REJECTED_FILE", "SPOOL_FILE"]
