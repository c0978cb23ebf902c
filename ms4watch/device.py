"""Talking to one logger from the office: a new config, or a command, and its answer.

* :meth:`DeviceLink.send_config` — a firmware config, validated completely first (schema
  and every driver's options, as the agent will), published **retained** on the logger's
  ``…/config`` (a logger offline now takes it when it connects), then the agent's answer
  read from its ``…/events``: ``config_applied`` (with ``kept_calibrations`` when it kept a
  sensor's newer field calibration) or ``config_rejected`` with the reason.
* :meth:`DeviceLink.send_command` — ``{"id", "command", "args"}`` on ``…/cmd`` (not
  retained: a logger offline never sees it), then the matching ``cmd_ack``.

The logger's retained ``…/status`` tells where it is (its station, for a command), whether
it is online and which config version it runs: a config whose version it already runs
would be taken for the retained copy and ignored, so it is refused here.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from .contract.errors import Ms4Error
from .contract.ids import Channel, Topic, subscription
from .contract.mqtt import BrokerURL, make_client
from .contract.wire import StatusMessage

COMMANDS = ("read_now", "sample_now", "rain_report", "status", "reboot_agent")
"""What the agent takes on ``…/cmd`` (edge/agent.py)."""


class DeviceError(Ms4Error):
    """The broker could not be reached, or the request cannot be sent as it is."""


@dataclass
class Answer:
    """The logger's answer: ``state`` is ``applied``/``ok``, ``rejected``/``failed`` or
    ``no_answer`` (nothing within the timeout); ``event``: its event's data."""

    state: str
    detail: str
    event: dict[str, Any] = field(default_factory=dict)
    status: StatusMessage | None = None


