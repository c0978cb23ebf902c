"""One router per resource; ``ROUTERS`` lists them (explicitly, one line each). A coalition's
server also has ``lobby.router`` at its root (log in, choose a town)."""

from __future__ import annotations

from . import (account, ack, auth, compliance, field, health, home, incidents, inspections, metrics, network, outfalls,
               reports, sms, stations, storms, tracing)
from .api import compliance as api_compliance
from .api import field as api_field
from .api import incidents as api_incidents
from .api import inspections as api_inspections
from .api import me as api_me
from .api import outfalls as api_outfalls
from .api import stations as api_stations
from .api import storms as api_storms

ROUTERS = [
    health.router,
    metrics.router,
    auth.router,
    account.router,
    home.router,
    incidents.router,
    stations.router,
    inspections.router,
    outfalls.router,
    storms.router,
    network.router,
    compliance.router,
    tracing.router,
    reports.router,
    ack.router,
    sms.router,
    api_incidents.router,
    api_stations.router,
    api_inspections.router,
    api_outfalls.router,
    api_storms.router,
    api_me.router,
    api_compliance.router,
    field.router,
    api_field.router,
]

__all__ = ["ROUTERS"]
