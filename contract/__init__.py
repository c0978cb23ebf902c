"""The contract every part of ms4watch shares: wire messages, site registry, firmware
configs, canonical units and time.

edge/, ingest/ and alerts/ import this package; it imports none of them.
"""
