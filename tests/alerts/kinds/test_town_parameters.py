"""A town's own rule parameters in every message, page and packet (issue 22).

A town whose registry set the storm threshold to 0.25 in over 12 h got emails saying
"storm depth >= 0.50 in (6 h ...)" and SMS "storm >= 0.5 in". Here a registry sets EVERY
overridable parameter of ``rules:`` to a value other than its default (within
REGULATIONS.md's range); each alert kind is raised by its rule (alerts/evaluate.py, as the
engine does) and handled by the pipeline's incident service; the email (real SMTP), the
SMS (apprise to a local stand-in for the provider), the webhook (a real HTTP server), the
workbench's incident page and the evidence packet of each incident must state the town's
numbers and none of the defaults. The law's own words (the provision cited, the quoted
text) may still name the law's numbers: a town may be stricter than its law.
"""

from __future__ import annotations

import html
import io
import json
import re
import zipfile
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from ms4watch.alerts import evaluate as ev
from ms4watch.alerts.events import AlertKind
from ms4watch.alerts.notifiers.email.message import build
from ms4watch.alerts.notifiers.sms.format import sms_text
from ms4watch.alerts.rules.calibration import calibration_events
from ms4watch.contract.rules_config import RuleSettings
from ms4watch.contract.timeutil import to_ns
from tests.support.notify_peers import Clock, HttpSink, SmtpSink, registry
from tests.support.workbench import WORKBENCH_YAML, start_bench

NY = ZoneInfo("America/New_York")
NOW = datetime(2026, 6, 10, 12, 0, tzinfo=NY)

# Every overridable parameter, none at its default (contract/rules_config.py, REGULATIONS.md ranges).
RULES = """
rules:
  dry_lookback: 48h
  dry_max_rain_in: 0.07
  dwf_min_duration: 45min
  turbidity_delta_ntu: 8
  turbidity_fraction: 0.15
  turbidity_min_duration: 20min
  turbidity_backstop_ntu: 200
  turbidity_align_tolerance: 3min
  storm_min_depth_in: 0.25
  storm_inter_event: 12h
  inspection_after_storm: 18h
  routine_inspection_interval: 5d
  double_tip: 0.5s
  dry_after_rain: 8h
  dry_rain_max_gap: 2h
  qc_turbidity_max_ntu: 3000
  qc_turbidity_spike_ntu: 150
  qc_flat_line: 9h
  stale_intervals: 4
  report_interval: 10min
  low_battery_v: 11.6
  low_battery_hysteresis_v: 0.3
  lateness: 90min
  calibration_warn: 21d
"""

# kind -> (the town's numbers each text must state, the defaults none may state)
EXPECT: dict[str, tuple[list[str], list[str]]] = {
    "storm": (["0.25 in", "12 h", "0.5 s"], [r"0\.50? in", r"6 h", r"1 s"]),
    "inspection_due": (["18 h", "0.25 in", "5 d"], [r"24 h", r"0\.50? in", r"7 d"]),
    "dry_weather_flow": (["45 min", "0.07 in", "48 h", "8 h"], [r"30 min", r"0\.10? in", r"72 h", r"6 h"]),
    "dry_weather_unknown": (["45 min", "2 h", "48 h"], [r"30 min", r"1 h", r"72 h"]),
    "turbidity_contrast": (["8 NTU", "15 %", "20 min", "200 NTU", "3 min", "3000 NTU", "150 NTU", "9 h"],
                           [r"5 NTU", r"10 %", r"15 min", r"250 NTU", r"5 min", r"4000 NTU", r"12 h"]),
    "turbidity_not_evaluable": (["3 min", "3000 NTU", "150 NTU", "9 h"], [r"5 min", r"4000 NTU", r"12 h"]),
    "stale_station": (["4 x", "10 min"], [r"3 x", r"15 min"]),
    "low_battery": (["11.6 V", "11.9 V"], [r"11\.8 V", r"12 V"]),
    "calibration_due": (["21 d"], [r"14 d"]),
}
# What the SMS (one segment: the kind in a few words) must say
SMS_EXPECT = {"storm": "storm >= 0.25 in"}


