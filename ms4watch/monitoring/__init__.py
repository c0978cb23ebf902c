"""What the town's IT needs to watch the server itself, shipped with the package: the
Prometheus alert rules over ``/metrics`` (:data:`RULES`) — the server down, the broker
lost, a station stale, the delivery queue backing up, the data directory's disk filling.
The Grafana dashboard of the server is ``dashboards/json/ms4watch-server.json``.
See docs/operations.md, "Monitoring the server"."""

from __future__ import annotations

from pathlib import Path

RULES = Path(__file__).resolve().parent / "prometheus" / "ms4watch-rules.yml"
"""Prometheus alert rules (``rule_files:``); checked by ``promtool check rules`` and
``promtool test rules`` (tests/monitoring/)."""

__all__ = ["RULES"]
