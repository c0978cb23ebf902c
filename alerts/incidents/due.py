"""The due date of a deadline incident as a :class:`~ms4watch.contract.due.Due`, so the
incident page, the API, the SMS and the email render it with :mod:`ms4watch.contract.duetext`
like the letter and the deadline board do.

* a ``compliance_deadline`` event carries its due date (``Due.to_fields``: ``due_form``,
  ``due_day``…; :mod:`ms4watch.compliance.watch`);
* an inspection item is due at an instant: the storm's end + 24 h, or the routine
  interval after the previous inspection (:mod:`..rules.inspections`);
* a calibration is due on a day (``due_day``, a UTC day: the logger flags readings from the
  next UTC midnight, :func:`..rules.calibration.overdue_from_ns`).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Mapping

from ...contract.due import Due
from ...contract.timeutil import from_ns

_INSPECTION = ("inspection_due", "inspection_overdue")
_CALIBRATION = ("calibration_due", "calibration_overdue")


def _instant(v: Any) -> datetime | None:
    if v is None:
        return None
    if isinstance(v, datetime):
        return v
    if isinstance(v, int):
        return from_ns(v)
    return datetime.fromisoformat(str(v).replace("Z", "+00:00"))


def incident_due(kind: str, deadline: datetime | str | None, event: Mapping[str, Any], tz: str) -> Due | None:
    """The due date of an incident of ``kind`` whose deadline is ``deadline`` and whose event
    (``Incident.event``, or the snapshot's ``event``) is ``event``; None when it has none."""
    if event.get("due_form"):
        return Due.from_fields(event)
    at = _instant(deadline) or _instant(event.get("due"))
    params = event.get("params") or {}
    provision = str(event.get("provision") or "")
    if kind in _INSPECTION and at is not None:
        if event.get("reason") == "routine":
            days = params.get("routine_days")
            return Due.at(at, tz, provision=provision, runs_from="the previous inspection (or the site's opening)",
                          period=f"{days:g} days" if isinstance(days, (int, float)) else "")
        hours = params.get("after_storm_h")
        return Due.at(at, tz, provision=provision, runs_from="the end of the storm",
                      period=f"{hours:g} h" if isinstance(hours, (int, float)) else "")
    if kind in _CALIBRATION and event.get("due_day"):
        return Due.end_of_day(date.fromisoformat(str(event["due_day"])), "UTC", provision=provision,
                              runs_from=f"the last calibration ({event.get('performed')})")
    return None


def snapshot_due(incident: Mapping[str, Any], tz: str) -> Due | None:
    """:func:`incident_due` of an incident snapshot (what a notification carries)."""
    return incident_due(str(incident.get("kind")), incident.get("deadline"), incident.get("event") or {}, tz)


__all__ = ["incident_due", "snapshot_due"]
