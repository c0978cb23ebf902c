"""``ms4watch demo``: a simulated municipality end to end on embedded defaults.

broker (amqtt in-process, or ``--broker``) ← simulated loggers (edge agents with durable
spools) → ingest (persistent session, ack after store) → store (SQLite, or ``--store``)
→ alert engine → incidents → notifications (the notifications file, or ``--notify``).

Simulated time runs ``speed`` times faster than real time; the loggers are the real edge
agent with the simulated driver, so everything after the sensor is the production path.
"""

from __future__ import annotations

import json
import logging
import secrets
import shutil
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from importlib.resources import files
from pathlib import Path
from typing import Any, Callable

from .alerts.events import AlertKind
from .broker import EmbeddedBroker
from .contract.registry import load_registry
from .contract.timeutil import to_ns
from .edge.agent import Agent
from .edge.config import load_agent_config
from .edge.drivers.base import DriverEnv
from .edge.drivers.sim.world import World
from .errors import DemoError
from .ingest.service import IngestService
from .ingest.stores import build_store
from .ingest.stores.base import Counting
from .pipeline import AlertPipeline
from .server import build_server
from .settings import Settings
from .signals import StopSignals

log = logging.getLogger(__name__)

DEMO_USER = "ms4watch-demo"   # amqtt needs username auth to keep queued QoS 1 messages
MARKER = ".ms4watch-demo"
CLOCK = ".ms4watch-demo-clock"  # the simulated present (ISO 8601), for commands run on the demo's records
ADVANCE_NS = 3_600_000_000_000  # the alert clock (storm ends, deadlines, stale stations) ticks hourly
STOP_WITHIN_S = 60.0           # after the drain, the parts' stops have this long before the process exits anyway
# The simulation advances 15 minutes at a time; each logger takes every reading due (1-min rain,
# 5-min flow) and sends them as one sample cycle.
STEP_NS = 900_000_000_000


def demo_configs() -> Path:
    return Path(str(files("ms4watch.firmware_configs") / "demo"))


@dataclass
class DemoOptions:
    days: float = 7.0
    speed: float = 40_000.0            # simulated seconds per wall-clock second; 0 = as fast as possible
    start: datetime = field(default_factory=lambda: datetime.fromisoformat("2026-06-01T00:00:00-04:00"))
    seed: int = 7
    workdir: Path = Path("ms4watch-demo")
    configs: Path | None = None
    broker_url: str | None = None
    store_url: str | None = None
    notify_urls: list[str] = field(default_factory=list)
    drain_timeout_s: float = 120.0
    interrupted_drain_s: float = 20.0  # after Ctrl-C: what was taken has this long to reach the store
    inspected_sites: tuple[str, ...] = ("CS-1",)  # a simulated inspector visits these before the deadline
    http: str = "127.0.0.1:0"          # the workbench: HOST:PORT (0: a free port), or "off"
    serve: bool = False                # keep the workbench (and the server) up after the simulated days


@dataclass
class DemoSummary:
    wall_s: float = 0.0
    simulated_days: float = 0.0
    devices: int = 0
    readings_taken: int = 0
    readings_published: int = 0
    readings_stored: int = 0
    duplicate_messages: int = 0
    rejected_messages: int = 0
    storms: list[dict[str, Any]] = field(default_factory=list)
    alerts: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    settings_file: str = ""     # the demo town's settings, for the other commands (MS4WATCH_CONFIG)

    def as_dict(self) -> dict[str, Any]:
        by_kind: dict[str, int] = {}
        for a in self.alerts:
            by_kind[a["kind"]] = by_kind.get(a["kind"], 0) + 1
        return {**self.__dict__, "alerts_by_kind": by_kind}


Reporter = Callable[[str], None]


