"""The fault suite's rig (``tests/faults/``): a town's loggers, a real Mosquitto, ``ms4watch
serve`` as a process of its own (to kill -9), its store (SQLite, or a real InfluxDB 1.x), a
real SMTP server — and the four counts every case ends with: readings taken at the edge,
readings stored, alerts raised, notifications delivered.

The loggers are the edge's own durable path — its :class:`~ms4watch.edge.spool.Spool` and
:class:`~ms4watch.edge.uplink.Uplink` — fed by the test with chosen readings instead of
drivers, so a case can hold the one illicit discharge whose alert it counts
(:meth:`FaultRig.illicit_discharge`) and as much background as it needs; ``edge_process``
runs the real ``ms4watch edge`` agent (simulated sensors) for the case that kills it.

A rig of its own (:func:`rig`) starts its Mosquitto, SMTP server and ``serve`` (~2 s of CPU a
start); the cases of a module whose fault leaves the server running share one
(:class:`SharedServer`: a coalition's ``serve``, each case a town of its own, so each reads
only its own town's counts).

What every case then asserts (:meth:`FaultRig.assert_all_accounted_for`): every reading a
logger took is stored exactly once (nothing acknowledged lost, nothing twice), the alert
was raised once, and its notification was delivered once; no notification went out twice.
A fault may reorder arrival (the flow before the rain that judges it): then a
``dry_weather_unknown`` notice (the rain did not yet cover the window) may come before the
alert, and is allowed.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ms4watch.contract.ids import Channel, Topic
from ms4watch.contract.wire import status_payload
from ms4watch.edge.drivers.base import RawReading
from ms4watch.edge.spool import Spool
from ms4watch.edge.uplink import Uplink
from tests.support.notify_peers import SmtpSink
from tests.support.servers import InfluxDB1, Mosquitto
from tests.support.waiting import wait_for

SLOW = os.environ.get("MS4_SLOW") == "1"
MIN = 60 * 10**9
H = 60 * MIN
ALLOWED_NOTICES = {"dry_weather_unknown"}

SITES = """\
municipality: {town}
timezone: America/New_York
rain_gauges: [{{id: RG-1, tip_in: 0.01}}]
outfalls:
  - {{id: OF-1, name: Mill St, rain_gauges: [RG-1], flow_floor_gpm: 0.5}}
  - {{id: OF-2, name: Elm Ave, rain_gauges: [RG-1], flow_floor_gpm: 0.5, report_interval: 1h}}
contacts: [{{name: Pat Doe, role: smo, email: smo@{town}.test}}]
"""


def kill9(proc: subprocess.Popen) -> None:
    """SIGKILL, as a power cut or the OOM killer would, and reap it."""
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def terminate(proc: subprocess.Popen | None, timeout_s: float) -> None:
    """SIGTERM (a clean stop) if it still runs; SIGKILL if it has not stopped within ``timeout_s``."""
    if proc is not None and proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class Counts:
    taken: dict[str, int]                    # device -> readings taken at the edge
    stored: dict[str, int]                   # device -> readings in the store
    distinct: int                            # distinct (series, time) in the store
    alerts: list[tuple[int, str, str]]       # (id, kind, subject) of every incident
    notifications: list[int]                 # incident id of every email the SMO received

    def __str__(self) -> str:
        return (f"taken {self.taken}, stored {self.stored} ({self.distinct} distinct), alerts {self.alerts}, "
                f"notifications {self.notifications}")


class Logger:
    """One logger: the edge's spool and uplink, fed readings by the test."""

    def __init__(self, rig: "FaultRig", device: str, station: str, *, url: str | None = None, keepalive_s: int = 30,
                 municipality: str | None = None):
        municipality = municipality or rig.municipality
        self.device, self.station, self.rig, self.municipality = device, station, rig, municipality
        self.spool = Spool(rig.tmp / "edge" / municipality / f"{device}.spool.db", device)

        def topic_of(ch: Channel) -> Topic:
            return Topic(municipality, station, device, ch)

        self.uplink = Uplink(self.spool, topic_of, url or rig.broker.url,
                             client_id=f"ms4watch-edge-{municipality}-{device}",
                             status_payload=lambda state: status_payload(device, state), keepalive_s=keepalive_s,
                             batch_readings=100)

    def start(self) -> "Logger":
        self.uplink.start()
        return self

    def take(self, rows: list[tuple[int, str, str, float, str]]) -> None:
        """Readings (time_ns, sensor, quantity, value, unit) taken now: into the spool, then out."""
        self.spool.append([RawReading(*r) for r in rows])
        self.uplink.wake()

    @property
    def taken(self) -> int:
        return self.spool.taken

    def stop(self) -> None:
        self.uplink.stop()
        self.spool.close()