def default_of(pattern: str) -> re.Pattern:
    return re.compile(rf"(?<![\d.]){pattern}\b")


def test_the_registry_sets_every_parameter_away_from_its_default():
    town = registry(WORKBENCH_YAML + RULES).rules
    defaults = RuleSettings()
    same = [f for f in RuleSettings.model_fields if getattr(town, f) == getattr(defaults, f)]
    assert same == []


@dataclass(frozen=True)
class Sensor:      # what alerts.rules.calibration reads of a sensor's calibration
    device: str
    station: str
    sensor: str
    performed: date
    due: date


def _rows(start: datetime, minutes: int, every_min: float, value: float, flags: str = "") -> ev.Arrays:
    n = int(minutes / every_min) + 1
    t = np.array([to_ns(start + timedelta(minutes=i * every_min)) for i in range(n)], dtype=np.int64)
    return t, np.full(n, value, dtype=np.float64), np.array([flags] * n, dtype=object)


def _events(reg) -> dict[str, list]:
    """One episode of each kind, from the rules with the town's registry."""
    now = to_ns(NOW)
    out: dict[str, list] = {}
    # 30 tips of 0.01 in from 20:00 the evening before: 0.30 in, a storm for this town (not at 0.50 in),
    # confirmed 12 h after its last tip
    rain = _rows(datetime(2026, 6, 9, 20, 0, tzinfo=NY), 29, 1, 0.01)
    storms = [e for e in ev.gauge_storms(reg, "RG-1", rain, now) if e["qualifying"]]
    out["storm"] = storms
    ends = [e["end"] for e in storms if e["end"] is not None]
    assert ends, "the storm is confirmed"
    out["inspection_due"] = [e for e in ev.site_inspections(reg, "CS-7", {"RG-1": ends}, [], now)
                             if e.kind is AlertKind.INSPECTION_DUE and e["reason"] == "storm"]
    # dry weather at OF-12 (a gauge reporting no rain every 30 min), 4 gpm for an hour
    dry = _rows(NOW - timedelta(days=3), 72 * 60, 30, 0.0)
    flow = _rows(datetime(2026, 6, 10, 10, 0, tzinfo=NY), 60, 5, 4.0)
    out["dry_weather_flow"] = [e for e in ev.outfall_events(reg, "OF-12", flow, {"RG-1": dry})
                               if e.kind is AlertKind.DRY_WEATHER_FLOW]
    out["dry_weather_unknown"] = [e for e in ev.outfall_events(reg, "OF-14", flow, {"RG-1": ev.EMPTY})
                                  if e.kind is AlertKind.DRY_WEATHER_UNKNOWN]
    # 20 NTU upstream, 40 downstream for 30 min; then a downstream probe with no upstream partner
    up = _rows(datetime(2026, 6, 10, 10, 0, tzinfo=NY), 30, 1, 20.0)
    down = _rows(datetime(2026, 6, 10, 10, 0, tzinfo=NY), 30, 1, 40.0)
    out["turbidity_contrast"] = [e for e in ev.pair_events(reg, "TP-1", up, down)
                                 if e.kind is AlertKind.TURBIDITY_CONTRAST]
    lone = _rows(datetime(2026, 6, 10, 11, 0, tzinfo=NY), 30, 1, 30.0)
    out["turbidity_not_evaluable"] = [e for e in ev.pair_events(reg, "TP-1", ev.EMPTY, lone)
                                      if e.kind is AlertKind.TURBIDITY_NOT_EVALUABLE]
    # TD-1 silent since 11:00; OF-12's battery at 11.4 V
    seen = _rows(datetime(2026, 6, 10, 10, 0, tzinfo=NY), 60, 10, 1.0)
    out["stale_station"] = [e for e in ev.station_health(reg, "TD-1", seen[0], ev.EMPTY, now)
                            if e.kind is AlertKind.STALE_STATION]
    battery = _rows(datetime(2026, 6, 10, 10, 0, tzinfo=NY), 60, 10, 11.4)
    out["low_battery"] = [e for e in ev.station_health(reg, "OF-12", battery[0], battery, now)
                          if e.kind is AlertKind.LOW_BATTERY]
    # due in 15 days: inside this town's 21 d warning (not the default 14 d)
    out["calibration_due"] = calibration_events([Sensor("LG-1", "OF-12", "flow", date(2026, 1, 10),
                                                        date(2026, 6, 25))], now, reg.rules.calibration_warn)
    return out


