"""``ms4watch calibrate``: calibrate a sensor on the logger, where the sensor is.

Interactive on a terminal (a technician's laptop or phone over SSH): questions, the sensor's
live readings while it sits in a standard, and a clear PASS or FAIL naming the offending
point. Scriptable: every value as a flag, ``--json`` for JSON lines on stdout (and answers
on stdin), ``--yes`` to write without the last question. Exit codes: 0 pass, 1 fail (the
record is written all the same), 2 a usage or config error, 3 cancelled (nothing written).

Runs beside the agent (same ``--config`` and ``--data-dir``): the agent stops reading the
sensor for the run and takes it back afterwards, along with the new coefficients.
"""

from __future__ import annotations

import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from ms4watch.contract.errors import Ms4Error
from ms4watch.contract.timeutil import parse_duration

EXIT_FAIL, EXIT_USAGE, EXIT_CANCELLED = 1, 2, 3

ConfigOpt = typer.Option(..., "--config", help="The logger's firmware config (the file the agent runs).")
DataDirOpt = typer.Option(Path("/var/lib/ms4watch"), "--data-dir", help="The agent's data directory (its spool).")
SensorOpt = typer.Option(..., "--sensor", help="The sensor id in the config.")
TechOpt = typer.Option(None, "--technician", help="Who calibrates (asked when not given).")
DueOpt = typer.Option(None, "--next-due", help="When the next calibration is due, YYYY-MM-DD.")
IntervalOpt = typer.Option(None, "--interval", help="Or: due this long after today, e.g. 90d (default: the "
                                                    "previous calibration's interval, else 90d).")
SamplesOpt = typer.Option(3, "--samples", min=1, max=50, help="Readings whose median is taken per standard.")
JsonOpt = typer.Option(False, "--json", help="JSON lines on stdout, answers on stdin (for scripts).")
YesOpt = typer.Option(False, "--yes", "-y", help="Write the record and the config without asking.")
DryOpt = typer.Option(False, "--dry-run", help="Do everything but write the record and the config.")
NotesOpt = typer.Option("", "--notes", help="Free text kept in the record.")
TimeoutOpt = typer.Option(60.0, "--pause-timeout", min=1, help="Seconds to wait for the agent to let go of the "
                                                               "sensor.")
PeriodOpt = typer.Option(1.0, "--period", min=0.05, max=60, help="Seconds between live readings.")
AdjustOpt = typer.Option("auto", "--adjust", help="auto: change the correction only when a point is outside the "
                                                  "criteria; always; never.")


