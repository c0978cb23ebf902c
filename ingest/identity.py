"""Who may send what: the check ingest makes of every message's sender.

The broker's ACL (``ms4watch broker-config``) keeps a logger to its own topics; ingest
checks again, because a broker may be set up without one, and because the topic alone
does not say which stations a message's readings are for:

* the payload's device is the topic's (readings and status);
* the device is one the town listed (its firmware config is in ``firmware_configs``), it
  publishes under its own station, and each reading is for a station it serves;
* each reading is for a station of the registry.

A message failing any of these is refused whole, with topic and field, like any message
breaking the contract.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AbstractSet, Sequence

from ..contract.errors import ContractError
from ..contract.ids import Topic
from ..contract.wire import CanonicalReading

if TYPE_CHECKING:   # a type only: ingest without a registry never loads the firmware and registry models
    from ..contract.devices import DeviceDirectory


class Identity:
    def __init__(self, stations: AbstractSet[str] | None, devices: DeviceDirectory | None = None):
        """``stations``: the registry's (None: any); ``devices``: the town's listed loggers
        (None: any device, at any station)."""
        self.stations = frozenset(stations) if stations is not None else None
        self.devices = devices

    def check_device(self, topic_text: str, topic: Topic, device: str) -> None:
        """The payload's ``device`` against its topic and the town's list."""
        if device != topic.device:
            raise ContractError(topic_text, "device",
                                f"payload device {device!r} does not match the topic's {topic.device!r}")
        if self.devices is not None:
            d = self.devices.get(device)
            if d is None:
                raise ContractError(topic_text, "device",
                                    f"{device!r} is not one of the town's loggers (firmware_configs)")
            if topic.station != d.station:
                raise ContractError(topic_text, "topic",
                                    f"{device} publishes under its own station {d.station}, not {topic.station}")

    def check_readings(self, topic_text: str, topic: Topic, device: str,
                       readings: Sequence[CanonicalReading]) -> None:
        """A decoded readings message: its device (:meth:`check_device`), then its stations."""
        self.check_device(topic_text, topic, device)
        serves = self.devices.devices[device].stations if self.devices is not None else None
        stations = {r.station for r in readings}
        if (serves is None or stations <= serves) and (self.stations is None or stations <= self.stations):
            return
        for i, r in enumerate(readings):
            if self.stations is not None and r.station not in self.stations:
                raise ContractError(topic_text, f"readings[{i}].station",
                                    f"unknown station {r.station!r}: not in the registry")
            if serves is not None and r.station not in serves:
                raise ContractError(topic_text, f"readings[{i}].station",
                                    f"{device} does not serve station {r.station!r} "
                                    f"(it serves {', '.join(sorted(serves))})")


__all__ = ["Identity"]
