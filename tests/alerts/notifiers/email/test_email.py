"""Email through a real SMTP server (aiosmtpd on loopback): parts, attachments, errors."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest

from ms4watch.alerts.notifiers.base import PermanentError, RetryableError
from ms4watch.alerts.notifiers.email import EmailNotifier, message_id, parse_mailto
from tests.support.notify_peers import utc
from tests.support.servers import free_port


def readings(incident, start, end):
    idx = pd.date_range(start, end, freq="5min")
    flow = [0.2 if (t < pd.Timestamp("2026-06-01T15:30Z") or t > pd.Timestamp("2026-06-01T16:40Z")) else 4.0
            for t in idx]
    return pd.DataFrame({"flow_gpm": flow, "rain_in": [0.0] * len(idx)}, index=idx)


def test_email_has_text_html_chart_csv_rule_provision_and_ack_link(smtp, make_notification):
    seen = []

    def lookup(incident, start, end):
        seen.append((incident["subject"], start, end))
        return readings(incident, start, end)

    n = make_notification(threshold={"label": "flow floor", "value": 0.5, "unit": "gpm"})
    EmailNotifier(smtp.url, readings_lookup=lookup, clock=lambda: utc(2026, 6, 1, 16, 5)).send(n)
    assert len(smtp.messages) == 1
    msg = smtp.messages[0]
    assert smtp.envelopes[0] == ("ms4watch@town.test", ["pat@town.test"])
    assert msg["Message-ID"] == message_id(n.key)
    # Window: an hour either side of the episode (still open: up to now).
    assert seen == [("OF-12", utc(2026, 6, 1, 14, 30), utc(2026, 6, 1, 17, 5))]

    text = msg.get_body(("plain",)).get_content()
    html = msg.get_body(("html",)).get_content()
    for part in (text, html):
        assert "Main St outfall (OF-12)" in part
        assert "Ramapo ch. 218 / Schenectady ch. 148 Art. II" in part
        assert ">= 30 min" in part or "&gt;= 30 min" in part
        assert n.incident["code"] in part
    assert n.ack_url in text and f'href="{n.ack_url.replace("&", "&amp;")}"' in html

    atts = {a.get_filename(): a for a in msg.iter_attachments()}
    png = atts["OF-12_20260601T1530.png"].get_content()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    csv = pd.read_csv(io.StringIO(atts["OF-12_20260601T1530.csv"].get_content()))
    assert list(csv.columns) == ["time", "flow_gpm", "rain_in"]
    assert len(csv) == 32 and csv["flow_gpm"].max() == 4.0 and csv["time"][0] == "2026-06-01T14:30:00Z"


def test_chart_failure_still_sends_the_alert(smtp, make_notification):
    def broken(incident, start, end):
        raise RuntimeError("store offline")

    EmailNotifier(smtp.url, readings_lookup=broken).send(make_notification())
    msg = smtp.messages[0]
    assert "Chart unavailable: RuntimeError: store offline" in msg.get_body(("plain",)).get_content()
    assert list(msg.iter_attachments()) == []


def test_turbidity_chart_draws_the_contrast_threshold(smtp, make_notification):
    from tests.support.notify_peers import turbidity

    def lookup(incident, start, end):
        idx = pd.date_range(start, end, freq="5min")
        return pd.DataFrame({"time": idx, "turbidity_up_ntu": 10.0, "turbidity_down_ntu": 70.0, "rain_in": 0.01})

    n = make_notification(event=turbidity("2026-06-01T15:30:00Z"), station_name="Elm St creek",
                          threshold={"label": "upstream + max(delta, fraction x upstream)",
                                     "kind": "turbidity_contrast", "delta": 5.0, "fraction": 0.1, "unit": "NTU"})
    EmailNotifier(smtp.url, readings_lookup=lookup, clock=lambda: utc(2026, 6, 1, 16, 5)).send(n)
    names = [a.get_filename() for a in smtp.messages[0].iter_attachments()]
    assert names == ["TP-1_20260601T1530.png", "TP-1_20260601T1530.csv"]


def test_a_long_open_episode_charts_at_most_three_days(smtp, make_notification):
    seen = []

    def lookup(incident, start, end):
        seen.append(end - start)
        return readings(incident, start, end)

    EmailNotifier(smtp.url, readings_lookup=lookup, clock=lambda: utc(2026, 11, 1)).send(make_notification())
    assert seen == [pd.Timedelta(days=3)]


def test_smtp_errors_are_classified(smtp, make_notification):
    n = make_notification()
    smtp.reply_queue.append("451 4.3.0 try again later")
    with pytest.raises(RetryableError, match="451"):
        EmailNotifier(smtp.url).send(n)
    smtp.reply_queue.append("554 5.7.1 rejected")
    with pytest.raises(PermanentError, match="554"):
        EmailNotifier(smtp.url).send(n)
    with pytest.raises(RetryableError, match="Connection"):
        EmailNotifier(f"mailto://127.0.0.1:{free_port()}").send(n)
    EmailNotifier(smtp.url).send(n)
    assert len(smtp.messages) == 1


def test_mailto_url_parsing():
    c = parse_mailto("mailto://127.0.0.1:2525?to=smo@town.test")
    assert (c.host, c.port, c.mode, c.user, c.to, c.sender) == (
        "127.0.0.1", 2525, "insecure", None, ("smo@town.test",), "ms4watch@localhost")
    c = parse_mailto("mailtos://ms4:s%40cret@smtp.town.test?from=alerts@town.test&to=a@t.test,b@t.test")
    assert (c.port, c.mode, c.user, c.password, c.to, c.sender) == (
        587, "starttls", "ms4", "s@cret", ("a@t.test", "b@t.test"), "alerts@town.test")
    assert "s@cret" not in c.describe()
    assert parse_mailto("mailtos://smtp.town.test?mode=ssl").port == 465
    assert parse_mailto("mailto://mail.town.test").port == 25
    with pytest.raises(ValueError, match="to: not an email address"):
        parse_mailto("mailto://h?to=nobody")
    with pytest.raises(ValueError, match="no SMTP host"):
        parse_mailto("mailto://?to=a@b.test")
    with pytest.raises(ValueError, match="use mailto://"):
        parse_mailto("mailtos://h?mode=insecure")


def test_a_site_alert_says_where_the_sites_runoff_goes_and_without_a_map_says_nothing(smtp, make_notification):
    """The turbidity contrast below CS-7, which the registry says drains to CB-1: the email
    (text and HTML) names the inlet, the outfall it reaches and its receiving water."""
    from tests.support.notify_peers import turbidity
    from tests.support.town_network import main_st_reaches

    notifier = EmailNotifier(smtp.url, readings_lookup=None, clock=lambda: utc(2026, 6, 1, 16, 5))
    notifier.send(make_notification(event=turbidity("2026-06-01T15:30:00Z"), reaches=main_st_reaches(),
                                    station_name="Elm St creek"))
    notifier.send(make_notification(event=turbidity("2026-06-01T15:30:00Z"), station_name="Elm St creek"))
    with_map, without = smtp.messages
    text = with_map.get_body(("plain",)).get_content()
    assert re.search(r"^Runoff +drains to CB-1, reaching outfall OF-12 \(Mohawk River\)\r?$", text, re.M), text
    assert "drains to CB-1, reaching outfall OF-12 (Mohawk River)" in with_map.get_body(("html",)).get_content()
    assert "Runoff" not in without.get_body(("plain",)).get_content()
    assert "OF-12" not in without.get_body(("plain",)).get_content()


def test_a_dry_weather_flow_lists_the_construction_sites_upstream(smtp, make_notification):
    from tests.support.town_network import main_st_reaches

    EmailNotifier(smtp.url, readings_lookup=None).send(make_notification(reaches=main_st_reaches()))
    text = smtp.messages[0].get_body(("plain",)).get_content()
    assert re.search(r"^Construction sites upstream +CS-7 \(Elm St site, works from 2026-01-01\), through CB-1\r?$", text, re.M), text
