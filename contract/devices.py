"""The town's loggers: which devices it listed, and which stations each one serves.

A town lists a logger by keeping its firmware config (``firmware_configs/<device>.yaml``) in
one folder beside the registry. That folder is the list the broker's credentials and ACL are
made from (``ms4watch broker-config``) and the one ingest checks messages against: a device
serves its config's ``station`` and any other station one of its sensors names
(``sensors[].station``), and publishes only under ``ms4/<municipality>/<station>/<device>/…``
of those stations.

Loading refuses, with file and field: a file that is not a firmware config, a device of
another municipality, a station the registry does not know, a device id used twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

from .errors import ConfigError
from .firmware import FirmwareConfig, load_firmware_config
from .registry import Registry


@dataclass(frozen=True)
class Device:
    id: str
    station: str                      # its own station: the topic's station for its status
    stations: frozenset[str]          # every station its readings may be for
    source: Path | None           # its firmware config


@dataclass(frozen=True)
class DeviceDirectory:
    """The devices a municipality listed, by id."""

    municipality: str
    devices: Mapping[str, Device]

    def __iter__(self) -> Iterator[Device]:
        return iter(sorted(self.devices.values(), key=lambda d: d.id))

    def __len__(self) -> int:
        return len(self.devices)

    def get(self, device: str) -> Device | None:
        return self.devices.get(device)

    @classmethod
    def of(cls, registry: Registry, configs: Mapping[Path, FirmwareConfig]) -> "DeviceDirectory":
        """Check ``configs`` (file → config) against ``registry``; :class:`ConfigError` names the file."""
        known = registry.station_ids()
        devices: dict[str, Device] = {}
        for path, cfg in configs.items():
            src = str(path)
            if cfg.municipality != registry.municipality:
                raise ConfigError(src, [(None, "municipality", f"{cfg.municipality!r} is not the registry's "
                                                                 f"{registry.municipality!r}")])
            stations = {cfg.station} | {s.station for s in cfg.sensors if s.station}
            for where, st in [("station", cfg.station)] + [(f"sensors[{i}].station", s.station)
                                                           for i, s in enumerate(cfg.sensors) if s.station]:
                if st not in known:
                    raise ConfigError(src, [(None, where, f"unknown station {st!r}: not in the registry "
                                                          f"(known: {', '.join(sorted(known)) or 'none'})")])
            if cfg.device in devices:
                raise ConfigError(src, [(None, "device", f"{cfg.device!r} is also in {devices[cfg.device].source}")])
            devices[cfg.device] = Device(cfg.device, cfg.station, frozenset(stations), Path(path))
        return cls(registry.municipality, devices)


def load_devices(registry: Registry, folder: str | Path, *, skip: tuple[Path, ...] = (),
                 others: frozenset[str] = frozenset()) -> DeviceDirectory:
    """Every ``*.yaml``/``*.yml`` in ``folder`` (not its sub-folders) but ``skip`` (the registry,
    when it lives there) is a firmware config of one of the town's loggers — or, on a
    coalition's server, of a town in ``others`` (its own list, left out of this one)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(str(folder), [(None, "", "no such folder of firmware configs")])
    skipped = {p.resolve() for p in skip}
    files = sorted(p for p in folder.iterdir()
                   if p.suffix in (".yaml", ".yml") and p.is_file() and p.resolve() not in skipped)
    configs = {p: load_firmware_config(p) for p in files}
    return DeviceDirectory.of(registry, {p: c for p, c in configs.items() if c.municipality not in others})


__all__ = ["Device", "DeviceDirectory", "load_devices"]
