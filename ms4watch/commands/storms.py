"""``ms4watch storms FILE``: a storm table (CSV on stdout) from a rain record."""

from __future__ import annotations

import sys
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Optional

import typer

from ms4watch.contract.errors import ConfigValueError, Ms4Error
from ms4watch.contract.timeutil import parse_duration


def register(app: typer.Typer) -> None:
    @app.command("storms")
    def storms(
        file: Path = typer.Argument(..., help="readings CSV, tip log (cumulative tips), fixed-interval CSV, USGS RDB, "
                                              "HOBOware CSV export or Campbell TOA5"),
        inter_event: str = typer.Option("6h", "--inter-event", help="minimum inter-event time (a longer gap starts a new storm)"),
        min_depth: str = typer.Option("0", "--min-depth", help="drop storms below this depth, e.g. 0.2mm or 0.01in"),
        min_duration: str = typer.Option("0s", "--min-duration", help="drop storms shorter than this, e.g. 0.2h"),
        tip: Optional[str] = typer.Option(None, "--tip", help="depth per tip of a tip log, e.g. 0.2mm (default 0.2mm)"),
        rainmaker_start: bool = typer.Option(False, "--rainmaker-start",
                                             help="date a storm from the start of its first 1-minute interval (USGS Rainmaker)"),
        qualifying: str = typer.Option("0.50in", "--qualifying", help="qualifying depth (inclusive)"),
        station: Optional[str] = typer.Option(None, "--station", help="rain station of a readings CSV"),
        column: Optional[str] = typer.Option(None, "--column", help="gauge column of an RDB file (default: first gage column)"),
        fmt: Optional[str] = typer.Option(None, "--format", help="readings | tips | fixed | rdb | hoboware | toa5 "
                                                                  "(default: what the file's header says; a --format "
                                                                  "the header contradicts is refused)"),
        tz: Optional[str] = typer.Option(None, "--tz", help="time zone of a TOA5 file's logger clock (TOA5 does not "
                                                            "say; without it times are read as wall-clock times)"),
        date_order: Optional[str] = typer.Option(None, "--date-order", help="mdy | dmy | ymd: the order of a "
                                                 "HOBOware file's dates when the file cannot settle it"),
    ) -> None:
        """Print the storm events of a rain record as CSV."""
        from ms4watch.alerts.rainfiles import parse_depth, read_rain
        from ms4watch.alerts.rules.storms import StormParams, storm_events
        from ms4watch.alerts.storm_table import write_storm_table

        try:
            params = StormParams(
                inter_event=_dur(inter_event, "--inter-event"),
                min_depth_in=Decimal(repr(parse_depth(min_depth))),
                min_duration=_dur(min_duration, "--min-duration"),
                qualifying_in=Decimal(repr(parse_depth(qualifying))),
                start_offset=timedelta(minutes=1) if rainmaker_start else timedelta(0),
            )
            rec = read_rain(file, fmt=_format(fmt) if fmt else None,
                            tip_in=parse_depth(tip) if tip else None, station=station, column=column, tz=tz,
                            date_order=date_order)
            table = storm_events(rec.rain_in, params)
        except (Ms4Error, OSError, InvalidOperation) as e:
            typer.echo(f"error: {e}", err=True)
            raise typer.Exit(2) from None
        write_storm_table(table, sys.stdout, naive=rec.naive)


def _format(text: str):
    from ms4watch.alerts.rainfiles import RainFormat
    try:
        return RainFormat(text)
    except ValueError:
        raise ConfigValueError(f"--format {text!r}: one of {' | '.join(f.value for f in RainFormat)}") from None


def _dur(text: str, opt: str) -> timedelta:
    try:
        return parse_duration(text)
    except ValueError as e:
        raise ConfigValueError(f"{opt}: {e}") from None
