"""Notification channels, one folder each: ``email/``, ``sms/``, ``webhook/``, ``outbox/``."""

from .base import Notification, Notifier, NotifierError, PermanentError, Recipient, RetryableError

__all__ = ["Notification", "Notifier", "NotifierError", "PermanentError", "Recipient", "RetryableError"]