class Stream:
    """A logger taking a flow reading below the floor every ``every_s`` seconds on a thread of
    its own, so a fault always strikes mid-stream; ``burst`` readings each time (a flood).
    A hundred a second by default (it was fifty: the cases wait for a number of readings on
    either side of a fault, and waited twice as long for the same ones)."""

    def __init__(self, logger: Logger, every_s: float = 0.01, burst: int = 1, sensor: str = "stream"):
        self.logger, self.every_s, self.burst, self.sensor = logger, every_s, burst, sensor
        self._stop = threading.Event()
        self._t0 = time.time_ns() // MIN * MIN - 2 * H
        self._k = 0
        self._thread = threading.Thread(target=self._run, name=f"stream-{logger.device}", daemon=True)
        logger.rig.streams.append(self)

    def start(self) -> "Stream":
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            rows = [(self._t0 + (self._k + i) * 10_000_000, self.sensor, "flow", 0.2, "gpm") for i in range(self.burst)]
            self._k += self.burst
            self.logger.take(rows)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def taken(self) -> int:
        return self._k

    def lasting(self, seconds: float) -> None:
        """Wait while the logger takes readings for ``seconds`` (a fault that lasts that long)."""
        self.more(max(1, round(seconds / self.every_s)) * self.burst)

    def more(self, n: int, timeout_s: float | None = None) -> None:
        """Wait until the logger has taken ``n`` more readings (``n`` readings' time, thrice, at most)."""
        timeout_s = timeout_s if timeout_s is not None else 30 + 3 * n / self.burst * self.every_s
        target = self._k + n
        assert wait_for(lambda: self._k >= target, timeout_s), f"{self.logger.device} took {self._k} of {target}"

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


