"""A rule's parameters (``AlertEvent.params``) and threshold as the SMO reads them: labels in
words, values with their units, lists joined, the quality checks as a phrase. The incident
page and the evidence packet show these, never a key or a Python/JSON literal."""

from __future__ import annotations

from typing import Any

# key -> label; the unit comes from the key's suffix (below).
LABELS: dict[str, str] = {
    "floor_gpm": "Flow floor",
    "min_duration_min": "Flow lasting at least",
    "dry_lookback_h": "Rain looked back over",
    "dry_max_rain_in": "Dry when rain is under",
    "rain_max_gap_min": "Longest gap in rain data allowed",
    "dry_after_rain_h": "No rain in the last",
    "rain_gauges": "Rain gauges",
    "warn_days": "Warned ahead by",
    "after_storm_h": "Inspection within, after a qualifying storm",
    "routine_days": "Routine inspection every",
    "routine_per_period": "Routine inspections per period",
    "qualifying_in": "Qualifying storm depth",
    "inter_event_h": "Dry time that separates two storms",
    "min_depth_in": "Least storm depth counted",
    "min_duration_h": "Least storm duration counted",
    "double_tip_s": "Tips closer than this count once",
    "start_offset_min": "Storm start moved back by",
    "delta_ntu": "Downstream above upstream by more than",
    "fraction": "or by more than",
    "backstop_ntu": "Downstream alone above",
    "align_tolerance_min": "Upstream and downstream readings paired within",
    "upstream": "Upstream station",
    "downstream": "Downstream station",
    "qc": "Readings set aside when",
}
# The turbidity pair's contrast lasts too: its own words for the shared key.
TURBIDITY_DURATION = "Contrast lasting at least"
UNITS: dict[str, str] = {"_gpm": "gpm", "_min": "min", "_h": "h", "_in": "in", "_s": "s", "_days": "d",
                         "_ntu": "NTU"}


def _num(v: Any) -> str:
    return f"{float(v):g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def _unit(key: str) -> tuple[str, str]:
    for suffix, unit in UNITS.items():
        if key.endswith(suffix):
            return key[: -len(suffix)], unit
    return key, ""


def _value(key: str, v: Any) -> str:
    if key == "fraction":
        return f"{float(v) * 100:g} %"
    if key == "qc" and isinstance(v, dict):
        return _qc(v)
    if isinstance(v, (list, tuple)):
        return ", ".join(_num(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{label.lower()} {value}" for label, value in param_lines(v))
    unit = _unit(key)[1]
    return f"{_num(v)} {unit}" if unit else _num(v)


def _qc(qc: dict[str, Any]) -> str:
    """The turbidity probes' automated checks (alerts/rules/turbidity.py's QC), as a phrase."""
    parts = []
    span = qc.get("fail_span")
    if isinstance(span, (list, tuple)) and len(span) == 2:
        parts.append(f"outside {_num(span[0])} to {_num(span[1])} NTU")
    if qc.get("spike_fail") is not None:
        parts.append(f"jumping more than {_num(qc['spike_fail'])} NTU from one reading to the next")
    if qc.get("flat_line_fail_h") is not None:
        tol = qc.get("flat_line_tolerance")
        within = f" (within {_num(tol)} NTU)" if tol else ""
        parts.append(f"unchanged{within} for {_num(qc['flat_line_fail_h'])} h")
    rest = {k: v for k, v in qc.items() if k not in ("fail_span", "spike_fail", "flat_line_fail_h",
                                                       "flat_line_tolerance")}
    parts += [f"{label.lower()} {value}" for label, value in param_lines(rest)]
    return ", ".join(parts) if parts else "never"


def _label(key: str, params: dict[str, Any]) -> str:
    if key == "min_duration_min" and "delta_ntu" in params:
        return TURBIDITY_DURATION
    if key in LABELS:
        return LABELS[key]
    words = _unit(key)[0].replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def param_lines(params: dict[str, Any]) -> list[tuple[str, str]]:
    """``[(label, value with unit), …]`` in the parameters' own order."""
    return [(_label(k, params), _value(k, v)) for k, v in params.items()]


def threshold_words(threshold: dict[str, Any] | None) -> str:
    """``flow floor: 0.5 gpm``; a threshold without one value (the turbidity contrast's
    ``upstream + max(…)``) is its label."""
    if not threshold:
        return ""
    label = str(threshold.get("label", ""))
    if "value" in threshold:
        unit = threshold.get("unit") or ""
        return f"{label}: {_num(threshold['value'])}{' ' + unit if unit else ''}"
    return label
