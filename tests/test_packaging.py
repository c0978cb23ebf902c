"""Every Python package folder is listed in pyproject.toml, so a non-editable install has it."""

import tomllib
from pathlib import Path

import pytest

from tests.support.packaged import SMS_CHECK, venv_omits
from tests.support.systemlock import source_build_lock

REPO = Path(__file__).resolve().parents[1]


def test_every_package_is_listed():
    py = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(py["packages"])
    roots = py["package-dir"]  # package name -> folder
    found = set()
    for pkg, folder in roots.items():
        base = REPO / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            found.add(".".join([pkg, *rel.parts]) if rel.parts else pkg)
    # a folder of data files only (templates, static files, unit files) is listed too, so that
    # setuptools ships it without a warning; it has no __init__.py and must hold no Python
    data = set()
    for pkg in listed - found:
        root = max((r for r in roots if pkg == r or pkg.startswith(r + ".")), key=len)
        folder = REPO / roots[root] / Path(*pkg[len(root):].lstrip(".").split(".")) if pkg != root else REPO / roots[root]
        if folder.is_dir() and not any(folder.glob("*.py")):
            data.add(pkg)
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - found - data == set(), "listed but missing"


def test_console_script():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["scripts"] == {"ms4watch": "ms4watch.cli:main"}


def test_wheel_ships_py_typed(wheel):
    """pyproject promises py.typed (PEP 561): each package-dir root carries one into the wheel."""
    import zipfile

    roots = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [pkg for pkg in roots if pkg.replace(".", "/") + "/py.typed" not in names]
    assert missing == [], f"no py.typed in the wheel for {missing}"
    # the drawn map's library is vendored (no CDN): its code, style, images and licence ship too
    for name in ("leaflet.js", "leaflet.css", "LICENSE", "VERSION", "images/marker-icon.png"):
        assert f"ms4watch/workbench/static/vendor/leaflet/{name}" in names, name


def test_wheel_ships_the_prometheus_rules(wheel):
    """The alert rules docs/operations.md points at are in the wheel, beside ``ms4watch.monitoring``."""
    import zipfile

    assert "ms4watch/monitoring/prometheus/ms4watch-rules.yml" in zipfile.ZipFile(wheel).namelist()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A wheel of this checkout, built once for the tests that read it. setuptools copies
    through build/lib and keeps what an earlier build left there: cleared first, and no other
    build from the checkout meanwhile.

    With uv where `make setup` installed it (`uv build --wheel`: the same setuptools backend in
    an isolated environment, the same 422 files byte for byte; ~2.1 s of CPU where `pip wheel`
    took ~5.7 s), else pip."""
    import shutil
    import subprocess
    import sys
    tmp_path = tmp_path_factory.mktemp("wheel")
    uv = Path(sys.executable).with_name("uv")
    if uv.is_file():
        build = [str(uv), "build", "--quiet", "--wheel", "--no-create-gitignore", "--out-dir", str(tmp_path), str(REPO)]
    else:
        build = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path), str(REPO)]
    with source_build_lock():
        shutil.rmtree(REPO / "build" / "lib", ignore_errors=True)
        subprocess.run(build, check=True, capture_output=True)
    (wheel,) = tmp_path.glob("ms4watch-*.whl")
    return wheel


def _lock_omits() -> dict[str, str]:
    """packaging/lock-omits.txt: a distribution's name, then ``#`` and why it is left out."""
    omits = {}
    for line in (REPO / "packaging" / "lock-omits.txt").read_text().splitlines():
        name, _, why = line.partition("#")
        if name.strip():
            omits[name.strip().lower()] = why.strip()
    return omits


def test_the_debian_lock_leaves_out_what_nothing_imports():
    """scipy (~115 MB of the package's ~570) and h5netcdf: ioos-qc declares them, but only its
    config_creator and stores import them, which ms4watch never does (pint imports scipy if it
    is there, for Quantity.to_preferred, which ms4watch never calls). `make lock` leaves what
    packaging/lock-omits.txt names out of the lock, each with its reason."""
    omits = _lock_omits()
    assert {"scipy", "h5netcdf"} <= set(omits), omits
    assert all(omits.values()), f"a name without its reason: {omits}"
    lines = (REPO / "packaging" / "requirements.lock").read_text().splitlines()
    locked = {line.split("==")[0].strip().lower() for line in lines if "==" in line}
    assert len(locked) > 50 and "ioos-qc" in locked
    assert not locked & set(omits), f"left out, yet in the lock: {locked & set(omits)}"
    recipe = (REPO / "Makefile").read_text().split("\nlock:", 1)[1].split("\n\n", 1)[0]
    assert "packaging/lock-omits.txt" in recipe and "--exclude" in recipe, recipe


def test_the_program_runs_without_what_the_lock_leaves_out():
    """With the left-out distributions' modules unimportable, and the modules
    packaging/venv-omits.txt names: every module of ms4watch imports, QC asks ioos_qc's QARTOD
    tests (a spike fails, and so do its neighbours: they are far from their neighbours' mean),
    and the inbound-SMS webhook checks a Twilio signature -- what the Debian package runs.
    (tests/test_deb.py runs the installed package's demo and QC, which have none of them.)"""
    import importlib.metadata
    import subprocess
    import sys
    blocked = sorted(m for m, dists in importlib.metadata.packages_distributions().items()
                     if {d.lower() for d in dists} & set(_lock_omits()))
    assert "scipy" in blocked and "h5netcdf" in blocked, blocked
    omits = venv_omits()
    assert "twilio.rest" in omits and all(omits.values()), omits
    blocked += sorted(omits)
    code = f"""
import importlib, importlib.abc, pkgutil, sys
BLOCKED = {blocked!r}
def blocked(name):
    return any(name == b or name.startswith(b + ".") for b in BLOCKED)
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if blocked(name):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Absent())
import numpy as np
import ms4watch
for m in pkgutil.walk_packages(ms4watch.__path__, "ms4watch."):
    if not m.name.endswith("__main__"):
        importlib.import_module(m.name)
from ms4watch.alerts.rules.qc import qartod_fail_array
t = np.arange(5, dtype=np.int64) * 300_000_000_000
fails = qartod_fail_array(t, np.array([10.0, 11.0, 900.0, 12.0, 10.0]))
assert fails.tolist() == [False, True, True, True, False], fails   # the spike and its neighbours
assert "ioos_qc.qartod" in sys.modules
""" + SMS_CHECK + """
assert not [m for m in sys.modules if blocked(m)]
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr
