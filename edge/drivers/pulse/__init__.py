"""Tipping-bucket rain gauge by pulse counting; see README.md beside this file."""

from .counter import TipCounter
from .driver import GpioPulseSource, PulseDriver, PulseOptions, PulseSource

__all__ = ["GpioPulseSource", "PulseDriver", "PulseOptions", "PulseSource", "TipCounter"]
