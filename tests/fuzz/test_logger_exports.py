"""Property-based fuzzing (hypothesis) of the KorEXO, Win-Situ, VuSitu and Solinst readers on
mutations of the real exports in ``tests/contract/testdata/exports``: whatever the input,
a result or the project's own error naming the file (``Ms4Error``), never another exception."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ms4watch.contract.errors import Ms4Error
from ms4watch.contract.korexo import read_korexo
from ms4watch.contract.solinst import read_solinst
from ms4watch.contract.vusitu import read_vusitu
from ms4watch.contract.winsitu import read_winsitu

from .test_loaders import FUZZ, mutated

EXPORTS = Path(__file__).resolve().parents[1] / "contract" / "testdata" / "exports"


def _text(name: str) -> str:
    raw = (EXPORTS / name).read_bytes()
    if raw[:2] == b"\xff\xfe":
        return raw.decode("utf-16")
    try:
        return raw.decode("utf-8")          # VuSitu
    except UnicodeDecodeError:
        return raw.decode("cp1252")         # Win-Situ, Solinst


CASES = {
    "korexo_via_sacra_fnu.csv": lambda p: read_korexo(p, default_zone="America/New_York"),
    "winsitu_aquatroll600_turbidity.csv": lambda p: read_winsitu(p, "Europe/Berlin"),
    "solinst_edge_2010143.csv": lambda p: read_solinst(p, default_zone="America/New_York"),
    "solinst_gold_1062280.csv": lambda p: read_solinst(p, "UTC"),
    "solinst_edge_2010143.xle": lambda p: read_solinst(p, "UTC"),
    "solinst_edge_2041929.lev": lambda p: read_solinst(p, "UTC"),
    "vusitu_aquatroll600_live.csv": lambda p: read_vusitu(p),
    "vusitu_excel_resaved.csv": lambda p: read_vusitu(p, "UTC"),
    "vusitu_aquatroll600_live.htm": lambda p: read_vusitu(p),
}
TEXTS = {name: _text(name) for name in CASES}


@FUZZ
@given(st.sampled_from(sorted(CASES)), st.data())
def test_logger_exports(tmp_path_factory, name, data):
    text = data.draw(mutated(TEXTS[name]))
    p = tmp_path_factory.mktemp("fuzz") / name
    p.write_bytes(text.encode("utf-16") if name.startswith("korexo") else text.encode("utf-8"))
    try:
        CASES[name](p)
    except Ms4Error:
        pass