def register(app: typer.Typer) -> None:
    cal = typer.Typer(help="Calibrate a sensor on this logger (turbidity, rain gauge, level, flow); the record "
                           "goes to the server, the coefficients into the config.", no_args_is_help=True)

    @cal.command("turbidity")
    def turbidity(config: Path = ConfigOpt, data_dir: Path = DataDirOpt, sensor: str = SensorOpt,
                  technician: Optional[str] = TechOpt,
                  standard: Optional[list[str]] = typer.Option(
                      None, "--standard", help="VALUE[:KIND[:LOT[:EXPIRES]]] in the sensor's unit, e.g. "
                                               "20:stablcal:A1234:2027-01-31; repeat for each (asked when none)."),
                  fit: str = typer.Option("auto", "--fit", help="auto (linear if it meets the criteria at every "
                                                                 "standard, else piecewise), linear, piecewise."),
                  adjust: str = AdjustOpt,
                  fouling: bool = typer.Option(False, "--fouling", help="First take the fouling check in the stream "
                                                                         "(before and after cleaning)."),
                  expired_ok: Optional[str] = typer.Option(None, "--expired-ok", help="REASON to use a standard past "
                                                           "its expiry date (kept in the record); without it such a "
                                                           "standard is refused."),
                  samples: int = SamplesOpt, next_due: Optional[str] = DueOpt, interval: Optional[str] = IntervalOpt,
                  json_out: bool = JsonOpt, yes: bool = YesOpt, dry_run: bool = DryOpt, notes: str = NotesOpt,
                  pause_timeout: float = TimeoutOpt, period: float = PeriodOpt) -> None:
        """Multi-point turbidity calibration against formazin or StablCal standards (USGS TM 1-D3:
        within ±0.5 NTU or ±5 %, whichever is greater)."""
        from ms4watch.contract.calibration import Procedure
        from ms4watch.edge.calibration.runs import parse_standard, run_turbidity

        _check_choice("--fit", fit, ("auto", "linear", "piecewise"))
        _check_choice("--adjust", adjust, ("auto", "always", "never"))

        def steps(s: Any, p: Any) -> Any:
            stds = [parse_standard(x, s.sensor.unit) for x in standard] if standard else None
            return run_turbidity(s, p, standards=stds, fit_kind=fit, adjust=adjust, fouling=fouling, samples=samples,
                                 expired_ok=expired_ok)

        _run(Procedure.TURBIDITY, steps, config, data_dir, sensor, technician, next_due, interval, json_out, yes,
             dry_run, notes, pause_timeout, period)

    @cal.command("rain")
    def rain(config: Path = ConfigOpt, data_dir: Path = DataDirOpt, sensor: str = SensorOpt,
             technician: Optional[str] = TechOpt,
             volume_ml: Optional[float] = typer.Option(None, "--volume-ml", min=1, help="Water poured [mL]."),
             orifice_in: Optional[float] = typer.Option(None, "--orifice-in", min=0.5, help="Funnel diameter [in]."),
             tolerance_pct: Optional[float] = typer.Option(None, "--tolerance-pct", min=0.1, max=50,
                                                           help="The maker's tolerance [%] (e.g. TE525: 1)."),
             keep_factor: bool = typer.Option(False, "--keep-factor", help="Check only: do not apply the "
                                                                            "correction factor."),
             next_due: Optional[str] = DueOpt, interval: Optional[str] = IntervalOpt, json_out: bool = JsonOpt,
             yes: bool = YesOpt, dry_run: bool = DryOpt, notes: str = NotesOpt, pause_timeout: float = TimeoutOpt,
             period: float = PeriodOpt) -> None:
        """Tipping-bucket field check: a known volume through the funnel, expected against counted
        tips, the correction factor, pass or fail against the maker's tolerance."""
        from ms4watch.contract.calibration import Procedure
        from ms4watch.edge.calibration.runs import run_rain

        def steps(s: Any, p: Any) -> Any:
            return run_rain(s, p, volume_ml=volume_ml, orifice_in=orifice_in, tolerance_pct=tolerance_pct,
                            apply_factor=not keep_factor)

        _run(Procedure.RAIN_VOLUME, steps, config, data_dir, sensor, technician, next_due, interval, json_out, yes,
             dry_run, notes, pause_timeout, period)

    @cal.command("level")
    def level(config: Path = ConfigOpt, data_dir: Path = DataDirOpt, sensor: str = SensorOpt,
              technician: Optional[str] = TechOpt,
              depth: Optional[float] = typer.Option(None, "--depth", help="The depth you measured, in the "
                                                                           "sensor's unit."),
              tolerance: Optional[float] = typer.Option(None, "--tolerance", min=0, help="Allowed error, in the "
                                                                                          "sensor's unit."),
              adjust: str = AdjustOpt, samples: int = SamplesOpt, next_due: Optional[str] = DueOpt,
              interval: Optional[str] = IntervalOpt, json_out: bool = JsonOpt, yes: bool = YesOpt,
              dry_run: bool = DryOpt, notes: str = NotesOpt, pause_timeout: float = TimeoutOpt,
              period: float = PeriodOpt) -> None:
        """Level sensor zero offset against a measured depth."""
        from ms4watch.contract.calibration import Procedure
        from ms4watch.edge.calibration.runs import run_level

        _check_choice("--adjust", adjust, ("auto", "always", "never"))

        def steps(s: Any, p: Any) -> Any:
            return run_level(s, p, measured=depth, tolerance=tolerance, adjust=adjust, samples=samples)

        _run(Procedure.LEVEL_ZERO, steps, config, data_dir, sensor, technician, next_due, interval, json_out, yes,
             dry_run, notes, pause_timeout, period)

    @cal.command("flow")
    def flow(config: Path = ConfigOpt, data_dir: Path = DataDirOpt, sensor: str = SensorOpt,
             technician: Optional[str] = TechOpt,
             method: Optional[str] = typer.Option(None, "--method", help="vnotch (90° V-notch weir), manning "
                                                                           "(circular pipe), area_velocity, bucket."),
             head_ft: Optional[float] = typer.Option(None, "--head-ft", help="vnotch: head over the notch [ft]."),
             depth_ft: Optional[float] = typer.Option(None, "--depth-ft", help="manning, area_velocity: flow "
                                                                                 "depth [ft]."),
             diameter_in: Optional[float] = typer.Option(None, "--diameter-in", help="pipe diameter [in]."),
             slope: Optional[float] = typer.Option(None, "--slope", help="manning: pipe slope [ft/ft]."),
             material: Optional[str] = typer.Option(None, "--material", help="manning: concrete, pvc, "
                                                                                "corrugated_metal, …"),
             n: Optional[float] = typer.Option(None, "--n", help="manning: roughness n (instead of --material)."),
             velocity_ft_s: Optional[float] = typer.Option(None, "--velocity-ft-s", help="area_velocity: mean "
                                                                                           "velocity [ft/s]."),
             volume_gal: Optional[float] = typer.Option(None, "--volume-gal", help="bucket: its volume [gal]."),
             seconds: Optional[float] = typer.Option(None, "--seconds", help="bucket: seconds to fill it."),
             tolerance_pct: Optional[float] = typer.Option(None, "--tolerance-pct", min=0.1, max=100,
                                                           help="Allowed error [%] (default asked; 10 suggested)."),
             adjust: str = AdjustOpt, samples: int = SamplesOpt, next_due: Optional[str] = DueOpt,
             interval: Optional[str] = IntervalOpt, json_out: bool = JsonOpt, yes: bool = YesOpt,
             dry_run: bool = DryOpt, notes: str = NotesOpt, pause_timeout: float = TimeoutOpt,
             period: float = PeriodOpt) -> None:
        """Flow meter against a primary device (90° V-notch weir, Manning pipe, area × velocity) or
        a volumetric bucket check."""
        from ms4watch.contract.calibration import Procedure
        from ms4watch.edge.calibration.runs import run_flow

        _check_choice("--adjust", adjust, ("auto", "always", "never"))
        procedure = Procedure.FLOW_VOLUMETRIC if method == "bucket" else Procedure.FLOW_PRIMARY

        def steps(s: Any, p: Any) -> Any:
            return run_flow(s, p, method=method, tolerance_pct=tolerance_pct, adjust=adjust, samples=samples,
                            head_ft=head_ft, depth_ft=depth_ft, diameter_in=diameter_in, slope=slope,
                            material=material, n=n, velocity_ft_s=velocity_ft_s, volume_gal=volume_gal,
                            seconds=seconds)

        _run(procedure, steps, config, data_dir, sensor, technician, next_due, interval, json_out, yes,
             dry_run, notes, pause_timeout, period)

    app.add_typer(cal, name="calibrate")


