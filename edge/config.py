"""Load a firmware config and check every sensor's driver options — before any port opens.

Used at start-up (a file) and for remote configuration (a retained ``…/config`` message):
either way the whole config is validated before anything is applied.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from ..contract.errors import ConfigError
from ..contract.firmware import FirmwareConfig
from ..contract.yamlfile import located_error, parse_yaml_model
from .drivers.validate import validated_options


def load_agent_config(path: str | Path) -> tuple[FirmwareConfig, list[BaseModel]]:
    """The config and each sensor's validated options, in sensor order.

    Errors name file, line and field, e.g. ``firmware.yaml:14: sensors[1].options.address: …``.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(str(path), [(None, "", f"cannot read: {e.strerror}")]) from None
    return parse_agent_config(text, str(path))


def parse_agent_config(text: str, source: str) -> tuple[FirmwareConfig, list[BaseModel]]:
    """Like :func:`load_agent_config`, from text (YAML or JSON; JSON is YAML)."""
    config = parse_yaml_model(text, FirmwareConfig, source)
    options, problems = validated_options(config)
    if problems:
        raise located_error(text, source, problems)   # a tab libyaml read and PyYAML refuses: that refusal is the error
    return config, options
