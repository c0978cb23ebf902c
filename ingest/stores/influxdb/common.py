"""What both InfluxDB stores share: batching lines, narrowing a refused batch, retention checks."""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from abc import ABC, abstractmethod
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import date, datetime, timedelta, timezone
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ....contract.calibration import CALIBRATION_EVENT, CalibrationRecord, CalibrationState, due_state
from ....contract.timeutil import to_ns
from ....contract.wire import CANONICAL_UNIT, CanonicalReading, SensorCalibration

from ...errors import MessagesRejected, StoreRejected, StoreUnavailable, refused_summary
from ..base import (STATS, Bucket, DeviceEvent, DeviceStatus, LatestReading, Receipt, StoredMessage, WriteResult,
                    receipts_of)
from .config import InfluxTarget
from .errors import StoreMisconfigured
from .lineproto import FieldValue, LineEncoder, record_line
from .records import EVENT_TIME_SPREAD_NS, calibration_records, device_event_records
from .schema import CALIBRATION, CALIBRATION_RECORD, DEVICE_EVENT, DEVICE_STATUS, MIN_RETENTION, READING, RECEIPT

log = logging.getLogger(__name__)


class InfluxStoreBase(ABC):
    """``write`` sends prepared lines in requests of at most ``batch_lines`` lines.

    When InfluxDB refuses a batch as bad data (400: a field type conflict, a point it cannot
    parse), the batch is cut in halves until the refused messages are found — about
    2·log2(n) requests for one bad message among n — so the good ones are stored and only the
    bad ones are reported (:class:`MessagesRejected`). A message the line encoder cannot
    write at all is refused the same way. Writing again what was already written is harmless:
    points are idempotent. A store that is down during the narrowing (StoreUnavailable)
    fails the whole batch, which is retried.
    """

    #: requests in flight at once when a batch is more than ``batch_lines`` lines: while the
    #: server parses one request it can already receive the next (2 cores: ~1.3× the rate)
    parallel_requests = 2

    #: series read by one statement of :meth:`readings_of` (each an OR term of its WHERE clause)
    series_per_query = 50

    def __init__(self, target: InfluxTarget):
        self.target = target
        self._enc = LineEncoder()
        self._pool: ThreadPoolExecutor | None = None
        self._read_pool: ThreadPoolExecutor | None = None   # the workbench's summaries, side by side
        self._pool_lock = threading.Lock()
        self._last_receipt_ns = 0

    # -- implemented per API version -------------------------------------------------
    @abstractmethod
    def _post_lines(self, lines: Sequence[str]) -> None:
        """Send one request; raise StoreUnavailable / StoreRejected."""

    @abstractmethod
    def retention_s(self) -> float | None:
        """Retention of the target in seconds (0 = forever), None when it cannot be read."""

    @abstractmethod
    def query(self, q: str) -> dict[str, Any]:
        """Run InfluxQL on the target (the /query endpoint: 1.x, 2.x with a DBRP mapping, 3.x);
        the JSON answer with times in epoch ns."""

    # -- the readings port -------------------------------------------------------------
    def readings_of(self, series: Sequence[tuple[str, str]], start: datetime, end: datetime) -> list[CanonicalReading]:
        """:class:`~ms4watch.ingest.stores.base.ReadingsOfMany`: one InfluxQL statement for
        every series (grouped by station and quantity too), so one request."""
        series = list(dict.fromkeys(series))
        out: list[CanonicalReading] = []
        for i in range(0, len(series), self.series_per_query):   # a town of hundreds of stations: a few requests
            which = " OR ".join(f'("station" = {_quote(st)} AND "quantity" = {_quote(q)})'
                                for st, q in series[i:i + self.series_per_query])
            q = (f'SELECT "value", "flags", "seq" FROM "{READING}" WHERE ({which}) AND time >= {to_ns(start)} '
                 f'AND time <= {to_ns(end)} GROUP BY "station", "quantity", "device", "sensor", "unit"')
            for res in self.query(q).get("results", []):
                for one in res.get("series", []) or []:
                    self._readings_of_series(one, out)
        out.sort(key=lambda r: r.time_ns)
        return out

    @staticmethod
    def _readings_of_series(series: dict[str, Any], out: list[CanonicalReading]) -> None:
        """One series of an answer (its tags the station, quantity, device, sensor and unit) as
        readings, appended to ``out``."""
        tags = series.get("tags", {})
        station, quantity = tags.get("station", ""), tags.get("quantity", "")
        cols = series["columns"]
        it, iv, iflags, iseq = (cols.index(c) for c in ("time", "value", "flags", "seq"))
        device, sensor = tags.get("device", ""), tags.get("sensor", "")
        unit = tags.get("unit") or CANONICAL_UNIT.get(quantity, "")
        for row in series.get("values", []):
            v = row[iv]
            out.append(CanonicalReading(int(row[it]), station, device, sensor, quantity,
                                        None if v is None else float(v), unit, row[iflags] or "", int(row[iseq] or 0)))

    def readings(self, station: str, quantity: str, start: datetime, end: datetime) -> list[CanonicalReading]:
        """The readings port (:class:`~ms4watch.ingest.stores.base.ReadingsSource`) in InfluxQL."""
        return self.readings_of([(station, quantity)], start, end)

    # -- what the workbench reads (the optional abilities Summarising and StationState) ----
    def summary(self, station: str, quantity: str, start: datetime, end: datetime, width_ns: int,
                stats: frozenset[str] = STATS) -> list[Bucket]:
        """``Summarising``: InfluxQL's ``GROUP BY time(width, offset)``, buckets counted from
        ``start``; only the statistics asked for, one request each, side by side (InfluxDB
        makes a pass over the window per aggregate: two in one request took ~1.4x one alone,
        two requests at once ~1.0x)."""
        if width_ns <= 0:
            raise ValueError(f"width_ns must be positive, got {width_ns}")
        wanted = [f for f in ("count", "min", "max", "sum", "mean") if f in stats] or ["count"]
        a, b = to_ns(start), to_ns(end)

        def one(f: str) -> dict[int, Any]:
            q = (f'SELECT {f}("value") FROM "{READING}" WHERE "station" = {_quote(station)} AND '
                 f'"quantity" = {_quote(quantity)} AND time >= {a} AND time <= {b} '
                 f'GROUP BY time({width_ns}ns, {a % width_ns}ns) fill(none)')
            return {int(t): v for t, v, *_ in _values(self.query(q)) if v is not None}

        with self._pool_lock:
            if self._read_pool is None:
                self._read_pool = ThreadPoolExecutor(5, thread_name_prefix="influx-read")
            pool = self._read_pool
        got = dict(zip(wanted, pool.map(one, wanted))) if len(wanted) > 1 else {wanted[0]: one(wanted[0])}
        times = sorted(set().union(*(g.keys() for g in got.values())))
        return [Bucket(t, _int(got.get("count", {}).get(t)), _num(got.get("min", {}).get(t)),
                       _num(got.get("max", {}).get(t)), _num(got.get("sum", {}).get(t)),
                       _num(got.get("mean", {}).get(t))) for t in times]

    def latest_readings(self, since: datetime) -> list[LatestReading]:
        """``StationState``: ``last("value")`` per station and quantity (with its flags)."""
        q = (f'SELECT last("value"), "flags" FROM "{READING}" WHERE time >= {to_ns(since)} '
             'GROUP BY "station", "quantity"')
        out = []
        for res in self.query(q).get("results", []):
            for series in res.get("series", []) or []:
                tags = series.get("tags", {})
                for t, v, flags in (row[:3] for row in series.get("values", []) or []):
                    out.append(LatestReading(tags.get("station", ""), tags.get("quantity", ""), int(t),
                                             None if v is None else float(v), flags or ""))
        return sorted(out, key=lambda x: (x.station, x.quantity))

    def device_statuses(self) -> list[DeviceStatus]:
        """``StationState``: each device's newest ``device_status`` point, and the calibrations
        of its newest ``calibration`` points (those written with its latest list)."""
        cals: dict[str, tuple[int, list[SensorCalibration]]] = {}
        for res in self.query(f'SELECT "due", "performed", "station" FROM "{CALIBRATION}" '
                              'GROUP BY "device", "sensor" ORDER BY time DESC LIMIT 1').get("results", []):
            for series in res.get("series", []) or []:
                tags, cols = series.get("tags", {}), series["columns"]
                for row in series.get("values", []) or []:
                    r = dict(zip(cols, row))
                    device, t = tags.get("device", ""), int(r["time"])
                    cal = SensorCalibration(sensor=tags.get("sensor", ""), performed=date.fromisoformat(r["performed"]),
                                            due=date.fromisoformat(r["due"]), station=r.get("station"))
                    held = cals.get(device)
                    if held is None or t > held[0]:
                        cals[device] = (t, [cal])
                    elif t == held[0]:
                        held[1].append(cal)
        out = []
        for res in self.query(f'SELECT * FROM "{DEVICE_STATUS}" GROUP BY "device" ORDER BY time DESC LIMIT 1'
                              ).get("results", []):
            for series in res.get("series", []) or []:
                tags, cols = series.get("tags", {}), series["columns"]
                for row in series.get("values", []) or []:
                    r = dict(zip(cols, row))
                    device = tags.get("device", "")
                    clock = r.get("clock_synced")
                    out.append(DeviceStatus(
                        device, r.get("station") or "", int(r["time"]), r.get("state") or "",
                        _num(r.get("battery_v")), _num(r.get("signal_dbm")), _int(r.get("spool_depth")),
                        _int(r.get("dropped")), r.get("config_version"), r.get("agent_version"),
                        None if clock is None else ("synced" if clock else "unsynced"),
                        tuple(sorted(cals[device][1], key=lambda c: c.sensor)) if device in cals else None))
        return sorted(out, key=lambda d: (d.station, d.device))

    # -- the ReadingsStore interface ------------------------------------------------------------
    def write(self, batch: Sequence[StoredMessage]) -> WriteResult:
        """The readings, then their receipts (``receipt``, schema.py): in the same request when
        the batch is one request, else in one more once the readings are in."""
        stamp = self._receipt_time()
        rejected: list[tuple[StoredMessage, str]] = []
        try:
            encoded, futures = self._encode_streaming(batch)
        except (ValueError, TypeError, OverflowError):      # one message the encoder cannot write
            encoded, futures = [], []
            for m in batch:
                try:
                    encoded.append((m, self._enc.messages([m])[0]))
                except (ValueError, TypeError, OverflowError) as e:
                    rejected.append((m, f"cannot be written as line protocol ({type(e).__name__}: {e})"))
        lines = [line for _, ls in encoded for line in ls]
        receipts_sent = False
        try:
            if futures:
                self._raise_first([f.exception() for f in futures])
            else:
                self._send(lines + (_receipt_lines(receipts_of(batch, stamp)) if not rejected else []))
                receipts_sent = not rejected
            written = len(lines)
        except StoreRejected as refused:
            written = self._narrow(encoded, refused, rejected)
        if not receipts_sent:
            refused_ids = {id(m) for m, _ in rejected}
            self._send(_receipt_lines(receipts_of([m for m in batch if id(m) not in refused_ids], stamp)))
        if rejected:
            log.warning("%s: refused %s", self.target.display,
                        ", ".join(f"{m.device} seq {m.seq}" for m, _ in rejected[:10]))
            raise MessagesRejected(refused_summary(self.target.display, rejected, len(batch)), rejected,
                                   WriteResult(written))
        return WriteResult(readings_written=written)

    def _encode_streaming(self, batch: Sequence[StoredMessage]) -> tuple[list[tuple[StoredMessage, list[str]]],
                                                                         list[Future[None]]]:
        """Encode ``batch``; when it makes more than one request, send each request as soon as
        its lines are encoded (the pool sends ``parallel_requests`` at once), so InfluxDB parses
        the first requests while the rest are encoded instead of waiting for all of them.

        Returns the messages with their lines, and the requests sent (none: the caller sends
        the lines). When a message cannot be encoded, the requests already sent are waited for
        and forgotten (the caller encodes message by message and sends everything again:
        points are idempotent) and the encoder's error propagates.
        """
        encode = self._enc.messages
        n = self.target.batch_lines
        if self.parallel_requests <= 1 or sum(len(m.readings) for m in batch) <= n:
            return list(zip(batch, encode(batch))), []
        pool = self._write_pool()
        post = self._post_lines
        encoded: list[tuple[StoredMessage, list[str]]] = []
        futures: list[Future[None]] = []
        pending: list[str] = []
        try:
            for m in batch:
                ls = encode((m,))[0]
                encoded.append((m, ls))
                pending += ls
                while len(pending) >= n:
                    futures.append(pool.submit(post, pending[:n]))
                    del pending[:n]
        except BaseException:
            for f in futures:
                f.cancel()
            wait(futures)
            raise
        if pending:
            futures.append(pool.submit(post, pending))
        return encoded, futures

    def _narrow(self, encoded: list[tuple[StoredMessage, list[str]]], refused: StoreRejected,
                rejected: list[tuple[StoredMessage, str]]) -> int:
        """``encoded`` was refused as a whole: send each half, halving again what is refused
        until single messages remain. Returns the readings written; refused messages go to
        ``rejected``."""
        if len(encoded) == 1:
            rejected.append((encoded[0][0], str(refused)))
            return 0
        written = 0
        mid = len(encoded) // 2
        for part in (encoded[:mid], encoded[mid:]):
            lines = [line for _, ls in part for line in ls]
            try:
                self._send(lines)
                written += len(lines)
            except StoreRejected as e:
                written += self._narrow(part, e, rejected)
        return written

    def _receipt_time(self) -> int:
        """Now [epoch ns], after the last receipt's time (two batches never share a point)."""
        with self._pool_lock:
            t = max(time.time_ns(), self._last_receipt_ns + 1)
            self._last_receipt_ns = t
            return t

    def received_since(self, since_ns: int) -> list[Receipt]:
        """``ReceiptLog``: the ``receipt`` points at or after ``since_ns``, oldest first."""
        q = f'SELECT "first_ns", "last_ns" FROM "{RECEIPT}" WHERE time >= {int(since_ns)} GROUP BY "station"'
        out = [Receipt(int(row["time"]), tags.get("station", ""), int(row["first_ns"]), int(row["last_ns"]))
               for tags, row in _series_rows(self.query(q)) if row.get("first_ns") is not None]
        return sorted(out)

    def write_records(self, records: Iterable[tuple[str, Mapping[str, str], Mapping[str, FieldValue | None], int]]) -> int:
        """Write non-reading records ``(measurement, tags, fields, time_ns)`` (see schema.py)."""
        lines = [record_line(m, t, f, ts) for m, t, f, ts in records]
        self._send(lines)
        return len(lines)

    def write_status(self, st: DeviceStatus) -> None:
        """StatusStore: a logger's status message as a ``device_status`` point and one
        ``calibration`` point per sensor it reports a calibration for (one request)."""
        self.write_records([(DEVICE_STATUS, {"station": st.station, "device": st.device}, {
            "online": 1 if st.state == "online" else 0, "state": st.state, "battery_v": st.battery_v,
            "signal_dbm": st.signal_dbm, "spool_depth": st.spool_depth, "dropped": st.dropped,
            "clock_synced": None if st.clock is None else int(st.clock == "synced"),
            "agent_version": st.agent_version, "config_version": st.config_version}, st.received_ns),
            *calibration_records(st.station, st.device, st.calibrations or (), st.received_ns)])

    # -- events and the calibration history (DeviceEventStore, DeviceEventSource, CalibrationHistory) -----
    def write_events(self, events: Sequence[DeviceEvent]) -> int:
        """Every event as a ``device_event`` point; a calibration record also as a
        ``calibration_record`` point (schema.py). Rewriting a point is harmless."""
        try:
            lines = [record_line(m, t, f, ts) for e in events for m, t, f, ts in device_event_records(e)]
        except (ValueError, TypeError, OverflowError) as err:
            raise StoreRejected(f"{self.target.display}: an event cannot be written: {err}") from None
        self._send(lines)
        return len(events)

    def device_events(self, *, device: str | None = None, station: str | None = None, kind: str | None = None,
                      start: datetime | None = None, end: datetime | None = None,
                      limit: int = 1000) -> list[DeviceEvent]:
        where = _where(device=device, station=station, kind=kind, start=start, end=end)
        q = (f'SELECT "data", "digest", "received_ns" FROM "{DEVICE_EVENT}"{where} '
             f'GROUP BY "station", "device", "kind" ORDER BY time DESC LIMIT {int(limit)}')
        out = []
        for tags, row in _series_rows(self.query(q)):
            body = json.loads(row["data"])
            digest = int(row["digest"])
            kind_ = tags.get("kind", "")
            out.append(DeviceEvent(tags.get("device", ""), tags.get("station", ""),
                                   int(row["time"]) - digest % EVENT_TIME_SPREAD_NS, kind_, body, digest,
                                   int(row["received_ns"] or 0),
                                   CalibrationRecord.model_validate(body) if kind_ == CALIBRATION_EVENT else None))
        out.sort(key=lambda e: e.time_ns, reverse=True)
        return out[:limit]

    def calibration_history(self, *, device: str | None = None, station: str | None = None,
                            sensor: str | None = None, start: datetime | None = None,
                            end: datetime | None = None) -> list[CalibrationRecord]:
        q = (f'SELECT "record" FROM "{CALIBRATION_RECORD}"'
             f'{_where(device=device, station=station, sensor=sensor, start=start, end=end)}')
        recs = [CalibrationRecord.model_validate_json(row["record"]) for _, row in _series_rows(self.query(q))]
        return sorted(recs, key=lambda r: (r.performed, r.id))

    #: how far back ``calibrations_due`` looks for loggers' status points (each status writes one)
    calibration_lookback = timedelta(days=35)

    def calibrations_due(self, now: datetime, *, warn_days: int = 14) -> list[CalibrationState]:
        """The latest status-reported calibration of each sensor heard from in the last
        :attr:`calibration_lookback` (a logger silent longer is a stale station), with its latest
        record."""
        t1 = to_ns(now)
        t0 = t1 - int(self.calibration_lookback.total_seconds() * 1e9)
        cal = self.query(f'SELECT last("due") AS "due", last("performed") AS "performed" FROM "{CALIBRATION}" '
                         f'WHERE time >= {t0} AND time <= {t1} GROUP BY "station", "device", "sensor"')
        recs = self.query(f'SELECT last("id") AS "id", last("result") AS "result", last("technician") AS '
                          f'"technician" FROM "{CALIBRATION_RECORD}" GROUP BY "device", "sensor"')
        latest = {(t.get("device"), t.get("sensor")): row for t, row in _series_rows(recs)}
        today = now.astimezone(timezone.utc).date()
        out = []
        for tags, row in _series_rows(cal):
            if row.get("due") is None:
                continue
            dev, sen = tags.get("device", ""), tags.get("sensor", "")
            due = date.fromisoformat(row["due"])
            left, state = due_state(due, today, warn_days)
            rec = latest.get((dev, sen), {})
            out.append(CalibrationState(dev, tags.get("station", ""), sen, date.fromisoformat(row["performed"]), due,
                                        left, state, rec.get("id"), rec.get("result"), rec.get("technician"),
                                        int(row["time"])))
        return sorted(out, key=lambda c: (c.due, c.device, c.sensor))

    def _send(self, lines: Sequence[str]) -> None:
        n = self.target.batch_lines
        chunks = [lines[i:i + n] for i in range(0, len(lines), n)]
        if len(chunks) <= 1 or self.parallel_requests <= 1:
            for chunk in chunks:
                self._post_lines(chunk)
            return
        pool = self._write_pool()
        self._raise_first([f.exception() for f in [pool.submit(self._post_lines, c) for c in chunks]])

    @staticmethod
    def _raise_first(errors: list[BaseException | None]) -> None:
        """The requests' errors: a retryable failure wins, so the whole batch is sent again
        (points are idempotent)."""
        for e in sorted((e for e in errors if e is not None), key=lambda e: not isinstance(e, StoreUnavailable)):
            raise e

    def _write_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.parallel_requests, thread_name_prefix="influx-write")
            return self._pool

    def _close_pool(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
            if self._read_pool is not None:
                self._read_pool.shutdown(wait=True)
                self._read_pool = None

    def check_retention(self) -> None:
        """Refuse a store that keeps data for less than 1,096 days unless the URL allows it."""
        seconds = self.retention_s()
        need = MIN_RETENTION.total_seconds()
        if seconds is None:
            if self.target.allow_short_retention:
                log.warning("%s: cannot read the retention; going on (allow_short_retention)", self.target.display)
                return
            raise StoreMisconfigured(
                f"{self.target.display}: cannot read its retention to check it keeps data ≥ 1096 days; "
                "add ?allow_short_retention=true to the store URL to go on without the check")
        if seconds == 0 or seconds >= need:
            return
        days = seconds / 86400
        if self.target.allow_short_retention:
            log.warning("%s keeps data %.0f days only (< 1096); allowed by allow_short_retention",
                        self.target.display, days)
            return
        raise StoreMisconfigured(
            f"{self.target.display} keeps data {days:g} days, less than the 1096 days (3 years) records "
            "must be kept; run `ms4watch store init --store URL` or add ?allow_short_retention=true")

    # -- reading back (tests, demo summary) --------------------------------------------
    def count_query(self) -> str:
        return f'SELECT count("seq") FROM "{READING}"'


def retention_to_seconds(text: str) -> float:
    """InfluxDB 1.x duration strings (``26304h0m0s``, ``0s``, ``1w``) → seconds."""
    total = 0.0
    units = {"ns": 1e-9, "u": 1e-6, "µ": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    for num, unit in re.findall(r"(\d+(?:\.\d+)?)(ns|u|µ|ms|s|m|h|d|w)", text):
        total += float(num) * units[unit]
    return total


def _receipt_lines(receipts: Sequence[Receipt]) -> list[str]:
    return [record_line(RECEIPT, {"station": r.station}, {"first_ns": r.first_ns, "last_ns": r.last_ns},
                        r.received_ns) for r in receipts]


def _values(body: dict[str, Any]) -> list[list[Any]]:
    return [row for res in body.get("results", []) for series in res.get("series", []) or []
            for row in series.get("values", []) or []]


def _num(v: Any) -> float | None:
    return None if v is None else float(v)


def _int(v: Any) -> int | None:
    return None if v is None else int(v)


def _where(*, start: datetime | None = None, end: datetime | None = None, **tags: str | None) -> str:
    """`` WHERE "tag" = '…' AND time >= …`` for the values given ('' when none)."""
    parts = [f'"{k}" = {_quote(v)}' for k, v in tags.items() if v is not None]
    if start is not None:
        parts.append(f"time >= {to_ns(start)}")
    if end is not None:
        parts.append(f"time <= {to_ns(end)}")
    return (" WHERE " + " AND ".join(parts)) if parts else ""


def _series_rows(body: Mapping[str, Any]) -> Iterator[tuple[dict[str, str], dict[str, Any]]]:
    """(tags, {column: value}) for every row of every series of an InfluxQL answer."""
    for res in body.get("results", []):
        for series in res.get("series", []) or []:
            tags = series.get("tags", {}) or {}
            cols = series["columns"]
            for values in series.get("values", []) or []:
                yield tags, dict(zip(cols, values))


def _quote(text: str) -> str:
    """An InfluxQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
