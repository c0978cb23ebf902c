"""Self-validating identifiers and MQTT topic paths.

Topics: ``ms4/<municipality>/<station>/<device>/<channel>`` where channel is one of
readings, status, events, config, cmd. Identifiers are 1-64 characters of letters, digits,
``-``, ``_`` and ``.`` so they can never break a topic or a line-protocol tag.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# Matched with fullmatch: ``$`` would also match before a final newline ("LOG-1\n").
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")
_ID_RULE = "1-64 letters, digits, '-', '_', '.'; starts with a letter or digit"
PREFIX = "ms4"


def check_id(kind: str, value: str, pattern: re.Pattern[str] = _ID, rule: str = _ID_RULE) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise ValueError(f"invalid {kind}: {value!r} ({rule})")
    return value


@dataclass(frozen=True, slots=True)
class IdRule:
    """A string field holds an id: ``Annotated[str, IdRule("device id")]`` in a pydantic model.

    The rule is data (``pattern``, whole match; ``rule`` in words for the error), so the wire
    contract's fast decoder reads it from the model's field instead of keeping its own copy.
    """

    kind: str
    pattern: re.Pattern[str] = _ID
    rule: str = _ID_RULE

    def check(self, value: str) -> str:
        return check_id(self.kind, value, self.pattern, self.rule)

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema    # pydantic only where a model uses the rule

        return core_schema.no_info_after_validator_function(self.check, handler(source))


@dataclass(frozen=True, slots=True)
class StationId:
    value: str

    def __post_init__(self) -> None:
        check_id("station id", self.value)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class DeviceId:
    value: str

    def __post_init__(self) -> None:
        check_id("device id", self.value)

    def __str__(self) -> str:
        return self.value


class Channel(str, enum.Enum):
    READINGS = "readings"
    STATUS = "status"
    EVENTS = "events"
    CONFIG = "config"
    CMD = "cmd"


@dataclass(frozen=True, slots=True)
class Topic:
    """A concrete topic of one device. ``Topic.parse("ms4/town/OF-1/LOG-1/readings")``."""

    municipality: str
    station: str
    device: str
    channel: Channel

    def __post_init__(self) -> None:
        check_id("municipality", self.municipality)
        check_id("station id", self.station)
        check_id("device id", self.device)
        object.__setattr__(self, "channel", Channel(self.channel))

    def __str__(self) -> str:
        return f"{PREFIX}/{self.municipality}/{self.station}/{self.device}/{self.channel.value}"

    @classmethod
    def parse(cls, text: str) -> "Topic":
        # A class is hashable; mypy reads the dataclass's instance __hash__ as the class object's.
        return _parse_topic(cls, text)  # type: ignore[arg-type]

    @classmethod
    def _parse(cls, text: str) -> "Topic":
        parts = text.split("/")
        if len(parts) != 5 or parts[0] != PREFIX:
            raise ValueError(f"Invalid topic: {text!r} (expected {PREFIX}/<municipality>/<station>/<device>/<channel>)")
        try:
            return cls(parts[1], parts[2], parts[3], Channel(parts[4]))
        except ValueError as e:
            raise ValueError(f"Invalid topic: {text!r}: {e}") from None


@lru_cache(maxsize=4096)
def _parse_topic(cls: type[Topic], text: str) -> Topic:
    """Topics repeat (one per logger and channel): parse each once."""
    return cls._parse(text)


def subscription(municipality: str, channel: Channel | str, station: str = "+", device: str = "+") -> str:
    """Topic filter for one channel of a municipality (``+`` wildcards by default)."""
    check_id("municipality", municipality)
    return f"{PREFIX}/{municipality}/{station}/{device}/{Channel(channel).value}"
