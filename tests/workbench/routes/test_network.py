"""The storm-sewer map's pages: the outfalls with what lies upstream, and a trace."""

from __future__ import annotations

import shutil
from pathlib import Path

from ms4watch.network.importer import import_map
from ms4watch.network.store import NetworkStore

TESTDATA = Path(__file__).resolve().parents[2] / "network" / "testdata"


def _import(bench, tmp_path: Path) -> None:
    for name in ("structures.geojson", "pipes.geojson", "mapping.yaml"):
        shutil.copy(TESTDATA / name, tmp_path / name)
    got = import_map(tmp_path / "mapping.yaml")
    folder = bench.workbench.settings.town_data_dir(bench.workbench.municipality)
    with NetworkStore(folder) as store:
        store.replace(got.network, got.findings, "mapping.yaml")


def test_before_any_import_the_page_says_how(bench):
    page = bench.login("viewer").get("/network")
    assert page.status_code == 200 and "No map imported yet" in page.text


def test_outfalls_findings_and_a_trace(bench, tmp_path):
    _import(bench, tmp_path)
    s = bench.login("viewer")
    page = s.get("/network").text
    assert '<a href="/network/trace/OF-1">OF-1</a>' in page and "Hutchinson River" in page
    assert "2,000 ft" in page and "<b>uphill</b>: pipe P-5 flows uphill" in page
    trace = s.get("/network/trace/OF-1").text
    order = [sid for sid in ("OF-1", "MH-1", "CB-1", "MH-2", "CB-2", "MH-3", "MH-4", "MH-5")]
    positions = [trace.index(f'<a href="/network/trace/{sid}">{sid}</a>') for sid in order]
    assert positions == sorted(positions)
    assert "7 structures, 2,000 ft of pipe" in trace
    down = s.get("/network/trace/CB-2?down=true").text
    assert "Downstream of CB-2" in down and "3 structures, 1,000 ft of pipe" in down
    assert s.get("/network/trace/NOPE").status_code == 404


def test_the_pages_need_a_login(bench, tmp_path):
    with bench.client() as c:
        r = c.get("/network")
    assert r.status_code in (303, 401)


def test_the_pages_read_the_map_once_per_import(bench, tmp_path, monkeypatch):
    """The outfalls page and a trace read the map kept by the last import, once (the map
    page's cache): they opened network.db, ran its schema and loaded the whole network
    (and built its index for the walk) at every request. A new import is shown at once."""
    _import(bench, tmp_path)
    opened: list[Path] = []
    init = NetworkStore.__init__

    def counted(self, folder):
        opened.append(folder)
        init(self, folder)

    monkeypatch.setattr(NetworkStore, "__init__", counted)
    s = bench.login("viewer")
    for _ in range(2):
        assert "Hutchinson River" in s.get("/network").text
        assert "7 structures, 2,000 ft of pipe" in s.get("/network/trace/OF-1").text
    assert len(opened) == 1

    folder = bench.workbench.settings.town_data_dir(bench.workbench.municipality)
    with NetworkStore(folder) as store:            # another import: a map without MH-5
        got = store.load()
        del got.structures["MH-5"]
        for pid in [p for p, c in got.conveyances.items() if "MH-5" in (c.upstream, c.downstream)]:
            del got.conveyances[pid]
        store.replace(got, store.findings(), "mapping.yaml")
    assert "MH-5" not in s.get("/network/trace/OF-1").text


def test_the_outfalls_page_walks_the_map_once_per_import(bench, tmp_path, monkeypatch):
    """What lies upstream of each outfall is walked once per import: the page walked the
    whole map from every outfall at each visit (7.8 ms of CPU a visit on a map of 2,000
    structures, growing with the map)."""
    from ms4watch.network import trace

    _import(bench, tmp_path)
    walked: list[str] = []
    walk = trace.walk

    def counted(net, start, way=trace.Way.UP):
        walked.append(start)
        return walk(net, start, way)

    monkeypatch.setattr(trace, "walk", counted)
    s = bench.login("viewer")
    pages = [s.get("/network").text for _ in range(3)]
    assert pages[0] == pages[1] == pages[2] and "2,000 ft" in pages[0]
    assert sorted(walked) == ["OF-1", "OF-2"]
