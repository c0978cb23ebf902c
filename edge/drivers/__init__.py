"""Driver registry: an explicit import list, loaded lazily so that a simulated logger needs
neither pyserial nor GPIO libraries."""

from __future__ import annotations

from importlib import import_module
from typing import Any

# name -> "module:Class", relative to this package. One line per driver folder.
DRIVERS: dict[str, str] = {
    "sim": ".sim:SimDriver",
    "sdi12": ".sdi12:Sdi12Driver",
    "modbus_rtu": ".modbus_rtu:ModbusRtuDriver",
    "pulse": ".pulse:PulseDriver",
    "autosampler": ".autosampler:AutosamplerDriver",
}


def driver_class(name: str) -> Any:
    try:
        target = DRIVERS[name]
    except KeyError:
        raise ValueError(f"unknown driver {name!r} (known: {', '.join(sorted(DRIVERS))})") from None
    module, cls = target.split(":")
    return getattr(import_module(module, __name__), cls)