@pytest.fixture(scope="module")
def town(tmp_path_factory):
    smtp = SmtpSink().start()
    hook = HttpSink().start()
    provider = HttpSink().start()     # no SMS provider runs here: apprise's json:// to a local stand-in
    b = start_bench(tmp_path_factory.mktemp("town"), Clock(NOW), reg=registry(WORKBENCH_YAML + RULES),
                    urls=[smtp.url, f"http://127.0.0.1:{hook.port}/hook",
                          f"json://127.0.0.1:{provider.port}/sms?:to={{sms}}"])
    incidents: dict[str, int] = {}
    for kind, events in _events(b.workbench.registry).items():
        assert events, f"the rule raised no {kind}"
        change = b.alerting.handle(events[0])
        incidents[kind] = change.incident.id
    b.alerting.tick()
    yield b, incidents, smtp, hook, provider
    b.close()
    for s in (smtp, hook, provider):
        s.stop()


def test_every_kind_was_raised(town):
    _, incidents, *_ = town
    assert set(incidents) == set(EXPECT)


@pytest.mark.parametrize("kind", sorted(EXPECT))
def test_every_channel_states_the_towns_parameters(town, kind):
    bench, incidents, smtp, hook, provider = town
    iid = incidents[kind]
    inc = bench.alerting.incidents.get(iid)
    rows = bench.alerting.queue.for_incident(iid)
    texts = {"email": _email(smtp, rows, iid), "sms": _sms(provider, rows, inc.code),
             "webhook": _webhook(hook, iid), "page": _page(bench, iid), "packet": _packet(bench, iid)}
    want, defaults = EXPECT[kind]
    law = [inc.provision, *_law_quotes(bench, iid)]
    for channel, text in texts.items():
        text = _without(text, law)
        for d in defaults:
            m = default_of(d).search(text)
            assert m is None, f"{kind}: the {channel} states the default {m.group(0)!r}:\n{text}"
        if channel == "sms":
            if kind in SMS_EXPECT:
                assert SMS_EXPECT[kind] in text, text
            continue
        for w in want:
            assert w in text, f"{kind}: the {channel} does not state the town's {w!r}:\n{text}"


def test_the_chart_threshold_is_labelled_with_the_towns_limit(town):
    bench, incidents, *_ = town
    rows = bench.alerting.queue.for_incident(incidents["turbidity_contrast"])
    threshold = rows[0].notification().threshold
    assert threshold["label"] == "upstream + max(8 NTU, 15 % of upstream)"
    assert (threshold["delta"], threshold["fraction"]) == (8, 0.15)


# -- reading each channel -----------------------------------------------------------------------
def _email(smtp: SmtpSink, rows, iid: int) -> str:
    """The email sent for the incident; a notice (held for the digest) as it would be sent."""
    sent = [m for m in smtp.messages if m["X-MS4Watch-Incident"] == str(iid)]
    if sent:
        m = sent[0]
        return "\n".join([str(m["Subject"]), m.get_body(("plain",)).get_content(),
                          html.unescape(m.get_body(("html",)).get_content())])
    row = next(r for r in rows if r.channel == "email")
    assert row.status == "held", (row.status, row.last_error)
    m = build(row.notification(), sender="ms4watch@town.test", to=row.recipient.address, now=NOW,
              readings_lookup=None)
    return "\n".join([str(m["Subject"]), m.get_body(("plain",)).get_content()])


