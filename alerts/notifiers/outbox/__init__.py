"""Local outbox file notifier (the default channel when no --notify URL is given)."""

from .notifier import FileOutboxNotifier

__all__ = ["FileOutboxNotifier"]
