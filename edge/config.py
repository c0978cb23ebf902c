"""Load a firmware config and check every sensor's driver options — before any port opens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from ..contract.errors import ConfigError
from ..contract.firmware import FirmwareConfig, load_firmware_config
from ..contract.yamlfile import _line_for, _walk, field_path
from .drivers import driver_class


def load_agent_config(path: str | Path) -> tuple[FirmwareConfig, list[BaseModel]]:
    """The config and each sensor's validated options, in sensor order.

    Errors name file, line and field, e.g.
    ``firmware.yaml:14: sensors[1].options.address: …``.
    """
    config = load_firmware_config(path)
    problems: list[tuple[tuple[Any, ...], str]] = []
    options: list[BaseModel] = []
    for i, sensor in enumerate(config.sensors):
        try:
            cls = driver_class(sensor.driver)
        except ValueError as e:
            problems.append((("sensors", i, "driver"), str(e)))
            continue
        try:
            options.append(cls.Options.model_validate(sensor.options))
        except ValidationError as e:
            for err in e.errors(include_url=False):
                problems.append((("sensors", i, "options") + tuple(err["loc"]), err["msg"]))
    if problems:
        lines: dict[tuple[Any, ...], int] = {}
        _walk(yaml.compose(Path(path).read_text(encoding="utf-8"), Loader=yaml.SafeLoader), (), lines)
        raise ConfigError(str(path), [(_line_for(loc, lines), field_path(loc), msg) for loc, msg in problems])
    return config, options
