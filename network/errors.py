from __future__ import annotations

from ..contract.errors import Ms4Error


class NetworkError(Ms4Error):
    """A map could not be read or stored; the message names the file, layer or line and the field."""
