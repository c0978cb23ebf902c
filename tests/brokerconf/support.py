"""A small town for the broker-config tests: a registry and its loggers' firmware configs."""

from __future__ import annotations

from pathlib import Path

SITES = """\
municipality: town
rain_gauges: [{id: RG-1}]
outfalls:
  - {id: OF-1, name: Mill St, rain_gauges: [RG-1]}
  - {id: OF-2, name: Elm Ave, rain_gauges: [RG-1]}
"""


def logger(device: str, station: str) -> str:
    return (f"device: {device}\nmunicipality: town\nstation: {station}\n"
            "sensors:\n  - {id: flow, driver: sim, quantity: flow, unit: gpm}\n")


def town(root: Path, loggers: dict[str, str] | None = None) -> tuple[Path, Path]:
    """``root/sites.yaml`` and ``root/loggers/<device>.yaml``; returns (registry, loggers folder)."""
    loggers = {"LOG-1": "OF-1", "LOG-2": "OF-2"} if loggers is None else loggers
    folder = root / "loggers"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.yaml"):
        old.unlink()
    for device, station in loggers.items():
        (folder / f"{device}.yaml").write_text(logger(device, station))
    (root / "sites.yaml").write_text(SITES)
    return root / "sites.yaml", folder