class Demo:
    def __init__(self, options: DemoOptions, report: Reporter = print,
                 progress: Callable[[float, float], None] | None = None):
        self.o = options
        self.report = report
        self.progress = progress
        self.summary = DemoSummary()
        self.web_url: str | None = None
        self.web_login: tuple[str, str] | None = None   # (user, password) of the demo's SMO
        self.serving = threading.Event()               # set while --serve keeps it up after the week
        self._stop = threading.Event()
        self._stop_at: float | None = None             # monotonic time of the first stop request

    def request_stop(self) -> None:
        """Stop after the current simulated step (or end ``--serve``'s wait): what was taken
        is drained, then everything stops. What Ctrl-C and SIGTERM do (:meth:`run` takes
        them as this request when it runs in the main thread); callable from any thread."""
        if self._stop_at is None:
            self._stop_at = time.monotonic()
        self._stop.set()

    stop_serving = request_stop

    # -- set-up ----------------------------------------------------------------------------
    def _prepare_workdir(self) -> Path:
        wd = Path(self.o.workdir)
        if wd.exists() and any(wd.iterdir()):
            if not (wd / MARKER).exists():
                raise DemoError(f"{wd} is not empty and was not made by the demo; choose another --workdir")
            shutil.rmtree(wd)
        wd.mkdir(parents=True, exist_ok=True)
        (wd / MARKER).write_text("made by ms4watch demo; cleared at every run\n")
        return wd

    def run(self) -> DemoSummary:
        """The simulation, then (``serve``) the workbench until a stop is requested. In the
        main thread, the first Ctrl-C or SIGTERM is :meth:`request_stop` and never raises
        ``KeyboardInterrupt`` into the step being run (``ms4watch.signals`` says why); a
        second one exits at once, as does a stop still running after ``STOP_WITHIN_S``."""
        with StopSignals(self.request_stop, force_after_s=self.o.interrupted_drain_s + STOP_WITHIN_S):
            return self._run()

    def _run(self) -> DemoSummary:
        t_wall = time.monotonic()
        wd = self._prepare_workdir()
        configs = Path(self.o.configs) if self.o.configs else demo_configs()
        registry = load_registry(configs / "sites.yaml")
        agent_files = sorted(configs.glob("LOG-*.yaml"))
        if not agent_files:
            raise DemoError(f"no logger configs (LOG-*.yaml) in {configs}")
        start_ns = to_ns(self.o.start)
        end_ns = start_ns + int(self.o.days * 86400e9)
        world = World(start_ns=start_ns, hours=self.o.days * 24 + 1, seed=self.o.seed)

        broker = None
        broker_url = self.o.broker_url
        if broker_url is None:
            broker = EmbeddedBroker(port=_free_port()).start()
            broker_url = broker.url
            self.report(f"embedded MQTT broker (amqtt) on {broker_url}")
        # The server the town would run, from the same composition root as `serve`; only the
        # broker (embedded) and the clock (simulated: the data's own time) differ.
        settings = Settings.model_validate({
            "registry": configs / "sites.yaml", "data_dir": wd, "store": self.o.store_url,
            "notify": list(self.o.notify_urls),
            "broker": {"url": broker_url, "username": DEMO_USER, "password": "demo"},
            "http": {"listen": self.o.http},
            "engine": {"eval_interval": "60min"},
            "ingest": {"batch_wait": "5ms"},       # each simulated step waits for its data
        })
        self.summary.settings_file = str(_write_settings(wd, configs / "sites.yaml", settings.store_url))
        server = build_server(settings, report=self.report, simulated=True,
                              ingest_client_id=f"ms4watch-ingest-{registry.municipality}-{uuid.uuid4().hex[:8]}")
        ingest, pipeline = server.ingest, server.pipeline
        agents: list[Agent] = []
        started = False
        t_done: float | None = None
        try:
            server.start()
            started = True
            if not ingest.connected.wait(15):
                raise DemoError(f"ingest could not subscribe at {broker_url}")
            self.report(f"ingest subscribed; store {_redact(settings.store_url)}")
            self._open_workbench(server, registry.municipality)
            env = DriverEnv(data_dir=wd / "edge", shared={"world": world})
            (wd / "configs").mkdir(exist_ok=True)
            for f in agent_files:
                config, options = load_agent_config(f)
                own = shutil.copy(f, wd / "configs" / f.name)    # each logger's config file, as on a logger
                agents.append(Agent(config, options, data_dir=wd / "edge", env=env, broker_url=broker_url,
                                    username=DEMO_USER, password="demo", spool_synchronous="NORMAL",
                                    config_path=own).start())
            self.report(f"{len(agents)} simulated loggers: {', '.join(a.config.device for a in agents)}")
            self.summary.devices = len(agents)
            if not self._simulate(agents, ingest, pipeline, start_ns, end_ns):
                self.summary.interrupted = True
                self.report("interrupted: draining what was taken, then stopping")
            self._drain(agents, ingest, self.o.interrupted_drain_s if self.summary.interrupted else self.o.drain_timeout_s)
            t_done = time.monotonic()
            if self.o.serve and not self._stop.is_set() and self.web_url:
                self._serve()
        finally:
            for a in agents:
                a.stop()
            if started:
                server.stop(end_ns)
            else:
                pipeline.close()
            if broker is not None:
                broker.stop()
        s = self.summary
        s.readings_taken = sum(a.spool_taken for a in agents)
        s.readings_published = sum(a.uplink.published_readings for a in agents)
        s.duplicate_messages = ingest.stats.duplicate_messages
        s.rejected_messages = ingest.stats.rejected_messages
        s.readings_stored = _count(settings.store_url, ingest)
        s.storms = [e.to_dict(registry.tz) for e in pipeline.storms()]
        s.alerts = [e.to_dict(registry.tz) for e in pipeline.alerts()]
        s.wall_s = round((t_done or time.monotonic()) - t_wall, 2)   # the simulation's, not --serve's
        return s

    def _open_workbench(self, server: Any, municipality: str) -> None:
        """A demo SMO (role admin) with a fresh password, printed once with the URL."""
        if server.workbench is None:
            return
        from .workbench.roles import Role
        password = secrets.token_urlsafe(9)
        server.workbench.users.add("smo", password, municipality=municipality, role=Role.ADMIN,
                                   display_name="Demo SMO")
        self.web_url, self.web_login = server.web_url, ("smo", password)
        self.report(f"workbench on {self.web_url} — log in as smo / {password}")

    def _serve(self) -> None:
        self.report(f"the simulated days are over; the workbench stays on {self.web_url} "
                    f"(log in as {self.web_login[0]} / {self.web_login[1]}); Ctrl-C stops it")  # type: ignore[index]
        self.serving.set()
        self._stop.wait()
        self.serving.clear()

    def _simulate(self, agents: list[Agent], ingest: IngestService, pipeline: AlertPipeline,
                  start_ns: int, end_ns: int) -> bool:
        """Every simulated step from ``start_ns`` to ``end_ns``: True, or False when a stop
        was requested first (looked at between steps, never inside one)."""
        t0 = time.monotonic()
        t = start_ns
        taken = 0
        inspector = SimulatedInspector(self.o.inspected_sites, self.report)
        technician = SimulatedTechnician(self.report, start_ns + 26 * 3600 * 10**9)
        while t <= end_ns and not self._stop.is_set():
            technician.step(agents, t)
            for a in agents:
                taken += a.sample_due(t)
            # The alert clock follows the data: let ingest catch up with what the loggers took
            # (as it would in real time) before time moves on, so no station looks stale merely
            # because simulated time outran the pipeline.
            deadline = time.monotonic() + 5.0
            while pipeline.fed_readings < taken and time.monotonic() < deadline and not self._stop.is_set():
                time.sleep(0.002)
            if (t - start_ns) % ADVANCE_NS == 0 or t + STEP_NS > end_ns:
                pipeline.advance(t)
                self._tell_clock(t)
                inspector.step(pipeline, t)
                for a in agents:           # the loggers' hourly status (battery, signal, spool)
                    a.uplink.publish_status()
            self.summary.simulated_days = (t - start_ns) / 86400e9
            if self.progress:
                self.progress(t - start_ns, end_ns - start_ns)
            if self.o.speed > 0:
                ahead = (t - start_ns) / 1e9 / self.o.speed - (time.monotonic() - t0)
                if ahead > 0:
                    self._stop.wait(ahead)
            t += STEP_NS
        return t > end_ns

    def _tell_clock(self, now_ns: int) -> None:
        """The simulated present, for commands run on the demo's records (``ms4watch report
        annual`` counts to it, as the workbench does)."""
        from .contract.timeutil import from_ns
        (Path(self.o.workdir) / CLOCK).write_text(from_ns(now_ns).isoformat() + "\n", encoding="utf-8")

    def _drain(self, agents: list[Agent], ingest: IngestService, timeout_s: float) -> None:
        """Wait until what the loggers took is stored: at most ``timeout_s``, and at most
        ``interrupted_drain_s`` after a stop is requested meanwhile."""
        deadline = time.monotonic() + timeout_s

        def left() -> float:
            end = deadline if self._stop_at is None else min(deadline, self._stop_at + self.o.interrupted_drain_s)
            return end - time.monotonic()

        for a in agents:
            if not a.uplink.wait_drained(max(0.1, left())):
                self.report(f"warning: {a.config.device} still has {a.spool.depth()} readings spooled")
        published = sum(a.uplink.published_readings for a in agents)
        while left() > 0 and ingest.stats.stored_readings < published:
            time.sleep(0.05)


