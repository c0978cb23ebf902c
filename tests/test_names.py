"""One word per concept (docs/glossary.md): the old names of renamed concepts stay gone, and
every class the glossary names in the code exists under that name."""

import ast
import importlib
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GLOSSARY = REPO / "docs" / "glossary.md"

# old name -> the glossary's word for it (issue 22: "event" was three things, the store a "sink")
RETIRED = {
    "Event": "AlertEvent (alerts.events) or ClockEvent (compliance.store)",
    "EventKind": "AlertKind", "EventStatus": "AlertEventStatus", "EventOut": "ClockEventOut",
    "EventMessage": "DeviceEventMessage", "EventKindText": "DeviceEventKindText",
    "EventSink": "DeviceEventStore", "EventSource": "DeviceEventSource",
    "Sink": "ReadingsStore", "SqliteSink": "SqliteStore", "SpoolingSink": "SpoolingStore",
    "Influx1Sink": "Influx1Store", "Influx2Sink": "Influx2Store", "InfluxSinkBase": "InfluxStoreBase",
    "StatusSink": "StatusStore", "RecordsSink": "RecordsStore", "open_sink": "build_store",
}


def _package_files() -> list[Path]:
    roots = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    return sorted(f for folder in set(roots.values()) for f in (REPO / folder).rglob("*.py"))


def _defined_names(tree: ast.AST) -> list[tuple[str, int]]:
    """Names a module defines or re-exports: classes, functions, assignments, import aliases."""
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append((node.name, node.lineno))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out += [(t.id, node.lineno) for t in targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.ImportFrom):
            out += [(a.asname or a.name, node.lineno) for a in node.names
                    if a.asname or (a.name in RETIRED and a.name != "Event")]   # Event: threading's, asyncio's
    return out


def test_retired_names_are_not_defined_again():
    found = []
    for f in _package_files():
        for name, line in _defined_names(ast.parse(f.read_text(), str(f))):
            if name in RETIRED:
                found.append(f"{f.relative_to(REPO)}:{line}: {name} (now {RETIRED[name]})")
    assert found == [], "renamed by issue 22, see docs/glossary.md:\n" + "\n".join(found)


def test_the_store_folder_is_stores():
    assert (REPO / "ingest" / "stores" / "base.py").is_file()
    assert not (REPO / "ingest" / "sinks").exists() or not any((REPO / "ingest" / "sinks").rglob("*.py"))
    sinks = [f"{f.relative_to(REPO)}" for f in _package_files() if re.search(r"\bingest\.sinks\b", f.read_text())]
    assert sinks == []


def test_the_glossary_names_classes_that_exist():
    """Every `package.module.Name` in the glossary's "In the code" column is importable."""
    rows = [re.split(r"(?<!\\)\|", line) for line in GLOSSARY.read_text().splitlines() if line.startswith("| **")]
    assert len(rows) > 10
    dotted = {m.removeprefix("ms4watch.") for row in rows
              for m in re.findall(r"`((?:[a-z_0-9]+\.)+[A-Z]\w*)`", row[3])}
    assert {"alerts.events.AlertEvent", "compliance.store.ClockEvent", "contract.wire.DeviceEventMessage",
            "ingest.stores.base.ReadingsStore", "settings.Settings"} <= dotted
    missing = []
    for name in sorted(dotted):
        module, attr = name.rsplit(".", 1)
        try:
            getattr(importlib.import_module(f"ms4watch.{module}"), attr)
        except (ImportError, AttributeError) as e:
            missing.append(f"{name}: {e}")
    assert missing == []


def test_the_glossary_carries_no_retired_name():
    text = GLOSSARY.read_text()
    assert [n for n in RETIRED if re.search(rf"`(?:[\w.]*\.)?{n}`", text)] == []
