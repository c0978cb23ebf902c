"""The SMS text: one GSM-7 segment (<= 160 septets) with the station name, what, since
when, where the runoff goes when the town's map says and the segment has room for it (``to
OF-12``, ``sites CS-7``), and the acknowledge code. The station name is shortened first when
space runs out."""

from __future__ import annotations

from ....contract import duetext
from ...incidents.due import snapshot_due
from ..base import Notification
from ..text import local
from .gsm7 import SEGMENT, fit, septets, to_gsm7

_PREFIX = {"open": "", "escalation": "ESCALATED ", "reminder": "REMINDER ", "overdue": "OVERDUE ",
           "recovery": "OK ", "reopened": "AGAIN ",
           "retracted": "RETRACTED "}
TIME_FMT = "%b %d %H:%M %Z"


def sms_text(n: Notification) -> str:
    """A message that always fits one segment; see the module docstring."""
    if n.stage in ("digest", "backlog"):
        return _digest(n)
    inc = n.incident or {}
    tz = n.timezone
    what = str(inc.get("what") or inc.get("kind"))
    code = str(inc.get("code"))
    due = snapshot_due(inc, tz)
    if inc.get("kind") in ("inspection_due", "compliance_deadline") and due is not None and n.stage != "recovery":
        number = (inc.get("event") or {}).get("number")
        body = f"{what}{' ' + str(number) if number else ''} by {duetext.sms(due)}"
    elif inc.get("kind") == "inspection_due":
        body = f"{what} by {local(inc.get('deadline'), tz, TIME_FMT)}"
    elif n.stage == "recovery":
        body = f"{what} ended {local(inc.get('end'), tz, TIME_FMT)}"
    else:
        body = f"{what} since {local(inc.get('start'), tz, TIME_FMT)}"
    if n.stage == "escalation":
        body += ", not acknowledged"
    tail = "" if n.stage in ("recovery", "retracted") else f". Reply {code} to ack"
    subject = str(inc.get("subject", ""))
    name = n.station_name if n.station_name and n.station_name != subject else ""
    head = _PREFIX.get(n.stage, "") + subject
    runoff = inc.get("runoff")
    short = str(runoff.get("sms") or "") if isinstance(runoff, dict) else ""   # "to OF-12": where the map allows
    if short and septets(to_gsm7(f"{head}: {body}, {short}{tail}")) <= SEGMENT:
        body += f", {short}"
    fixed = to_gsm7(f"{head} : {body}{tail}")
    if name:
        room = SEGMENT - septets(fixed) - 1  # " " before the name
        if room >= 4:
            text = to_gsm7(f"{head} {fit(to_gsm7(name), room)}: {body}{tail}")
            return fit(text, SEGMENT)
    return fit(to_gsm7(f"{head}: {body}{tail}"), SEGMENT)


def _digest(n: Notification) -> str:
    parts = []
    for it in n.items:
        inc = it.get("incident") or {}
        parts.append(f"{inc.get('subject')} {inc.get('what')} {inc.get('code')}")
    what = "digest" if n.stage == "digest" else "backlog (due before it first ran)"
    text = to_gsm7(f"ms4watch {what}, {len(n.items)} held: " + "; ".join(parts))
    return fit(text, SEGMENT)
