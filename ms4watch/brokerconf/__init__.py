"""``ms4watch broker-config``: a town's Mosquitto configuration, credentials and ACL, made
from its registry and its loggers' firmware configs (see :mod:`.generate`)."""

from .generate import Auth, BrokerConfigError, Result, generate

__all__ = ["Auth", "BrokerConfigError", "Result", "generate"]
