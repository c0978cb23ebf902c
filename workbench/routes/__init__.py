"""One router per resource; ``ROUTERS`` lists them (explicitly, one line each)."""

from __future__ import annotations

from . import ack, auth, health, home, incidents, metrics, sms
from .api import incidents as api_incidents
from .api import me as api_me

ROUTERS = [
    health.router,
    metrics.router,
    auth.router,
    home.router,
    incidents.router,
    ack.router,
    sms.router,
    api_incidents.router,
    api_me.router,
]

__all__ = ["ROUTERS"]