class SimulatedInspector:
    """Visits the sites it is given 4 h before each inspection deadline and records the
    inspection, as the SMO would with ``ms4watch incidents inspected``; other sites' items
    are left to fall overdue and escalate."""

    def __init__(self, sites: tuple[str, ...], report: Reporter, lead_ns: int = 4 * 3600 * 10**9):
        self.sites = set(sites)
        self.report = report
        self.lead_ns = lead_ns
        self._done: set[str] = set()

    def step(self, pipeline: AlertPipeline, now_ns: int) -> None:
        for e in pipeline.events():
            site = e.fields.get("site")
            if e.kind is not AlertKind.INSPECTION_DUE or site not in self.sites or e.id in self._done:
                continue
            if e.fields.get("closed_at"):
                self._done.add(e.id)
                continue
            if e.fields["due"] - self.lead_ns <= now_ns:
                self._done.add(e.id)
                at = datetime.fromtimestamp(now_ns / 1e9, tz=pipeline.registry.tz)
                pipeline.record_inspection(site, at, by="J. Rivera (simulated inspector)",
                                           note="erosion controls checked; silt fence repaired")
                self.report(f"[{at:%Y-%m-%d %H:%M}] inspection recorded at {site} (J. Rivera)")


class SimulatedTechnician:
    """Calibrates the turbidity sonde below the construction site once, a day into the
    simulation, as ``ms4watch calibrate turbidity`` would (without hardware): as-found
    readings in four StablCal standards drifted about +7 %, a new linear fit, as left within
    the criteria. The record goes into the logger's spool, the coefficients into its config
    file, which the running agent applies."""

    DEVICE, SENSOR = "LOG-DS1", "turbidity"
    STANDARDS = ((0.0, 0.13), (20.0, 21.6), (100.0, 107.1), (800.0, 856.4))   # (standard, raw as found) [FNU]

    def __init__(self, report: Reporter, at_ns: int):
        self.report = report
        self.at_ns = at_ns
        self.done = False

    def step(self, agents: list[Agent], now_ns: int) -> None:
        if self.done or now_ns < self.at_ns:
            return
        self.done = True
        agent = next((a for a in agents if a.config.device == self.DEVICE), None)
        sensor = next((s for s in agent.config.sensors if s.id == self.SENSOR), None) if agent else None
        if agent is None or sensor is None or agent.config_path is None:
            return
        from .contract.calibration import Procedure, Standard
        from .contract.timeutil import from_ns
        from .edge.calibration.procedures import previous_fit, turbidity
        from .edge.calibration.session import write_run
        stds = [Standard(value=v, unit=sensor.unit, kind="stablcal", lot=f"SC-{int(v)}-2026") for v, _ in self.STANDARDS]
        raw = [r for _, r in self.STANDARDS]
        outcome = turbidity(stds, raw, previous_fit(sensor.calibration), raw, unit=sensor.unit)
        done = write_run(agent.config_path, agent.spool.path.parent, agent.config, sensor, outcome,
                         Procedure.TURBIDITY, "Lee Tech (simulated technician)", started_ns=now_ns - 45 * 60 * 10**9,
                         performed_ns=now_ns, next_due=from_ns(now_ns).date() + (
                             sensor.calibration.due - sensor.calibration.performed if sensor.calibration else
                             timedelta(days=30)))
        agent.watch_config_file()
        at = from_ns(now_ns)
        self.report(f"[{at:%Y-%m-%d %H:%M}] {self.DEVICE}/{self.SENSOR} calibrated by Lee Tech: "
                    f"{done.record.result.value.upper()}, {done.record.fit.describe()}, next due {done.record.next_due}")


