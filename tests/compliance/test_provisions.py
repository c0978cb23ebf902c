"""The provisions a notice can cite (``compliance/provisions.py``): each quotation is found
word for word in the law's text (``shared/reference``, whitespace normalised), each law's
catalogue covers the prohibitions and duties a town enforces, and a section number is
marked inferred exactly when the text never refers to it by number."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from ms4watch.compliance.laws import LAWS
from ms4watch.compliance.provisions import CATALOGUE, DEFAULT

TEXTS = {"ramapo-218": "ramapo-ch218-illicit-discharges.txt",
         "schenectady-148-I": "schenectady-ch148-stormwater.txt",
         "schenectady-148-II": "schenectady-ch148-stormwater.txt"}


def reference_dir() -> Path:
    """``MS4WATCH_REFERENCE``, else the nearest ``shared/reference`` above this file (the
    repository's sibling in a checkout, two levels up from a worktree)."""
    if os.environ.get("MS4WATCH_REFERENCE"):
        return Path(os.environ["MS4WATCH_REFERENCE"])
    for parent in Path(__file__).resolve().parents:
        if (parent / "shared" / "reference").is_dir():
            return parent / "shared" / "reference"
    pytest.fail("the laws' texts are not found: set MS4WATCH_REFERENCE to the shared/reference folder")


def normalised(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    d = reference_dir()
    return {law: normalised((d / name).read_text(encoding="utf-8")) for law, name in TEXTS.items()}


@pytest.mark.parametrize("law", sorted(CATALOGUE))
def test_every_quotation_is_the_law_s_own_words(law, texts):
    for p in CATALOGUE[law]:
        assert normalised(p.text) in texts[law], (law, p.key, p.text)


@pytest.mark.parametrize("law", sorted(CATALOGUE))
def test_a_section_number_is_inferred_exactly_when_the_text_never_names_it(law, texts):
    for p in CATALOGUE[law]:
        named = re.search(rf"§\s*{re.escape(p.number)}(?![0-9])", texts[law]) is not None
        assert p.inferred is not named, (law, p.key, p.section, "named in the text" if named else "not named")


def test_each_catalogue_covers_what_a_town_enforces():
    need = {
        "ramapo-218": {"illicit_discharge", "illicit_connection", "failing_septic", "access", "access_denied",
                       "monitoring_equipment", "release_notice", "release_written", "release_hazardous",
                       "contaminating_activity", "spdes_permit"},
        "schenectady-148-II": {"illicit_discharge", "illicit_connection", "sewage_connection", "failing_septic",
                               "access", "access_denied", "monitoring_equipment", "release_notice", "release_written",
                               "release_hazardous", "contaminating_activity"},
        "schenectady-148-I": {"swppp_required", "swppp_compliance", "swppp_amendment", "stabilization", "stockpiles",
                              "site_inspections", "inspection_reports", "site_log", "turbidity", "stop_work"},
    }
    for law, keys in need.items():
        have = {p.key for p in LAWS[law].provisions}
        assert keys <= have, (law, keys - have)
        assert DEFAULT[law] in have


def test_every_provision_has_a_title_and_remedial_measures():
    for law in LAWS.values():
        assert law.provisions, law.key
        for p in law.provisions:
            assert p.title and p.remedies and all(r.strip() for r in p.remedies), (law.key, p.key)
            assert law.provision(p.key) is p
            assert law.cite(p).startswith(f"{law.short} § ")
    with pytest.raises(ValueError, match="schenectady-148-I has no provision 'failing_septic'"):
        LAWS["schenectady-148-I"].provision("failing_septic")


def test_each_law_has_a_plain_distinct_name_for_pickers():
    """Issue 23: the law picker showed "Schenectady ch. 148 (schenectady-148-II)": a key, and
    without it the city's two articles read the same. Each law's label names its article and
    subject in words, and no two labels are alike."""
    from ms4watch.compliance.laws import LAWS
    labels = {law.label for law in LAWS.values()}
    assert len(labels) == len(LAWS)
    assert LAWS["schenectady-148-II"].label == "Schenectady ch. 148, Art. II: Illicit Discharges"
    assert LAWS["schenectady-148-I"].label == ("Schenectady ch. 148, Art. I: Stormwater Management and Erosion "
                                               "and Sediment Control")
    assert LAWS["ramapo-218"].label == "Ramapo ch. 218: Illicit Discharges"
    assert not any(law.key in law.label for law in LAWS.values())


def test_every_clock_reads_as_a_sentence():
    """Issue 23: "remediation or restoration: within as the notice sets of the notice": a clock
    whose length the notice sets reads "by the date the notice sets"."""
    from ms4watch.compliance.laws import LAWS
    texts = [getattr(law, f).describe() for law in LAWS.values() for f in law.__dataclass_fields__
             if hasattr(getattr(law, f), "describe")]
    assert texts and not [t for t in texts if "within as" in t or "sets of" in t], texts
    assert any("by the date the notice sets" in t for t in texts)