@dataclass
class FaultRig:
    tmp: Path
    broker: Mosquitto
    smtp: SmtpSink
    influx: InfluxDB1 | None = None
    serve_proc: subprocess.Popen | None = None
    loggers: list[Logger] = field(default_factory=list)
    streams: list[Stream] = field(default_factory=list)
    edge_spools: dict[str, Path] = field(default_factory=dict)   # device -> spool of an edge process
    serve_killed: bool = False                                  # kill_serve ran (notifications())
    municipality: str = "town"                                  # the town whose counts this rig reads
    towns: tuple[str, ...] = ()                                 # a coalition's towns (SharedServer), else ()
    shared: "SharedServer | None" = None                        # the server, broker and SMTP are a module's

    @property
    def data(self) -> Path:
        return (self.shared.tmp if self.shared is not None else self.tmp) / "data"

    @property
    def town_data(self) -> Path:
        """The town's engine state, incidents, queue and store: DATA_DIR/<town>/ in a coalition."""
        return self.data / self.municipality if self.towns else self.data

    @property
    def smo(self) -> str:
        return f"smo@{self.municipality}.test"

    @property
    def log(self) -> Path:
        return (self.shared.tmp if self.shared is not None else self.tmp) / "serve.log"

    def config(self) -> Path:
        if self.towns:
            for t in self.towns:
                (self.tmp / f"{t}.yaml").write_text(SITES.format(town=t))
            registries = "registries = [" + ", ".join(f'"{self.tmp / t}.yaml"' for t in self.towns) + "]"
        else:
            (self.tmp / "sites.yaml").write_text(SITES.format(town=self.municipality))
            registries = f'registry = "{self.tmp / "sites.yaml"}"'
        store = f'store = "{self.influx.store_url("ms4")}"\n' if self.influx is not None else ""
        path = self.tmp / "ms4watch.toml"
        path.write_text(f"""\
{registries}
data_dir = "{self.data}"
notify = ["{self.smtp.url}"]
{store}
[broker]
url = "{self.broker.url}"
client_id = "ms4watch-server"

[http]
listen = "off"

[engine]
tick = "1h"

[delivery]
retry_first = "1s"
retry_max = "2s"
idle = "1s"
""")
        return path

    # -- the server --------------------------------------------------------------------------
    def serve(self) -> "FaultRig":
        assert self.shared is None, "a town of a shared server: its server is the module's"
        starts = self._starts()
        self.serve_proc = subprocess.Popen(
            [sys.executable, "-m", "ms4watch", "-v", "serve", "--config", str(self.config())],
            stdout=self.log.open("ab"), stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert wait_for(lambda: self._starts() > starts, 60), self.tail()
        return self

    def _starts(self) -> int:     # a coalition's server names its first town
        town = self.towns[0] if self.towns else self.municipality
        return self.log.read_text(errors="replace").count(f"serving {town}:") if self.log.exists() else 0

    def kill_serve(self) -> None:
        assert self.serve_proc is not None and self.shared is None, "a case that kills the server has its own"
        kill9(self.serve_proc)
        self.serve_killed = True

    def stop_serve(self) -> None:
        terminate(self.serve_proc, 60)

    def edge_state(self) -> str:
        """Each scripted logger's uplink and spool, for a failure's message."""
        return "; ".join(f"{lg.device}: connected {lg.uplink.connected}, spool depth {lg.spool.depth()}, "
                         f"in flight {len(lg.uplink._inflight)}, last sent seq {lg.uplink._last_sent_seq}"
                         for lg in self.loggers)

    def tail(self, n: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-n:] if self.log.exists() else "(no serve log)"

    # -- loggers -------------------------------------------------------------------------------
    def logger(self, device: str, station: str, **kw) -> Logger:
        lg = Logger(self, device, station, **kw).start()
        self.loggers.append(lg)
        return lg

    def illicit_discharge(self, rain: Logger, flow: Logger, *, background_h: int = 10) -> int:
        """Three dry days at the gauge, ``background_h`` hours of flow below the outfall's floor,
        then 35 min of flow above it: one dry-weather-flow alert. Returns readings taken."""
        now = time.time_ns() // MIN * MIN
        rain.take([(now - 80 * H + k * 15 * MIN, "rain", "rain", 0.0, "in") for k in range(80 * 4 + 1)])
        base = [(now - background_h * H + k * MIN, "flow", "flow", 0.3, "gpm") for k in range(background_h * 60 - 40)]
        episode = [(now - 35 * MIN + k * 5 * MIN, "flow", "flow", 0.3 if k < 1 else 9.0 + k, "gpm") for k in range(8)]
        flow.take(base)
        flow.take(episode)
        return 80 * 4 + 1 + len(base) + len(episode)

    def edge_process(self, device: str, station: str, interval: str = "1s") -> "EdgeProcess":
        """The real ``ms4watch edge`` agent, simulated flow sensor, as a process of its own."""
        return EdgeProcess(self, device, station, interval)

    # -- counts ----------------------------------------------------------------------------------
    def taken(self) -> dict[str, int]:
        out = {lg.device: lg.taken for lg in self.loggers}
        for device, spool in self.edge_spools.items():
            with sqlite3.connect(f"file:{spool}?mode=ro", uri=True) as c:
                out[device] = c.execute("SELECT value FROM meta WHERE key='taken'").fetchone()[0]
        return out

    def stored(self) -> tuple[dict[str, int], int]:
        if self.influx is not None:
            try:
                res = self.influx.query('SELECT count("seq") FROM "reading" GROUP BY "device"', "ms4")
            except OSError:
                return {}, 0
            series = res["results"][0].get("series", [])
            by = {s["tags"]["device"]: s["values"][0][1] for s in series}
            return by, sum(by.values())     # InfluxDB keeps one point per series and time
        db = self.town_data / "store.db"
        if not db.exists():
            return {}, 0
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
                by = dict(c.execute("SELECT r.device, count(*) FROM samples s JOIN series r ON r.id = s.series "
                                    "GROUP BY r.device").fetchall())
                distinct = c.execute("SELECT count(*) FROM (SELECT DISTINCT series, time_ns FROM samples)").fetchone()[0]
        except sqlite3.Error:
            return {}, 0
        return by, distinct

    def alerts(self) -> list[tuple[int, str, str]]:
        db = self.town_data / "incidents.db"
        if not db.exists():
            return []
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            return sorted(c.execute("SELECT id, kind, subject FROM incidents").fetchall())

    def queue(self) -> list[tuple[int, str]]:
        """(id, status) of every row of the town's notification queue (alerts/delivery/queue.py):
        a mail owed is a row, pending until it is sent."""
        db = self.town_data / "incidents.db"
        if not db.exists():
            return []
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            return c.execute("SELECT id, status FROM notification_queue ORDER BY id").fetchall()

    def notifications(self) -> list[int]:
        """The incident of each email the SMO got (:func:`delivered`)."""
        mails = delivered([m for m in self.smtp.to(self.smo) if m["X-MS4Watch-Incident"]], killed=self.serve_killed)
        return sorted(int(m["X-MS4Watch-Incident"]) for m in mails)

    def counts(self) -> Counts:
        stored, distinct = self.stored()
        return Counts(self.taken(), stored, distinct, self.alerts(), self.notifications())

    def all_stored(self) -> bool:
        taken, (stored, _) = self.taken(), self.stored()
        return all(stored.get(d, 0) >= n for d, n in taken.items())

    def assert_all_accounted_for(self, timeout_s: float = 90.0,
                                 alerts: tuple[tuple[str, str], ...] = (("dry_weather_flow", "OF-1"),),
                                 notices: frozenset[str] | set[str] = frozenset(ALLOWED_NOTICES)) -> Counts:
        """Every reading taken stored once, each alert raised once, its notification delivered once."""
        assert wait_for(self.all_stored, timeout_s, poll_s=0.2), f"{self.counts()}\n{self.edge_state()}\n{self.tail()}"

        def notified() -> bool:
            ids = {i for i, kind, subject in self.alerts() if (kind, subject) in alerts}
            return len(ids) == len(alerts) and ids <= set(self.notifications())
        assert wait_for(notified, timeout_s, poll_s=0.2), f"{self.counts()}\n{self.tail()}"
        time.sleep(1.0)   # anything sent or stored twice would be there by now
        c = self.counts()
        assert c.stored == c.taken, c
        assert c.distinct == sum(c.taken.values()), c
        raised = [(kind, subject) for _, kind, subject in c.alerts if kind not in notices]
        assert sorted(raised) == sorted(alerts), c                       # each alert raised once
        ids = [i for i, kind, subject in c.alerts if (kind, subject) in alerts]
        assert sorted(n for n in c.notifications if n in ids) == sorted(ids), c   # each notified once
        assert len(c.notifications) == len(set(c.notifications)), c       # nothing notified twice
        return c

    def close(self) -> None:
        for st in self.streams:      # a case that failed half-way left them running
            st.stop()
        for lg in self.loggers:
            try:
                lg.stop()
            except Exception:
                pass
        if self.shared is not None:
            return                   # the module's server, broker and SMTP go on to its next case
        self.stop_serve()
        self.smtp.stop()
        self.broker.stop()
        if self.influx is not None:
            self.influx.stop()


def delivered(mails: list, *, killed: bool) -> list:
    """The emails a server sent, each once. After a kill -9 of the server, an email the SMTP server
    accepted in the instant before the kill, not yet marked sent, goes again after the restart with
    the same Message-ID (alerts/delivery/queue.py's one window): counted once; a second email with a
    Message-ID of its own counts twice, killed or not."""
    return list({m["Message-ID"]: m for m in mails}.values()) if killed else list(mails)


def rig(tmp: Path, *, influx: bool = False, broker_settings: Mapping[str, str] | None = None) -> FaultRig:
    """Mosquitto (with ``broker_settings``: :class:`~.servers.Mosquitto`'s), SMTP (and InfluxDB)
    started; ``serve`` not yet."""
    broker = Mosquitto(tmp / "mosquitto", settings=broker_settings).start()
    db = InfluxDB1(tmp / "influx").start() if influx else None
    return FaultRig(tmp, broker, SmtpSink().start(), db)


class SharedServer:
    """One Mosquitto, one SMTP server and one ``serve`` (a coalition's, SQLite) for the cases of a
    module that do not kill the server: each case is a town of its own (:meth:`town`), with its
    own loggers, store, incidents and SMO, so its counts are its own. Each ``serve`` start is
    ~2 s of CPU (imports, the warm-up chart); a case that kills or restarts the server keeps a
    rig of its own (:func:`rig`)."""

    def __init__(self, tmp: Path, towns: tuple[str, ...]):
        self.tmp, self.towns = tmp, towns
        self._used: set[str] = set()
        self.rig = FaultRig(tmp, Mosquitto(tmp / "mosquitto").start(), SmtpSink().start(), towns=towns,
                            municipality=towns[0])
        try:
            self.rig.serve()
        except BaseException:
            self.close()
            raise

    def town(self, name: str, tmp: Path) -> FaultRig:
        """The rig of one town of the server (its loggers' spools under ``tmp``); once per town."""
        assert name in self.towns and name not in self._used, name
        assert self.rig.serve_proc is not None and self.rig.serve_proc.poll() is None, self.rig.tail()
        self._used.add(name)
        return FaultRig(tmp, self.rig.broker, self.rig.smtp, serve_proc=self.rig.serve_proc, municipality=name,
                        towns=self.towns, shared=self)

    def close(self) -> None:
        self.rig.close()


class EdgeProcess:
    def __init__(self, rig: FaultRig, device: str, station: str, interval: str):
        self.rig, self.device = rig, device
        self.dir = rig.tmp / "edge-process" / device
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config = self.dir / f"{device}.yaml"
        self.config.write_text(
            f"device: {device}\nmunicipality: {rig.municipality}\nstation: {station}\n"
            f"broker: {{url: '{rig.broker.url}', keepalive_s: 5}}\n"
            f"sensors:\n  - {{id: flow, driver: sim, quantity: flow, unit: gpm, interval: {interval}, "
            "options: {model: runoff, baseflow_gpm: 0.05}}\n")
        rig.edge_spools[device] = self.dir / f"{device}.spool.db"
        self.proc: subprocess.Popen | None = None
        self.log = self.dir / "edge.log"

    def start(self) -> "EdgeProcess":
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ms4watch", "edge", "--config", str(self.config), "--data-dir", str(self.dir),
             "--status-interval", "3600"], stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        return self

    def kill(self) -> None:
        assert self.proc is not None
        kill9(self.proc)

    def stop(self) -> None:
        terminate(self.proc, 30)
