from __future__ import annotations

from ..contract.errors import Ms4Error


class EdgeError(Ms4Error):
    """Root of edge-agent errors."""


class DriverError(EdgeError):
    """An instrument did not answer, or answered garbage. The agent flags the reading
    (``sensor_error``), logs, and carries on."""
