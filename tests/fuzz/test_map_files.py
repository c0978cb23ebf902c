"""Property-based fuzzing (hypothesis) of the town's map as files: EPA SWMM models and GIS
layers with a mapping file (issue 24: every bad input one clear line naming the file, the
line or feature and the field; never a traceback).

Whatever the input, the answer is the project's own error (an ``Ms4Error``) or an import."""

from __future__ import annotations

import shutil
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ms4watch.contract.errors import Ms4Error
from ms4watch.network.importer import import_map

from .test_loaders import FUZZ, NASTY, mutated

TESTDATA = Path(__file__).resolve().parents[1] / "network" / "testdata"
EXAMPLE1 = (TESTDATA / "Example1.inp").read_text()
PIPES = (TESTDATA / "pipes.geojson").read_text()
SWMM_NASTY = st.one_of(NASTY, st.sampled_from([";", "[", "]", '"', "*", "[JUNCTIONS]", "[CONDUITS]", "[XSECTIONS]",
                                               "[SUBCATCHMENTS]", "[OPTIONS]\nFLOW_UNITS", "IRREGULAR", "DUMMY"]))


@FUZZ
@given(text=mutated(EXAMPLE1), extra=SWMM_NASTY, encoding=st.sampled_from(["utf-8", "utf-8-sig", "cp1252", "latin-1"]))
def test_a_broken_swmm_model_is_an_error_or_an_import(tmp_path_factory, text: str, extra: str, encoding: str):
    inp = tmp_path_factory.mktemp("swmm") / "model.inp"
    inp.write_bytes((text + "\n" + extra + "\n").encode(encoding, errors="replace"))
    try:
        got = import_map(inp)
    except Ms4Error as e:
        assert str(e).startswith(str(inp)) and "\n" not in str(e)
        return
    assert len(got.network.conveyances) == got.lines_read


@settings(FUZZ, max_examples=min(FUZZ.max_examples, 60))
@given(text=mutated(PIPES))
def test_a_broken_pipes_layer_is_an_error_or_an_import(tmp_path_factory, text: str):
    folder = tmp_path_factory.mktemp("gis")
    for name in ("structures.geojson", "mapping.yaml"):
        shutil.copy(TESTDATA / name, folder / name)
    (folder / "pipes.geojson").write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        got = import_map(folder / "mapping.yaml")
    except Ms4Error as e:
        assert str(folder) in str(e)
        return
    assert len(got.network.conveyances) == got.lines_read


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=False, allow_infinity=False),
                   st.text(max_size=8), st.sampled_from(["", " ", "N/A", "-9999", "12.0", "0", "MH-1", "OF-1"]))
XY = st.tuples(st.floats(999_000, 1_001_000), st.floats(199_000, 201_000)).map(list)
GEOMS = st.one_of(st.none(), XY.map(lambda p: {"type": "Point", "coordinates": p}),
                  st.lists(XY, max_size=4).map(lambda c: {"type": "LineString", "coordinates": c}),
                  st.lists(st.lists(XY, min_size=2, max_size=3), max_size=3).map(
                      lambda c: {"type": "MultiLineString", "coordinates": c}))


@settings(FUZZ, max_examples=min(FUZZ.max_examples, 60))
@given(rows=st.lists(st.tuples(st.fixed_dictionaries({k: VALUES for k in (
    "FACILITYID", "INV_START", "INV_END", "DIAM", "MATERIAL")}), GEOMS), min_size=1, max_size=6))
def test_pipes_of_any_values_and_shapes_are_an_error_or_an_import(tmp_path_factory, rows):
    import json
    folder = tmp_path_factory.mktemp("gis")
    for name in ("structures.geojson", "mapping.yaml"):
        shutil.copy(TESTDATA / name, folder / name)
    crs = json.loads(PIPES)["crs"]
    (folder / "pipes.geojson").write_text(json.dumps({"type": "FeatureCollection", "crs": crs, "features": [
        {"type": "Feature", "properties": p, "geometry": g} for p, g in rows]}))
    try:
        got = import_map(folder / "mapping.yaml")
    except Ms4Error as e:
        assert str(folder) in str(e)
        return
    assert len(got.network.conveyances) == got.lines_read == len(rows)
