"""Every Python package folder is listed in pyproject.toml, so a non-editable install has it."""

import tomllib
from pathlib import Path

import pytest

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
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - found == set(), "listed but missing"


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
    """A wheel of this checkout, built once for the tests that read it (~6 s of pip). setuptools
    copies through build/lib and keeps what an earlier build left there: cleared first, and no
    other build from the checkout meanwhile."""
    import shutil
    import subprocess
    import sys
    tmp_path = tmp_path_factory.mktemp("wheel")
    with source_build_lock():
        shutil.rmtree(REPO / "build" / "lib", ignore_errors=True)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path),
                        str(REPO)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("ms4watch-*.whl")
    return wheel
