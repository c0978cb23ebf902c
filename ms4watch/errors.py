from __future__ import annotations

from .contract.errors import Ms4Error


class DemoError(Ms4Error):
    """The demo could not set itself up (port taken, broker would not start, …)."""
