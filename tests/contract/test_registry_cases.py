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


def test_the_inventory_fields():
    reg = load_registry(CASES[0].parent / "ok_inventory" / "sites.yaml")
    of = reg.outfall("OF-12")
    assert (of.lat, of.lon, of.receiving_water, of.pipe_diameter_in, of.pipe_material.value) == \
        (41.1311, -74.0912, "Mahwah River", 24, "rcp")
    assert of.located and reg.gauge("RG-1").located and reg.turbidity_pairs[0].located
    bare = load_registry(CASES[0].parent / "ok_issue_example" / "sites.yaml")
    assert not bare.outfall("OF-12").located and bare.outfall("OF-12").pipe_material is None


def test_suppressions_recorded_elsewhere_join_the_files():
    from datetime import datetime, timezone

    from ms4watch.contract.registry import ApprovedDischarge, ExemptFlow

    reg = load_registry(CASES[0].parent / "ok_issue_example" / "sites.yaml")
    t = datetime(2026, 7, 1, 12, tzinfo=timezone.utc)
    d = ApprovedDischarge.model_validate({"outfall": "OF-12", "from": t, "to": t.replace(hour=14), "reason": "dye test"})
    x = ExemptFlow.model_validate({"kind": "irrigation", "from": t, "to": t.replace(day=2)})
    more = reg.with_suppressions([d], [("OF-12", x)])
    assert more.approved_discharges == [*reg.approved_discharges, d]
    assert more.outfall("OF-12").exempt_flows == [x] and reg.outfall("OF-12").exempt_flows == []
    assert reg.same_stations(more) and more.same_stations(reg)
    assert reg.with_suppressions() is reg
    with pytest.raises(ValueError, match="unknown outfall 'OF-99'"):
        reg.with_suppressions([d.model_copy(update={"outfall": "OF-99"})])
    other = reg.model_copy(update={"rain_gauges": []})
    assert not reg.same_stations(other)


def test_the_map_attachment_fields():
    reg = load_registry(CASES[0].parent / "ok_map_attachment" / "sites.yaml")
    assert reg.outfall("DS-5").structure == "MH-2"
    assert reg.construction_sites[0].drains_to == ["CB-1", "CB 3/4"]     # the town GIS's spelling
    bare = load_registry(CASES[0].parent / "ok_inventory" / "sites.yaml")
    assert bare.outfall("OF-12").structure is None and bare.construction_sites[0].drains_to == []
