"""Check every sensor's ``options:`` against its driver's ``Options`` model, at load time.

:func:`ms4watch.contract.firmware.load_firmware_config` checks the shape of a firmware
config; the driver-specific ``options`` blocks are only dicts there. This second pass
refuses a bad SDI-12 address, a missing tip size or a GPIO line used twice before the
logger starts, with file, line and field::

    firmware.yaml:14: sensors[1].options.address: Value error, SDI-12 address must be …

No I/O besides re-reading the YAML file for line numbers: no port is opened.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from ...contract.errors import ConfigError
from ...contract.firmware import FirmwareConfig
from ...contract.yamlfile import _line_for, _walk, field_path
from . import driver_class

__all__ = ["validate_options", "validated_options"]


def _line_map(source_path: str | Path) -> dict[tuple[Any, ...], int]:
    lines: dict[tuple[Any, ...], int] = {}
    try:
        node = yaml.compose(Path(source_path).read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError):
        return lines  # the config was already loaded from it; errors then carry no line
    if node is not None:
        _walk(node, (), lines)
    return lines


def validated_options(config: FirmwareConfig) -> tuple[list[BaseModel], list[tuple[tuple[Any, ...], str]]]:
    """Each sensor's validated options (in sensor order) and the problems found, as
    (field path, message).

    Each driver's ``Options`` model is validated with the context ``{"sensor": Sensor,
    "config": FirmwareConfig}``, so it can check what depends on the sensor (a rain gauge
    must measure rain) or on the device (its tip size against ``tip_in``).
    """
    found: list[tuple[tuple[Any, ...], str]] = []
    out: list[BaseModel] = []
    pins: dict[int, str] = {}
    for i, sensor in enumerate(config.sensors):
        here = ("sensors", i)
        try:
            cls = driver_class(sensor.driver)
        except ValueError as e:
            found.append((here + ("driver",), str(e)))
            continue
        except ImportError as e:
            found.append((here + ("driver",), f"driver {sensor.driver!r} cannot be loaded: {e}"))
            continue
        if getattr(cls, "needs_port", False) and not sensor.port:
            found.append((here + ("port",), f"driver {sensor.driver!r} needs a port (e.g. /dev/ttyUSB0)"))
        try:
            options = cls.Options.model_validate(sensor.options, context={"sensor": sensor, "config": config})
        except ValidationError as e:
            for err in e.errors(include_url=False):
                found.append((here + ("options",) + tuple(err["loc"]), err["msg"].removeprefix("Value error, ")))
            continue
        out.append(options)
        pin = getattr(options, "pin", None)
        if pin is not None:
            if pin in pins:
                found.append((here + ("options", "pin"), f"GPIO{pin} is already used by sensor {pins[pin]!r}"))
            else:
                pins[pin] = sensor.id
    return out, found


def validate_options(config: FirmwareConfig, source_path: str | Path) -> None:
    """Raise :class:`ConfigError` naming file, line and field for every bad ``options``."""
    _, found = validated_options(config)
    if found:
        lines = _line_map(source_path)
        raise ConfigError(str(source_path), [(_line_for(loc, lines), field_path(loc), msg) for loc, msg in found])
