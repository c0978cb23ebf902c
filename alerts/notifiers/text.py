"""Words shared by every channel: headline, facts, times in the municipality's zone."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from ...contract import duetext
from ..incidents.due import snapshot_due
from .base import Notification

STAGE_PREFIX = {
    "open": "",
    "escalation": "ESCALATED (not acknowledged): ",
    "reminder": "REMINDER: ",
    "overdue": "OVERDUE: ",
    "recovery": "Resolved: ",
    "reopened": "Re-opened: ",
    "retracted": "Retracted (late data showed it did not happen): ",
    "digest": "",
    "backlog": "",
}

SUMMARIES = ("digest", "backlog")   # stages whose message lists held items
RECORD_PAST_INSPECTIONS = ("Inspections already done: record each with `ms4watch incidents inspected SITE --at TIME "
                           "--by NAME` or on the workbench (Record an inspection), and its items close.")

CALIBRATION_KINDS = ("calibration_due", "calibration_overdue")

# Alert event fields worth showing, with their unit (the event contract names the unit in the field).
FACTS = (("peak_gpm", "peak flow", "gpm"), ("max_delta_ntu", "largest downstream - upstream", "NTU"),
         ("max_downstream_ntu", "highest downstream", "NTU"), ("basis", "judged by", ""),
         ("rain_gauges_used", "rain gauges judged", ""),
         ("depth_in", "storm depth", "in"), ("storm_end", "storm ended", ""), ("due", "inspection due by", ""),
         ("suppressed", "suppressed", ""))


def local(ts: str | datetime | None, tz: str, fmt: str = "%b %d %H:%M %Z") -> str:
    if ts is None:
        return ""
    dt = ts if isinstance(ts, datetime) else datetime.fromisoformat(str(ts).replace("Z", "+00:00"))
    return dt.astimezone(ZoneInfo(tz)).strftime(fmt)


def where(n: Notification) -> str:
    inc = n.incident or {}
    subj = inc.get("subject", "")
    return f"{n.station_name} ({subj})" if n.station_name and n.station_name != subj else subj


def headline(n: Notification) -> str:
    if n.stage == "digest":
        return f"Digest: {len(n.items)} held notice(s) for {n.recipient.name}"
    if n.stage == "backlog":
        return f"Backlog: {len(n.items)} items due before ms4watch first ran, for {n.recipient.name}"
    inc = n.incident or {}
    what = inc.get("what", inc.get("kind", "alert"))
    due = snapshot_due(inc, n.timezone)
    if inc.get("kind") == "inspection_due":
        when = duetext.short(due) if due else local(inc.get('deadline'), n.timezone)
        return f"{STAGE_PREFIX.get(n.stage, '')}{what} at {where(n)} by {when}"
    if inc.get("kind") == "compliance_deadline":
        ev = inc.get("event", {})
        when = duetext.short(due) if due else local(inc.get('deadline'), n.timezone)
        return f"{STAGE_PREFIX.get(n.stage, '')}{ev.get('what_due', what)} by {when}"
    if inc.get("kind") in CALIBRATION_KINDS and n.stage != "recovery":
        ev = inc.get("event", {})
        return (f"{STAGE_PREFIX.get(n.stage, '')}{what} at {where(n)}: sensor {ev.get('sensor')} of "
                f"{ev.get('device')}, due {ev.get('due_day')}")
    if n.stage == "recovery":
        return f"{STAGE_PREFIX['recovery']}{what} at {where(n)} ended {local(inc.get('end'), n.timezone)}"
    return f"{STAGE_PREFIX.get(n.stage, '')}{what} at {where(n)} since {local(inc.get('start'), n.timezone)}"


def facts(n: Notification) -> list[tuple[str, str]]:
    """(label, value) rows for email and the notifications file."""
    inc = n.incident or {}
    ev: dict[str, Any] = inc.get("event", {})
    tz = n.timezone
    rows = [("What", str(inc.get("what", inc.get("kind")))), ("Where", where(n))]
    runoff = inc.get("runoff")
    if isinstance(runoff, dict) and runoff.get("text"):      # from the town's map (alerts/kinds/runoff.py)
        rows.append((str(runoff.get("label") or "Runoff"), str(runoff["text"])))
    rows.append(("Since", local(inc.get("start"), tz)))
    if inc.get("end"):
        rows.append(("Ended", local(inc.get("end"), tz)))
    elif inc.get("kind") != "inspection_due":
        rows.append(("Ended", "still going"))
    due = snapshot_due(inc, tz)
    if due is not None and due.ends_at is not None:
        rows.append(("Deadline", f"{duetext.by_long(due)} ({due.provision})" if due.provision else
                     duetext.by_long(due)))
        for note in (duetext.moved_note(due), duetext.closures_note(due)):
            if note:
                rows.append(("Note", note))
    elif inc.get("deadline"):
        rows.append(("Deadline", local(inc.get("deadline"), tz)))
    if inc.get("kind") in CALIBRATION_KINDS:
        rows += [("Sensor", f"{ev.get('sensor')} of logger {ev.get('device')}"),
                 ("Last calibrated", str(ev.get("performed"))), ("Calibration due", str(ev.get("due_day")))]
        if ev.get("closed_by"):
            rows.append(("Closed", str(ev["closed_by"])))
    if ev.get("uncalibrated"):
        rows.append(("Data", "from a sensor past its calibration due date (uncalibrated)"))
    for field, label, unit in FACTS:
        v = ev.get(field)
        if v is None or field == "due":
            continue
        if field == "storm_end":
            v = local(v, tz)
        elif isinstance(v, list):
            v = ", ".join(map(str, v))
        rows.append((label[0].upper() + label[1:], f"{v} {unit}".strip()))
    rows.append(("State", str(inc.get("state"))))
    if inc.get("acknowledged_by"):
        rows.append(("Acknowledged by", str(inc["acknowledged_by"])))
    if inc.get("episodes", 1) > 1:
        rows.append(("Episodes merged", str(inc["episodes"])))
    rows.append(("Rule", rule_text(inc)))
    rows.append(("Provision", str(inc.get("provision", ""))))
    rows.append(("Acknowledge code", str(inc.get("code"))))
    return rows


def rule_text(inc: dict[str, Any]) -> str:
    """The rule in the town's words: the ``rule`` the dispatcher put in the snapshot from the
    kind's spec and the registry (alerts/kinds/), then the parameters the engine used. A row
    queued before snapshots carried it names the kind only: never a default number."""
    ev = inc.get("event", {})
    params = ev.get("params") or ev.get("parameters") or ev.get("rule")
    base = str(inc.get("rule") or str(inc.get("kind", "alert")).replace("_", " "))
    if isinstance(params, dict) and params:
        return base + " [" + ", ".join(f"{k}={v}" for k, v in params.items()) + "]"
    if isinstance(params, str):
        return f"{base} [{params}]"
    return base


def backlog_lines(n: Notification) -> list[str]:
    """One line per item of a backlog summary: what, where, when it was due, its code."""
    out = []
    for it in n.items:
        inc = it.get("incident") or {}
        name, subj = it.get("station_name"), inc.get("subject")
        due = snapshot_due(inc, n.timezone)
        when = duetext.short(due) if due else local(inc.get('deadline'), n.timezone)
        out.append(f"{inc.get('what')} at {f'{name} ({subj})' if name and name != subj else subj}, due "
                   f"{when} (code {inc.get('code')})")
    return out


def plain_text(n: Notification) -> str:
    """The whole message as plain text (email text part, notifications file)."""
    lines = [headline(n), ""]
    if n.stage == "digest":
        for it in n.items:
            inc = it.get("incident") or {}
            name, subj = it.get("station_name"), inc.get("subject")
            lines.append(f"- [{it.get('stage')}] {inc.get('what')} at {f'{name} ({subj})' if name and name != subj else subj}"
                         f" since {local(inc.get('start'), n.timezone)} (code {inc.get('code')};"
                         f" held: {it.get('reason', '')})")
        return "\n".join(lines) + "\n"
    if n.stage == "backlog":
        lines += [f"- {it_line}" for it_line in backlog_lines(n)]
        lines += ["", RECORD_PAST_INSPECTIONS]
        return "\n".join(lines) + "\n"
    width = max(len(k) for k, _ in facts(n))
    lines += [f"{k.ljust(width)}  {v}" for k, v in facts(n)]
    lines.append("")
    code = (n.incident or {}).get("code")
    if n.stage not in ("recovery", "retracted"):
        if n.ack_url:
            lines.append(f"Acknowledge: {n.ack_url}")
        lines.append(f"Or reply to the SMS with {code}, or run: ms4watch incidents ack {code} --by NAME")
    return "\n".join(lines) + "\n"
