"""Golden folders: ``testcases/registry/<case>/sites.yaml`` + ``expected.txt`` (``OK`` or the
exact error, with file, line and field). A new regression case is a new folder."""

from pathlib import Path

import pytest

from ms4watch.contract.errors import ConfigError
from ms4watch.contract.registry import load_registry

CASES = sorted((Path(__file__).parent / "testcases" / "registry").iterdir())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_registry_case(case, monkeypatch):
    monkeypatch.chdir(case)  # errors name the file as given: sites.yaml
    expected = (case / "expected.txt").read_text().strip()
    if expected == "OK":
        reg = load_registry("sites.yaml")
        assert reg.municipality
        return
    with pytest.raises(ConfigError) as e:
        load_registry("sites.yaml")
    assert str(e.value) == expected


def test_defaults_follow_regulations():
    reg = load_registry(CASES[0].parent / "ok_issue_example" / "sites.yaml")
    r = reg.rules
    assert r.dry_lookback.total_seconds() == 72 * 3600
    assert str(r.dry_max_rain_in) == "0.10" and str(r.storm_min_depth_in) == "0.50"
    assert r.storm_inter_event.total_seconds() == 6 * 3600
    assert r.dwf_min_duration.total_seconds() == 30 * 60
    assert (r.turbidity_delta_ntu, r.turbidity_fraction, r.turbidity_backstop_ntu) == (5.0, 0.10, 250.0)
    assert r.inspection_after_storm.total_seconds() == 24 * 3600


def test_lookups():
    reg = load_registry(CASES[0].parent / "ok_issue_example" / "sites.yaml")
    assert reg.station_ids() == {"RG-1", "OF-12", "US-3", "DS-3"}
    from datetime import date
    assert [s.id for s in reg.sites_for_gauge("RG-1", date(2026, 6, 1))] == ["CS-7"]
    assert reg.sites_for_gauge("RG-1", date(2026, 3, 1)) == []


def test_unreadable_file_names_it(tmp_path):
    with pytest.raises(ConfigError, match="nope.yaml: cannot read"):
        load_registry(tmp_path / "nope.yaml")
