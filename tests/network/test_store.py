"""The network kept per town, and what a re-import of an updated map changed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ms4watch.network.importer import import_map
from ms4watch.network.store import NetworkStore


def test_the_kept_network_is_the_imported_one(synthetic, tmp_path: Path):
    got = import_map(synthetic)
    with NetworkStore(tmp_path / "town") as store:
        store.replace(got.network, got.findings, "mapping.yaml")
    with NetworkStore(tmp_path / "town") as store:
        assert store.load() == got.network
        assert store.findings() == got.findings
        assert store.last_import()["structures"] == 10


def test_reimport_keeps_ids_and_reports_added_removed_changed(synthetic, tmp_path: Path):
    with NetworkStore(tmp_path) as store:
        first = import_map(synthetic)
        changes = store.replace(first.network, first.findings, "v1")
        assert len(changes.added) == 20 and not changes.removed and not changes.changed
        # the town's update: MH-3 removed with its pipe P-5, a new CB-4 on MH-1, P-4 upsized to 15 in
        folder = synthetic.parent
        s = json.loads((folder / "structures.geojson").read_text())
        s["features"] = [f for f in s["features"] if f["properties"]["FACILITYID"] != "MH-3"]
        s["features"].append({"type": "Feature", "geometry": {"type": "Point", "coordinates": [999800, 200300]},
                              "properties": {"FACILITYID": "CB-4", "TYPE": "CB", "INV": 13.0, "RECV": None}})
        (folder / "structures.geojson").write_text(json.dumps(s))
        p = json.loads((folder / "pipes.geojson").read_text())
        p["features"] = [f for f in p["features"] if f["properties"]["FACILITYID"] != "P-5"]
        for f in p["features"]:
            if f["properties"]["FACILITYID"] == "P-4":
                f["properties"]["DIAM"] = 15
        p["features"].append({"type": "Feature", "properties": {"FACILITYID": "P-11", "INV_START": 13.0,
                                                               "INV_END": 12.4, "DIAM": 12, "MATERIAL": "PVC"},
                              "geometry": {"type": "LineString", "coordinates": [[999800, 200300],
                                                                                 [1000000, 200300]]}})
        (folder / "pipes.geojson").write_text(json.dumps(p))
        second = import_map(synthetic)
        changes = store.replace(second.network, second.findings, "v2")
        assert changes.added == ["structure CB-4", "pipe P-11"]
        assert changes.removed == ["structure MH-3", "pipe P-5"]
        assert changes.changed == ["pipe P-4: diameter_in 12 -> 15"]
        assert set(store.load().structures) == set(second.network.structures)


def test_reimport_of_the_same_map_changes_nothing(synthetic, tmp_path: Path):
    with NetworkStore(tmp_path) as store:
        got = import_map(synthetic)
        store.replace(got.network, got.findings, "v1")
        assert not store.replace(import_map(synthetic).network, got.findings, "v1 again").any


def test_a_structure_moved_a_few_feet_is_a_change(synthetic, tmp_path: Path):
    with NetworkStore(tmp_path) as store:
        got = import_map(synthetic)
        store.replace(got.network, got.findings, "v1")
        s = json.loads((synthetic.parent / "structures.geojson").read_text())
        s["features"][9]["geometry"]["coordinates"][0] += 2          # CB-3 two feet east (P-10 still joins it)
        (synthetic.parent / "structures.geojson").write_text(json.dumps(s))
        moved = import_map(synthetic)
        changes = store.replace(moved.network, moved.findings, "v2")
        assert [c.split(":")[0] for c in changes.changed] == ["structure CB-3"]
        assert "lon" in changes.changed[0]


def test_a_replace_that_fails_halfway_keeps_the_network_before_it(synthetic, tmp_path: Path):
    """One transaction: the structures and pipes deleted and re-inserted come back when a
    later insert (here a finding SQLite cannot bind) fails."""
    from ms4watch.network.model import Finding
    with NetworkStore(tmp_path) as store:
        got = import_map(synthetic)
        store.replace(got.network, got.findings, "v1")
        with pytest.raises(sqlite3.Error):
            store.replace(got.network, [Finding("dangling", object(), "not a string")], "v2")  # type: ignore[arg-type]
    with NetworkStore(tmp_path) as store:
        assert store.load() == got.network and store.findings() == got.findings
        assert store.last_import()["source"] == "v1"
