"""The alert rules: pure functions over pandas Series, units in their docstrings, each citing
the provision it implements (../shared/reference/REGULATIONS.md).

``dry_weather_flow`` is not re-exported: its name is its module's (``rules.dry_weather_flow``)."""

from .dry_weather import DryState, combine_dry_states, is_dry_weather, outfall_dry_weather
from .health import low_battery, stale_spans
from .inspections import inspection_due, routine_inspections
from .qc import QcParams, qartod_fail, wire_flag_fail
from .storms import StormParams, storm_events
from .turbidity import ContrastParams, align_pair, turbidity_contrast

__all__ = ["DryState", "is_dry_weather", "outfall_dry_weather", "combine_dry_states", "low_battery", "stale_spans",
           "inspection_due", "routine_inspections", "QcParams", "qartod_fail", "wire_flag_fail", "StormParams",
           "storm_events", "ContrastParams", "align_pair", "turbidity_contrast"]
