"""Beyond one machine (issue 14): two ``ms4watch serve`` processes, each owning part of a
coalition's municipalities, against one Mosquitto and one InfluxDB (a database per town,
``store = "influxdb1://…/ms4_{municipality}"``). The same station and logger ids in every
town. Each town's loggers stream while one of the servers is killed -9 and started again:
every reading is stored once, in its own town's database; each town's alert is raised once,
by the server that owns it, and its SMO notified once (for the killed server's towns: one
Message-ID, as an email sent in the instant before the kill goes again after the restart)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.faults import SITES, Logger, Stream, delivered, kill9, rig, terminate
from tests.support.servers import have
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.mosquitto, pytest.mark.influxdb, pytest.mark.faults]
TOWNS = {"s1": ["alder", "birch"], "s2": ["cedar"]}     # which server owns which municipalities


class Serve:
    def __init__(self, tmp: Path, name: str, towns: list[str], broker_url: str, store: str, smtp_url: str):
        self.tmp, self.name = tmp, name
        self.data = tmp / name
        self.log = tmp / f"{name}.log"
        regs = ", ".join(f'"{tmp / t}.yaml"' for t in towns)
        self.config = tmp / f"{name}.toml"
        self.config.write_text(f"""\
registries = [{regs}]
data_dir = "{self.data}"
store = "{store}"
notify = ["{smtp_url}"]

[broker]
url = "{broker_url}"
client_id = "ms4watch-{name}"

[http]
listen = "off"

[engine]
tick = "1h"

[delivery]
retry_first = "1s"
retry_max = "2s"
idle = "1s"
""")
        self.proc: subprocess.Popen | None = None
        self._starts_before = 0

    def starts(self) -> int:
        return self.log.read_text(errors="replace").count("serving") if self.log.exists() else 0

    def launch(self) -> "Serve":
        """The process started; :meth:`wait_serving` waits for it (two servers start side by side)."""
        self._starts_before = self.starts()
        self.proc = subprocess.Popen([sys.executable, "-m", "ms4watch", "serve", "--config", str(self.config)],
                                     stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
                                     env={**os.environ, "PYTHONUNBUFFERED": "1"})
        return self

    def wait_serving(self) -> "Serve":
        assert wait_for(lambda: self.starts() > self._starts_before, 60), self.log.read_text(errors="replace")[-3000:]
        return self

    def start(self) -> "Serve":
        return self.launch().wait_serving()

    def kill(self) -> None:
        assert self.proc is not None
        kill9(self.proc)

    def stop(self) -> None:
        terminate(self.proc, 60)

    def incidents(self, town: str) -> list[tuple[str, str]]:
        db = self.data / town / "incidents.db"
        if not db.exists():
            return []
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
            return sorted(c.execute("SELECT kind, subject FROM incidents").fetchall())


def test_two_servers_each_owning_part_of_a_coalition_lose_nothing_and_repeat_nothing(tmp_path):
    if not (have("mosquitto") and have("influxd")):
        pytest.skip("mosquitto and influxd are needed")
    town = rig(tmp_path, influx=True)             # Mosquitto, InfluxDB, SMTP (its serve is not used)
    servers: dict[str, Serve] = {}
    try:
        for towns in TOWNS.values():
            for t in towns:
                (tmp_path / f"{t}.yaml").write_text(SITES.format(town=t))
                town.influx.query(f"CREATE DATABASE ms4_{t}")
        store = town.influx.store_url("ms4_{municipality}")
        for name, towns in TOWNS.items():      # started side by side: each waits out its own start-up once
            servers[name] = Serve(tmp_path, name, towns, town.broker.url, store, town.smtp.url).launch()
        for s in servers.values():
            s.wait_serving()
        every = [t for towns in TOWNS.values() for t in towns]
        streams = {t: Stream(Logger(town, "LOG-2", "OF-2", municipality=t).start(), every_s=0.02).start()   # 50 a second
                   for t in every}
        loggers = {t: (Logger(town, "LOG-RG1", "RG-1", municipality=t).start(),
                       Logger(town, "LOG-OF1", "OF-1", municipality=t).start()) for t in every}
        for t in every:
            town.loggers += [streams[t].logger, *loggers[t]]
            town.illicit_discharge(*loggers[t], background_h=2)
        streams["alder"].more(50)
        servers["s1"].kill()                     # the other server goes on with its town
        streams["alder"].more(50)
        servers["s1"].start()
        streams["alder"].more(50)
        for s in streams.values():
            s.stop()

        def stored(t: str) -> dict[str, int]:
            res = town.influx.query('SELECT count("seq") FROM "reading" GROUP BY "device", "station"', f"ms4_{t}")
            out: dict[str, int] = {}
            for series in res["results"][0].get("series", []):
                out[series["tags"]["device"]] = out.get(series["tags"]["device"], 0) + series["values"][0][1]
            return out

        def taken(t: str) -> dict[str, int]:
            return {lg.device: lg.taken for lg in (streams[t].logger, *loggers[t])}

        assert wait_for(lambda: all(stored(t) == taken(t) for t in every), 120, poll_s=0.5), \
            {t: (stored(t), taken(t)) for t in every}
        owner = {t: servers[name] for name, towns in TOWNS.items() for t in towns}
        assert wait_for(lambda: all(len(town.smtp.to(f"smo@{t}.test")) >= 1 for t in every), 90), \
            {t: owner[t].incidents(t) for t in every}
        for t in every:
            assert stored(t) == taken(t)                                  # once each, in its own town's database
            assert [i for i in owner[t].incidents(t) if i[0] != "dry_weather_unknown"] == [("dry_weather_flow", "OF-1")]
            mails = town.smtp.to(f"smo@{t}.test")
            assert len(delivered(mails, killed=owner[t] is servers["s1"])) == 1, \
                [(m["Message-ID"], m["Subject"]) for m in mails]
            other = next(s for s in servers.values() if s is not owner[t])
            assert not (other.data / t).exists()                         # the other server never touched it
    finally:
        for s in servers.values():
            s.stop()
        town.close()
