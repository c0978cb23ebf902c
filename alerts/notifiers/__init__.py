"""Notification channels, one folder each: ``email/``, ``sms/``, ``webhook/``, ``file/``."""

from .base import Notification, Notifier, NotifierError, PermanentError, Recipient, RetryableError

__all__ = ["Notification", "Notifier", "NotifierError", "PermanentError", "Recipient", "RetryableError"]
