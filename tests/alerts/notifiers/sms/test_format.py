"""One GSM-7 segment: station name, what, since when, the acknowledge code."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from ms4watch.alerts.notifiers.sms import septets, sms_text, to_gsm7
from ms4watch.alerts.notifiers.sms.gsm7 import BASIC, EXTENSION
from tests.support.notify_peers import inspection


def test_open_message(make_notification):
    n = make_notification(channel="sms")
    code = n.incident["code"]
    assert sms_text(n) == f"OF-12 Main St outfall: dry-weather flow since Jun 01 11:30 EDT. Reply {code} to ack"


def test_stages(make_notification):
    code = None
    n = make_notification(stage="escalation")
    code = n.incident["code"]
    assert sms_text(n) == (f"ESCALATED OF-12 Main St outfall: dry-weather flow since Jun 01 11:30 EDT,"
                           f" not acknowledged. Reply {code} to ack")
    insp = make_notification(event=inspection("2026-06-02T18:00:00Z", "2026-06-01T18:00:00Z"), stage="reminder",
                             station_name="Elm St site")
    assert sms_text(insp).startswith("REMINDER CS-7 Elm St site: inspection due by Jun 02 14:00 EDT. Reply ")


def test_gsm7_counting_and_transliteration():
    assert septets("abc") == 3 and septets("[x]") == 5 and septets("€") == 2
    assert to_gsm7("Café “Bridge” — 5°") == 'Café "Bridge" - 5deg'  # é is GSM-7; quotes, dash, degree are not
    assert to_gsm7("Łódź") == "Lodz" and to_gsm7("北") == "?"


def test_any_station_name_fits_one_segment_and_keeps_the_code(make_notification):
    base = make_notification()
    code = base.incident["code"]

    @settings(max_examples=200, deadline=None)
    @given(name=st.text(min_size=0, max_size=300), stage=st.sampled_from(["open", "escalation", "overdue"]))
    def check(name, stage):
        text = sms_text(replace(base, station_name=name, stage=stage))
        assert septets(text) <= 160
        assert all(ch in BASIC or ch in EXTENSION for ch in text)
        assert text.endswith(f"Reply {code} to ack")
        assert "dry-weather flow since Jun 01 11:30 EDT" in text
        if name.strip() and septets(to_gsm7(name)) <= 60:
            assert to_gsm7(name) in text  # a name of sane length is never shortened

    check()


def test_a_site_alert_names_the_outfall_its_runoff_reaches_where_the_segment_has_room(make_notification):
    from tests.support.town_network import main_st_reaches

    insp = make_notification(event=inspection("2026-06-02T18:00:00Z", "2026-06-01T18:00:00Z"), stage="reminder",
                             station_name="Elm St site", reaches=main_st_reaches())
    code = insp.incident["code"]
    assert sms_text(insp) == f"REMINDER CS-7 Elm St site: inspection due by Jun 02 14:00 EDT, to OF-12. Reply {code} to ack"
    long_name = replace(insp, station_name="Elm Street mixed-use redevelopment, phase two, north parcel " * 3)
    text = sms_text(long_name)
    assert septets(text) <= 160 and text.endswith(f"to OF-12. Reply {code} to ack")   # the name gives way first
    assert "to OF-12" not in sms_text(make_notification(event=inspection("2026-06-02T18:00:00Z",
                                                                         "2026-06-01T18:00:00Z"), stage="reminder"))
