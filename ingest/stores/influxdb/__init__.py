"""InfluxDB stores: 1.x through the v1 ``/write`` API, 2.x/3.x/Cloud through influxdb-client.

See ``README.md`` in this folder, ``sample.yaml`` and ``docs/store.md`` (the schema).
"""

from __future__ import annotations

from .config import InfluxTarget, parse_url
from .errors import MessagesRejected, StoreMisconfigured
from .schema import MIN_RETENTION

# The stores load on first use: influxdb-client takes ~1 s to import and only the 2.x store
# needs it; requests (the 1.x store's client, ~0.2 s) only the 1.x store. The records
# (records.py) and the schema are shared with the SQLite path and need neither.

__all__ = ["Influx1Store", "Influx2Store", "InfluxTarget", "MessagesRejected", "MIN_RETENTION",
           "StoreMisconfigured", "parse_url", "open_admin"]


def __getattr__(name: str):
    if name == "Influx1Store":
        from .v1 import Influx1Store
        return Influx1Store
    if name == "Influx2Store":
        from .v2 import Influx2Store
        return Influx2Store
    raise AttributeError(name)


def open_admin(url: str):
    """The store for ``url`` (Influx1Store or Influx2Store), for administration: not opened."""
    target = parse_url(url)
    if target.version == 1:
        from .v1 import Influx1Store
        return Influx1Store(target)
    from .v2 import Influx2Store
    return Influx2Store(target)
