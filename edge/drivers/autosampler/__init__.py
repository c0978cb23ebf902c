"""Autosampler trigger with a bottle record; see README.md beside this file."""

from .driver import EVENT_KIND, AutosamplerDriver, AutosamplerOptions

__all__ = ["EVENT_KIND", "AutosamplerDriver", "AutosamplerOptions"]
