"""``ms4watch ingest``: the server-side subscriber alone (MQTT → store), e.g. to fill a store
without alerting, or several processes sharing a town's readings (``--workers``)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Optional

import typer

from ..contract.errors import Ms4Error
from ._process import stop_on_signals
from ._settings import config_option, settings_or_exit

PASSWORD_ENV = "MS4WATCH_BROKER__PASSWORD"


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)


def ingest(
    municipality: Optional[str] = typer.Option(None, help="Municipality id (the second topic level); default: the "
                                                          "registry's in the settings."),
    config: Optional[Path] = config_option(),
    broker: Optional[str] = typer.Option(None, help="MQTT broker, mqtt://[USER@]HOST:PORT; the password comes from "
                                                    "--password-file or MS4WATCH_BROKER__PASSWORD."),
    store: Optional[str] = typer.Option(None, help="Store URL: sqlite:///PATH, influxdb1://…, influxdb2://… "
                                                   "(default sqlite:///DATA_DIR/store.db)."),
    client_id: Optional[str] = typer.Option(None, help="MQTT client id of the persistent session."),
    username: Optional[str] = typer.Option(None, help="MQTT user name."),
    password_file: Optional[Path] = typer.Option(None, help="File holding the MQTT password (never on the command line)."),
    rejected: Optional[Path] = typer.Option(None, help="Where messages that break the contract are kept "
                                                       "(default DATA_DIR/rejected.jsonl)."),
    spool_dir: Optional[Path] = typer.Option(None, "--data-dir", "--spool-dir",
                                             help="Data directory: the local spool for a remote store that is down, "
                                                  "the default store and rejected file (default: the settings')."),
    workers: int = typer.Option(1, min=1, max=64, help="Ingest processes sharing the readings through an MQTT shared "
                                                       "subscription (Mosquitto); one per core."),
    shared_group: Optional[str] = typer.Option(None, hidden=True, help="Run as one member of this shared group."),
) -> None:
    """Subscribe to every logger's readings and store them; acknowledge only once stored.

    Reads the same settings as `serve` (--config, MS4WATCH_*); options override them.
    """
    from ..ingest.service import tune_gc
    from ..ingest.stores import open_store
    from ..wiring import build_ingest

    log = logging.getLogger("ms4watch.ingest")
    settings = settings_or_exit(config, store=store, data_dir=spool_dir,
                                broker={"url": broker, "username": username, "password_file": password_file,
                                        "client_id": client_id})
    try:
        muni = municipality or _registry_municipality(settings)
        password = settings.broker.secret()
        identity = _identity(settings, muni)
    except Ms4Error as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    base_id = settings.broker.client_id or f"ms4watch-ingest-{muni}"
    data = settings.data_dir
    rejected = rejected or data / "rejected.jsonl"
    if workers > 1:
        _run_workers(workers, base_id, muni, settings, password, rejected)
        return
    try:
        rejected.parent.mkdir(parents=True, exist_ok=True)
        if not settings.store_url.startswith("sqlite:"):
            data.mkdir(parents=True, exist_ok=True)    # the spool for a remote store
        service = build_ingest(settings, muni, open_store(settings.store_url, data), client_id=base_id,
                               rejected_path=rejected, shared_group=shared_group, identity=identity)
        tune_gc()
        service.start()
    except (Ms4Error, OSError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    stop = stop_on_signals()
    typer.echo(f"ingest: {muni} from {settings.broker.url} into {settings.store_url.split('?')[0]}; Ctrl-C stops")
    while not stop.wait(10):
        s = service.stats
        log.info("stored %d readings (%d messages, %d duplicates, %d rejected, %d conflicting)", s.stored_readings,
                 s.messages, s.duplicate_messages, s.rejected_messages, s.conflicting_messages)
    service.stop()
    typer.echo(f"ingest stopped: {service.stats.stored_readings} readings stored")


def _registry_municipality(settings) -> str:
    from ..contract.registry import load_registry
    from ..settings import SettingsError
    if settings.registry is None:
        raise SettingsError("--municipality: not given, and no registry in the settings to take it from")
    return load_registry(settings.registry).municipality


def _identity(settings, municipality: str):
    """With a registry in the settings: its stations, and the listed loggers (firmware_configs).
    Without one, nothing of the registry (nor YAML) is imported: ~80 ms of ingest's start-up."""
    if settings.registry is None:
        return None
    from ..contract.registry import load_registry
    from ..ingest.identity import Identity
    from ..settings import SettingsError
    reg = load_registry(settings.registry)
    if reg.municipality != municipality:
        raise SettingsError(f"--municipality: {municipality!r} is not the registry's {reg.municipality!r}")
    return Identity(reg.station_ids(), settings.devices(reg))


def _run_workers(n: int, base_id: str, municipality: str, settings, password: str | None, rejected: Path) -> None:
    """Start ``n`` ingest processes in one shared subscription group; stop them on SIGTERM.

    Each has its own persistent session (``BASE-0`` … ``BASE-n-1``) and its own local spool;
    the broker hands each reading message to one of them. The store's (device, epoch, seq) filter
    still writes each message once, whichever process gets a redelivery. The password
    reaches them through their environment, never their command lines (``ps`` shows those).
    """
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != PASSWORD_ENV}
    if password is not None:
        env[PASSWORD_ENV] = password
    for name in ("ca_file", "cert_file", "key_file"):      # the TLS files, wherever they were set
        value = getattr(settings.broker, name)
        if value is not None:
            env[f"MS4WATCH_BROKER__{name.upper()}"] = str(value)
    for name in ("registry", "firmware_configs"):       # so each worker checks who sent what
        value = getattr(settings, name)
        if value is not None:
            env[f"MS4WATCH_{name.upper()}"] = str(value)
    procs = []
    for i in range(n):
        spool = settings.data_dir / f"worker-{i}"
        spool.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "ms4watch", "ingest", "--municipality", municipality,
               "--broker", settings.broker.url, "--store", settings.store_url, "--client-id", f"{base_id}-{i}",
               "--shared-group", base_id, "--rejected", str(rejected), "--spool-dir", str(spool)]
        if settings.broker.username:
            cmd += ["--username", settings.broker.username]
        procs.append(subprocess.Popen(cmd, env=env))
    typer.echo(f"ingest: {n} workers in shared group {base_id}; Ctrl-C stops")
    stop = stop_on_signals()
    while not stop.wait(1):
        if any(p.poll() is not None for p in procs):
            typer.echo("ingest: a worker exited; stopping the others", err=True)
            break
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        p.wait(60)
