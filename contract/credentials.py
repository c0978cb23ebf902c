"""systemd credentials: a unit's ``LoadCredential=NAME:/etc/ms4watch/FILE`` gives the service a
private copy at ``$CREDENTIALS_DIRECTORY/NAME`` (the file itself may then be root's alone,
mode 0600). A secret a setting does not name is looked for there: ``mqtt-password`` (the
server's broker password), ``influx-token`` (the InfluxDB token)."""

from __future__ import annotations

import os
from pathlib import Path

CREDENTIALS_ENV = "CREDENTIALS_DIRECTORY"
MQTT_PASSWORD = "mqtt-password"
INFLUX_TOKEN = "influx-token"


def credential(name: str) -> Path | None:
    """``$CREDENTIALS_DIRECTORY/<name>`` when systemd gave the service that credential, else None."""
    folder = os.environ.get(CREDENTIALS_ENV)
    if not folder:
        return None
    path = Path(folder) / name
    return path if path.is_file() else None


__all__ = ["credential", "CREDENTIALS_ENV", "MQTT_PASSWORD", "INFLUX_TOKEN"]
