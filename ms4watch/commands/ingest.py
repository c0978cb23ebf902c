"""``ms4watch ingest``: the server-side subscriber, for a real deployment."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Optional

import typer

from ..contract.errors import Ms4Error
from ._process import stop_on_signals


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest)


def ingest(
    municipality: str = typer.Option(..., help="Municipality id (the second topic level)."),
    broker: str = typer.Option("mqtt://127.0.0.1:1883", help="MQTT broker URL (mqtt://user:pass@host:port)."),
    store: str = typer.Option("sqlite:///ms4watch-store.db", help="Store URL: sqlite:///PATH, influxdb1://…, influxdb2://…"),
    client_id: Optional[str] = typer.Option(None, help="MQTT client id of the persistent session."),
    username: Optional[str] = typer.Option(None, envvar="MS4WATCH_MQTT_USERNAME"),
    password_file: Optional[Path] = typer.Option(None, help="File holding the MQTT password (never on the command line)."),
    rejected: Path = typer.Option(Path("rejected.jsonl"), help="Where messages that break the contract are kept."),
    spool_dir: Path = typer.Option(Path("."), help="Local spool for a remote store that is down (store-spool.db)."),
    workers: int = typer.Option(1, min=1, max=64, help="Ingest processes sharing the readings through an MQTT shared "
                                                       "subscription (Mosquitto); one per core."),
    shared_group: Optional[str] = typer.Option(None, hidden=True, help="Run as one member of this shared group."),
) -> None:
    """Subscribe to every logger's readings and store them; acknowledge only once stored."""
    from ..ingest.service import IngestService, tune_gc
    from ..ingest.sinks import open_store

    log = logging.getLogger("ms4watch.ingest")
    base_id = client_id or f"ms4watch-ingest-{municipality}"
    if workers > 1:
        _run_workers(workers, base_id, municipality=municipality, broker=broker, store=store, username=username,
                     password_file=password_file, rejected=rejected, spool_dir=spool_dir)
        return
    password = password_file.read_text(encoding="utf-8").strip() if password_file else None
    try:
        service = IngestService(broker, municipality, open_store(store, spool_dir), client_id=base_id,
                                username=username, password=password, rejected_path=rejected,
                                shared_group=shared_group)
        tune_gc()
        service.start()
    except (Ms4Error, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    stop = stop_on_signals()
    typer.echo(f"ingest: {municipality} from {broker} into {store.split('?')[0]}; Ctrl-C stops")
    while not stop.wait(10):
        s = service.stats
        log.info("stored %d readings (%d messages, %d duplicates, %d rejected)",
                 s.stored_readings, s.messages, s.duplicate_messages, s.rejected_messages)
    service.stop()
    typer.echo(f"ingest stopped: {service.stats.stored_readings} readings stored")


def _run_workers(n: int, base_id: str, *, municipality: str, broker: str, store: str, username: str | None,
                 password_file: Path | None, rejected: Path, spool_dir: Path) -> None:
    """Start ``n`` ingest processes in one shared subscription group; stop them on SIGTERM.

    Each has its own persistent session (``BASE-0`` … ``BASE-n-1``) and its own local spool;
    the broker hands each reading message to one of them. The store's (device, seq) filter
    still writes each message once, whichever process gets a redelivery.
    """
    import subprocess
    import sys

    procs = []
    for i in range(n):
        cmd = [sys.executable, "-m", "ms4watch", "ingest", "--municipality", municipality, "--broker", broker,
               "--store", store, "--client-id", f"{base_id}-{i}", "--shared-group", base_id,
               "--rejected", str(rejected), "--spool-dir", str(spool_dir / f"worker-{i}")]
        if username:
            cmd += ["--username", username]
        if password_file:
            cmd += ["--password-file", str(password_file)]
        (spool_dir / f"worker-{i}").mkdir(parents=True, exist_ok=True)
        procs.append(subprocess.Popen(cmd))
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