def _check_choice(flag: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        typer.echo(f"error: {flag} must be one of {', '.join(allowed)}, got {value!r}", err=True)
        raise typer.Exit(EXIT_USAGE)


def _run(procedure: Any, steps: Callable[[Any, Any], Any], config: Path, data_dir: Path, sensor: str,
         technician: Optional[str], next_due: Optional[str], interval: Optional[str], json_out: bool, yes: bool,
         dry_run: bool, notes: str, pause_timeout: float, period: float) -> None:
    from ms4watch.contract.calibration import Procedure, Result
    from ms4watch.edge.calibration.prompts import Aborted, JsonPrompter, TerminalPrompter
    from ms4watch.edge.calibration.runs import intro, summary_lines
    from ms4watch.edge.calibration.session import CalibrationSession

    due_day: date | None = None
    every: timedelta | None = None
    try:
        due_day = date.fromisoformat(next_due) if next_due else None
        every = parse_duration(interval) if interval else None
    except ValueError as e:
        typer.echo(f"error: --next-due/--interval: {e}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    prompter = (JsonPrompter if json_out else TerminalPrompter)(sys.stdin, sys.stdout, period_s=period)
    try:
        session = CalibrationSession(config, data_dir, sensor, pause_timeout_s=pause_timeout)
    except Ms4Error as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    try:
        who = technician or prompter.ask("technician", "Technician (your name)")
        prompter.say(intro(session, who))
        if session.sensor.calibration is None and procedure is Procedure.TURBIDITY:
            prompter.say("(no previous calibration: the as-found readings are the sensor's raw values)")
        with session:
            outcome = steps(session, prompter)
        prompter.say(("PASS" if outcome.result is Result.PASS else "FAIL") + (
            "" if not outcome.problems else " — " + "; ".join(outcome.problems)))
        if not (yes or dry_run) and not prompter.confirm(
                "write", "Write the record" + (" and the new coefficients" if outcome.result is Result.PASS else "")
                + "?", True):
            raise Aborted("not written")
        finished = session.finish(outcome, procedure, who, next_due=due_day, interval=every, notes=notes,
                                  dry_run=dry_run)
    except Aborted as e:
        prompter.result({"status": "cancelled", "reason": str(e)}, [f"cancelled: {e}"])
        raise typer.Exit(EXIT_CANCELLED) from None
    except Ms4Error as e:
        prompter.result({"status": "error", "error": str(e)}, [f"error: {e}"])
        raise typer.Exit(EXIT_USAGE) from None
    except ValueError as e:   # a fit the readings cannot give, a reference the numbers cannot make
        prompter.result({"status": "error", "error": str(e)}, [f"error: {e}"])
        raise typer.Exit(EXIT_USAGE) from None
    r = finished.record
    prompter.result({"status": r.result.value, "record": r.to_data(), "config_version": finished.config_version,
                     "spooled": finished.spooled, "messages": list(finished.messages)},
                    summary_lines(finished, session.sensor.unit))
    if r.result is not Result.PASS:
        raise typer.Exit(EXIT_FAIL)
