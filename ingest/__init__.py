"""Ingest: MQTT readings → canonical units → a store (sink), acknowledged only once durable."""
