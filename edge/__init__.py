"""The edge agent: drivers read instruments, a durable spool keeps every reading until the
broker has acknowledged it, an uplink publishes the spool oldest first."""
