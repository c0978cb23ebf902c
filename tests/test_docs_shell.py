"""The docs are run: every shell block of docs/edge-install.md, and of docs/operations.md
outside the install steps, in a scratch root (``tests/support/docshell.py``), against a real
Mosquitto, InfluxDB (with authentication) and SMTP server, so a doc that drifts from the
code fails here.

What is not run, or run otherwise, is listed below with its reason (``SKIPS``, ``REWRITES``),
and printed with each test (``pytest -s``); a rule no command uses any more fails the test,
so the lists stay the true ones.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.docshell import Block, Rewrite, Scratch, Skip, blocks
from tests.support.servers import InfluxDB1, free_port, have
from tests.support.systemlock import system_install_lock

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"

SYSTEM_FOLDERS = ("/etc/ms4watch", "/etc/mosquitto/ms4watch", "/var/lib/ms4watch", "/var/backups/ms4watch")
SYSTEMD = "systemd runs no units in the test container (the units: tests/test_systemd_units.py)"
SKIPS = [
    Skip(r"\bapt(-get)? ", "installs Debian packages: .ci/run installs what the tests need"),
    Skip(r"\b(useradd|usermod|adduser)\b", "makes a system user: the scratch root runs as the test's own user"),
    Skip(r"\bgit clone\b|\bpython3 -m venv\b|\bpip install\b", "installs ms4watch: the test runs this checkout's"),
    Skip(r"/dev/serial", "needs the logger's USB serial adapter"),
    Skip(r"\bms4watch calibrate\b", "interactive, at the instrument"),
    Skip(r"\bsystemctl (?!restart mosquitto\b)", SYSTEMD),
    Skip(r"\bjournalctl\b", SYSTEMD),
    Skip(r"\binfluxd restore\b", "restores onto a new server, its database absent"),
    Skip(r"\bms4watch incidents inspected\b", "needs incidents.db, made by the server's first start (the unit, not run)"),
]


def rewrites(root: Path, mqtt_port: int) -> list[Rewrite]:
    return [
        Rewrite(r"(ms4watch edge --config \S+)\s*$", r"\1 --check",
                "the agent runs in the foreground until Ctrl-C: --check loads the config, its files and drivers"),
        Rewrite(r"(?s)(broker-config .*--host \S+)\s*$", rf"\1 --port {mqtt_port} --bind 127.0.0.1",
                "the broker on a free loopback port instead of 8883"),
        Rewrite(r"^(.*\bms4watch users add\b[^#\n]*?)(\s*#.*)?$", rf"\1 < {root}/run/typed\2",
                "the password typed twice at the prompt comes from a file"),
        Rewrite(r"\bsystemctl restart mosquitto\b",
                f"{sys.executable} -m tests.support.docshell mosquitto {root} {mqtt_port}",
                "Mosquitto started as Debian's unit does (its mosquitto.conf including conf.d)"),
    ]


SITES = """\
municipality: town
rain_gauges: [{id: RG-1}]
outfalls:
  - {id: OF-12, name: Mill St, rain_gauges: [RG-1]}
construction_sites:
  - {id: CS-1, name: Hillcrest Estates, rain_gauges: [RG-1], active_from: 2026-08-01, disturbed_acres: 4.2}
contacts:
  - {name: SMO, role: smo, email: smo@town.example}
