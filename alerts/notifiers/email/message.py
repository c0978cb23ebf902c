"""Build the email: plain text + HTML, the episode chart (PNG) and a CSV excerpt of the
readings attached, the rule and provision, an acknowledge link."""

from __future__ import annotations

import hashlib
import html
import logging
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime

from ..base import Notification
from ..text import RECORD_PAST_INSPECTIONS, backlog_lines, facts, headline, plain_text
from .chart import ReadingsLookup, chart_png, csv_excerpt, evidence_window, normalise

log = logging.getLogger(__name__)
CHART_STAGES = {"open", "escalation", "reminder", "overdue", "recovery", "reopened", "retracted"}


def message_id(key: str) -> str:
    """Stable per queue key: a repeat of the same notification has the same Message-ID."""
    return f"<{hashlib.sha256(key.encode()).hexdigest()[:32]}@ms4watch>"


def build(n: Notification, *, sender: str, to: str, now: datetime,
          readings_lookup: ReadingsLookup | None) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = f"[ms4watch] {headline(n)}"
    msg["From"] = sender
    msg["To"] = to
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = message_id(n.key)
    msg["X-MS4Watch-Key"] = n.key
    if n.incident:
        msg["X-MS4Watch-Incident"] = str(n.incident.get("id"))
        msg["X-MS4Watch-Code"] = str(n.incident.get("code"))

    attachments: list[tuple[bytes, str, str, str]] = []
    note = ""
    if n.incident and n.stage in CHART_STAGES and readings_lookup is not None:
        attachments, note = _evidence(n, now, readings_lookup)
    text = plain_text(n) + (f"\n{note}\n" if note else "")
    if attachments:
        text += "\nAttached: " + ", ".join(a[3] for a in attachments) + "\n"
    msg.set_content(text)
    msg.add_alternative(_html(n, note, [a[3] for a in attachments]), subtype="html")
    for data, maintype, subtype, filename in attachments:
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
    return msg


def _evidence(n: Notification, now: datetime, lookup: ReadingsLookup) -> tuple[list[tuple[bytes, str, str, str]], str]:
    inc = n.incident or {}
    start, end, window_start, window_end = evidence_window(inc, now)
    try:
        df = lookup(inc, window_start, window_end)
        if df is None or len(df) == 0:
            return [], "No readings were available for this episode; no chart attached."
        df = normalise(df)
        stem = f"{inc.get('subject')}_{start.strftime('%Y%m%dT%H%M')}"
        png = chart_png(df, title=f"{inc.get('what')} at {n.station_name or inc.get('subject')}", start=start,
                        end=end, threshold=n.threshold, tz=n.timezone)
        return [(png, "image", "png", f"{stem}.png"), (csv_excerpt(df), "text", "csv", f"{stem}.csv")], ""
    except Exception as e:  # the alert matters more than its chart
        log.warning("chart for %s not drawn: %s", n.key, e)
        return [], f"Chart unavailable: {type(e).__name__}: {e}"


def _html(n: Notification, note: str, attached: list[str]) -> str:
    e = html.escape
    parts = [f"<html><body style=\"font-family:sans-serif\"><h2>{e(headline(n))}</h2>"]
    if n.stage == "backlog":
        parts.append("<ul>" + "".join(f"<li>{e(line)}</li>" for line in backlog_lines(n)) + "</ul>")
        parts.append(f"<p>{e(RECORD_PAST_INSPECTIONS)}</p>")
    elif n.stage == "digest":
        parts.append("<ul>")
        for it in n.items:
            inc = it.get("incident") or {}
            parts.append(f"<li>[{e(str(it.get('stage')))}] {e(str(inc.get('what')))} at "
                         f"{e(str(it.get('station_name') or inc.get('subject')))} — code <b>{e(str(inc.get('code')))}</b>"
                         f" <i>({e(str(it.get('reason', '')))})</i></li>")
        parts.append("</ul>")
    else:
        parts.append("<table cellpadding=\"4\" style=\"border-collapse:collapse\">")
        for k, v in facts(n):
            parts.append(f"<tr><th align=\"left\">{e(k)}</th><td>{e(v)}</td></tr>")
        parts.append("</table>")
        code = e(str((n.incident or {}).get("code")))
        if n.stage not in ("recovery", "retracted"):
            if n.ack_url:
                parts.append(f"<p><a href=\"{e(n.ack_url)}\" style=\"font-size:120%\"><b>Acknowledge</b></a></p>")
            parts.append(f"<p>Or reply to the SMS with <b>{code}</b>, or run "
                         f"<code>ms4watch incidents ack {code} --by NAME</code>.</p>")
    if note:
        parts.append(f"<p><i>{e(note)}</i></p>")
    if attached:
        parts.append("<p>Attached: " + ", ".join(e(a) for a in attached) + "</p>")
    parts.append("</body></html>")
    return "\n".join(parts)
