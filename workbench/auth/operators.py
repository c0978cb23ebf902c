"""Who may read a server's operational data: ``/metrics`` (every count of a town) and the
details of ``/health/ready`` (which part failed, the broker's address).

* a request from a network of ``web.metrics_networks`` (the Prometheus host; none by
  default), or carrying ``Authorization: Bearer <web.metrics_token>`` (Prometheus'
  ``bearer_token_file``): every town the server serves;
* an API token of a user who is ``admin`` in a town (``Permission.READ_METRICS``): that
  town's only.

Anyone else learns from ``/health/ready`` whether the server is ready, and nothing more.
"""

from __future__ import annotations

import hmac
from ipaddress import ip_address

from ...settings import WebSettings


class Operators:
    def __init__(self, web: WebSettings):
        self.networks = list(web.metrics_networks)
        self.token = web.metrics_token.get_secret_value() if web.metrics_token is not None else None

    def allows(self, *, address: str, bearer: str | None) -> bool:
        """A configured network's address, or the configured bearer token."""
        if bearer is not None and self.token is not None and hmac.compare_digest(bearer.encode(), self.token.encode()):
            return True
        try:
            ip = ip_address(address)
        except ValueError:
            return False
        return any(ip in net for net in self.networks)


__all__ = ["Operators"]