"""
PASSWORD = "a documented password 1"


def logger_config(scratch: Scratch) -> str:
    """LOG-OF12's firmware config: docs/edge-install.md's own broker and spool lines, under a
    simulated sensor."""
    [yaml] = [b for b in blocks(DOCS / "edge-install.md", "yaml") if "broker:" in b.text]
    return ("device: LOG-OF12\nmunicipality: town\nstation: OF-12\n"
            "sensors:\n  - {id: battery, driver: sim, quantity: battery, unit: V, options: {model: battery}}\n" + scratch.translate(yaml.text) + "\n")


@pytest.fixture
def scratch(tmp_path, monkeypatch) -> Scratch:
    if not have("mosquitto"):
        pytest.skip("mosquitto is not installed (apt-get install mosquitto)")
    with system_install_lock():     # tests/test_deb.py's package is never installed meanwhile
        yield from _scratch(tmp_path, monkeypatch)


def _scratch(tmp_path, monkeypatch):
    before = {p for p in SYSTEM_FOLDERS if Path(p).exists()}
    present = sorted(before & {"/etc/ms4watch", "/etc/mosquitto/ms4watch"})
    if present:
        pytest.skip(f"this machine has an ms4watch install ({', '.join(present)}): a command whose default "
                    "is a system folder (backup's settings folder, say) would reach it")
    # Not under pytest's folder: every pytest session run as root makes /tmp/pytest-of-root
    # 0700 again, and Mosquitto, once it is user mosquitto, must walk to its files.
    root = Path(tempfile.mkdtemp(prefix="ms4watch-docs-")) / "scratchroot"
    mqtt_port = free_port()
    s = Scratch(root=root, bin_dir=Path(sys.executable).parent, repo=REPO, skips=SKIPS,
                rewrites=rewrites(root, mqtt_port),
                hosts={"broker.town.example": "localhost", ":8883": f":{mqtt_port}", "-p 8883": f"-p {mqtt_port}"})
    s.env = {"MS4WATCH_CONFIG": f"{root}/etc/ms4watch/ms4watch.toml", "PYTHONPATH": str(REPO),
             "MS4WATCH_LOG_FORMAT": "text"}
    for k in ("MS4WATCH_INFLUX_TOKEN", "MS4WATCH_INFLUX_TOKEN_FILE", "CREDENTIALS_DIRECTORY"):
        monkeypatch.delenv(k, raising=False)
    # What a Debian machine has before the docs start: /root, systemd's folders, Mosquitto's
    # conf.d and its main config, nginx's sites folders, as Debian's packages lay them out.
    for d in ("root", "run", "etc/systemd/system", "etc/mosquitto/conf.d", "etc/nginx/sites-available",
              "etc/nginx/sites-enabled", "var/backups"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "root").chmod(0o700)
    (root / "run" / "typed").write_text(f"{PASSWORD}\n{PASSWORD}\n")
    (root / "etc/mosquitto/mosquitto.conf").write_text(
        f"persistence true\npersistence_location {root}/run/\nlog_dest stderr\n"
        f"include_dir {root}/etc/mosquitto/conf.d\n")
    # Mosquitto started as root becomes user mosquitto: it must walk to its files
    if os.geteuid() == 0:
        shutil.chown(root / "run", user="mosquitto", group="mosquitto")
        root.parent.chmod(0o711)
    yield s
    pidfile = root / "run" / "mosquitto.pid"
    if pidfile.exists():
        try:
            os.kill(int(pidfile.read_text()), signal.SIGTERM)
        except ProcessLookupError:
            pass
    shutil.rmtree(root.parent, ignore_errors=True)
    made = {p for p in SYSTEM_FOLDERS if Path(p).exists()} - before
    assert not made, f"the docs' commands reached the system's folders: {sorted(made)}"
    print("\n".join(f"{doc}:{line}: {why}: {cmd}" for doc, line, cmd, why in s.done))


def _run(scratch: Scratch, block: Block, cwd: Path) -> None:
    res = scratch.run(block, cwd)
    assert res.returncode == 0, (f"{block.doc.name}:{block.line} ({block.section} / {block.subsection}) failed:\n"
                                 f"{res.stderr[-3000:]}\n{res.stdout[-2000:]}")



def test_edge_install_runs_as_written(scratch, tmp_path):
    """docs/edge-install.md, step by step, as the technician's ``pi`` user with sudo: the files
    the office hands over (``LOG-OF12.yaml`` with the doc's broker lines, ``clients/LOG-OF12/``
    made by broker-config) in the current folder."""
    from ms4watch.brokerconf import generate
    from ms4watch.contract.devices import load_devices
    from ms4watch.contract.registry import load_registry

    office = tmp_path / "office"
    (office / "loggers").mkdir(parents=True)
    (office / "sites.yaml").write_text(SITES)
    (office / "loggers" / "LOG-OF12.yaml").write_text(logger_config(scratch))
    generate(load_devices(load_registry(office / "sites.yaml"), office / "loggers"), office / "broker",
             hosts=["localhost"])
    pi = tmp_path / "pi"
    (pi / "clients").mkdir(parents=True)
    shutil.copy(office / "loggers" / "LOG-OF12.yaml", pi / "LOG-OF12.yaml")
    shutil.copytree(office / "broker" / "clients" / "LOG-OF12", pi / "clients" / "LOG-OF12")
    for block in blocks(DOCS / "edge-install.md"):
        _run(scratch, block, pi)
    etc = scratch.root / "etc/ms4watch"
    assert (etc / "firmware.yaml").read_text() == (office / "loggers" / "LOG-OF12.yaml").read_text()
    assert oct((etc / "client.key").stat().st_mode & 0o777) == "0o600"
    assert oct((etc / "mqtt.pass").stat().st_mode & 0o777) == "0o600"
    assert (scratch.root / "etc/systemd/system/ms4watch-edge.service").is_file()


INSTALL_STEPS = {"Install", "Upgrade"}     # the Debian package's steps: tests/test_deb.py runs them


def operations_blocks() -> list[Block]:
    """docs/operations.md's shell blocks but the install and upgrade steps themselves (their
    subsections, the first start and the first user, are run)."""
    return [b for b in blocks(DOCS / "operations.md") if not (b.section in INSTALL_STEPS and not b.subsection)]


@pytest.mark.influxdb
def test_operations_runs_as_written(scratch, tmp_path):
    """docs/operations.md after the install: the settings are the doc's own minimal
    ``ms4watch.toml``; the registry and ``LOG-OF12.yaml`` are the town's."""
    from tests.support.notify_peers import SmtpSink

    if not have("influxd"):
        pytest.skip("influxd is not installed (apt-get install influxdb)")
    influx = InfluxDB1(tmp_path / "influxdb", auth=True).start()
    smtp = SmtpSink().start()
    try:
        scratch.hosts.update({"127.0.0.1:8086": f"127.0.0.1:{influx.port}",
                              # InfluxDB's own backup tool talks to its RPC port: the test server's
                              "influxd backup ": f"influxd backup -host 127.0.0.1:{influx.rpc_port} ",
                              "smtp.town.example:587": f"127.0.0.1:{smtp.port}"})
        [toml] = [b for b in blocks(DOCS / "operations.md", "toml")
                  if b.section == "Install" and "data_dir" in b.text]
        etc = scratch.root / "etc/ms4watch"
        etc.mkdir(parents=True)
        (etc / "ms4watch.toml").write_text(scratch.translate(toml.text) + "\n")
        (etc / "sites.yaml").write_text(SITES)
        (scratch.root / "var/lib/ms4watch").mkdir(parents=True)      # systemd's StateDirectory=
        town = tmp_path / "town"
        town.mkdir()
        (town / "LOG-OF12.yaml").write_text(logger_config(scratch))
        ran = operations_blocks()
        assert {b.section for b in ran} >= {"The broker: TLS, credentials, ACL", "InfluxDB: authentication",
                                           "Backup and restore"}
        for block in ran:
            _run(scratch, block, town)
    finally:
        smtp.stop()
        influx.stop()
    data = scratch.root / "var/lib/ms4watch"
    assert (data / "workbench.db").is_file()
    assert (scratch.root / "etc/mosquitto/ms4watch/clients/ms4watch-ingest/client.crt").is_file()
    assert (etc / "ms4watch-ingest.key").stat().st_mode & 0o777 == 0o640
    assert list((scratch.root / "var/backups/ms4watch").iterdir())


def test_every_skip_and_rewrite_is_still_needed(tmp_path):
    """A rule no command of the docs uses any more is dropped, so the lists above stay the
    true ones (the scripts are made, not run)."""
    root = tmp_path / "scratchroot"
    s = Scratch(root=root, bin_dir=Path(sys.executable).parent, repo=REPO, skips=SKIPS, rewrites=rewrites(root, 1))
    for block in [*blocks(DOCS / "edge-install.md"), *operations_blocks()]:
        s.script(block)
    used = {why.split(": ", 1)[1] for _, _, _, why in s.done}
    assert [r.reason for r in [*SKIPS, *s.rewrites] if r.reason not in used] == []
