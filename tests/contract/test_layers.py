"""The layers hold: the contract (what edge, ingest and the alert side agree on) imports
nothing of ours outside itself — an import-linter contract, checked on the source."""

from __future__ import annotations

import ast
from pathlib import Path

CONTRACT = Path(__file__).resolve().parents[2] / "contract"


def _imports_of_ours_outside_the_contract(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 1:           # from .x: the contract's own
                continue
            if node.level > 1:            # from ..compliance: a sibling package of ours
                out.append(f"{path.name}:{node.lineno}: from {'.' * node.level}{node.module or ''}")
                continue
            names = [node.module or ""]
        else:
            continue
        out += [f"{path.name}:{node.lineno}: {n}" for n in names
                if n.split(".")[0] == "ms4watch" and not n.startswith("ms4watch.contract")]
    return out


def test_the_contract_imports_nothing_of_ours():
    files = sorted(CONTRACT.glob("*.py"))
    assert len(files) > 10
    found = [hit for f in files for hit in _imports_of_ours_outside_the_contract(f)]
    assert found == []


def test_the_check_sees_such_an_import(tmp_path):
    (tmp_path / "x.py").write_text("def f():\n    from ..compliance.laws import LAWS\n    import ms4watch.alerts\n"
                                   "from . import units\nfrom ms4watch.contract import wire\n")
    assert _imports_of_ours_outside_the_contract(tmp_path / "x.py") == [
        "x.py:2: from ..compliance.laws", "x.py:3: ms4watch.alerts"]


def test_the_contract_knows_every_local_law_compliance_defines():
    """The registry checks ``local_laws`` against the contract's list of law keys; the laws as
    data (``compliance.laws.LAWS``) are the same ones."""
    from ms4watch.compliance.laws import LAWS
    from ms4watch.contract.registry import LOCAL_LAWS
    assert tuple(LAWS) == LOCAL_LAWS
