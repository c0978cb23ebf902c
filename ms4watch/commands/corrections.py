"""``ms4watch corrections add|from-record|list|revert``: data corrected for fouling and
drift (USGS TM 1-D3), kept apart from the raw readings in the town's ``corrections.db``
(``DATA_DIR``; in a coalition ``DATA_DIR/<municipality>/``, chosen with ``--town``) with who,
when and why; reversible. ``ms4watch replay --corrections`` runs the rules on the
corrected values (docs/rules.md)."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn, Optional

import typer

from ms4watch.contract.errors import Ms4Error

from ._settings import config_option, settings_or_exit


def register(app: typer.Typer) -> None:
    cor = typer.Typer(help="Corrections of stored readings for fouling and calibration drift (USGS TM 1-D3).",
                      no_args_is_help=True)
    db_opt = typer.Option(None, "--db", help="Corrections database (default: the town's corrections.db).")
    town_opt = typer.Option(None, "--town", help="The municipality (a coalition's server: required).")
    by_opt = typer.Option(..., "--by", help="Who enters it.")
    why_opt = typer.Option(..., "--why", help="Why (kept in the audit log).")

    @cor.command("add")
    def add(station: str = typer.Option(..., "--station"), quantity: str = typer.Option(..., "--quantity"),
            sensor: Optional[str] = typer.Option(None, "--sensor", help="Only this sensor's readings."),
            start: str = typer.Option(..., "--from", help="The previous service visit (ISO 8601 with offset)."),
            end: str = typer.Option(..., "--to", help="This service visit, when the errors were measured."),
            fouling: float = typer.Option(0.0, "--fouling", help="Fouling correction: after − before cleaning."),
            fouling_kind: str = typer.Option("absolute", "--fouling-kind", help="absolute (sensor's unit) or percent"),
            drift: float = typer.Option(0.0, "--drift", help="Drift correction: standard − reading."),
            drift_kind: str = typer.Option("percent", "--drift-kind", help="absolute or percent"),
            max_allowable: Optional[float] = typer.Option(None, "--max-allowable-pct",
                                                          help="Not reportable past this [%] (turbidity: 30)."),
            by: str = by_opt, why: str = why_opt, db: Optional[Path] = db_opt,
            town: Optional[str] = town_opt, config: Optional[Path] = config_option()) -> None:
        """Enter a correction measured at a service visit, prorated over the interval before it."""
        from ms4watch.contract.drift import CorrectionKind, DriftCorrection
        from ms4watch.contract.timeutil import parse_time, to_ns
        try:
            c = DriftCorrection(to_ns(parse_time(start)), to_ns(parse_time(end)), fouling, drift,
                                CorrectionKind(fouling_kind), CorrectionKind(drift_kind), max_allowable)
        except ValueError as e:
            _fail(str(e))
        _show(_store(db, config, town).add(station, quantity, c, by=by, why=why, sensor=sensor), "added")

    @cor.command("from-record")
    def from_record(record: str = typer.Argument(..., help="A calibration record id (the server's history)."),
                    typical: float = typer.Option(..., "--typical", help="The readings' usual level [the sensor's "
                                                                          "unit]: the drift is taken at the "
                                                                          "as-found standard nearest it."),
                    by: str = by_opt, why: str = why_opt, db: Optional[Path] = db_opt,
                    town: Optional[str] = town_opt, config: Optional[Path] = config_option()) -> None:
        """The correction a calibration record measured (fouling, drift), over the interval since
        the previous calibration of the same sensor."""
        from ms4watch.contract.timeutil import to_ns
        from ms4watch.ingest.corrections import correction_from_record
        from ms4watch.ingest.stores import build_store
        from ms4watch.ingest.stores.base import CalibrationHistory

        settings = settings_or_exit(config)
        store = build_store(settings.store_url)
        if not isinstance(store, CalibrationHistory):
            _fail(f"{settings.store_url}: this store keeps no calibration history")
        try:
            store.open()
            history = store.calibration_history()
        except Ms4Error as e:
            _fail(str(e))
        finally:
            store.close()
        rec = next((r for r in history if r.id == record), None)
        if rec is None:
            _fail(f"no calibration record {record!r} in {settings.store_url}")
        before = [r for r in history if r.device == rec.device and r.sensor == rec.sensor
                  and r.performed < rec.performed]
        if before:
            t0 = to_ns(before[-1].performed)
        elif rec.previous_performed is not None:
            from datetime import datetime, time, timezone
            t0 = to_ns(datetime.combine(rec.previous_performed, time(0), tzinfo=timezone.utc))
        else:
            _fail(f"{record}: no earlier calibration of {rec.device}/{rec.sensor} to start the interval from")
        c = correction_from_record(rec, t0, typical)
        _show(_store(db, config, town).add(rec.station, rec.quantity.value, c, by=by, why=why, sensor=rec.sensor,
                                     record=rec.id), "added")

    @cor.command("list")
    def list_(station: Optional[str] = typer.Option(None, "--station"), db: Optional[Path] = db_opt,
              town: Optional[str] = town_opt, config: Optional[Path] = config_option()) -> None:
        """Every correction (reverted ones too) with its audit log."""
        store = _store(db, config, town)
        for c in store.list(station=station):
            _show(c, "reverted" if not c.active else "in force")
            for a in store.audit(c.id):
                typer.echo(f"    {_iso(a.at_ns)} {a.action} by {a.who}: {a.why}")

    @cor.command("revert")
    def revert(cid: int = typer.Argument(...), by: str = by_opt, why: str = why_opt, db: Optional[Path] = db_opt,
               town: Optional[str] = town_opt, config: Optional[Path] = config_option()) -> None:
        """Stop applying a correction (it stays in the record, with who, when and why)."""
        _show(_store(db, config, town).revert(cid, by=by, why=why), "reverted")

    app.add_typer(cor, name="corrections")


def _store(db: Optional[Path], config: Optional[Path], town: Optional[str]):
    """The corrections database given, else the town's (one town: its own; a coalition: ``--town``)."""
    from ms4watch.ingest.corrections import CorrectionStore, town_corrections
    if db is not None:
        return _Guarded(CorrectionStore(db))
    settings = settings_or_exit(config)
    from ms4watch.contract.registry import load_registry
    try:
        towns = [load_registry(p).municipality for p in settings.registry_paths()]
    except Ms4Error as e:
        _fail(str(e))
    if town is None and len(towns) > 1:
        _fail(f"a coalition's server: say which town's corrections (--town {' | --town '.join(towns)})")
    if town is not None and town not in towns:
        _fail(f"--town {town}: not served here (towns: {', '.join(towns)})")
    return _Guarded(town_corrections(settings, town or towns[0], report=lambda line: typer.echo(line, err=True)))


class _Guarded:
    """The store, its errors one line each."""

    def __init__(self, store):
        self.store = store

    def __getattr__(self, name):
        fn = getattr(self.store, name)

        def call(*a, **kw):
            try:
                return fn(*a, **kw)
            except Ms4Error as e:
                _fail(str(e))
        return call


def _iso(ns: int) -> str:
    from ms4watch.contract.timeutil import iso_utc
    return iso_utc(ns)


def _show(c, state: str) -> None:
    d = c.correction
    typer.echo(f"{c.id}: {c.station} {c.quantity}{' ' + c.sensor if c.sensor else ''} {_iso(d.t0_ns)} → "
               f"{_iso(d.t1_ns)}: fouling {d.fouling:+g}{' %' if d.fouling_kind.value == 'percent' else ''}, drift "
               f"{d.drift:+g}{' %' if d.drift_kind.value == 'percent' else ''}"
               + (f", not reportable past ±{d.max_allowable_pct:g} %" if d.max_allowable_pct is not None else "")
               + f" — {state}" + (f" (record {c.record})" if c.record else ""))


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)
