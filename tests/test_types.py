"""The type check is part of `make test`: mypy over the whole ms4watch package, failing with its report.

Strict on the contract, the rules, the engine and compliance; mypy's default level on the rest (issue 22).
"""

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


def test_what_mypy_skips_ms4watch_never_imports():
    """A library mypy does not follow (`follow_imports = "skip"`, for speed) reads as Any: so none is imported by
    ms4watch itself, where Any would hide a wrong call."""
    skipped = [m.removesuffix(".*") for o in PYPROJECT["tool"]["mypy"]["overrides"]
               if o.get("follow_imports") == "skip" for m in o["module"]]
    assert skipped
    pattern = re.compile(rf"^\s*(import|from)\s+({'|'.join(map(re.escape, sorted(set(skipped))))})\b", re.M)
    folders = set(PYPROJECT["tool"]["setuptools"]["package-dir"].values())
    found = [f"{path.relative_to(REPO)}: {m.group(0).strip()}" for folder in sorted(folders)
             for path in (REPO / folder).rglob("*.py") for m in pattern.finditer(path.read_text())]
    assert not found, found


@pytest.mark.timeout(600)   # as long as the subprocess may take: a cold run is ~25 s of CPU, minutes on a loaded machine
def test_mypy_is_clean():
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "typecheck.py")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, "mypy (make types) found errors:\n" + proc.stdout + proc.stderr
