"""The type check is part of `make test`: mypy over the whole ms4watch package, failing with its report.

Strict on the contract, the rules, the engine and compliance; mypy's default level on the rest (issue 22).
"""

import ast
import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from mypy.config_parser import parse_config_file
from mypy.main import define_options
from mypy.options import Options

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())

STRICT = ["ms4watch.contract", "ms4watch.contract.mqtt", "ms4watch.alerts.rules", "ms4watch.alerts.rules.storms",
          "ms4watch.alerts.engine", "ms4watch.alerts.engine.scheduler", "ms4watch.compliance", "ms4watch.compliance.clocks"]
DEFAULT = ["ms4watch", "ms4watch.cli", "ms4watch.commands.users", "ms4watch.edge.uplink", "ms4watch.ingest.stores",
           "ms4watch.ingest.stores.influxdb", "ms4watch.alerts", "ms4watch.alerts.incidents.db", "ms4watch.alerts.kinds",
           "ms4watch.workbench.app", "ms4watch.network", "ms4watch.firmware_configs"]


def _options() -> Options:
    """pyproject's [tool.mypy] as mypy itself reads it, `strict` expanded the way mypy expands it."""
    options = Options()
    _, _, strict_flags = define_options()

    def set_strict_flags() -> None:
        for dest, value in strict_flags:
            setattr(options, dest, value)

    parse_config_file(options, set_strict_flags, str(REPO / "pyproject.toml"))
    return options


def test_mypy_checks_every_sub_package():
    """`packages` covers every folder the wheel installs, and no override hides a module's own errors."""
    checked = PYPROJECT["tool"]["mypy"].get("packages", [])
    installed = PYPROJECT["tool"]["setuptools"]["package-dir"]
    unchecked = [p for p in installed if not any(p == c or p.startswith(c + ".") for c in checked)]
    assert not unchecked, f"[tool.mypy] packages leaves out {unchecked}"
    options = _options()
    for module in STRICT + DEFAULT:
        per_module = options.clone_for_module(module)
        assert per_module.follow_imports == "normal", f"{module}: follow_imports = {per_module.follow_imports}"
        assert not per_module.ignore_errors, f"{module}: ignore_errors"


def test_strict_on_the_four_and_default_on_the_rest():
    """Every flag of `--strict` on the four; none of them on the rest (a per-module `strict = true` leaks
    everywhere: mypy#11401)."""
    _, _, strict_flags = define_options()
    options = _options()
    defaults = Options()
    for module in STRICT:
        per_module = options.clone_for_module(module)
        off = [dest for dest, value in strict_flags if getattr(per_module, dest) != value]
        assert not off, f"{module} is not strict: {off}"
    for module in DEFAULT:
        per_module = options.clone_for_module(module)
        # warn_redundant_casts and warn_unused_ignores are on for the whole package: cheap, and they keep ignores honest.
        on = [dest for dest, value in strict_flags
              if dest not in ("warn_redundant_casts", "warn_unused_ignores") and getattr(per_module, dest) != getattr(defaults, dest)]
        assert not on, f"{module} gets strict flags meant for the four: {on}"


# An import statement, parenthesised or continued lines included: parsed alone, since ast.parse of every file of the
# package costs ~2 s of CPU.
IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n]*(?:\\\n[^\n]*)*)|import[ \t]+[^\n]+)", re.M)


def _imported_by_ms4watch() -> dict[str, str]:
    """Every module ms4watch's own code imports (for `from a import b`, a and a.b: b may be a module) -> where."""
    folders = set(PYPROJECT["tool"]["setuptools"]["package-dir"].values())
    found: dict[str, str] = {}
    for folder in sorted(folders):
        for path in (REPO / folder).rglob("*.py"):
            text = path.read_text()
            for m in IMPORT.finditer(text):
                where = f"{path.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}"
                try:
                    node = ast.parse(m.group(0).strip()).body[0]
                except (SyntaxError, IndexError):
                    continue            # import-like text in a string
                if isinstance(node, ast.Import):
                    found.update((a.name, where) for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.setdefault(node.module, where)
                    found.update((f"{node.module}.{a.name}", where) for a in node.names if a.name != "*")
    return found


def _is_module(name: str) -> bool:
    """`from a import b`: whether a.b is a module (b may be a class); asked only of the names a skip would cover.
    Found on disk, not imported (importing holidays.countries or influxdb_client costs seconds)."""
    top, *rest = name.split(".")
    try:
        spec = importlib.util.find_spec(top)      # a top-level name is found, not imported
    except (ImportError, ValueError):
        return False
    if spec is None or not rest:
        return spec is not None
    for base in spec.submodule_search_locations or ():
        at = Path(base).joinpath(*rest)
        if at.is_dir() or at.with_suffix(".py").exists() or at.with_suffix(".pyi").exists() \
                or any(at.parent.glob(at.name + ".*.so")):
            return True
    return False


def test_what_mypy_skips_ms4watch_never_imports():
    """A module mypy does not follow (`follow_imports = "skip"`, for speed) reads as Any: so none is one ms4watch
    itself imports, where Any would hide a wrong call. Asked of mypy's own reading of the overrides, since a module
    named exactly (networkx.algorithms.dag, followed) wins over a pattern (networkx.algorithms.*, skipped)."""
    options = _options()
    skipped = [o for o in PYPROJECT["tool"]["mypy"]["overrides"] if o.get("follow_imports") == "skip"]
    assert skipped
    imported = _imported_by_ms4watch()
    assert "networkx" in imported and "holidays.countries.united_states" in imported
    # the test sees a skip: a module of a skipped pattern
    assert options.clone_for_module("networkx.algorithms.voronoi").follow_imports == "skip"
    found = [f"{where}: {module}" for module, where in sorted(imported.items())
             if options.clone_for_module(module).follow_imports == "skip" and _is_module(module)]
    assert not found, found


@pytest.mark.timeout(600)   # as long as the subprocess may take: a cold run is ~25 s of CPU, minutes on a loaded machine
def test_mypy_is_clean():
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "typecheck.py")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, "mypy (make types) found errors:\n" + proc.stdout + proc.stderr
