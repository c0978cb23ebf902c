"""Run mypy on ms4watch as it installs, and report errors at the files' real paths.

The sub-packages live in top-level folders (contract/, alerts/, …) and install as ms4watch.*
through setuptools' package-dir; the editable install maps them with an import hook that mypy
cannot follow. So this lays a tree of symlinks (build/typecheck/ms4watch/contract -> contract/,
…) from pyproject's own package-dir table, runs mypy there with pyproject's [tool.mypy]
settings, and rewrites the paths in its output back to the folders you edit.

    python tools/typecheck.py            # the packages and modules [tool.mypy] lists (`packages`, `modules`)
    python tools/typecheck.py -p ms4watch.contract
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "typecheck"


def lay_tree() -> dict[str, str]:
    """Symlink each package-dir folder at its dotted place; return tree prefix -> real prefix."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_dir: dict[str, str] = pyproject["tool"]["setuptools"]["package-dir"]
    top = TREE / "ms4watch"
    top.mkdir(parents=True, exist_ok=True)
    rewrites: dict[str, str] = {}
    # ms4watch itself: link its entries one by one, since its sub-packages are other folders.
    for entry in (ROOT / package_dir["ms4watch"]).iterdir():
        if entry.name == "__pycache__":
            continue
        _link(top / entry.name, entry)
    rewrites[os.path.relpath(top, ROOT) + "/"] = package_dir["ms4watch"] + "/"
    for name, folder in package_dir.items():
        if name == "ms4watch":
            continue
        sub = name.split(".", 1)[1]
        _link(top / sub, ROOT / folder)
        rewrites[os.path.relpath(top / sub, ROOT) + "/"] = folder + "/"
    return rewrites


def _link(at: Path, target: Path) -> None:
    if at.is_symlink() and at.resolve() == target.resolve():
        return
    if at.is_symlink() or at.exists():
        at.unlink()
    at.symlink_to(target)


def main(argv: list[str]) -> int:
    rewrites = lay_tree()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mypy_cfg = pyproject["tool"]["mypy"]
    args = argv or ([a for p in mypy_cfg.get("packages", []) for a in ("-p", p)]
                    + [a for m in mypy_cfg.get("modules", []) for a in ("-m", m)])
    env = dict(os.environ, MYPYPATH=os.path.relpath(TREE, ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", *args],
        cwd=ROOT, env=env, capture_output=True, text=True,
    )
    out = proc.stdout + proc.stderr
    # Longest prefix first: build/typecheck/ms4watch/alerts/ before build/typecheck/ms4watch/.
    for tree_prefix, real_prefix in sorted(rewrites.items(), key=lambda kv: -len(kv[0])):
        out = out.replace(tree_prefix, real_prefix)
    sys.stdout.write(out)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
