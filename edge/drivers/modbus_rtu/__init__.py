"""Modbus RTU instruments over RS-485; see README.md beside this file."""

from .driver import ModbusRtuDriver, ModbusRtuOptions, decode_registers

__all__ = ["ModbusRtuDriver", "ModbusRtuOptions", "decode_registers"]
