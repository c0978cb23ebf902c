"""SDI-12 sensors through a serial adapter; see README.md beside this file."""

from .driver import Sdi12Driver, Sdi12Options

__all__ = ["Sdi12Driver", "Sdi12Options"]
