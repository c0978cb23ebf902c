"""Ingest: MQTT readings → canonical units → a store, acknowledged only once durable."""
