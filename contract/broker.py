"""What the pipeline needs of its MQTT broker: the Mosquitto settings, in one place.

Loggers publish readings at QoS 1 and forget a message once the broker acknowledged it;
ingest takes them with a persistent session and acknowledges each only once it is stored,
in batches. So the broker must never drop a QoS 1 message it has acknowledged, and must let
ingest hold many unacknowledged ones:

* ``max_inflight_messages 1000`` — unacknowledged messages the broker sends one client
  (Mosquitto's default: 20). Ingest stores and acknowledges in batches; with 20 in flight
  its batches are 20 messages, and the rest pile up in the queue.
* ``max_queued_messages 0`` (no limit; Mosquitto's default: 1000) and ``max_queued_bytes 0``
  — messages waiting behind those in flight, per client. Over the limit Mosquitto drops
  them: with the defaults, a 5,000-message burst while ingest was busy or restarting lost
  QoS 1 messages the loggers had already been told were delivered. No limit means the
  broker's memory must hold the longest ingest outage planned for: about the payload size
  (~0.5–2 KiB) per message waiting.
* ``persistence true`` — sessions, subscriptions and queued messages survive a broker
  restart (written every ``autosave_interval`` seconds and on a clean shutdown: a broker
  that crashes loses what arrived since the last save).
* ``persistent_client_expiration 14d`` — a persistent session whose client has not
  connected for this long is removed with what was queued for it. Without it a session
  nobody will use again (a test client id, a retired ingest) queues every reading for
  ever: with ``max_queued_messages 0`` about 300 MB a day for 200 loggers. The price: an
  ingest down longer than this loses what the broker queued for it, so it is set well past
  any outage the town plans for (``ms4watch broker-config --session-expiry``).
* ``message_size_limit`` 8 MiB — payloads over it are refused by the broker (Mosquitto
  completes the QoS flow and drops them). The largest readings message a logger forms is
  10,000 readings, about 1.5–4 MiB; ingest takes up to 16 MiB
  (``ingest/subscriber.py``) and sets aside anything larger, so a broker configured here
  never sends ingest a message it cannot take.

``persistence_location``, listeners, TLS and authentication belong to the deployment and
are not here. References: mosquitto.conf(5), Mosquitto 2.0.
"""

from __future__ import annotations

import re
from typing import Mapping

MESSAGE_SIZE_LIMIT_BYTES = 8 * 2**20
"""The largest payload the broker takes [bytes]: twice the largest readings message."""

SESSION_EXPIRY = "14d"
"""How long a persistent session outlives its client's last connection, in Mosquitto's
``persistent_client_expiration`` form: a whole number and h, d, w, m (month) or y."""

_EXPIRY = re.compile(r"[1-9][0-9]*[hdwmy]")


def session_expiry(text: str) -> str:
    """``text`` if it is a Mosquitto expiry (``14d``, ``2w``, ``12h``); ValueError naming it if not."""
    if not _EXPIRY.fullmatch(text):
        raise ValueError(f"session expiry: expected a whole number and h, d, w, m or y (e.g. 14d), got {text!r}")
    return text


def mosquitto_settings(expiry: str = SESSION_EXPIRY) -> dict[str, str]:
    """The ``mosquitto.conf`` settings the pipeline needs, in the order to write them;
    ``expiry``: :data:`SESSION_EXPIRY` or another :func:`session_expiry`."""
    return {
        "persistence": "true",
        "autosave_interval": "60",
        "max_inflight_messages": "1000",
        "max_queued_messages": "0",
        "max_queued_bytes": "0",
        "message_size_limit": str(MESSAGE_SIZE_LIMIT_BYTES),
        "persistent_client_expiration": session_expiry(expiry),
    }


def mosquitto_conf(settings: Mapping[str, str]) -> str:
    """Settings as ``mosquitto.conf`` lines (``name value``)."""
    return "".join(f"{name} {value}\n" for name, value in settings.items())