def _write_settings(wd: Path, registry: Path, store_url: str) -> Path:
    """The demo town's settings as a file, so that ``ms4watch incidents|report|users`` work on
    its records once ``MS4WATCH_CONFIG`` names it (the broker was the demo's own: not kept)."""
    own = shutil.copy(registry, wd / "sites.yaml")
    path = (wd / "ms4watch.toml").resolve()
    q = json.dumps     # a JSON string is a TOML basic string
    path.write_text("# The demo town's settings, written by `ms4watch demo` (cleared at every run).\n"
                    f"# export MS4WATCH_CONFIG={path} and the ms4watch commands work on its records.\n"
                    f"registry = {q(str(Path(own).resolve()))}\n"
                    f"data_dir = {q(str(wd.resolve()))}\n"
                    f"store = {q(store_url)}\n", encoding="utf-8")
    return path


def _count(store_url: str, ingest: IngestService) -> int:
    """Readings in the store, counted by the store itself where it can."""
    store = build_store(store_url)
    if isinstance(store, Counting):
        store.open()
        try:
            return store.count_readings()
        finally:
            store.close()
    return ingest.stats.stored_readings


def _free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _redact(url: str) -> str:
    return url.split("?")[0]


def simulated_now(data_dir: Path) -> datetime | None:
    """The demo's simulated present if ``data_dir`` is a demo's working directory, else None."""
    p = Path(data_dir) / CLOCK
    if not (Path(data_dir) / MARKER).is_file() or not p.is_file():
        return None
    try:
        return datetime.fromisoformat(p.read_text(encoding="utf-8").strip())
    except ValueError:
        raise DemoError(f"{p}: not an ISO 8601 time") from None


def write_summary(summary: DemoSummary, path: Path) -> None:
    path.write_text(json.dumps(summary.as_dict(), indent=2, default=str) + "\n", encoding="utf-8")


def parse_start(text: str) -> datetime:
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        raise ValueError("--start needs a UTC offset, e.g. 2026-06-01T00:00:00-04:00")
    return dt


__all__ = ["Demo", "DemoOptions", "DemoSummary", "write_summary", "parse_start", "simulated_now"]