def _sms(provider: HttpSink, rows, code: str) -> str:
    sent = [provider.json(i)["message"] for i in range(len(provider.requests))]
    mine = [s for s in sent if f"Reply {code} to ack" in s]
    if mine:
        return "\n".join(mine)
    row = next(r for r in rows if r.channel == "sms")
    assert row.status == "held", (row.status, row.last_error)
    return sms_text(row.notification())


def _webhook(hook: HttpSink, iid: int) -> str:
    bodies = [hook.json(i) for i in range(len(hook.requests))]
    mine = [b for b in bodies if (b.get("incident") or {}).get("id") == iid]
    assert mine, "the webhook got nothing for the incident"
    return json.dumps(mine[0])


def _page(bench, iid: int) -> str:
    r = _session(bench).get(f"/incidents/{iid}")
    assert r.status_code == 200
    return html.unescape(re.sub(r"<[^>]+>", " ", r.text))


def _packet(bench, iid: int) -> str:
    r = _session(bench).get(f"/incidents/{iid}/packet.zip")
    assert r.status_code == 200
    with zipfile.ZipFile(io.BytesIO(r.content)) as z:
        record = json.loads(z.read(next(n for n in z.namelist() if n.endswith("records.json"))))
    entry = next(i for i in record["incidents"] if i["id"] == iid)
    return json.dumps({k: v for k, v in entry.items() if k not in ("provision", "provision_text")})


def _law_quotes(bench, iid: int) -> list[str]:
    """The law's text the packet quotes (its own numbers are the law's)."""
    r = _session(bench).get(f"/incidents/{iid}/packet.zip")
    with zipfile.ZipFile(io.BytesIO(r.content)) as z:
        record = json.loads(z.read(next(n for n in z.namelist() if n.endswith("records.json"))))
    entry = next(i for i in record["incidents"] if i["id"] == iid)
    return [str(entry.get("provision_text") or "")] + [p["text"] for p in record.get("provisions", [])]


def _without(text: str, quotes: list[str]) -> str:
    for q in sorted((q for q in quotes if q), key=len, reverse=True):
        text = text.replace(q, "").replace(json.dumps(q)[1:-1], "")
    return text


_SESSIONS: dict[str, object] = {}


def _session(bench):
    if bench.base_url not in _SESSIONS:
        _SESSIONS[bench.base_url] = bench.login("viewer")
    return _SESSIONS[bench.base_url]


def test_the_api_describes_the_incident_in_the_towns_words(town):
    bench, incidents, *_ = town
    with bench.api("viewer") as c:
        inc = c.get(f"/api/v1/incidents/{incidents['storm']}").json()["incident"]
    assert inc["what"] == "storm >= 0.25 in"
    assert "12 h minimum inter-event time" in inc["rule"]


def test_the_storms_page_states_the_towns_threshold_and_inspection_window(town):
    bench, *_ = town
    text = _page_text(_session(bench).get("/storms").text)
    assert "A storm of 0.25 inch or more" in text
    assert "within 18 h of its end" in text and "24 hours" not in text


