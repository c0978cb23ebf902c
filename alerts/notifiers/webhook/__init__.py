"""Webhook notifier: a JSON POST per notification."""

from .notifier import SCHEMA, WebhookNotifier

__all__ = ["SCHEMA", "WebhookNotifier"]
