"""The Debian packages the staged tree's ELF files need, for ``Depends:`` (build-deb.sh).

The wheels in the environment bundle their libraries (``numpy.libs/``, ``pyogrio.libs/``…)
and link only the system's basic ones (glibc, libstdc++, zlib…). For each shared object
named in a ``NEEDED`` entry and not bundled in the tree: the system's file
(``ldconfig -p``), then the package holding it (``dpkg -S``). A library neither bundled nor
on this system is an error naming the file that needs it.

    python3 shlibdeps.py STAGED_TREE      # prints e.g. "libc6, libgcc-s1, libstdc++6, zlib1g"
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ELF_MAGIC = b"\x7fELF"


def elf_files(root: Path) -> list[Path]:
    """Shared objects and executables (a wheel's ELF files are one or the other)."""
    out = []
    for p in root.rglob("*"):
        if not p.is_symlink() and p.is_file() and (".so" in p.name or p.stat().st_mode & 0o111):
            with p.open("rb") as f:
                if f.read(4) == ELF_MAGIC:
                    out.append(p)
    return out


def needed(paths: list[Path]) -> dict[Path, list[str]]:
    """Each file's NEEDED entries: one readelf for a hundred files."""
    out: dict[Path, list[str]] = {}
    for i in range(0, len(paths), 100):
        chunk = paths[i:i + 100]
        text = subprocess.run(["readelf", "-d", *map(str, chunk)], capture_output=True, text=True, check=True).stdout
        by_name = {str(p): p for p in chunk}
        for block in re.split(r"^File: ", text, flags=re.M)[1:] if len(chunk) > 1 else [str(chunk[0]) + "\n" + text]:
            name, _, body = block.partition("\n")
            out[by_name[name.strip()]] = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", body)
    return out


def system_libraries() -> dict[str, str]:
    text = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    libs: dict[str, str] = {}
    for m in re.finditer(r"^\s*(\S+) \(([^)]*)\) => (\S+)$", text, re.M):
        if "x86-64" in m.group(2) or "64" not in m.group(2):   # this architecture's first
            libs.setdefault(m.group(1), m.group(3))
    return libs


def packages_of(paths: set[str]) -> dict[str, str]:
    """The package holding each of ``paths``: one ``dpkg -S`` for all of them (each reads
    dpkg's whole file list: ~0.1 s of CPU a call). With merged /usr, dpkg may know a file
    under /lib or /usr/lib: both names are asked; a path neither names is an error."""
    def alt(path: str) -> str:
        return path.removeprefix("/usr") if path.startswith("/usr/") else "/usr" + path
    asked = sorted(paths | {alt(p) for p in paths})
    out = subprocess.run(["dpkg", "-S", *asked], capture_output=True, text=True)   # 1: some not found
    owner: dict[str, str] = {}
    for line in out.stdout.splitlines():
        if line.startswith("diversion by ") or ": " not in line:
            continue
        package, _, path = line.partition(": ")
        owner[path.strip()] = package.split(",")[0].split(":")[0].strip()
    found = {}
    for path in paths:
        package = owner.get(path) or owner.get(alt(path))
        if package is None:
            raise SystemExit(f"error: dpkg -S knows no package holding {path}: {out.stderr.strip()}")
        found[path] = package
    return found


def main(root: Path) -> int:
    files = elf_files(root)
    bundled = {p.name for p in files}
    system = system_libraries()
    wanted: dict[str, Path] = {}      # soname -> the first file needing it
    for f, sonames in needed(files).items():
        for soname in sonames:
            if soname not in bundled:
                wanted.setdefault(soname, f)
    missing = {so: f for so, f in wanted.items() if so not in system}
    packages = set(packages_of({system[so] for so in wanted if so in system}).values())
    if missing:
        for soname, f in sorted(missing.items()):
            print(f"error: {f.relative_to(root)} needs {soname}, neither bundled nor on this system", file=sys.stderr)
        return 1
    print(", ".join(sorted(packages)))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