def _page_text(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def test_the_chart_line_from_the_store_is_the_towns_limit(tmp_path):
    """``evidence.StoreReadings`` (the page's, the email's and the packet's frame) draws the
    turbidity contrast's line from the kind's chart: upstream + max(8 NTU, 15 % of upstream)."""
    from ms4watch.contract.wire import CanonicalReading
    from ms4watch.evidence import StoreReadings
    from ms4watch.ingest.stores import SqliteStore
    from ms4watch.ingest.stores.base import StoredMessage
    reg = registry(WORKBENCH_YAML + RULES)
    t0 = to_ns(NOW - timedelta(hours=1))
    msgs = [StoredMessage(dev, i, (CanonicalReading(t0 + i * 60 * 10**9, station, dev, "turbidity", "turbidity", v,
                                                    "NTU", "", i),))
            for dev, station, v in (("LOG-U", "TU-1", 20.0), ("LOG-D", "TD-1", 40.0), ) for i in range(10)]
    msgs += [StoredMessage("LOG-U", 10, (CanonicalReading(t0 + 10 * 60 * 10**9, "TU-1", "LOG-U", "turbidity",
                                                          "turbidity", 100.0, "NTU", "", 10),))]
    sink = SqliteStore(tmp_path / "store.db")
    sink.open()
    try:
        sink.write(msgs)
        incident = {"kind": "turbidity_contrast", "subject": "TP-1", "event": {"pair": "TP-1"}}
        frame = StoreReadings(sink, reg)(incident, NOW - timedelta(hours=1), NOW)
    finally:
        sink.close()
    limit = frame["threshold_ntu"].dropna()
    assert sorted(set(limit)) == [28.0, 115.0]      # 20 + 8 NTU; 100 + 15 % (defaults: 25 and 110)


def test_the_station_chart_labels_a_storm_with_the_towns_threshold(tmp_path):
    """A storm fed through the pipeline is banded on its gauge's chart as qualifying at the
    town's depth (0.30 in >= 0.25 in), never at the default 0.5."""
    from ms4watch.contract.wire import CanonicalReading
    start = datetime(2026, 6, 9, 20, 0, tzinfo=NY)
    b = start_bench(tmp_path, Clock(NOW), reg=registry(WORKBENCH_YAML + RULES))
    try:
        b.feed([CanonicalReading(to_ns(start + timedelta(minutes=i)), "RG-1", "LOG-RG", "rain", "rain", 0.01, "in",
                                 "", i) for i in range(30)])
        b.pipeline.advance(to_ns(NOW))
        svg = html.unescape(b.login("viewer").get("/stations/RG-1/chart.svg?days=3").text)
    finally:
        b.close()
    bands = re.findall(r"<title>(storm [^<]*)</title>", svg)
    assert bands and all("≥ 0.25 in" in t for t in bands), bands
    assert "0.5" not in " ".join(bands).replace("0.25", "")


def test_the_incident_list_names_the_kind_in_the_towns_words(town):
    bench, *_ = town
    listing = _page_text(_session(bench).get("/incidents?kind=storm&state=all").text)
    assert "storm >= 0.25 in" in listing


@pytest.mark.parametrize("kind", sorted(EXPECT))
def test_the_page_and_the_packet_pdf_give_the_parameters_in_words(town, kind):
    """Issue 23: "floor gpm", "dry lookback h", "rain gauges ['RG-1']", a raw ``qc`` dict and a
    ``threshold: {"label": …}`` literal on the incident page and in the packet: every
    parameter is a label in words with its value and unit, no key, list or dict literal."""
    import shutil
    import subprocess
    bench, incidents, *_ = town
    iid = incidents[kind]
    inc = bench.alerting.incidents.get(iid)
    keys = [k for k in (inc.event.get("params") or {}) if "_" in k]    # "upstream" is a word already
    r = _session(bench).get(f"/incidents/{iid}/packet.zip")
    with zipfile.ZipFile(io.BytesIO(r.content)) as z:
        pdf = z.read(next(n for n in z.namelist() if n.endswith("packet.pdf")))
    assert shutil.which("pdftotext"), "poppler-utils is a test dependency (Makefile DEB_PKGS)"
    pdf_text = subprocess.run(["pdftotext", "-layout", "-", "-"], input=pdf, capture_output=True,
                              check=True).stdout.decode()
    for where, text in (("page", _page(bench, iid)), ("packet.pdf", " ".join(pdf_text.split()))):
        for key in keys:
            assert key not in text and key.replace("_", " ") not in text, f"{kind}: {where} shows {key!r}"
        assert not re.search(r"\[['\"]|\{['\"]|threshold: \{", text), f"{kind}: {where} shows a literal:\n{text}"