class DeviceLink:
    def __init__(self, broker_url: str, *, username: str | None = None, password: str | None = None,
                 timeout_s: float = 30.0, tls: Any = None):
        self.url = BrokerURL.parse(broker_url)
        self.username, self.password = username, password
        self.tls = tls                      # the TLS context for mqtts:// (contract.mqtt.tls_context)
        self.timeout_s = timeout_s
        self._inbox: queue.Queue[tuple[str, bytes]] = queue.Queue()
        self._subscribed = threading.Event()

    # -- the broker ----------------------------------------------------------------------------
    def _connect(self, topics: list[str]) -> Any:
        client = make_client(f"ms4watch-device-{uuid.uuid4().hex[:12]}", self.url, clean_session=True,
                             username=self.username, password=self.password, tls=self.tls)
        connected = threading.Event()
        refused: list[str] = []

        def on_connect(c, userdata, flags, reason_code, properties):
            if reason_code.is_failure:
                refused.append(str(reason_code))
            else:
                c.subscribe([(t, 1) for t in topics])
            connected.set()

        client.on_connect = on_connect
        client.on_subscribe = lambda *a: self._subscribed.set()
        client.on_message = lambda c, u, msg: self._inbox.put((msg.topic, bytes(msg.payload)))
        try:
            client.connect(self.url.host, self.url.port, keepalive=30)
        except OSError as e:
            raise DeviceError(f"cannot reach the broker {self.url}: {e}") from None
        client.loop_start()
        if not connected.wait(self.timeout_s) or refused:
            client.loop_stop()
            raise DeviceError(f"the broker {self.url} refused the connection: {refused[0] if refused else 'no answer'}")
        if not self._subscribed.wait(self.timeout_s):
            client.loop_stop()
            raise DeviceError(f"the broker {self.url} did not confirm the subscription")
        return client

    def _close(self, client: Any) -> None:
        client.disconnect()
        client.loop_stop()

    def _status(self, deadline: float, device: str) -> tuple[str | None, StatusMessage | None]:
        """The logger's retained status (its topic and message), if the broker has one: it is
        delivered right after the subscription, so a short wait tells."""
        end = min(deadline, time.monotonic() + 2.0)
        while time.monotonic() < end:
            try:
                topic, payload = self._inbox.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                break
            if topic.endswith("/status") and payload:
                try:
                    st = StatusMessage.model_validate_json(payload)
                except ValueError:
                    continue
                if st.device == device:
                    return topic, st
        return None, None

    def _event(self, deadline: float, want: Any) -> dict[str, Any] | None:
        while time.monotonic() < deadline:
            try:
                topic, payload = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if not topic.endswith("/events"):
                continue
            try:
                ev = json.loads(payload)
            except ValueError:
                continue
            if isinstance(ev, dict) and want(ev):
                return ev
        return None

    # -- a config ------------------------------------------------------------------------------
    def send_config(self, text: str, source: str) -> Answer:
        """Validate ``text`` completely, publish it retained, wait for the agent's answer."""
        from .edge.config import parse_agent_config
        config, _ = parse_agent_config(text, source)      # ConfigError names file, line and field
        topic = Topic(config.municipality, config.station, config.device, Channel.CONFIG)
        base = f"ms4/{config.municipality}/{config.station}/{config.device}"
        deadline = time.monotonic() + self.timeout_s
        client = self._connect([f"{base}/status", f"{base}/events"])
        try:
            _, status = self._status(deadline, config.device)
            if status is not None and status.state == "online" and status.config_version == config.config_version:
                raise DeviceError(f"{config.device} already runs config_version {config.config_version!r}: it would "
                                  "take this for the copy it has and ignore it; give the new config another "
                                  "config_version")
            info = client.publish(str(topic), text.encode("utf-8"), qos=1, retain=True)
            info.wait_for_publish(self.timeout_s)
            ev = self._event(deadline, lambda e: e.get("device") == config.device and (
                (e.get("kind") == "config_applied" and e.get("data", {}).get("version") == config.config_version)
                or (e.get("kind") == "config_rejected"
                    and e.get("data", {}).get("version") in (None, config.config_version))))
        finally:
            self._close(client)
        if ev is None:
            where = "offline" if status is None or status.state != "online" else "online"
            return Answer("no_answer", f"sent to {topic} (retained); {config.device} is {where} and has not answered "
                                       f"within {self.timeout_s:g} s: it applies the config when it next connects",
                          status=status)
        data = ev.get("data", {})
        if ev["kind"] == "config_applied":
            kept = data.get("kept_calibrations")
            return Answer("applied", f"{config.device} applied config {data.get('version')} (was {data.get('previous')})"
                          + (f"; it kept its newer field calibration of {', '.join(kept)}" if kept else ""),
                          ev, status)
        return Answer("rejected", f"{config.device} refused config {config.config_version}: {data.get('error')} "
                                  f"(it still runs {data.get('running_version')})", ev, status)

    # -- a command -----------------------------------------------------------------------------
    def send_command(self, municipality: str, device: str, command: str, args: dict[str, Any] | None = None,
                     station: str | None = None) -> Answer:
        """Publish ``command`` to the logger (found by its retained status unless ``station``
        is given) and wait for its ``cmd_ack``."""
        if command not in COMMANDS:
            raise DeviceError(f"unknown command {command!r} (the agent takes {', '.join(COMMANDS)})")
        deadline = time.monotonic() + self.timeout_s
        where = station or "+"
        client = self._connect([subscription(municipality, Channel.STATUS, where, device),
                                subscription(municipality, Channel.EVENTS, where, device)])
        try:
            status_topic, status = self._status(deadline, device)
            if station is None:
                if status_topic is None:
                    raise DeviceError(f"no status of {device} in {municipality} on the broker: give --station")
                station = Topic.parse(status_topic).station
            cid = uuid.uuid4().hex[:12]
            topic = Topic(municipality, station, device, Channel.CMD)
            body = {"id": cid, "command": command, **({"args": args} if args else {})}
            client.publish(str(topic), json.dumps(body).encode(), qos=1).wait_for_publish(self.timeout_s)
            ev = self._event(deadline, lambda e: e.get("kind") == "cmd_ack" and e.get("data", {}).get("id") == cid)
        finally:
            self._close(client)
        if ev is None:
            offline = status is None or status.state != "online"
            return Answer("no_answer", f"{device} did not answer {command} within {self.timeout_s:g} s"
                          + ("; it is offline, and commands are not kept for it" if offline else ""), status=status)
        data = ev.get("data", {})
        return Answer("ok" if data.get("ok") else "failed",
                      f"{device}: {command} {'done' if data.get('ok') else 'FAILED'}"
                      + (f": {data['detail']}" if data.get("detail") else ""), ev, status)


__all__ = ["Answer", "COMMANDS", "DeviceError", "DeviceLink"]
